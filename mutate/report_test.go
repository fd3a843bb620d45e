package mutate

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parharness/parharness/internal/golden"
)

func exitCode(n int) *int { return &n }

// sampleResults is a run with one mutant of every status.
func sampleResults() *Results {
	pass := []GateOutcome{{Gate: "producers", Status: "PASS", Seconds: 7.5}}
	return &Results{Schema: ResultsSchema, Tool: "devel", Commit: "abc123", Date: "2026-12-02T10:00:00Z",
		Command: []string{"parharness", "mutate", "run"}, MutantsDir: "build-mut", BuildDir: "build", Arch: "sm_90a", Seed: 1, Jobs: 4, TimeoutS: 180,
		Control: &Control{Gates: []GateOutcome{{Gate: "gemm", Status: "PASS"}, {Gate: "producers", Status: "PASS"}}, Seconds: 46.2, Status: "PASS"},
		Results: []Result{
			{ID: "gemm-lt-to-le-0057dc", Operator: "lt-to-le", File: "families/gemm/gemm.hip", Line: 590, Func: "gemm_dec",
				ChangedEntries: []string{"pq_gemm_dec_v1_m16", "pq_gemm_dec_v1_m32", "pq_gemm_dec_v1_m64", "pq_gemm_dec_v1_m8"},
				Before:         "for (int s = 0; s < 4; s++) {", After: "for (int s = 0; s <= 4; s++) {", Status: StatusKilled, Gate: "gemm",
				Failure: "pq_gemm_dec_v1_m8 qkv M=1 S=1 normal: rel 0.3 > 1.5 x floor | 2 NaN\nmore", Exit: exitCode(1), Seconds: 41},
			{ID: "producers-max-to-min-b5a757", Operator: "max-to-min", File: "families/producers/producers.hip", Line: 61, Func: "warp_max",
				Before: "v = __builtin_fmaxf(v, x);", After: "v = __builtin_fminf(v, x);", Status: StatusKilledTimeout, Gate: "producers",
				Failure: "hung: cuCtxSynchronize did not return within 30s (watchdog)", Exit: exitCode(1)},
			{ID: "producers-stale-scale-2e8586", Operator: "stale-scale", File: "families/producers/producers.hip", Line: 225, Func: "token_scale",
				ChangedEntries: []string{"pq_rotq_token", "pq_tokq"}, Before: "a = __builtin_fmaxf(a, gam[g] / 448.0f);",
				After: "a = __builtin_fmaxf(a, gam[(g ^ 1u)] / 448.0f);", Status: StatusSurvived, Gates: pass, Exit: exitCode(0)},
			{ID: "producers-sync-dropped-7f3523", Operator: "sync-dropped", File: "families/producers/producers.hip", Line: 295, Func: "pq_rotq_token",
				Kernel: true, ChangedEntries: []string{"pq_rotq_token"}, Before: "block_sync();", After: "(void)0;", Status: StatusSurvived, Gates: pass, Exit: exitCode(0)},
			{ID: "e4m3-compound-flip-58e77c", Operator: "compound-flip", File: "families/e4m3/e4m3.hip", Line: 39, Func: "e4m3_sweep", Kernel: true,
				Before: "bad_raw += r0 + r1;", After: "bad_raw -= r0 + r1;", Status: StatusSurvived, Gates: pass, Exit: exitCode(0)},
			{ID: "gemm-args-swapped-0da394", Operator: "args-swapped", File: "families/gemm/gemm.hip", Line: 169, Func: "dec_block_handoff",
				Before: "st_u32_gpu(sema + bx, 0u);", After: "st_u32_gpu(0u, sema + bx);", Status: StatusDidNotBuild,
				Failure: "families/gemm/gemm.hip:169:17: error: no matching function for call to 'st_u32_gpu'"},
			{ID: "e4m3-lt-to-le-174b1c", Operator: "lt-to-le", File: "families/e4m3/e4m3.hip", Line: 47, Func: "e4m3_sweep", Kernel: true,
				Before: "f < first_raw ? f : first_raw", After: "f <= first_raw ? f : first_raw", Status: StatusIdentical},
			{ID: "gemm-crash-1", Operator: "index-swap", File: "families/gemm/gemm.hip", Line: 700, Func: "gemm_dec", Status: StatusKilledCrash,
				Failure: "the gate process was killed by segmentation fault without a results document"},
			{ID: "gemm-fault-1", Operator: "stride-halved", File: "families/gemm/gemm.hip", Line: 701, Func: "gemm_dec", Status: StatusKilledFault, Gate: "gemm",
				Failure: "launch: cuCtxSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS (700)"},
			{ID: "gemm-nosym-1", Operator: "guard-true", File: "families/gemm/gemm.hip", Line: 702, Func: "gemm_dec", Status: StatusKilledUnrunnable, Gate: "gemm",
				Failure: "kernel pq_gemm_dec_m8: symbol not found"},
			{ID: "gemm-notrun-1", Operator: "guard-true", File: "families/gemm/gemm.hip", Line: 703, Func: "gemm_dec_staged", Status: StatusNotRun,
				Failure: "changes only kernels no gate runs: pq_gemm_dec_memonly_m8 (attribution kernel, never gated)"},
		}}
}

func TestReportGolden(t *testing.T) {
	res := sampleResults()
	ex, err := ParseExplanations("equivalent.txt", []byte(strings.Join([]string{
		"# survivors judged equivalent",
		"producers-stale-scale-2e8586 the token scale is a maximum over every group: reading the neighbouring group's amax permutes the max's operands (G is even)",
		"families/e4m3/e4m3.hip:39 the raw-hardware mismatch counts are information only: no gate bounds them",
		"gemm-lt-to-le-0057dc a stale entry: this mutant is killed",
		"families/gemm/gemm.hip:9999 a site no mutant has",
	}, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	notes := ex.Apply(res)
	var b bytes.Buffer
	if err := WriteReport(&b, res, notes); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/report.golden", b.Bytes())

	s := Summarize(res)
	if s.Killed != 5 || s.Survived != 1 || s.Judged != 2 || s.DidNotBuild != 1 || s.Identical != 1 || s.NotRun != 1 {
		t.Errorf("summary %+v", s)
	}
	if r, ok := s.Ratio(); !ok || r != 5.0/6.0 {
		t.Errorf("kill ratio %v (%v), want 5/6: the judged-equivalent survivors leave the denominator", r, ok)
	}
}

func TestResultsRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mutate.json")
	res := sampleResults()
	if err := WriteResults(path, res); err != nil {
		t.Fatal(err)
	}
	back, err := ReadResults(path)
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	WriteReport(&a, res, nil)
	WriteReport(&b, back, nil)
	if a.String() != b.String() {
		t.Error("a results file read back reports differently from the run that wrote it")
	}
}

func TestParseExplanations(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       map[string]string
		line       int // the line of the error; 0: no error
	}{
		{"ids and sites", "# comment\n\nm-1 a reason\nfile.hip:12\tanother  reason\n", map[string]string{"m-1": "a reason", "file.hip:12": "another  reason"}, 0},
		{"no reason", "m-1 ok\nm-2\n", nil, 2},
		{"twice", "m-1 ok\nm-1 again\n", nil, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			ex, err := ParseExplanations("e.txt", []byte(c.text))
			if c.line != 0 {
				var ee *ExplanationError
				if !errors.As(err, &ee) || ee.Line != c.line {
					t.Fatalf("error %v, want an *ExplanationError at line %d", err, c.line)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(ex) != len(c.want) {
				t.Fatalf("got %v, want %v", ex, c.want)
			}
			for k, v := range c.want {
				if ex[k] != v {
					t.Errorf("%s: %q, want %q", k, ex[k], v)
				}
			}
		})
	}
}

func TestMarkdownCellEscapes(t *testing.T) {
	if got := cell("a | b\nc"); got != `a \| b c` {
		t.Errorf("cell = %q", got)
	}
}
