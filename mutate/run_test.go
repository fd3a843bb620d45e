package mutate

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parharness/parharness/results"
)

// The test binary doubles as the gate command: with MUTATE_FAKE_GATE=1 it
// behaves as `parharness gate`, reading its verdict from the fake module
// the run put in --build (the mutant's "object" is a scenario name).
func TestMain(m *testing.M) {
	if os.Getenv("MUTATE_FAKE_GATE") == "1" {
		if len(os.Args) > 1 && os.Args[1] == "sanitize" {
			os.Exit(fakeSanitize(os.Args[2:]))
		}
		os.Exit(fakeGate(os.Args[1:]))
	}
	os.Exit(m.Run())
}

var fakeGateNames = []string{"gate-a", "gate-b", "gate-c"}

func fakeGate(args []string) int {
	fs := flag.NewFlagSet("fake gate", flag.ContinueOnError)
	fs.Bool("quick", false, "")
	only := fs.String("only", "", "")
	build := fs.String("build", "", "")
	jsonPath := fs.String("json", "", "")
	seed := fs.Uint64("seed", 0, "")
	watchdog := fs.Duration("watchdog", 0, "")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "fake gate: bad arguments", args)
		return 2
	}
	re := regexp.MustCompile(*only)
	b, err := os.ReadFile(filepath.Join(*build, "sm_90a", "fake.ptx"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake gate:", err)
		return 2
	}
	scenario := strings.TrimSpace(string(b))
	if other, err := os.ReadFile(filepath.Join(*build, "sm_90a", "other.ptx")); err == nil && strings.TrimSpace(string(other)) != "other" {
		scenario = strings.TrimSpace(string(other))
	}
	if _, err := os.Stat(filepath.Join(*build, "gfx1201", "fake.co")); err != nil {
		scenario = "the other arch's objects are missing from the assembled build"
	}
	if f, err := os.OpenFile(os.Getenv("MUTATE_FAKE_LOG"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
		fmt.Fprintf(f, "%s seed=%d watchdog=%s only=%s\n", scenario, *seed, *watchdog, *only)
		f.Close()
	}
	doc := &results.Document{Schema: results.SchemaVersion, Tool: "fake", Commit: "x", Date: "2026-01-01T00:00:00Z", Seed: *seed}
	add := func(status, reason string) {
		for _, g := range fakeGateNames {
			if re.MatchString(g) {
				doc.Gates = append(doc.Gates, results.GateRecord{Gate: g, Status: status, Reason: reason})
			}
		}
	}
	switch scenario {
	case "base", "survive", "race":
		add(results.Pass, "")
	case "fail":
		add(results.Pass, "")
		doc.Gates[0] = results.GateRecord{Gate: doc.Gates[0].Gate, Status: results.Fail, Reason: "pq_x M=9: 3 of 4096 elements differ, first at 7: got 1.5 want 1.25",
			Failures: []string{"pq_x M=9: 3 of 4096 elements differ, first at 7: got 1.5 want 1.25"}}
		results.Write(*jsonPath, doc)
		return 1
	case "fault":
		add(results.Pass, "")
		last := len(doc.Gates) - 1
		doc.Gates[last] = results.GateRecord{Gate: doc.Gates[last].Gate, Status: results.Fail, Reason: "pq_x M=1: 2 launches failed",
			Failures: []string{"pq_x M=1: 2 launches failed", "launch pq_x: cuCtxSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal memory access was encountered"}}
		results.Write(*jsonPath, doc)
		return 1
	case "hung":
		doc.Gates = []results.GateRecord{{Gate: "gate-a", Status: results.Fail, Reason: "hung: cuCtxSynchronize did not return within 30s (watchdog)"}}
		results.WritePartial(*jsonPath, doc, "gate gate-a hung; gates after it did not run")
		return 1
	case "hang":
		time.Sleep(time.Hour)
	case "crash":
		fmt.Fprintln(os.Stderr, "fatal error: the fake gate crashes")
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Hour)
	case "nosymbol":
		add(results.Error, "kernel pq_x: symbol not found in module build/sm_90a/fake.ptx (CUDA_ERROR_NOT_FOUND); rebuild with `make kernels`")
		results.Write(*jsonPath, doc)
		return 2
	case "nodevice":
		add(results.Error, "--require-device: no GPU device was opened")
		results.Write(*jsonPath, doc)
		return 2
	default:
		add(results.Error, "fake gate: unknown scenario "+scenario)
		results.Write(*jsonPath, doc)
		return 2
	}
	results.Write(*jsonPath, doc)
	return 0
}

// fakeSanitize behaves as `parharness sanitize --json FILE -- GATE FLAGS`:
// it runs the fake gate and adds the sanitizer's record, FAIL for the
// "race" scenario (the gates pass it: a race that computed right), PASS
// otherwise.
func fakeSanitize(args []string) int {
	if len(args) < 3 || args[0] != "--json" || args[2] != "--" {
		fmt.Fprintln(os.Stderr, "fake sanitize: bad arguments", args)
		return 2
	}
	jsonPath := args[1]
	gateArgs := append(append([]string{}, args[3:]...), "--json", jsonPath)
	code := fakeGate(gateArgs)
	doc, err := results.Read(jsonPath)
	if err != nil {
		return code
	}
	rec := results.GateRecord{Gate: "sanitizer-racecheck", Status: results.Pass}
	for i, a := range gateArgs {
		if a == "--build" {
			if b, _ := os.ReadFile(filepath.Join(gateArgs[i+1], "sm_90a", "fake.ptx")); strings.TrimSpace(string(b)) == "race" {
				rec.Status, rec.Reason = results.Fail, "compute-sanitizer --tool racecheck: 1 hazards displayed (1 errors, 0 warnings): Error: Race reported between Write access at k+0x10"
				code = 1
			}
		}
	}
	doc.Gates = append(doc.Gates, rec)
	results.Write(jsonPath, doc)
	return code
}

// fakeTree is a base build and a mutant directory whose mutants are
// scenarios of the fake gate.
type fakeTree struct {
	base, mutants, log string
}

type fakeMutant struct {
	id, module, content string
	build               string
	entries             []string
	gfxOnly             bool
	op                  string // the operator ("": lt-to-le)
}

func newFakeTree(t *testing.T, baseContent string, ms []fakeMutant) fakeTree {
	t.Helper()
	dir := t.TempDir()
	ft := fakeTree{base: filepath.Join(dir, "build"), mutants: filepath.Join(dir, "build-mut"), log: filepath.Join(dir, "gate.log")}
	files := map[string]string{"sm_90a/fake.ptx": baseContent + "\n", "sm_90a/other.ptx": "other\n", "gfx1201/fake.co": "co\n"}
	for p, c := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(ft.base, p)), 0o755)
		if err := os.WriteFile(filepath.Join(ft.base, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	man := &Manifest{Targets: []string{"sm_90a"}, Modules: []Module{
		{Name: "fake", Source: "families/fam/fake.hip", SHA256: map[string]string{"sm_90a": sha([]byte(files["sm_90a/fake.ptx"]))}},
		{Name: "other", Source: "families/fam2/other.hip", SHA256: map[string]string{"sm_90a": sha([]byte("other\n"))}},
	}}
	for i, fm := range ms {
		op := fm.op
		if op == "" {
			op = "lt-to-le"
		}
		bm := BuiltMutant{Mutant: Mutant{ID: fm.id, Operator: op, File: "families/fam/fake.hip", Line: 10 + i, Func: "k", Kernel: true,
			Before: "if (i < n)", After: "if (i <= n)"}, Build: fm.build, Modules: []string{fm.module}}
		if bm.Build == "" {
			bm.Build = BuildOK
		}
		if bm.Build == BuildOK {
			obj := []byte(fm.content + "\n")
			target := "sm_90a"
			if fm.gfxOnly {
				target = "gfx1201"
			}
			o := Object{Path: fm.id + "/" + target + "/" + fm.module + ".gz", SHA256: sha(obj), Bytes: len(obj), ChangedEntries: fm.entries}
			if _, err := writeGzip(filepath.Join(ft.mutants, o.Path), obj); err != nil {
				t.Fatal(err)
			}
			bm.Objects = map[string]map[string]Object{target: {fm.module: o}}
		} else {
			bm.Error = "families/fam/fake.hip:10:5: error: something"
		}
		man.Mutants = append(man.Mutants, bm)
	}
	os.MkdirAll(ft.mutants, 0o755)
	if err := WriteManifest(filepath.Join(ft.mutants, ManifestName), man); err != nil {
		t.Fatal(err)
	}
	return ft
}

func (ft fakeTree) config(t *testing.T) RunConfig {
	t.Helper()
	t.Setenv("MUTATE_FAKE_LOG", ft.log)
	return RunConfig{Mutants: ft.mutants, Build: ft.base, Arch: "sm_90a", GateCommand: []string{os.Args[0], "--quick"},
		Env: []string{"MUTATE_FAKE_GATE=1"}, Jobs: 3, Timeout: 20 * time.Second, Watchdog: 7 * time.Second, Seed: 42,
		Reg: Registry{ModuleFamily: map[string]string{"fake": "fam", "other": "fam2"},
			FamilyGates: map[string][]string{"fam": {"gate-a", "gate-b"}, "fam2": {"gate-c"}},
			Ungated:     map[string]string{"attr_kernel": "attribution kernel, never gated"}}}
}

func (ft fakeTree) invocations(t *testing.T) []string {
	b, err := os.ReadFile(ft.log)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func TestRunClassifies(t *testing.T) {
	ms := []fakeMutant{
		{id: "m-fail", module: "fake", content: "fail"},
		{id: "m-survive", module: "fake", content: "survive"},
		{id: "m-fault", module: "fake", content: "fault"},
		{id: "m-hung", module: "fake", content: "hung"},
		{id: "m-hang", module: "fake", content: "hang"},
		{id: "m-crash", module: "fake", content: "crash"},
		{id: "m-nosymbol", module: "fake", content: "nosymbol"},
		{id: "m-nodevice", module: "fake", content: "nodevice"},
		{id: "m-other", module: "other", content: "fail"},
		{id: "m-nobuild", build: BuildFailed},
		{id: "m-identical", build: BuildIdentical},
		{id: "m-ungated", module: "fake", content: "survive", entries: []string{"attr_kernel"}},
		{id: "m-gfx", module: "fake", content: "fail", gfxOnly: true},
	}
	ft := newFakeTree(t, "base", ms)
	cfg := ft.config(t)
	cfg.Timeout = 3 * time.Second
	cfg.JSON = filepath.Join(t.TempDir(), "mutate.json")
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ status, gate, failure string }{
		"m-fail":      {StatusKilled, "gate-a", "3 of 4096 elements differ"},
		"m-survive":   {StatusSurvived, "", ""},
		"m-fault":     {StatusKilledFault, "gate-b", "CUDA_ERROR_ILLEGAL_ADDRESS"},
		"m-hung":      {StatusKilledTimeout, "gate-a", "hung:"},
		"m-hang":      {StatusKilledTimeout, "", "ran past the 3s timeout"},
		"m-crash":     {StatusKilledCrash, "", "killed by killed"},
		"m-nosymbol":  {StatusKilledUnrunnable, "gate-a", "symbol not found"},
		"m-nodevice":  {StatusInconclusive, "gate-a", "--require-device"},
		"m-other":     {StatusKilled, "gate-c", "elements differ"},
		"m-nobuild":   {StatusDidNotBuild, "", "error: something"},
		"m-identical": {StatusIdentical, "", ""},
		"m-ungated":   {StatusNotRun, "", "attr_kernel (attribution kernel, never gated)"},
		"m-gfx":       {StatusNotRun, "", "identical code on sm_90a"},
	}
	if len(res.Results) != len(want) {
		t.Fatalf("%d results, want %d", len(res.Results), len(want))
	}
	for _, r := range res.Results {
		w := want[r.ID]
		t.Run(r.ID, func(t *testing.T) {
			if r.Status != w.status || r.Gate != w.gate || !strings.Contains(r.Failure, w.failure) {
				t.Errorf("status %q gate %q failure %q; want %q %q containing %q", r.Status, r.Gate, r.Failure, w.status, w.gate, w.failure)
			}
		})
	}
	if res.Control == nil || res.Control.Status != results.Pass || len(res.Control.Gates) != 3 {
		t.Errorf("control %+v, want a PASS of gate-a, gate-b and gate-c", res.Control)
	}
	// The gate processes got the run's seed and watchdog, and each mutant
	// only its family's gates.
	for _, inv := range ft.invocations(t) {
		if !strings.Contains(inv, "seed=42 watchdog=7s") {
			t.Errorf("invocation %q lacks the run's seed and watchdog", inv)
		}
		if strings.HasPrefix(inv, "fail ") && !strings.Contains(inv, "only=^(gate-a|gate-b)$") && !strings.Contains(inv, "only=^(gate-c)$") {
			t.Errorf("invocation %q: the gates are not the mutated module's family's", inv)
		}
	}
	// The written file is the complete run.
	back, err := ReadResults(cfg.JSON)
	if err != nil {
		t.Fatal(err)
	}
	if back.Partial || len(back.Results) != len(want) {
		t.Errorf("results file: partial %v with %d results", back.Partial, len(back.Results))
	}
}

func TestRunControlMustPass(t *testing.T) {
	ft := newFakeTree(t, "fail", []fakeMutant{{id: "m", module: "fake", content: "survive"}})
	_, err := Run(context.Background(), ft.config(t))
	var ce *ControlError
	if !errors.As(err, &ce) {
		t.Fatalf("a failing control gave %v, want a *ControlError", err)
	}
	if !strings.Contains(err.Error(), "gate-a FAIL") {
		t.Errorf("the error %q does not name the failing gate", err)
	}
	for _, inv := range ft.invocations(t) {
		if strings.HasPrefix(inv, "survive") {
			t.Error("a mutant ran after the control failed")
		}
	}
}

func TestRunBaseMismatch(t *testing.T) {
	ft := newFakeTree(t, "base", []fakeMutant{{id: "m", module: "fake", content: "fail"}})
	if err := os.WriteFile(filepath.Join(ft.base, "sm_90a", "fake.ptx"), []byte("a rebuilt module\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), ft.config(t))
	var be *BaseMismatchError
	if !errors.As(err, &be) || be.Module != "fake" {
		t.Fatalf("a base build of other sources gave %v, want a *BaseMismatchError for module fake", err)
	}
}

func TestRunResume(t *testing.T) {
	ft := newFakeTree(t, "base", []fakeMutant{{id: "m-fail", module: "fake", content: "fail"}, {id: "m-survive", module: "fake", content: "survive"}})
	cfg := ft.config(t)
	cfg.JSON = filepath.Join(t.TempDir(), "mutate.json")
	cfg.Only = regexp.MustCompile("fail")
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Only, cfg.Resume = nil, true
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, inv := range ft.invocations(t) {
		n[strings.Fields(inv)[0]]++
	}
	if n["fail"] != 1 || n["survive"] != 1 || n["base"] != 1 {
		t.Errorf("gate runs per scenario %v; want the failing mutant once, the survivor once, the control once (reused on resume)", n)
	}
	if len(res.Results) != 2 || res.Results[0].Status != StatusKilled || res.Results[1].Status != StatusSurvived {
		t.Errorf("resumed results %+v", res.Results)
	}
}

// TestRunInterrupted: a run cancelled mid-way writes what it has, marked
// partial, and leaves the unfinished mutants pending.
func TestRunInterrupted(t *testing.T) {
	ft := newFakeTree(t, "base", []fakeMutant{{id: "m-hang", module: "fake", content: "hang"}})
	cfg := ft.config(t)
	cfg.JSON = filepath.Join(t.TempDir(), "mutate.json")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			if b, _ := os.ReadFile(ft.log); strings.Contains(string(b), "hang") {
				cancel()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	start := time.Now()
	_, err := Run(ctx, cfg)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run returned %v, want context.Canceled", err)
	}
	if time.Since(start) > 15*time.Second {
		t.Errorf("the cancelled run took %v: the hung gate process was not killed", time.Since(start))
	}
	back, err := ReadResults(cfg.JSON)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Partial || back.Results[0].Status != StatusPending {
		t.Errorf("after an interrupt: partial %v, status %q; want partial and pending", back.Partial, back.Results[0].Status)
	}
}

func TestGatesFor(t *testing.T) {
	r := Registry{ModuleFamily: map[string]string{"a": "f", "b": "g", "c": "f"}, FamilyGates: map[string][]string{"f": {"x", "y"}, "g": {"y", "z"}}}
	if got := strings.Join(r.GatesFor([]string{"a", "b", "c"}), ","); got != "x,y,z" {
		t.Errorf("GatesFor = %s, want x,y,z", got)
	}
}

// With a sanitizer, the survivors of the sync operators run again under
// it: a reported hazard kills one (killed (sanitizer)), a clean run leaves
// it a survivor with the note, and other operators' survivors and the
// mutants the gates already killed are not sanitized. The sanitized
// control runs once.
func TestRunSanitizesSyncSurvivors(t *testing.T) {
	ms := []fakeMutant{
		{id: "m-race", module: "fake", content: "race", op: "sync-dropped"},
		{id: "m-sync-clean", module: "fake", content: "survive", op: "sync-dropped"},
		{id: "m-sync-fail", module: "fake", content: "fail", op: "sync-dropped"},
		{id: "m-race-other-op", module: "fake", content: "race"},
	}
	ft := newFakeTree(t, "base", ms)
	cfg := ft.config(t)
	cfg.Sanitizer = &SanitizerConfig{Tool: "racecheck", Command: []string{os.Args[0], "sanitize"}, GateFlags: []string{"--quick"},
		Timeout: 20 * time.Second, Operators: SyncOperators}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ status, gate, failure string }{
		"m-race":          {StatusKilledSanitizer, "sanitizer-racecheck", "Race reported"},
		"m-sync-clean":    {StatusSurvived, "", "racecheck: PASS"},
		"m-sync-fail":     {StatusKilled, "gate-a", "elements differ"},
		"m-race-other-op": {StatusSurvived, "", ""},
	}
	for _, r := range res.Results {
		w := want[r.ID]
		t.Run(r.ID, func(t *testing.T) {
			if r.Status != w.status || r.Gate != w.gate || !strings.Contains(r.Failure, w.failure) {
				t.Errorf("status %q gate %q failure %q; want %q %q containing %q", r.Status, r.Gate, r.Failure, w.status, w.gate, w.failure)
			}
		})
	}
	if c := res.SanitizerControl; c == nil || c.Status != results.Pass {
		t.Errorf("sanitizer control %+v, want PASS", c)
	}
	s := Summarize(res)
	if s.KilledBy[StatusKilledSanitizer] != 1 {
		t.Errorf("summary %+v: want one killed by the sanitizer", s)
	}
	var b strings.Builder
	if err := WriteReport(&b, res, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), StatusKilledSanitizer) || !strings.Contains(b.String(), "Sanitizer control") {
		t.Errorf("the report does not show the sanitizer's kills and control:\n%s", b.String())
	}
}

// A hazard in the unmutated build under the sanitizer means it cannot
// judge the mutants: none is killed by it.
func TestRunSanitizerControlMustPass(t *testing.T) {
	ft := newFakeTree(t, "race", []fakeMutant{{id: "m-race", module: "fake", content: "race", op: "sync-dropped"}})
	cfg := ft.config(t)
	cfg.Sanitizer = &SanitizerConfig{Tool: "racecheck", Command: []string{os.Args[0], "sanitize"}, GateFlags: []string{"--quick"},
		Timeout: 20 * time.Second, Operators: SyncOperators}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Results[0]; r.Status != StatusSurvived || !strings.Contains(r.Failure, "sanitized control did not pass") {
		t.Errorf("status %q failure %q: want a survivor the sanitizer did not judge", r.Status, r.Failure)
	}
}
