package main

import (
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/parharness/parharness/internal/golden"
	"github.com/parharness/parharness/results"
)

func benchDoc(t *testing.T, scale float64, gate string) *results.Document {
	t.Helper()
	r := results.Record{Suite: "copy", Kernel: "copy_v4", Variant: "copy", Shape: "64MiB", Regime: results.Cold,
		SamplesUS: []float64{10 * scale, 10.01 * scale, 9.99 * scale, 10.02 * scale, 9.98 * scale, 10 * scale}, Bytes: 1 << 27}
	if err := r.Derive(); err != nil {
		t.Fatal(err)
	}
	return &results.Document{Schema: results.SchemaVersion, Tool: "test", Commit: "c", Date: "2026-11-29T00:00:00Z",
		Records: []results.Record{r}, Gates: []results.GateRecord{{Gate: "e4m3-decode", Status: gate}}}
}

func TestDiffCommand(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, d *results.Document) string {
		p := filepath.Join(dir, name)
		if err := results.Write(p, d); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := write("base.json", benchDoc(t, 1, results.Pass))
	same := write("same.json", benchDoc(t, 1.005, results.Pass))
	slow := write("slow.json", benchDoc(t, 1.10, results.Pass))
	broke := write("broke.json", benchDoc(t, 1, results.Fail))

	code, out, _ := run(t, "diff", base, same)
	if code != ExitOK || !strings.Contains(out, " ~") {
		t.Errorf("0.5%% apart: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "diff", base, slow, "--markdown")
	if code != ExitOK || !strings.Contains(out, "slower") || !strings.HasPrefix(out, "### parharness diff") {
		t.Errorf("10%% slower: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "diff", base, broke)
	if code != ExitFail {
		t.Errorf("PASS -> FAIL gate: exit %d, want %d\n%s", code, ExitFail, out)
	}
	skipped := write("skipped.json", benchDoc(t, 1, results.Skip))
	if code, out, stderr := run(t, "diff", base, skipped); code != ExitFail || !strings.Contains(stderr, "gate e4m3-decode regressed: PASS -> SKIP") {
		t.Errorf("PASS -> SKIP on the same device: exit %d, want %d\n%s%s", code, ExitFail, out, stderr)
	}
	for _, tc := range []struct {
		pct  string
		new  string
		want int
	}{{"5", slow, ExitFail}, {"20", slow, ExitOK}, {"0", same, ExitOK}} {
		code, _, stderr := run(t, "diff", base, tc.new, "--fail-on-slower", tc.pct)
		if code != tc.want {
			t.Errorf("--fail-on-slower %s against %s: exit %d, want %d\n%s", tc.pct, filepath.Base(tc.new), code, tc.want, stderr)
		}
		if code == ExitFail && !strings.Contains(stderr, "copy/copy_v4/shape=64MiB/M=0/variant=copy/regime=cold: +10.00%") {
			t.Errorf("--fail-on-slower %s: stderr does not name the row:\n%s", tc.pct, stderr)
		}
	}
	if code, _, stderr := run(t, "diff", base, filepath.Join(dir, "missing.json")); code != ExitUsage || stderr == "" {
		t.Errorf("missing file: exit %d", code)
	}
	code, out, _ = run(t, "report", slow, "--svg", filepath.Join(dir, "svg"))
	if code != ExitOK || !strings.Contains(out, "wrote") {
		t.Errorf("report: exit %d\n%s", code, out)
	}
}

// splitArgs reads from the FlagSet which flags take a value, so every order
// of flags and paths works and a boolean flag never swallows a path.
func TestSplitArgs(t *testing.T) {
	fs := newFlags("diff", io.Discard)
	fs.Bool("markdown", false, "")
	fs.Float64("noise", 2, "")
	pos, flags := splitArgs(fs, []string{"--markdown", "old.json", "--noise", "3", "new.json", "--noise=4"})
	if strings.Join(pos, " ") != "old.json new.json" || strings.Join(flags, " ") != "--markdown --noise 3 --noise=4" {
		t.Errorf("pos %q flags %q", pos, flags)
	}
}

// report --benchfmt prints benchfmt and nothing else (no table, no gate
// list): benchstat reads every line as a benchmark, a configuration line
// (device and suite only) or unit metadata.
func TestReportBenchfmtOnly(t *testing.T) {
	dir := t.TempDir()
	doc := benchDoc(t, 1, results.Pass)
	doc.Device = &results.Device{Backend: "cuda", Name: "NVIDIA H200", Arch: "sm_90", Driver: "580.159.04"}
	doc.Seed = 42
	p := filepath.Join(dir, "r.json")
	if err := results.Write(p, doc); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run(t, "report", p, "--benchfmt")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	golden.Check(t, filepath.Join("testdata", "report-benchfmt.txt"), []byte(out))
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "Benchmark"), strings.HasPrefix(l, "Unit "),
			strings.HasPrefix(l, "device: "), strings.HasPrefix(l, "suite: "):
		default:
			t.Errorf("not a benchfmt line of the allowed kinds: %q", l)
		}
	}
}

// report shows the run, its ceilings, the gate table with each gate's
// metrics summarised by name, the bench table and the regret table of the
// suite's selection law (the H200 dec run, with gate results added), in
// 100 columns.
func TestReportGolden(t *testing.T) {
	t.Setenv("COLUMNS", "")
	doc, err := results.Read(filepath.Join("..", "..", "results", "h200-2026-12-01", "dec.json"))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]float64{"cases": 3, "worst_bound_use": 0.92}
	for i, M := range []int{1, 9, 64} {
		c := results.NewCase("shape", "qkv", "mode", "decode", "M", M)
		m[c.Key("rel")] = 1e-3 * float64(i+1)
		m[c.Key("elem_margin")] = 0.1 * float64(i+2)
	}
	doc.Gates = []results.GateRecord{{Gate: "gemm", Status: results.Pass, Seconds: 40, Metrics: m},
		{Gate: "ptxas-sm90a", Status: results.Skip, Reason: "ptxas is neither on PATH nor at /usr/local/cuda/bin/ptxas: the CUDA toolkit's ptxas is needed"}}
	p := filepath.Join(t.TempDir(), "r.json")
	if err := results.Write(p, doc); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run(t, "report", p)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	golden.Check(t, filepath.Join("testdata", "report-dec.txt"), []byte(out))
	for _, w := range []string{"ceilings (measured in this run)", "gate metrics:", "elem_margin", "selection law gemm.DecSplitK", "time-weighted regret"} {
		if !strings.Contains(out, w) {
			t.Errorf("report lacks %q", w)
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if n := len([]rune(l)); n > 100 {
			t.Errorf("%d columns: %q", n, l)
		}
	}
}

// The dec suite's goals against the peer: a cell is judged on each goal
// that covers its M; without a copy ceiling the copy goal is left
// unjudged (neither met nor missed), never counted as a miss.
func TestBestPeerTargets(t *testing.T) {
	pass := &results.Check{Status: results.CheckPass}
	recs := []results.Record{
		{Suite: "dec", Kernel: "pq_gemm_dec", Variant: "S4", Shape: "qkv", M: 1, Regime: results.Cold, TrimmedMeanUS: 5, GBps: 3000, Bytes: 12e6, Check: pass},
		{Suite: "dec", Kernel: "cublaslt_fp8", Variant: "cublaslt", Shape: "qkv", M: 1, Regime: results.Cold, TrimmedMeanUS: 10},
		{Suite: "dec", Kernel: "pq_gemm_dec", Variant: "S2", Shape: "qkv", M: 64, Regime: results.Cold, TrimmedMeanUS: 20, Check: pass},
		{Suite: "dec", Kernel: "cublaslt_fp8", Variant: "cublaslt", Shape: "qkv", M: 64, Regime: results.Cold, TrimmedMeanUS: 10},
	}
	for _, c := range []struct {
		name     string
		ceilings []results.Ceiling
		want     []string
	}{
		{"copy ceiling", []results.Ceiling{{Name: results.CeilingCopyGBps, Value: 3500, Unit: "GB/s"}},
			[]string{`target "faster", cold: met in 1 of 2 cells`, `target "1.4x M<=16", cold: met in 1 of 1 cells`, `target "75% M<=8", cold: met in 1 of 1 cells`,
				`goals, in order: "faster", "1.4x M<=16", "75% M<=8"`, "│ y y y │", "│ n - - │"}},
		{"no copy ceiling", nil,
			[]string{`target "75% M<=8", cold: met in 0 of 0 cells; 1 not judged (the run measured no copy ceiling)`, "│ y y ? │"}},
		// A read roof (faster, checked) is shown beside the cell's kernel,
		// never taken for it; a cell without one shows "-".
		{"read roof", []results.Ceiling{{Name: results.CeilingCopyGBps, Value: 3500, Unit: "GB/s"}},
			[]string{"│ roof ", "│ 80% ", `target "faster", cold: met in 1 of 2 cells`, "│ S4 "}},
		// Roofs over two sizes give the roof model: 2 µs + bytes at 3000
		// GB/s, which reaches 75% of 3500 GB/s from 42 MB; S4's 12 MB in
		// 5 µs is 1 µs under the model's 6 (column "over read"), and the
		// M = 64 cell, whose record has no bytes, shows "-" there.
		{"roofs over two sizes", []results.Ceiling{{Name: results.CeilingCopyGBps, Value: 3500, Unit: "GB/s"}},
			[]string{"roof model, cold: a read takes 2.00 us + its bytes at 3000 GB/s\n  (2 cells, 2 sizes, largest residual 0.00 us); reaches 75% of copy from 42.0 MB",
				"│ over read │", "│ 5.00  │ -1.00     │", "│ 20.00 │ -         │ 0.0% "}},
		// A cell just under 75% of copy shows its share rounded down, never
		// the 75% it missed.
		{"just under the copy share", []results.Ceiling{{Name: results.CeilingCopyGBps, Value: 4000, Unit: "GB/s"}},
			[]string{"│ 74.9% ", "│ y y n │", `target "75% M<=8", cold: met in 0 of 1 cells`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			recs := recs
			switch c.name {
			case "read roof":
				recs = append(slices.Clone(recs), results.Record{Suite: "dec", Kernel: "pq_gemm_dec", Variant: "read", Shape: "qkv", M: 1, Regime: results.Cold,
					TrimmedMeanUS: 1, GBps: 2800, Bytes: 2.8e6, Check: pass, Flags: []string{results.FlagRoof}})
			case "just under the copy share":
				recs = slices.Clone(recs)
				recs[0].GBps = 0.7499 * 4000
			case "roofs over two sizes":
				recs = append(slices.Clone(recs),
					results.Record{Suite: "dec", Kernel: "read_v4x4", Variant: "read", Shape: "qkv", M: 1, Regime: results.Cold,
						TrimmedMeanUS: 8, GBps: 2250, Bytes: 18e6, Check: pass, Flags: []string{results.FlagRoof}},
					results.Record{Suite: "dec", Kernel: "read_v4x4", Variant: "read", Shape: "down", M: 1, Regime: results.Cold,
						TrimmedMeanUS: 14, GBps: 36e6 / 14e3, Bytes: 36e6, Check: pass, Flags: []string{results.FlagRoof}})
			}
			printBestPeer(&b, &results.Document{Records: recs, Ceilings: c.ceilings}, "dec")
			for _, w := range c.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("missing %q in\n%s", w, b.String())
				}
			}
			roofCol := strings.Contains(b.String(), "│ roof ")
			if roofCol != (c.name == "read roof" || c.name == "roofs over two sizes") {
				t.Errorf("a roof column: %v, want it only where the run timed a roof:\n%s", roofCol, b.String())
			}
			if c.name == "read roof" && !regexp.MustCompile(`│ 64 +│ S2 +│ 20\.00 +│ 0\.0% +│ - +│ 10\.00`).MatchString(b.String()) {
				t.Errorf("the M = 64 cell has no roof and must show \"-\" in its column:\n%s", b.String())
			}
			if over := strings.Contains(b.String(), "│ over read "); over != (c.name == "roofs over two sizes") {
				t.Errorf("an over-read column: %v, want it only where the roofs span two sizes:\n%s", over, b.String())
			}
			if model := strings.Contains(b.String(), "roof model"); model != (c.name == "roofs over two sizes") {
				t.Errorf("a roof model: %v, want it only where the roofs span two sizes:\n%s", model, b.String())
			}
		})
	}
}
