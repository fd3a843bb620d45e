package mutate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/parharness/parharness/results"
)

// Registry is what a run needs of the kernel and gate registries (the CLI
// fills it; this package imports neither).
type Registry struct {
	ModuleFamily map[string]string   // module -> the family that owns it
	FamilyGates  map[string][]string // family -> its device gates, in run order
	Ungated      map[string]string   // kernel -> why no gate runs it (attribution, experimental)
}

// GatesFor returns the gates meant to catch a mutant of these modules: the
// device gates of the families that own them, deduplicated, sorted.
func (r Registry) GatesFor(modules []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range modules {
		for _, g := range r.FamilyGates[r.ModuleFamily[m]] {
			if !seen[g] {
				seen[g] = true
				out = append(out, g)
			}
		}
	}
	sort.Strings(out)
	return out
}

// RunConfig says how to run the mutants.
type RunConfig struct {
	Mutants string // the mutant directory (manifest.json)
	Build   string // the unmutated build directory the mutants replace a module of
	Arch    string // the device's code arch: the objects used ("sm_90a")
	// GateCommand is the gate command's argv before the per-run flags
	// (--only, --build, --json, --seed, --watchdog), e.g.
	// [bin/parharness gate --quick --require-device --fail-fast].
	GateCommand []string
	Env         []string      // extra environment for the gate processes
	Jobs        int           // mutants at once
	Timeout     time.Duration // per gate process; 0: 3x the control run's time + 60 s
	Watchdog    time.Duration // the gate's --watchdog: a kernel hung this long fails the gate
	Seed        uint64        // the gates' --seed: the control and every mutant see the same inputs
	Only        *regexp.Regexp
	JSON        string // results file, rewritten after each mutant ("" for none)
	Resume      bool   // keep the results of JSON's finished mutants and its control
	Reg         Registry
	Log         io.Writer
	Command     []string // the command line, recorded
	Tool        string
	Commit      string
	// Sanitizer, when set, runs the survivors of its operators again under
	// a sanitizer; a hazard or error it reports kills the mutant.
	Sanitizer *SanitizerConfig
}

// SanitizerConfig is how survivors of the synchronisation operators are
// run again under compute-sanitizer: a dropped barrier races, and on a
// given device a race often computes right, so the value gates pass it;
// racecheck reports the shared-memory hazard whatever the values.
type SanitizerConfig struct {
	Tool string // "racecheck": the record "sanitizer-<tool>" in the results document decides
	// Command is the sanitize command's argv before --json and the "--"
	// that starts the gate flags, e.g. [bin/parharness sanitize --tool racecheck].
	Command []string
	// GateFlags are the gate flags after the "--" (the per-run flags follow),
	// e.g. [--quick --require-device --fail-fast].
	GateFlags []string
	Timeout   time.Duration // per sanitized gate process (0: 10 minutes)
	Operators []string      // the operators whose survivors are sanitized
}

// SyncOperators are the operators that plant a lost or misplaced
// synchronisation or memory order: the ones a sanitizer run is for.
var SyncOperators = []string{"sync-dropped", "order-relaxed"}

func (s *SanitizerConfig) applies(operator string) bool {
	return s != nil && slices.Contains(s.Operators, operator)
}

// Run statuses of a mutant.
const (
	StatusKilled           = "killed"                 // a gate FAILed: a wrong result, a canary, the poison
	StatusKilledTimeout    = "killed (timeout)"       // the gate's watchdog saw a hung kernel, or the process ran past the timeout
	StatusKilledFault      = "killed (fault)"         // a device fault (illegal address, ...) ended a gate
	StatusKilledCrash      = "killed (crash)"         // the gate process died without a complete results document
	StatusKilledUnrunnable = "killed (could not run)" // the mutated module could not be loaded (a missing symbol, a refused object)
	StatusKilledSanitizer  = "killed (sanitizer)"     // every gate passed, but the sanitizer reported a hazard or error in the run
	StatusSurvived         = "survived"               // every gate meant to catch it PASSed
	StatusDidNotBuild      = BuildFailed
	StatusIdentical        = BuildIdentical
	StatusJudged           = "equivalent (judged)" // a survivor the explanation file explains
	StatusNotRun           = "not run"             // nothing for the gates to see on this arch (Reason says why)
	StatusInconclusive     = "inconclusive"        // the gates could not judge it (no device, all skipped)
	StatusPending          = "pending"             // not run yet (a partial run)
)

// Killed reports whether a status is one of the killed kinds.
func Killed(status string) bool { return strings.HasPrefix(status, StatusKilled) }

// Results is one `mutate run`: the control, then every mutant's outcome.
type Results struct {
	Schema        int      `json:"schema"`
	Tool          string   `json:"tool"`
	Commit        string   `json:"commit"`
	Date          string   `json:"date"`
	Command       []string `json:"command"`
	MutantsDir    string   `json:"mutants_dir"`
	BuildDir      string   `json:"build_dir"`
	Arch          string   `json:"arch"`
	Seed          uint64   `json:"seed"`
	Jobs          int      `json:"jobs"`
	TimeoutS      float64  `json:"timeout_s"`
	Partial       bool     `json:"partial,omitempty"`
	PartialReason string   `json:"partial_reason,omitempty"`
	Control       *Control `json:"control,omitempty"`
	// SanitizerControl is the unmutated build's run under the sanitizer
	// (only with --sanitize): a hazard there would kill every mutant.
	SanitizerControl *Control `json:"sanitizer_control,omitempty"`
	Results          []Result `json:"results"`
}

// ResultsSchema is the version of the run results this package writes and reads.
const ResultsSchema = 1

// Control is the unmutated build's run of every gate the mutants need.
type Control struct {
	Gates   []GateOutcome     `json:"gates"`
	Seconds float64           `json:"seconds"`
	Status  string            `json:"status"` // PASS, or why it did not pass
	Base    map[string]string `json:"base"`   // module -> sha256 of the base object run
}

// GateOutcome is one gate's status in one gate process.
type GateOutcome struct {
	Gate    string  `json:"gate"`
	Status  string  `json:"status"`
	Reason  string  `json:"reason,omitempty"`
	Seconds float64 `json:"seconds"`
}

// Result is one mutant's outcome.
type Result struct {
	ID             string        `json:"id"`
	Operator       string        `json:"operator"`
	File           string        `json:"file"`
	Line           int           `json:"line"`
	Func           string        `json:"func"`
	Kernel         bool          `json:"kernel"`
	Before         string        `json:"before"`
	After          string        `json:"after"`
	Modules        []string      `json:"modules,omitempty"`
	ChangedEntries []string      `json:"changed_entries,omitempty"`
	BuildError     string        `json:"build_error,omitempty"`
	Status         string        `json:"status"`
	Gate           string        `json:"gate,omitempty"`    // the gate that killed it
	Failure        string        `json:"failure,omitempty"` // its first failure, or why the mutant has its status
	Gates          []GateOutcome `json:"gates,omitempty"`   // every gate's status in the mutant's run
	Exit           *int          `json:"exit,omitempty"`    // the gate process's exit code (nil: not run, or killed by a signal)
	Seconds        float64       `json:"seconds,omitempty"`
	Explanation    string        `json:"explanation,omitempty"` // why a survivor is equivalent (the explanation file)
}

func resultOf(bm BuiltMutant, arch string) Result {
	r := Result{ID: bm.ID, Operator: bm.Operator, File: bm.File, Line: bm.Line, Func: bm.Func, Kernel: bm.Kernel,
		Before: bm.Before, After: bm.After, Modules: bm.Modules, BuildError: bm.Error, Status: StatusPending}
	for _, mod := range sortedKeys(bm.Objects[arch]) {
		r.ChangedEntries = append(r.ChangedEntries, bm.Objects[arch][mod].ChangedEntries...)
	}
	return r
}

// ControlError is a control run that did not pass: the mutants cannot be
// judged against a base that fails its own gates.
type ControlError struct {
	Gates  []GateOutcome
	Reason string
}

func (e *ControlError) Error() string {
	var bad []string
	for _, g := range e.Gates {
		switch {
		case g.Status == results.Pass:
		case g.Reason == e.Reason || strings.HasSuffix(e.Reason, g.Reason):
			bad = append(bad, g.Gate+" "+g.Status) // its reason is the one above
		default:
			bad = append(bad, fmt.Sprintf("%s %s: %s", g.Gate, g.Status, oneLine(g.Reason)))
		}
	}
	msg := "the control run (the unmutated build) did not pass the gates the mutants need"
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	if len(bad) > 0 {
		msg += ": " + strings.Join(bad, "; ")
	}
	return msg + "; fix the base build (or the device) before judging mutants against it"
}

// BaseMismatchError is a base build whose module differs from the one the
// mutants were built against.
type BaseMismatchError struct{ Module, Path, Want, Got string }

func (e *BaseMismatchError) Error() string {
	return fmt.Sprintf("the base build's %s (sha256 %s) is not the module the mutants were built against (sha256 %s): rebuild both from one tree (`make kernels`, then `parharness mutate build`), or pass the --build directory they came from", e.Path, short(e.Got), short(e.Want))
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// Run runs the control and then the mutants, writing cfg.JSON after each.
func Run(ctx context.Context, cfg RunConfig) (*Results, error) {
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.Jobs <= 0 {
		cfg.Jobs = 1
	}
	if len(cfg.GateCommand) == 0 {
		return nil, errors.New("no gate command")
	}
	man, err := ReadManifest(cfg.Mutants)
	if err != nil {
		return nil, err
	}
	tgt, err := TargetByName(cfg.Arch)
	if err != nil {
		return nil, err
	}
	res := &Results{Schema: ResultsSchema, Tool: cfg.Tool, Commit: cfg.Commit, Date: time.Now().UTC().Format(time.RFC3339),
		Command: cfg.Command, MutantsDir: cfg.Mutants, BuildDir: cfg.Build, Arch: cfg.Arch, Seed: cfg.Seed, Jobs: cfg.Jobs}
	var prev *Results
	if cfg.Resume && cfg.JSON != "" {
		if p, err := ReadResults(cfg.JSON); err == nil {
			prev = p
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("--resume: %v", err)
		}
	}

	// Each mutant's plan: run it (with these gates), or its final status.
	type plan struct {
		bm    BuiltMutant
		gates []string
	}
	var plans []plan
	needGates := map[string]bool{}
	needMods := map[string]bool{}
	for _, bm := range man.Mutants {
		if cfg.Only != nil && !cfg.Only.MatchString(bm.ID) {
			continue
		}
		r := resultOf(bm, cfg.Arch)
		switch bm.Build {
		case BuildOK:
		case BuildFailed, BuildIdentical:
			r.Status, r.Failure = bm.Build, bm.Error
		default:
			r.Status, r.Failure = StatusNotRun, bm.Error
		}
		var gates []string
		if r.Status == StatusPending {
			objs := bm.Objects[cfg.Arch]
			gates = cfg.Reg.GatesFor(sortedKeys(objs))
			switch {
			case len(objs) == 0:
				r.Status, r.Failure = StatusNotRun, fmt.Sprintf("identical code on %s (it changes only another target's objects)", cfg.Arch)
			case allUngated(r.ChangedEntries, cfg.Reg.Ungated):
				r.Status, r.Failure = StatusNotRun, "changes only kernels no gate runs: "+ungatedList(r.ChangedEntries, cfg.Reg.Ungated)
			case len(gates) == 0:
				r.Status, r.Failure = StatusNotRun, fmt.Sprintf("no device gate checks module %s", strings.Join(sortedKeys(objs), ", "))
			}
		}
		if prev != nil && r.Status == StatusPending {
			if old := prev.find(bm.ID); old != nil && final(old.Status) && old.Before == r.Before && old.After == r.After {
				r = *old
			}
		}
		res.Results = append(res.Results, r)
		plans = append(plans, plan{bm, gates})
		if r.Status == StatusPending {
			for _, g := range gates {
				needGates[g] = true
			}
			for mod := range bm.Objects[cfg.Arch] {
				needMods[mod] = true
			}
		}
	}
	if len(plans) == 0 {
		return nil, fmt.Errorf("no mutant in %s matches --only", cfg.Mutants)
	}

	// The base build must be the one the mutants were built against.
	base := map[string]string{}
	for _, mod := range man.Modules {
		want := mod.SHA256[cfg.Arch]
		if !needMods[mod.Name] {
			continue
		}
		if want == "" {
			return nil, fmt.Errorf("the mutants in %s were not built for %s (targets %v): rebuild with --targets %s", cfg.Mutants, cfg.Arch, man.Targets, cfg.Arch)
		}
		path := filepath.Join(cfg.Build, cfg.Arch, mod.Name+tgt.Ext)
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("the base build: %v (run `make kernels`, or pass --build)", err)
		}
		if got := sha(b); got != want {
			return nil, &BaseMismatchError{Module: mod.Name, Path: path, Want: want, Got: got}
		}
		base[mod.Name] = want
	}

	work, err := os.MkdirTemp("", "parharness-mutate-run-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	var mu sync.Mutex
	save := func(partial bool, reason string) error {
		if cfg.JSON == "" {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		res.Partial, res.PartialReason = partial, reason
		return WriteResults(cfg.JSON, res)
	}

	// Control: the unmutated build, every gate the pending mutants need.
	gates := sortedKeys(needGates)
	if len(gates) > 0 {
		if prev != nil && prev.Control != nil && prev.Control.Status == results.Pass && sameBase(prev.Control.Base, base) && covers(prev.Control.Gates, gates) {
			res.Control = prev.Control
			fmt.Fprintf(cfg.Log, "control: reused from %s (passed %s)\n", cfg.JSON, gateNames(prev.Control.Gates))
		} else {
			fmt.Fprintf(cfg.Log, "control: %s on the unmutated build %s\n", strings.Join(gates, ", "), cfg.Build)
			timeout := cfg.Timeout
			if timeout == 0 {
				timeout = 30 * time.Minute
			}
			o := runGates(ctx, cfg, filepath.Join(work, "control"), cfg.Build, gates, timeout, nil)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			c := &Control{Gates: o.gates, Seconds: o.seconds, Base: base, Status: results.Pass}
			st, _, why := classify(gates, o)
			if st != StatusSurvived {
				c.Status = why
				res.Control = c
				save(true, "the control run did not pass")
				return res, &ControlError{Gates: o.gates, Reason: why}
			}
			res.Control = c
			fmt.Fprintf(cfg.Log, "control: PASS in %.1f s\n", o.seconds)
		}
	}
	timeout := cfg.Timeout
	if timeout == 0 && res.Control != nil {
		timeout = time.Duration(3*res.Control.Seconds*float64(time.Second)) + 60*time.Second
	}
	if timeout == 0 {
		timeout = 10 * time.Minute
	}
	res.TimeoutS = timeout.Seconds()
	if err := save(true, "running"); err != nil {
		return nil, err
	}

	// The sanitized control runs once, before the first sanitized mutant,
	// on every gate a sanitized mutant may need.
	sanTimeout := 10 * time.Minute
	var sanOnce sync.Once
	sanBad := ""
	sanControl := func(want []string) string {
		sanOnce.Do(func() {
			if cfg.Sanitizer.Timeout > 0 {
				sanTimeout = cfg.Sanitizer.Timeout
			}
			need := map[string]bool{}
			for _, p := range plans {
				if cfg.Sanitizer.applies(p.bm.Operator) {
					for _, g := range p.gates {
						need[g] = true
					}
				}
			}
			gs := sortedKeys(need)
			fmt.Fprintf(cfg.Log, "sanitizer control: %s under %s on the unmutated build\n", strings.Join(gs, ", "), cfg.Sanitizer.Tool)
			o := runGates(ctx, cfg, filepath.Join(work, "sanitizer-control"), cfg.Build, gs, sanTimeout, cfg.Sanitizer)
			c := &Control{Gates: o.gates, Seconds: o.seconds, Base: base, Status: results.Pass}
			if st, _, why := classifySanitized(gs, o, cfg.Sanitizer.Tool); st != StatusSurvived || why != "" && !strings.HasPrefix(why, cfg.Sanitizer.Tool+": PASS") {
				c.Status = fmt.Sprintf("%s: %s", st, why)
				sanBad = "the sanitized control did not pass (" + clip(oneLine(c.Status), 200) + ")"
			}
			mu.Lock()
			res.SanitizerControl = c
			mu.Unlock()
			fmt.Fprintf(cfg.Log, "sanitizer control: %s in %.1f s\n", clip(oneLine(c.Status), 200), o.seconds)
		})
		return sanBad
	}

	var todo []int
	for i, r := range res.Results {
		if r.Status == StatusPending {
			todo = append(todo, i)
		}
	}
	fmt.Fprintf(cfg.Log, "%d mutants to run (%d jobs, timeout %s each); %d already have a status\n", len(todo), cfg.Jobs, timeout, len(res.Results)-len(todo))
	done := 0
	err = parallel(ctx, cfg.Jobs, len(todo), func(k int) error {
		i := todo[k]
		p := plans[i]
		dir := filepath.Join(work, p.bm.ID)
		b, err := assembleBuild(cfg.Mutants, cfg.Build, cfg.Arch, dir, p.bm)
		if err != nil {
			return err
		}
		o := runGates(ctx, cfg, dir, b, p.gates, timeout, nil)
		if ctx.Err() != nil {
			return nil // interrupted: the mutant stays pending
		}
		st, gate, why := classify(p.gates, o)
		if st == StatusSurvived && cfg.Sanitizer.applies(p.bm.Operator) {
			if bad := sanControl(p.gates); bad != "" {
				why = cfg.Sanitizer.Tool + " not judged: " + bad
			} else {
				so := runGates(ctx, cfg, filepath.Join(dir, "sanitized"), b, p.gates, sanTimeout, cfg.Sanitizer)
				if ctx.Err() != nil {
					return nil
				}
				st, gate, why = classifySanitized(p.gates, so, cfg.Sanitizer.Tool)
				if st != StatusSurvived {
					o = so
					if st != StatusKilledSanitizer {
						why = "under " + cfg.Sanitizer.Tool + ": " + why
					}
				}
			}
		}
		mu.Lock()
		r := &res.Results[i]
		r.Status, r.Gate, r.Failure, r.Gates, r.Exit, r.Seconds = st, gate, why, o.gates, o.exit, o.seconds
		done++
		fmt.Fprintf(cfg.Log, "[%d/%d] %-44s %-22s %s\n", done, len(todo), r.ID, r.Status, clip(oneLine(strings.TrimSpace(r.Gate+" "+r.Failure)), 100))
		mu.Unlock()
		os.RemoveAll(dir)
		return save(true, "running")
	})
	if ctx.Err() != nil {
		save(true, "interrupted: the mutants still pending did not run")
		return res, ctx.Err()
	}
	if err != nil {
		save(true, "stopped: "+err.Error())
		return res, err
	}
	return res, save(false, "")
}

func final(status string) bool { return status != StatusPending && status != StatusInconclusive }

func (r *Results) find(id string) *Result {
	for i := range r.Results {
		if r.Results[i].ID == id {
			return &r.Results[i]
		}
	}
	return nil
}

func sameBase(a, b map[string]string) bool {
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}

func covers(have []GateOutcome, want []string) bool {
	got := map[string]bool{}
	for _, g := range have {
		got[g.Gate] = g.Status == results.Pass
	}
	for _, w := range want {
		if !got[w] {
			return false
		}
	}
	return true
}

func gateNames(gs []GateOutcome) string {
	var s []string
	for _, g := range gs {
		s = append(s, g.Gate)
	}
	return strings.Join(s, ", ")
}

func allUngated(entries []string, ungated map[string]string) bool {
	if len(entries) == 0 {
		return false
	}
	for _, e := range entries {
		if _, ok := ungated[e]; !ok {
			return false
		}
	}
	return true
}

func ungatedList(entries []string, ungated map[string]string) string {
	var s []string
	for _, e := range entries {
		s = append(s, e+" ("+ungated[e]+")")
	}
	return strings.Join(s, ", ")
}

// assembleBuild makes dir/build: the base build with the mutant's objects
// for arch in place of the modules they replace (every other file a
// symlink to the base one). It returns the build directory.
func assembleBuild(mutDir, baseDir, arch, dir string, bm BuiltMutant) (string, error) {
	bdir := filepath.Join(dir, "build")
	absBase, err := filepath.Abs(baseDir)
	if err != nil {
		return "", err
	}
	entries, err := os.ReadDir(absBase)
	if err != nil {
		return "", fmt.Errorf("the base build: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(bdir, arch), 0o755); err != nil {
		return "", err
	}
	for _, e := range entries {
		if e.Name() == arch {
			continue
		}
		if err := os.Symlink(filepath.Join(absBase, e.Name()), filepath.Join(bdir, e.Name())); err != nil {
			return "", err
		}
	}
	objs := bm.Objects[arch]
	replaced := map[string]bool{}
	for mod, o := range objs {
		b, err := readGzip(filepath.Join(mutDir, filepath.FromSlash(o.Path)))
		if err != nil {
			return "", fmt.Errorf("mutant %s: %v", bm.ID, err)
		}
		if sha(b) != o.SHA256 {
			return "", fmt.Errorf("mutant %s: %s does not hold the object the manifest describes (sha256 differs): rebuild the mutants", bm.ID, o.Path)
		}
		t, _ := TargetByName(arch)
		name := mod + t.Ext
		if err := os.WriteFile(filepath.Join(bdir, arch, name), b, 0o644); err != nil {
			return "", err
		}
		replaced[name] = true
	}
	files, err := os.ReadDir(filepath.Join(absBase, arch))
	if err != nil {
		return "", fmt.Errorf("the base build: %v", err)
	}
	for _, f := range files {
		if replaced[f.Name()] {
			continue
		}
		if err := os.Symlink(filepath.Join(absBase, arch, f.Name()), filepath.Join(bdir, arch, f.Name())); err != nil {
			return "", err
		}
	}
	return bdir, nil
}

// childOutcome is what one gate process left: its results (if it wrote
// any), how it ended, the tail of its output.
type childOutcome struct {
	gates    []GateOutcome
	doc      *results.Document
	docErr   error
	exit     *int
	signal   string // the signal that ended it, if one did
	timedOut bool
	timeout  time.Duration
	seconds  float64
	logTail  string
	startErr error
}

// runGates runs the gate command once on buildDir for gates (under the
// sanitizer when san is set).
func runGates(ctx context.Context, cfg RunConfig, dir, buildDir string, gates []string, timeout time.Duration, san *SanitizerConfig) childOutcome {
	o := childOutcome{timeout: timeout}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		o.startErr = err
		return o
	}
	jsonPath := filepath.Join(dir, "gates.json")
	quoted := make([]string, len(gates))
	for i, g := range gates {
		quoted[i] = regexp.QuoteMeta(g)
	}
	argv := cfg.GateCommand
	args := append([]string{}, cfg.GateCommand[1:]...)
	if san != nil {
		argv = san.Command
		args = append(append(append([]string{}, san.Command[1:]...), "--json", jsonPath, "--"), san.GateFlags...)
	}
	args = append(args, "--only", "^("+strings.Join(quoted, "|")+")$", "--build", buildDir, "--seed", strconv.FormatUint(cfg.Seed, 10))
	if san == nil {
		args = append(args, "--json", jsonPath)
	}
	switch {
	case san != nil && san.Timeout > 0:
		// A sanitized kernel runs 10-100x slower: the watchdog waits as
		// long as the process may run, so slowness is not taken for a hang.
		args = append(args, "--watchdog", san.Timeout.String())
	case cfg.Watchdog > 0:
		args = append(args, "--watchdog", cfg.Watchdog.String())
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, argv[0], args...)
	procs := runtime.NumCPU() / max(cfg.Jobs, 1)
	cmd.Env = append(append(os.Environ(), cfg.Env...), "GOMAXPROCS="+strconv.Itoa(max(procs, 2)))
	logf, err := os.Create(filepath.Join(dir, "gate.log"))
	if err != nil {
		o.startErr = err
		return o
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group, killed whole: a hung gate process leaves no
	// child behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	err = cmd.Run()
	o.seconds = time.Since(start).Seconds()
	o.timedOut = cctx.Err() == context.DeadlineExceeded
	var ee *exec.ExitError
	switch {
	case err == nil:
		z := 0
		o.exit = &z
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			o.signal = ws.Signal().String()
		} else {
			c := ee.ExitCode()
			o.exit = &c
		}
	default:
		o.startErr = err
	}
	o.logTail = tail(filepath.Join(dir, "gate.log"), 4096)
	o.doc, o.docErr = results.Read(jsonPath)
	if o.doc != nil {
		for _, g := range o.doc.Gates {
			o.gates = append(o.gates, GateOutcome{Gate: g.Gate, Status: g.Status, Reason: g.Reason, Seconds: g.Seconds})
		}
	}
	return o
}

// faultRE matches the device-fault names of CUDA and HIP.
var faultRE = regexp.MustCompile(`(?i)ILLEGAL_ADDRESS|ILLEGAL_INSTRUCTION|MISALIGNED_ADDRESS|INVALID_ADDRESS_SPACE|INVALID_PC|` +
	`LAUNCH_FAILED|HARDWARE_STACK_ERROR|CUDA_ERROR_ASSERT|hipErrorIllegalAddress|hipErrorLaunchFailure|` +
	`illegal memory access|unspecified launch failure|memory access fault`)

// classify turns one gate process's outcome into a status, the gate that
// decided it and the reason (the first failure, or why).
func classify(want []string, o childOutcome) (status, gate, why string) {
	if o.startErr != nil {
		return StatusInconclusive, "", "the gate process did not start: " + o.startErr.Error()
	}
	byName := map[string]GateOutcome{}
	for _, g := range o.gates {
		byName[g.Gate] = g
	}
	// A gate's verdict decides first, in the order wanted.
	for _, w := range want {
		g, ok := byName[w]
		if !ok || g.Status != results.Fail {
			continue
		}
		switch {
		case strings.HasPrefix(g.Reason, "hung:"):
			return StatusKilledTimeout, w, g.Reason
		case faultRE.MatchString(g.Reason) || faultRE.MatchString(failuresOf(o.doc, w)):
			return StatusKilledFault, w, firstFault(g.Reason, failuresOf(o.doc, w))
		}
		return StatusKilled, w, g.Reason
	}
	for _, w := range want {
		g, ok := byName[w]
		if !ok || g.Status != results.Error {
			continue
		}
		switch {
		case faultRE.MatchString(g.Reason):
			return StatusKilledFault, w, g.Reason
		case strings.Contains(g.Reason, "--require-device"):
			return StatusInconclusive, w, g.Reason
		}
		return StatusKilledUnrunnable, w, g.Reason
	}
	if o.timedOut {
		return StatusKilledTimeout, "", fmt.Sprintf("the gate process ran past the %s timeout and was killed", o.timeout)
	}
	if o.doc == nil || o.doc.Partial || o.signal != "" || o.exit == nil || (*o.exit != 0 && *o.exit != 1 && *o.exit != 2) {
		how := "exited"
		switch {
		case o.signal != "":
			how = "was killed by " + o.signal
		case o.exit != nil:
			how = fmt.Sprintf("exited %d", *o.exit)
		}
		doc := "without a results document"
		if o.doc != nil && o.doc.Partial {
			doc = "with a partial results document (" + o.doc.PartialReason + ")"
		} else if o.docErr != nil && !errors.Is(o.docErr, os.ErrNotExist) {
			doc = "with an unreadable results document (" + o.docErr.Error() + ")"
		}
		msg := fmt.Sprintf("the gate process %s %s", how, doc)
		if t := lastLine(o.logTail); t != "" {
			msg += ": " + t
		}
		if faultRE.MatchString(o.logTail) {
			return StatusKilledFault, "", msg
		}
		return StatusKilledCrash, "", msg
	}
	var missing, skipped []string
	passed := 0
	for _, w := range want {
		g, ok := byName[w]
		switch {
		case !ok:
			missing = append(missing, w)
		case g.Status == results.Skip:
			skipped = append(skipped, w+": "+g.Reason)
		case g.Status == results.Pass:
			passed++
		}
	}
	if len(missing) > 0 {
		return StatusInconclusive, "", "the results document lacks gates " + strings.Join(missing, ", ")
	}
	if passed == 0 {
		return StatusInconclusive, "", "every gate skipped: " + strings.Join(skipped, "; ")
	}
	return StatusSurvived, "", ""
}

// classifySanitized judges a run under the sanitizer: a gate's own verdict
// first (as classify), then the sanitizer's record: FAIL kills the mutant
// (StatusKilledSanitizer, with the tool's first report line); PASS leaves
// it a survivor with a note; anything else (no summary, SKIP, the record
// missing) leaves it a survivor with the reason the sanitizer could not
// judge it.
func classifySanitized(want []string, o childOutcome, tool string) (status, gate, why string) {
	st, gate, why := classify(want, o)
	// A hang or a crash under the sanitizer is the tool's slowness or its
	// own failure as often as the mutant's: not a kill.
	if Killed(st) && st != StatusKilledCrash && st != StatusKilledTimeout {
		return st, gate, why
	}
	name := "sanitizer-" + tool
	var rec *results.GateRecord
	if o.doc != nil {
		for i := range o.doc.Gates {
			if o.doc.Gates[i].Gate == name {
				rec = &o.doc.Gates[i]
			}
		}
	}
	switch {
	case rec != nil && rec.Status == results.Fail:
		return StatusKilledSanitizer, name, rec.Reason
	case rec != nil && rec.Status == results.Pass && st == StatusSurvived:
		return StatusSurvived, "", tool + ": PASS, nothing reported"
	case o.timedOut:
		return StatusSurvived, "", fmt.Sprintf("%s could not judge it: the run passed the %s timeout", tool, o.timeout)
	case rec != nil:
		return StatusSurvived, "", fmt.Sprintf("%s could not judge it: %s %s", tool, rec.Status, rec.Reason)
	}
	return StatusSurvived, "", fmt.Sprintf("%s could not judge it: %s %s", tool, st, why)
}

func failuresOf(doc *results.Document, gate string) string {
	if doc == nil {
		return ""
	}
	for _, g := range doc.Gates {
		if g.Gate == gate {
			return strings.Join(g.Failures, "\n")
		}
	}
	return ""
}

// firstFault is the reason, or the first failure naming the fault when
// the reason does not.
func firstFault(reason, failures string) string {
	if faultRE.MatchString(reason) {
		return reason
	}
	for _, l := range strings.Split(failures, "\n") {
		if faultRE.MatchString(l) {
			return l
		}
	}
	return reason
}

func tail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := st.Size() - n
	if off < 0 {
		off = 0
	}
	b := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	return string(b)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n-3] + "..."
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
