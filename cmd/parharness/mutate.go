package main

import (
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/mutate"
)

func init() {
	register(command{name: "mutate", usage: "mutation testing of the kernels: operators | list | build --out DIR | run --mutants DIR | report FILE.json", run: runMutate})
}

// mutateGateCommand is the gate command a run starts per mutant (a test's
// fake replaces it).
var mutateGateCommand = func() ([]string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return []string{self, "gate", "--quick", "--require-device", "--fail-fast"}, nil
}

func runMutate(args []string, stdout, stderr io.Writer) (int, error) {
	sub := map[string]func([]string, io.Writer, io.Writer) (int, error){
		"operators": mutateOperators, "list": mutateList, "build": mutateBuild, "run": mutateRun, "report": mutateReport,
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		fmt.Fprintln(stdout, "usage: parharness mutate operators | list | build --out DIR | run --mutants DIR --build build | report FILE.json")
		fmt.Fprintln(stdout, "Run `parharness mutate SUBCOMMAND -h` for its flags; docs/mutate.md describes the workflow.")
		if len(args) == 0 {
			return ExitUsage, usagef("mutate needs a subcommand")
		}
		return ExitOK, nil
	}
	f, ok := sub[args[0]]
	if !ok {
		return ExitUsage, usagef("mutate: unknown subcommand %q (operators, list, build, run, report)", args[0])
	}
	return f(args[1:], stdout, stderr)
}

// mutantSelection are the flags that choose the mutants (list and build).
type mutantSelection struct {
	root, sources, exclude, targets, operators *string
	perOpFile                                  *int
}

func selectionFlags(fs *flag.FlagSet) mutantSelection {
	return mutantSelection{
		root:      fs.String("root", ".", "the repository root (the Makefile, hipsrc/, the sources)"),
		sources:   fs.String("sources", "families/*/*.hip,hipsrc/format/*.h,hipsrc/rot/*.h,hipsrc/i8/*.h", "comma-separated globs of the sources to mutate, relative to --root"),
		exclude:   fs.String("exclude", "families/basics/*.hip", "comma-separated globs left out (default: the harness's own copy and self-test kernels, which no correctness gate is meant to judge)"),
		targets:   fs.String("targets", "sm_90a", "comma-separated code archs to build for (sm_90a, gfx1201); sites compiled for none of them are skipped"),
		operators: fs.String("operators", "", "comma-separated operator names to use (default: the whole catalogue, `parharness mutate operators`)"),
		perOpFile: fs.Int("per-op-file", 1, "at most this many mutants of one operator in one file (0: every site)"),
	}
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// generate loads the chosen sources and returns the mutant list.
func (sel mutantSelection) generate() ([]mutate.Mutant, []mutate.Target, []string, error) {
	var targets []mutate.Target
	var arch mutate.Arch
	for _, name := range splitList(*sel.targets) {
		t, err := mutate.TargetByName(name)
		if err != nil {
			return nil, nil, nil, usagef("--targets: %v", err)
		}
		targets = append(targets, t)
		arch |= t.Arch
	}
	if len(targets) == 0 {
		return nil, nil, nil, usagef("--targets is empty")
	}
	ops := splitList(*sel.operators)
	for _, o := range ops {
		if !knownOperator(o) {
			return nil, nil, nil, usagef("--operators: no operator %q (see `parharness mutate operators`)", o)
		}
	}
	if *sel.perOpFile < 0 {
		return nil, nil, nil, usagef("--per-op-file %d: use 0 (no cap) or more", *sel.perOpFile)
	}
	srcs, err := mutate.LoadSources(*sel.root, splitList(*sel.sources))
	if err != nil {
		return nil, nil, nil, usagef("--sources: %v", err)
	}
	var kept []*mutate.Source
	var paths []string
	for _, s := range srcs {
		excluded := false
		for _, g := range splitList(*sel.exclude) {
			if ok, err := filepath.Match(g, s.Path); err != nil {
				return nil, nil, nil, usagef("--exclude %q: %v", g, err)
			} else if ok {
				excluded = true
			}
		}
		if !excluded {
			kept = append(kept, s)
			paths = append(paths, s.Path)
		}
	}
	if len(kept) == 0 {
		return nil, nil, nil, usagef("--sources and --exclude leave no source to mutate")
	}
	var skip []string
	for _, k := range kernels.All() {
		if k.Role == kernels.Attribution {
			skip = append(skip, k.Name) // never gated by design: its mutants could only survive
		}
	}
	ms := mutate.Generate(kept, mutate.Options{PerOpFile: *sel.perOpFile, Targets: arch, Operators: ops, SkipFuncs: skip})
	return ms, targets, paths, nil
}

func knownOperator(name string) bool {
	for _, o := range mutate.Operators {
		if o.Name == name {
			return true
		}
	}
	return false
}

func mutateOperators(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("mutate operators", stderr)
	if err := parse(fs, args); err != nil {
		return ExitUsage, err
	}
	t := newTable(stdout)
	t.Header("operator", "the bug it plants", "rule")
	for _, o := range mutate.Catalogue() {
		t.Append(o.Name, o.Doc, o.Rule)
	}
	t.Render()
	fmt.Fprintf(stdout, "%d operators\n", len(mutate.Operators))
	return ExitOK, nil
}

func mutateList(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("mutate list", stderr)
	sel := selectionFlags(fs)
	if err := parse(fs, args); err != nil {
		return ExitUsage, err
	}
	ms, _, _, err := sel.generate()
	if err != nil {
		return ExitUsage, err
	}
	if err := mutate.WriteList(stdout, ms); err != nil {
		return ExitUsage, err
	}
	printOperatorCounts(stdout, ms)
	return ExitOK, nil
}

func printOperatorCounts(w io.Writer, ms []mutate.Mutant) {
	var parts []string
	for _, c := range mutate.CountByOperator(ms) {
		if c.N > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", c.Operator, c.N))
		}
	}
	fmt.Fprintf(w, "%d mutants: %s\n", len(ms), strings.Join(parts, ", "))
}

func mutateBuild(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("mutate build", stderr)
	sel := selectionFlags(fs)
	out := fs.String("out", "", "the mutant directory to write (manifest.json and the changed objects); replaced if it holds a manifest")
	clang := fs.String("clang", "", "the compiler (default: the Makefile's CLANG)")
	jobs := fs.Int("jobs", 0, "compiles at once (0: the CPU count)")
	if err := parse(fs, args); err != nil {
		return ExitUsage, err
	}
	if *out == "" {
		return ExitUsage, usagef("mutate build needs --out DIR")
	}
	ms, targets, paths, err := sel.generate()
	if err != nil {
		return ExitUsage, err
	}
	if len(ms) == 0 {
		return ExitUsage, usagef("no mutant: the operators found no site in the chosen sources")
	}
	if err := clearMutantDir(*out); err != nil {
		return ExitUsage, err
	}
	ctx, stop := interruptible()
	defer stop()
	cfg := mutate.BuildConfig{Root: *sel.root, Out: *out, Clang: *clang, Flags: map[string]string{}, Targets: targets, Jobs: *jobs, Log: stdout}
	if cfg.Clang == "" {
		if cfg.Clang, err = mutate.MakeVar(ctx, *sel.root, "CLANG"); err != nil {
			return ExitUsage, err
		}
	}
	for _, t := range targets {
		if cfg.Flags[t.Name], err = mutate.MakeVar(ctx, *sel.root, t.MakeVar); err != nil {
			return ExitUsage, err
		}
	}
	src, err := mutate.MakeVar(ctx, *sel.root, "SRC")
	if err != nil {
		return ExitUsage, err
	}
	cfg.Modules = strings.Fields(src)
	version, commit := toolVersion()
	m := &mutate.Manifest{Tool: version, Commit: commit, Date: time.Now().UTC().Format(time.RFC3339),
		Command: append([]string{"parharness", "mutate", "build"}, args...), Clang: cfg.Clang, Flags: cfg.Flags,
		Sources: paths, PerOpFile: *sel.perOpFile, Operators: mutate.Catalogue()}
	for _, t := range targets {
		m.Targets = append(m.Targets, t.Name)
	}
	fmt.Fprintf(stdout, "building %d mutants of %s for %s\n", len(ms), strings.Join(paths, ", "), strings.Join(m.Targets, ", "))
	start := time.Now()
	if err := mutate.Build(ctx, cfg, ms, m); err != nil {
		return ExitUsage, fmt.Errorf("mutate build: %v", err)
	}
	printBuildSummary(stdout, m, *out, time.Since(start))
	return ExitOK, nil
}

// clearMutantDir empties a previous mutant directory (one with a
// manifest), and refuses to write into any other non-empty directory.
func clearMutantDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) || (err == nil && len(entries) == 0) {
		return nil
	}
	if err != nil {
		return usagef("--out %s: %v", dir, err)
	}
	if _, err := os.Stat(filepath.Join(dir, mutate.ManifestName)); err != nil {
		return usagef("--out %s is not empty and holds no %s: not a mutant directory, refusing to replace it", dir, mutate.ManifestName)
	}
	return os.RemoveAll(dir)
}

func printBuildSummary(w io.Writer, m *mutate.Manifest, dir string, took time.Duration) {
	var ms []mutate.Mutant
	n := map[string]int{}
	raw, gz := 0, 0
	for _, bm := range m.Mutants {
		ms = append(ms, bm.Mutant)
		n[bm.Build]++
		for _, objs := range bm.Objects {
			for _, o := range objs {
				raw += o.Bytes
				gz += o.GzipBytes
			}
		}
	}
	printOperatorCounts(w, ms)
	fmt.Fprintf(w, "built %d, %s %d, %s %d", n[mutate.BuildOK], mutate.BuildFailed, n[mutate.BuildFailed], mutate.BuildIdentical, n[mutate.BuildIdentical])
	if n[mutate.BuildNoModule] > 0 {
		fmt.Fprintf(w, ", in no module %d", n[mutate.BuildNoModule])
	}
	fmt.Fprintf(w, " (%.0f s)\n", took.Seconds())
	fmt.Fprintf(w, "objects: %.1f MiB, %.1f MiB gzipped; %s holds %.1f MiB\n", float64(raw)/(1<<20), float64(gz)/(1<<20), dir, float64(dirSize(dir))/(1<<20))
	fmt.Fprintf(w, "manifest: %s\n", filepath.Join(dir, mutate.ManifestName))
}

func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// mutateRegistry is the run's view of the kernel and gate registries: each
// module's family, each family's device gates in the quick suite, and the
// kernels no quick-suite gate runs.
func mutateRegistry() mutate.Registry {
	r := mutate.Registry{ModuleFamily: map[string]string{}, FamilyGates: map[string][]string{}, Ungated: map[string]string{}}
	for _, k := range kernels.All() {
		r.ModuleFamily[k.Module] = k.Family
		switch {
		case k.Role == kernels.Attribution:
			r.Ungated[k.Name] = "attribution kernel, never gated"
		case !k.InSuite(false):
			r.Ungated[k.Name] = "experimental, not in the quick suite"
		}
	}
	for _, g := range gates.All() {
		if g.Device && g.Family != "" && g.Suites&gates.Quick != 0 {
			r.FamilyGates[g.Family] = append(r.FamilyGates[g.Family], g.Name)
		}
	}
	for f := range r.FamilyGates {
		sort.Strings(r.FamilyGates[f])
	}
	return r
}

func mutateRun(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("mutate run", stderr)
	dir := fs.String("mutants", "", "the mutant directory `parharness mutate build` wrote")
	buildDir := fs.String("build", defaultBuildDir(), "the unmutated build the mutants were built against (each mutant replaces a module of it)")
	arch := fs.String("arch", "sm_90a", "the device's code arch: which objects run")
	jobs := fs.Int("jobs", 4, "mutants at once (gate processes share the GPU)")
	jsonPath := fs.String("json", "", "write the results to this file, rewritten after each mutant")
	reportPath := fs.String("report", "", "write the markdown report here (default: the --json path with .md)")
	timeout := fs.Duration("timeout", 0, "longest a gate process may take before it is killed (0: 3x the control run's time + 60 s)")
	watchdog := fs.Duration("watchdog", 30*time.Second, "the gates' watchdog: a kernel that has not returned in this long fails its gate as hung")
	seed := fs.Uint64("seed", 1, "the gates' seed, the same for the control and every mutant")
	only := fs.String("only", "", "run only the mutants whose ID matches this regular expression")
	resume := fs.Bool("resume", false, "keep the finished mutants (and a passing control) of the --json file and run the rest")
	explain := fs.String("explain", "mutate/equivalent.txt", "the explanation file of survivors judged equivalent (missing: none)")
	sanitize := fs.String("sanitize", "", "run the survivors of the synchronisation operators ("+strings.Join(mutate.SyncOperators, ", ")+") again under this compute-sanitizer tool (racecheck); a reported hazard kills them")
	sanTimeout := fs.Duration("sanitize-timeout", 10*time.Minute, "longest a sanitized gate process may take (racecheck runs 10-100x slower)")
	if err := parse(fs, args); err != nil {
		return ExitUsage, err
	}
	if *dir == "" {
		return ExitUsage, usagef("mutate run needs --mutants DIR")
	}
	if *sanitize != "" && !slices.Contains(sanitizerTools, *sanitize) {
		return ExitUsage, usagef("--sanitize %q: want one of %s", *sanitize, strings.Join(sanitizerTools, ", "))
	}
	if *jobs < 1 {
		return ExitUsage, usagef("--jobs %d: at least 1", *jobs)
	}
	if *resume && *jsonPath == "" {
		return ExitUsage, usagef("--resume needs --json FILE (the run to resume)")
	}
	var re *regexp.Regexp
	if *only != "" {
		var err error
		if re, err = regexp.Compile(*only); err != nil {
			return ExitUsage, usagef("--only: %v", err)
		}
	}
	ex, err := mutate.ReadExplanations(*explain)
	if err != nil {
		return ExitUsage, err
	}
	gc, err := mutateGateCommand()
	if err != nil {
		return ExitUsage, err
	}
	ctx, stop := interruptible()
	defer stop()
	version, commit := toolVersion()
	cfg := mutate.RunConfig{Mutants: *dir, Build: *buildDir, Arch: *arch, GateCommand: gc, Jobs: *jobs, Timeout: *timeout,
		Watchdog: *watchdog, Seed: *seed, Only: re, JSON: *jsonPath, Resume: *resume, Reg: mutateRegistry(), Log: stdout,
		Command: append([]string{"parharness", "mutate", "run"}, args...), Tool: version, Commit: commit}
	if *sanitize != "" {
		cfg.Sanitizer = &mutate.SanitizerConfig{Tool: *sanitize, Command: []string{gc[0], "sanitize", "--tool", *sanitize, "--timeout", sanTimeout.String()},
			GateFlags: gc[2:], Timeout: *sanTimeout + time.Minute, Operators: mutate.SyncOperators}
	}
	res, runErr := mutate.Run(ctx, cfg)
	if res == nil {
		return ExitUsage, runErr
	}
	notes := ex.Apply(res)
	if *reportPath == "" && *jsonPath != "" {
		*reportPath = strings.TrimSuffix(*jsonPath, filepath.Ext(*jsonPath)) + ".md"
	}
	if *reportPath != "" {
		f, err := os.Create(*reportPath)
		if err != nil {
			return ExitUsage, err
		}
		err = mutate.WriteReport(f, res, notes)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return ExitUsage, err
		}
		fmt.Fprintf(stdout, "report written to %s\n", *reportPath)
	}
	if *jsonPath != "" {
		fmt.Fprintf(stdout, "results written to %s\n", *jsonPath)
	}
	code := printRunSummary(stdout, res)
	if runErr != nil {
		if ctx.Err() != nil {
			return 130, runErr
		}
		return ExitUsage, runErr
	}
	return code, nil
}

// printRunSummary prints the counts and returns the exit code: 0 when no
// mutant survived unexplained, 1 when one did, 2 when some could not be
// judged.
func printRunSummary(w io.Writer, res *mutate.Results) int {
	s := mutate.Summarize(res)
	fmt.Fprintf(w, "%d mutants: %d killed, %d survived, %d judged equivalent, %d %s, %d %s, %d not run, %d inconclusive, %d pending\n",
		s.Total, s.Killed, s.Survived, s.Judged, s.DidNotBuild, mutate.StatusDidNotBuild, s.Identical, mutate.StatusIdentical, s.NotRun, s.Inconclusive, s.Pending)
	if r, ok := s.Ratio(); ok {
		fmt.Fprintf(w, "kill ratio %d/%d = %.1f%%\n", s.Killed, s.Killed+s.Survived, 100*r)
	}
	switch {
	case s.Inconclusive > 0 || s.Pending > 0:
		return ExitUsage
	case s.Survived > 0:
		return ExitFail
	}
	return ExitOK
}

func mutateReport(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("mutate report", stderr)
	explain := fs.String("explain", "mutate/equivalent.txt", "the explanation file of survivors judged equivalent (missing: none)")
	out := fs.String("out", "", "write the markdown here instead of stdout")
	var pos []string
	rest := args
	for len(rest) > 0 { // the results file may come before or after the flags
		if err := fs.Parse(rest); err != nil {
			if err == flag.ErrHelp {
				return ExitOK, err
			}
			return ExitUsage, usageError{err.Error()}
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if err := checkFlags(fs); err != nil {
		return ExitUsage, err
	}
	if len(pos) != 1 {
		return ExitUsage, usagef("usage: parharness mutate report FILE.json [--explain FILE] [--out FILE.md]")
	}
	res, err := mutate.ReadResults(pos[0])
	if err != nil {
		return ExitUsage, err
	}
	ex, err := mutate.ReadExplanations(*explain)
	if err != nil {
		return ExitUsage, err
	}
	notes := ex.Apply(res)
	w := stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return ExitUsage, err
		}
		defer f.Close()
		w = f
	}
	if err := mutate.WriteReport(w, res, notes); err != nil {
		return ExitUsage, err
	}
	return ExitOK, nil
}
