package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter/tw"

	"github.com/parharness/parharness/bench"
	"github.com/parharness/parharness/families/basics"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/internal/progress"
	"github.com/parharness/parharness/internal/textutil"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/results"
	"github.com/parharness/parharness/shapes"
)

func init() {
	register(command{name: "bench2", usage: "graph-timed, cache-cold, interleaved A/B sweep: bench2 SUITE [--m LIST] [--variants LIST] [--json FILE]", run: runBench2})
}

func parseInts(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		if slices.Contains(out, v) {
			return nil, fmt.Errorf("%d is listed twice: each point is measured once", v)
		}
		out = append(out, v)
	}
	return out, nil
}

func suiteList() string {
	var names []string
	for _, s := range bench.Suites() {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}

// rooflineSlackPct is how far above the measured copy ceiling a cold record
// may read before it is flagged as a leaked cold regime: the ceiling is a
// read+write copy, which a read-mostly stream (a decode GEMM's weights) can
// beat by a few percent, and it moves between runs (0.3% across the six
// bench2 runs in results/h200-2026-11-29: 3937.6-3950.2 GB/s, H200,
// 2026-11-29); 5% keeps both out of the flag.
const rooflineSlackPct = 5

func runBench2(args []string, stdout, stderr io.Writer) (int, error) {
	if len(args) > 0 && isHelpFlag(args[0]) {
		fmt.Fprintf(stderr, "usage: parharness bench2 SUITE [flags]; `parharness bench2 SUITE -h` for the flags\nsuites:\n")
		for _, s := range bench.Suites() {
			fmt.Fprintf(stderr, "  %-7s %s\n", s.Name, s.Doc)
		}
		return ExitOK, nil
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return ExitUsage, usagef("usage: parharness bench2 SUITE [flags]; suites: %s", suiteList())
	}
	suite, ok := bench.LookupSuite(args[0])
	if !ok {
		return ExitUsage, usagef("unknown suite %q; suites: %s", args[0], suiteList())
	}
	fs := newFlags("bench2 "+suite.Name, stderr)
	mList := fs.String("m", "", "comma-separated M values (default: the suite's ladder)")
	variants := fs.String("variants", "", "comma-separated variants to run beside the baseline (default: all)")
	jsonPath := fs.String("json", "", "write results JSON to this file (atomically)")
	reps := fs.Int("reps", bench.DefaultConfig.Reps, "timed replays per variant (>= 4), interleaved")
	warmup := fs.Duration("warmup", bench.DefaultConfig.Warmup, "wall-clock warm-up before the timed replays")
	minGraph := fs.Float64("min-graph-us", bench.DefaultConfig.MinGraphUS, "grow calls per graph until a replay takes this long")
	backend := fs.String("backend", "auto", "device backend: auto, cuda, hip or none")
	device := deviceFlag(fs)
	buildDir := fs.String("build", defaultBuildDir(), "code object directory")
	watchdog := fs.Duration("watchdog", 120*time.Second, "longest wait for the device before declaring a kernel hung")
	benchfmt := fs.Bool("benchfmt", false, "print only Go benchmark format lines on stdout (for benchstat; the tables go to stderr)")
	shapesArg := fs.String("shapes", "qwen38-27b-tp2", "shapes file, or a built-in set name ("+strings.Join(shapes.Builtins(), ", ")+")")
	shardArg := fs.String("shard", "", "measure only part I/N of the sweep's points (point k goes to part k mod N); merge the parts with parharness merge")
	devicesArg := fs.String("devices", "", "distribute the points over several devices, one child process each: all, or a list of indices or PCI bus ids")
	deviceTimeout := fs.Duration("device-timeout", 2*time.Hour, "with --devices: longest one device's part may take before it is killed")
	regimes := fs.String("regimes", "auto", "timing regimes of cold points: stream (graph replays through a rotation of 3x the last-level cache), stream,isolated (also each call alone after a cache scrub), or auto (the suite's default: both for dec and the producer suites)")
	isoReps := fs.Int("isolated-reps", 30, "single timed launches per variant in the isolated regime")
	scrubKind := fs.String("scrub", basics.ScrubRead, "the isolated regime's cache scrub: read (reads 3x the last-level cache, leaving clean lines) or copy (copies 3x the cache, leaving dirty lines whose write-back the timed launch pays)")
	maxGrid := fs.Int("max-grid", 0, "cap the grid of the kernels that size it to the device (stream-K) at this many blocks, to probe how their time depends on it (0: one block a resident slot); every record is flagged grid-capped")
	allowProfiler := fs.Bool("allow-profiler", false, "time even under a profiler or sanitizer (every record is flagged under-profiler)")
	cpuProfile := cpuProfileFlag(fs)
	launchOnce := fs.Bool("launch-once", false, "time nothing: launch each variant of each point once, checked, for a profiler to capture (ncu --clock-control none -k regex:KERNEL --launch-count N), and print the launches in order; no ceilings and no results JSON")
	fs.Usage = func() {
		o := fs.Output()
		fmt.Fprintf(o, "usage: parharness bench2 %s [flags]\n%s\n", suite.Name, suite.Doc)
		if suite.Axes != "" {
			fmt.Fprintf(o, "axes: %s\n", suite.Axes)
		}
		if suite.Variants != nil {
			fmt.Fprintf(o, "variants (--variants; the baseline always runs): %s\n", bench.VariantList(suite.Variants()))
		}
		fmt.Fprintln(o, "flags:")
		fs.PrintDefaults()
	}
	if err := parse(fs, args[1:]); err != nil {
		return ExitUsage, err
	}
	var vs []string
	if *variants != "" {
		vs = strings.Split(*variants, ",")
		for i := range vs {
			vs[i] = strings.TrimSpace(vs[i])
		}
	}
	if err := suite.CheckVariants(vs); err != nil {
		return ExitUsage, usagef("--variants: %v", err)
	}
	// --benchfmt: stdout is for benchstat alone, so everything a person
	// reads goes to stderr.
	var benchOut io.Writer
	if *benchfmt {
		benchOut, stdout = stdout, stderr
	}
	var isolated bool
	switch *regimes {
	case "auto":
		isolated = suite.Isolated
	case "stream":
	case "stream,isolated", "isolated,stream":
		isolated = true
	default:
		return ExitUsage, usagef("--regimes %q: want auto, stream or stream,isolated", *regimes)
	}
	if *isoReps < 4 {
		return ExitUsage, usagef("--isolated-reps %d: at least 4", *isoReps)
	}
	if *scrubKind != basics.ScrubRead && *scrubKind != basics.ScrubCopy {
		return ExitUsage, usagef("--scrub %q: want %s or %s", *scrubKind, basics.ScrubRead, basics.ScrubCopy)
	}
	if *maxGrid < 0 {
		return ExitUsage, usagef("--max-grid %d: want a block count, or 0 for the device's", *maxGrid)
	}
	if *launchOnce && *jsonPath != "" {
		return ExitUsage, usagef("--launch-once times nothing, so it writes no results JSON: drop --json")
	}
	if *launchOnce && *devicesArg != "" {
		return ExitUsage, usagef("--launch-once runs on one device: drop --devices")
	}
	if *launchOnce && *benchfmt {
		return ExitUsage, usagef("--launch-once times nothing, so it has no benchmark lines: drop --benchfmt")
	}
	profiler := gpu.ProfilerInjected(os.Environ())
	if profiler != "" && !*allowProfiler && !*launchOnce {
		return ExitUsage, usagef("a profiler or sanitizer is injected (%s): its overhead would be in every time; run without it, or pass --allow-profiler to time anyway with every record flagged", profiler)
	}
	shard, err := parseShard(*shardArg)
	if err != nil {
		return ExitUsage, err
	}
	if *devicesArg != "" {
		if *cpuProfile != "" {
			return ExitUsage, usagef("--cpuprofile profiles one process: drop --devices, or profile one device's run")
		}
		if *device != "" || shard != nil {
			return ExitUsage, usagef("--devices excludes --device and --shard (it picks both for each device)")
		}
		return benchOnDevices(args, *backend, *devicesArg, *jsonPath, *deviceTimeout, stdout, benchOut)
	}
	ms, err := parseInts(*mList)
	if err != nil {
		return ExitUsage, usagef("--m: %v", err)
	}
	set, err := loadShapes(*shapesArg)
	if err != nil {
		return ExitUsage, err
	}
	stopProfile, err := startCPUProfile(*cpuProfile, stderr)
	if err != nil {
		return ExitUsage, err
	}
	defer stopProfile()
	denv := openDevice(*backend, *device, *buildDir)
	defer denv.close()
	if denv.dev == nil {
		return ExitUsage, fmt.Errorf("a bench needs a GPU: %v", denv.devErr)
	}
	cfg := bench.DefaultConfig
	cfg.Reps, cfg.Warmup, cfg.MinGraphUS = *reps, *warmup, *minGraph
	eng, err := bench.NewEngine(denv.dev, cfg)
	if err != nil {
		return ExitUsage, err
	}
	defer eng.Close()
	eng.IsolatedReps = *isoReps
	// Checks run on shared memory full of NaN (kernels.SharedFill), as the
	// gates do; a build without the fill kernel is checked without it, and
	// every record says so.
	if fill, err := denv.loader.SharedFill(); err == nil {
		eng.PoisonShared = func() error { return fill.Launch(kernels.SharedPoison) }
	} else {
		fmt.Fprintf(stderr, "bench2: %v: checks run on whatever shared memory holds (records flagged %s)\n", err, results.FlagSharedUnpoisoned)
		eng.Flags = append(eng.Flags, results.FlagSharedUnpoisoned)
	}
	if profiler != "" {
		eng.Flags = append(eng.Flags, results.FlagUnderProfiler)
	}
	if *maxGrid > 0 {
		eng.Flags = append(eng.Flags, results.FlagGridCapped)
	}
	version, commit := toolVersion()
	doc := &results.Document{Schema: results.SchemaVersion, Tool: version, Commit: commit,
		Date: time.Now().UTC().Format(time.RFC3339), Command: append([]string{"parharness", "bench2"}, args...),
		Device: deviceRecord(denv.dev), CodeObjects: codeObjectHashes(*buildDir, denv.dev)}
	ctx := &bench.Ctx{Dev: denv.dev, Kernels: denv.loader, Engine: eng, Ms: ms, Variants: vs, Shapes: set, Log: stderr, Suite: suite.Name, Shard: shard, MaxGrid: *maxGrid}
	doc.Shard = shard
	// Progress on stderr (internal/progress: quiet for 10 s, then a
	// redrawn line on a terminal or a line every 10 s in a log): the copy
	// ceiling's sizes, then the suite's points, each reported as it starts.
	var meter *progress.Meter
	startMeter := func(label, unit string) {
		meter.Done()
		meter = progress.New(stderr, label, unit, 0, progress.ForWriter(stderr))
	}
	defer func() { meter.Done() }() // a terminal's line erased on every way out
	points := 0
	ctx.Progress = func(done, total int, what string) {
		points = total
		meter.Set(done, total, what)
	}
	writePartial := func(reason string) { // the watchdog and onInterrupt exit the process next
		stopProfile()
		if *launchOnce { // no document: the launches so far are what a profile needs
			fmt.Fprintf(stdout, "launch-once stopped (%s); the launches so far:\n", reason)
			printLaunches(stdout, ctx.RecordsSnapshot())
			return
		}
		doc.Records = ctx.RecordsSnapshot()
		if *jsonPath != "" {
			if err := results.WritePartial(*jsonPath, doc, reason); err == nil {
				fmt.Fprintf(stderr, "partial results written to %s\n", *jsonPath)
			} else {
				fmt.Fprintf(stderr, "writing partial results: %v\n", err)
			}
		}
	}
	gpu.SetWatchdog(*watchdog, func(what string, after time.Duration) {
		writePartial(fmt.Sprintf("hung: %s did not return within %s", what, after))
	})
	stopInterrupt := onInterrupt(stderr, writePartial)
	defer stopInterrupt()
	nv, nvErr := gpu.OpenNVML()
	if nvErr == nil && *device != "" && *device != "0" {
		// NVML numbers devices in PCI order, the driver API may not: sample
		// nothing rather than another card's clocks.
		nv.Close()
		nvErr = fmt.Errorf("--device %s: NVML's device numbering may differ from the driver's, so clocks are not sampled", *device)
	}
	sample := func(when string) {
		if nvErr != nil {
			return
		}
		if s, err := nv.Sample(0); err == nil {
			doc.Device.Clocks = append(doc.Device.Clocks, results.ClockSample{When: when, SMMHz: s.SMMHz, MemMHz: s.MemMHz, TempC: s.TempC, PowerW: s.PowerW})
		}
	}
	if nvErr != nil {
		fmt.Fprintf(stdout, "clocks: not recorded (%v)\n", nvErr)
	} else {
		defer nv.Close()
		eng.Clocks = func() (results.ClockSample, []string, error) {
			s, err := nv.Sample(0)
			return results.ClockSample{SMMHz: s.SMMHz, MemMHz: s.MemMHz, TempC: s.TempC, PowerW: s.PowerW}, s.Throttle, err
		}
	}
	doc.Profiler = profiler
	if *launchOnce {
		eng.LaunchOnce = true
		return runLaunchOnce(ctx, suite, stdout, startMeter, func() { meter.Done() })
	}

	sample("before ceilings")
	startMeter("copy ceiling", "sizes")
	ceil, err := basics.MeasureCopyCeiling(ctx)
	meter.Done() // before stdout's lines: a terminal's line is erased
	if err != nil {
		writePartial("copy ceiling: " + err.Error())
		return ExitFail, fmt.Errorf("measuring the copy ceiling: %v", err)
	}
	doc.Ceilings = append(doc.Ceilings, ceil)
	doc.Ceilings = append(doc.Ceilings, bench.MatrixCeilings(ctx, stdout)...)
	fmt.Fprintf(stdout, "ceilings: copy %.0f GB/s", ceil.Value)
	for _, c := range doc.Ceilings[1:] {
		fmt.Fprintf(stdout, ", %s %.0f %s", c.Name, c.Value, c.Unit)
	}
	fmt.Fprintln(stdout)
	// The stream regime's proof: a rotation of 3x the cache reads like one
	// of 6x (else the cold figures are partly warm).
	ev, err := basics.EvictionCheck(ctx)
	if err != nil {
		writePartial("eviction check: " + err.Error())
		return ExitFail, fmt.Errorf("eviction check: %v", err)
	}
	doc.Eviction = ev
	verdict := "agree: the rotation evicts"
	if !ev.OK {
		verdict = "DISAGREE: the stream regime leaked (cold records flagged " + results.FlagRegimeLeaked + ")"
		eng.Flags = append(eng.Flags, results.FlagRegimeLeaked)
	}
	fmt.Fprintf(stdout, "eviction check: 16 MiB copy rotated through 3x LLC %.2f us, 6x LLC %.2f us: %+.2f%% (noise %.2f%%): %s\n", ev.Rot3xUS, ev.Rot6xUS, ev.DiffPct, ev.NoisePct, verdict)
	if isolated {
		sc, err := basics.ScrubCheck(ctx, *scrubKind, *isoReps)
		if err != nil {
			writePartial("scrub check: " + err.Error())
			return ExitFail, fmt.Errorf("scrub check: %v", err)
		}
		doc.ScrubCheck = sc
		verdict := "agree: the scrub evicts"
		if !sc.OK {
			verdict = "DISAGREE: " + sc.Why + " (isolated records flagged " + results.FlagScrubLeaked + ")"
			eng.IsolatedFlags = append(eng.IsolatedFlags, results.FlagScrubLeaked)
		}
		fmt.Fprintf(stdout, "scrub check (%s): %.1f MiB copy alone after the scrub %.2f us, after twice the scrub %.2f us (%+.2f%%), hot %.2f us (%+.2f%%), noise %.2f%%: %s\n",
			sc.Scrub, float64(sc.BytesPerCall)/(2<<20), sc.ScrubUS, sc.Scrub2xUS, sc.Scrub2xDeltaPct, sc.HotUS, sc.HotDeltaPct, sc.NoisePct, verdict)
		scrub, err := basics.NewScrub(ctx, *scrubKind, basics.ScrubFactor)
		if err != nil {
			return ExitFail, fmt.Errorf("isolated regime: %v", err)
		}
		defer scrub.Free()
		eng.Scrub, eng.Isolated = scrub.Run, true
	}
	sample("before " + suite.Name)
	startMeter(suite.Name, "points")
	if err := suite.Run(ctx); err != nil {
		sample("after " + suite.Name)
		writePartial(err.Error())
		return ExitFail, fmt.Errorf("suite %s: %v", suite.Name, err)
	}
	sample("after " + suite.Name)
	meter.Set(points, points, "")
	meter.Done()
	doc.Records = ctx.Records
	if shard != nil {
		doc.Planned = ctx.Planned
	}
	flagged, _ := doc.FlagAboveRoofline(rooflineSlackPct)
	printBenchTable(stdout, doc)
	printPeerTable(stdout, doc, suite.Name)
	printBestPeer(stdout, doc, suite.Name)
	for _, k := range flagged {
		fmt.Fprintf(stdout, "FLAG above-roofline (cold regime leaked?): %s\n", k)
	}
	for _, law := range suite.Laws {
		tab, err := law.Regret(doc, suite.Name)
		if err != nil {
			fmt.Fprintf(stdout, "regret of %s: %v\n", law.Name, err)
			continue
		}
		fmt.Fprintf(stdout, "\nselection law %s against the per-cell argmin over %s:\n", law.Name, law.OverText())
		tab.Width = textutil.Width(stdout)
		tab.WriteText(stdout)
	}
	for _, s := range ctx.Skipped {
		fmt.Fprintf(stdout, "skipped: %s\n", s)
	}
	if benchOut != nil {
		if err := results.WriteBenchfmt(benchOut, doc); err != nil {
			return ExitFail, fmt.Errorf("writing benchfmt: %v", err)
		}
	}
	stopInterrupt() // the complete document must not be overwritten by a partial one
	if *jsonPath != "" {
		if err := results.Write(*jsonPath, doc); err != nil {
			return ExitFail, fmt.Errorf("writing %s: %v", *jsonPath, err)
		}
		fmt.Fprintf(stdout, "results written to %s\n", *jsonPath)
	}
	// A variant whose output was wrong fails the run: its row was not timed.
	failed := 0
	for _, r := range doc.Records {
		if r.Failed() {
			failed++
			fmt.Fprintf(stdout, "FAIL %s: %s\n", r.Key(), r.Check.Reason)
		}
	}
	if failed > 0 {
		return ExitFail, fmt.Errorf("%d variants failed their output check (not timed; see FAIL above)", failed)
	}
	return ExitOK, nil
}

// runLaunchOnce runs the suite under Engine.LaunchOnce and prints its
// launches in order, so a profiler's launch IDs map to points: among the
// launches of the kernels the profiler matched, the k-th ID is the k-th
// row of those variants (a check's own launches have rows of their own).
// A failed check fails the run.
func runLaunchOnce(ctx *bench.Ctx, suite bench.Suite, stdout io.Writer, startMeter func(label, unit string), stopMeter func()) (int, error) {
	startMeter(suite.Name, "points")
	err := suite.Run(ctx)
	stopMeter()
	failed := printLaunches(stdout, ctx.Records)
	for _, s := range ctx.Skipped {
		fmt.Fprintf(stdout, "skipped: %s\n", s)
	}
	switch {
	case err != nil:
		return ExitFail, fmt.Errorf("suite %s: %v", suite.Name, err)
	case failed > 0:
		return ExitFail, fmt.Errorf("launch-once: %d of %d launches failed their output check", failed, len(ctx.Records))
	}
	return ExitOK, nil
}

// printLaunches prints launch-once records as the numbered table of
// launches and returns how many failed their check.
func printLaunches(w io.Writer, recs []results.Record) (failed int) {
	fmt.Fprintf(w, "launch-once: one launch a row, in this order (a profiler's IDs follow the rows of the kernels it matched):\n")
	t := textutil.Table{Header: []string{"#", "kernel", "shape", "M", "regime", "variant", "check"}, Plain: true,
		Align: []tw.Align{tw.AlignRight, tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignLeft, tw.AlignLeft, tw.AlignLeft}}
	for i, r := range recs {
		check := "-"
		if r.Check != nil {
			check = r.Check.Status
			if r.Check.Status == results.CheckFail {
				check += ": " + r.Check.Reason
				failed++
			}
		}
		t.Append(anys([]string{fmt.Sprint(i + 1), r.Kernel, r.Shape, fmt.Sprint(r.M), r.Regime, r.Variant, check})...)
	}
	t.Shrink = []int{len(t.Header) - 1}
	if err := t.Render(w, textutil.Width(w)); err != nil {
		fmt.Fprintf(w, "(table not rendered: %v)\n", err)
	}
	return failed
}

// printBenchTable prints one row per record, fitted to the width of w:
// borderless, numbers right-aligned, the regime column only when the
// records' regimes differ (else named above the table), the control's
// spread without its ratio (the JSON has both).
func printBenchTable(w io.Writer, doc *results.Document) {
	copyC, _ := doc.Ceiling(results.CeilingCopyGBps)
	regimes := map[string]bool{}
	for _, r := range doc.Records {
		regimes[r.Regime] = true
	}
	showRegime := len(regimes) > 1
	header := []string{"kernel", "shape", "M", "regime", "variant", "check", "µs/call", "GB/s", "%copy", "TF/s", "control", "verdict"}
	align := []tw.Align{tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignLeft, tw.AlignLeft, tw.AlignLeft,
		tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignLeft}
	drop := func(cells []string) []string {
		if showRegime {
			return cells
		}
		return append(cells[:3:3], cells[4:]...)
	}
	t := textutil.Table{Header: drop(header), Plain: true}
	for i, a := range align {
		if showRegime || i != 3 {
			t.Align = append(t.Align, a)
		}
	}
	t.Shrink = []int{len(t.Header) - 1, 0}
	for _, r := range doc.Records {
		check := "-"
		if r.Check != nil {
			check = r.Check.Status
		}
		if r.Failed() {
			t.Append(anys(drop([]string{r.Kernel, r.Shape, fmt.Sprint(r.M), r.Regime, r.Variant, check, "-", "-", "-", "-", "-", "not timed"}))...)
			continue
		}
		ctrl, verdict := "", r.Verdict
		if r.Control != nil {
			ctrl = fmt.Sprintf("±%.2f%%", r.Control.SpreadPct)
			verdict = "baseline"
		} else if ratio, ok := r.Extra["ratio_vs_baseline"]; ok {
			verdict = fmt.Sprintf("%s %+.2f%%", r.Verdict, 100*(ratio-1))
		}
		pct := ""
		if copyC.Value > 0 && r.Bytes > 0 {
			pct = fmt.Sprintf("%.1f", 100*r.GBps/copyC.Value)
		}
		tf := ""
		if r.Flops > 0 {
			tf = fmt.Sprintf("%.1f", r.TFlops)
		}
		t.Append(anys(drop([]string{r.Kernel, r.Shape, fmt.Sprint(r.M), r.Regime, r.Variant, check, fmt.Sprintf("%.3f", r.TrimmedMeanUS), fmt.Sprintf("%.0f", r.GBps), pct, tf, ctrl, verdict}))...)
	}
	if !showRegime {
		for reg := range regimes {
			fmt.Fprintf(w, "every record %s (cache regime)\n", reg)
		}
	}
	if err := t.Render(w, textutil.Width(w)); err != nil {
		fmt.Fprintf(w, "(table not rendered: %v)\n", err)
	}
}

func anys(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// loadShapes reads a shapes file, or a built-in set when arg names one.
func loadShapes(arg string) (*shapes.Set, error) {
	for _, b := range shapes.Builtins() {
		if arg == b {
			return shapes.Builtin(b)
		}
	}
	set, err := shapes.Load(arg)
	if err != nil {
		return nil, usagef("--shapes: %v", err)
	}
	return set, nil
}

// benchOnDevices runs one part of the sweep on each device (--shard k/n
// with --device), in parallel, and merges the parts: each record names the
// device that measured it, each point's control was measured on that
// device beside it, and each device's ceilings are its run's.
// benchOut, when not nil, gets the merged document in benchfmt.
func benchOnDevices(args []string, backend, devicesArg, jsonPath string, timeout time.Duration, stdout, benchOut io.Writer) (int, error) {
	sels, dir, base, err := onDevices(args, backend, devicesArg, jsonPath)
	if err != nil {
		return ExitUsage, err
	}
	fmt.Fprintf(stdout, "bench2 %s over %d devices (%s) in parallel; each device's document and log in %s\n", args[0], len(sels), strings.Join(sels, ", "), dir)
	ctx, stopSignals := interruptible()
	defer stopSignals()
	children := runChildren(ctx, childRunner, sels, dir, timeout, func(i int, sel, json string) []string {
		return append(append([]string{"bench2"}, base...), "--device", sel, "--shard", fmt.Sprintf("%d/%d", i, len(sels)), "--json", json)
	})
	var parts []results.Part
	var runs []results.DeviceRun
	code := ExitOK
	for _, c := range children {
		r := c.deviceRun()
		runs = append(runs, r)
		if r.Status != results.Pass {
			code = ExitFail
		}
		if c.doc != nil && !c.doc.Partial {
			parts = append(parts, results.Part{Label: c.sel, Doc: c.doc})
		}
	}
	printDeviceRuns(stdout, runs)
	doc, merr := results.Merge(parts, results.MergeOptions{})
	if merr != nil {
		// Keep what the devices that finished measured, marked partial.
		doc = &results.Document{Schema: results.SchemaVersion, Partial: true, PartialReason: merr.Error()}
		for _, p := range parts {
			for _, r := range p.Doc.Records {
				r.Device = p.Label
				doc.Records = append(doc.Records, r)
			}
		}
		doc.Sort()
		fmt.Fprintf(stdout, "parts not merged: %v\n", merr)
		code = ExitFail
	}
	version, commit := toolVersion()
	doc.Tool, doc.Commit, doc.Command = version, commit, append([]string{"parharness", "bench2"}, args...)
	doc.Shard, doc.DeviceRuns = nil, runs // the parts together are the whole sweep
	if ctx.Err() != nil && !doc.Partial {
		doc.Partial, doc.PartialReason = true, "interrupted"
	}
	if ctx.Err() != nil {
		code = 130
	}
	if jsonPath != "" {
		write := results.Write
		if doc.Partial {
			write = func(path string, d *results.Document) error { return results.WritePartial(path, d, d.PartialReason) }
		}
		if err := write(jsonPath, doc); err != nil {
			return ExitUsage, fmt.Errorf("writing %s: %v", jsonPath, err)
		}
		fmt.Fprintf(stdout, "results written to %s\n", jsonPath)
	}
	if benchOut != nil {
		if err := results.WriteBenchfmt(benchOut, doc); err != nil {
			return ExitFail, fmt.Errorf("writing benchfmt: %v", err)
		}
	}
	return code, nil
}

// printBestPeer sets each cell's fastest checked record (any kernel and
// variant) beside the vendor peer, with:
//   - where the run's roofs span two sizes, its µs over the roof model's
//     read of the same bytes (column "over read": what the kernel spends
//     beyond streaming its bytes; negative where it overlaps the read's
//     fixed cost with the call before it);
//   - the fraction of copy (one decimal, rounded down: the 75% target
//     judges it), and in column "roof" the cell's roof's where the run
//     timed one (what a kernel that only streamed its bytes reached);
//   - the speed-up over the peer (column "vs peer": peer µs / its µs);
//   - in column "goals", one mark per PeerTarget in the suite's order: y
//     met, n missed, - not covered, ? not judged (one column, so that the
//     table stays within 100 columns).
//
// Then how many cells meet each target, per regime, and the roof model.
func printBestPeer(w io.Writer, doc *results.Document, suite string) {
	rows := doc.BestPeerRows(suite)
	if len(rows) == 0 {
		return
	}
	var targets []bench.PeerTarget
	if s, ok := bench.LookupSuite(suite); ok {
		targets = s.PeerTargets
	}
	copyC, pct := copyShare(doc)
	fmt.Fprintf(w, "\n%s: each cell's fastest checked variant beside the vendor peer (vs peer = peer µs / its µs):\n", suite)
	if len(targets) > 0 {
		names := make([]string, len(targets))
		for i, g := range targets {
			names[i] = fmt.Sprintf("%q", g.Name)
		}
		fmt.Fprintf(w, "goals, in order: %s\n(y met, n missed, - not covered, ? not judged: the run measured no copy ceiling)\n", strings.Join(names, ", "))
	}
	t := newTable(w)
	head := []string{"regime", "shape", "M", "fastest", "us", "%copy", "peer us", "vs peer"}
	roofs := slices.ContainsFunc(rows, func(r results.PeerRow) bool { return r.RoofGBps > 0 })
	roofFits := doc.RoofFits(suite)
	fits := map[string]results.RoofFit{} // regime -> the roof model
	for _, f := range roofFits {
		fits[f.Regime] = f
	}
	if roofs {
		head = slices.Insert(head, 6, "roof")
	}
	if len(fits) > 0 {
		head = slices.Insert(head, 5, "over read")
	}
	if len(targets) > 0 {
		head = append(head, "goals")
	}
	t.Header(head...)
	type count struct{ met, cells, unjudged int }
	counts := map[string][]count{} // regime -> per target
	var regimes []string
	for _, r := range rows {
		// One decimal, rounded down, where a copy-share target judges it: a
		// cell at 74.96% must not read as the 75% it missed.
		share := "-"
		if copyC > 0 {
			share = fmt.Sprintf("%.1f%%", math.Floor(1000*r.KernelGBps/copyC)/10)
		}
		row := []any{r.Regime, r.Shape, r.M, r.Variant, fmt.Sprintf("%.2f", r.KernelUS), share, fmt.Sprintf("%.2f", r.PeerUS), fmt.Sprintf("%.2fx", r.PeerUS/r.KernelUS)}
		if roofs {
			roof := "-"
			if r.RoofGBps > 0 {
				roof = pct(r.RoofGBps)
			}
			row = slices.Insert(row, 6, any(roof))
		}
		if len(fits) > 0 {
			over := "-"
			if f, ok := fits[r.Regime]; ok && r.KernelBytes > 0 {
				over = fmt.Sprintf("%+.2f", r.KernelUS-f.At(float64(r.KernelBytes)))
			}
			row = slices.Insert(row, 5, any(over))
		}
		if counts[r.Regime] == nil {
			counts[r.Regime] = make([]count, len(targets))
			regimes = append(regimes, r.Regime)
		}
		marks := make([]string, len(targets))
		for i, g := range targets {
			switch {
			case g.Applies != nil && !g.Applies(r.M):
				marks[i] = "-"
			case g.CopyShare > 0 && copyC <= 0:
				marks[i] = "?" // not judged: counted in neither figure
				counts[r.Regime][i].unjudged++
			case g.Met(r, copyC):
				marks[i] = "y"
				counts[r.Regime][i].cells++
				counts[r.Regime][i].met++
			default:
				marks[i] = "n"
				counts[r.Regime][i].cells++
			}
		}
		if len(targets) > 0 {
			row = append(row, strings.Join(marks, " "))
		}
		t.Append(row...)
	}
	t.Render()
	for _, reg := range regimes {
		for i, g := range targets {
			c := counts[reg][i]
			fmt.Fprintf(w, "target %q, %s: met in %d of %d cells", g.Name, reg, c.met, c.cells)
			if c.unjudged > 0 {
				fmt.Fprintf(w, "; %d not judged (the run measured no copy ceiling)", c.unjudged)
			}
			fmt.Fprintln(w)
		}
	}
	printRoofFits(w, roofFits, targets, copyC)
}

// printRoofFits writes each regime's roof model (results.RoofFit: the
// fitted cost of a lone read) and, for each copy-share target, the size
// from which such a read reaches it: below that size the target is out of
// reach of any launch that only streams its bytes in that regime.
func printRoofFits(w io.Writer, fits []results.RoofFit, targets []bench.PeerTarget, copyC float64) {
	for _, f := range fits {
		fmt.Fprintf(w, "roof model, %s: a read takes %.2f us + its bytes at %.0f GB/s\n  (%d cells, %d sizes, largest residual %.2f us)",
			f.Regime, f.FixedUS, f.RateGBps, f.Cells, f.Sizes, f.MaxResidUS)
		for _, g := range targets {
			if g.CopyShare <= 0 || copyC <= 0 {
				continue
			}
			if n, ok := f.BytesFrom(g.CopyShare * copyC); ok {
				fmt.Fprintf(w, "; reaches %.0f%% of copy from %.1f MB", 100*g.CopyShare, n/1e6)
			} else {
				fmt.Fprintf(w, "; never reaches %.0f%% of copy", 100*g.CopyShare)
			}
		}
		fmt.Fprintln(w)
	}
}

// copyShare is doc's copy ceiling (0 when the run measured none) and a
// formatter of GB/s as a percentage of it ("-" without one).
func copyShare(doc *results.Document) (float64, func(gbps float64) string) {
	c, _ := doc.Ceiling(results.CeilingCopyGBps)
	return c.Value, func(gbps float64) string {
		if c.Value <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.0f%%", 100*gbps/c.Value)
	}
}

// printPeerTable sets each baseline beside the vendor library's record of
// the same shape, M and regime: the figure a kernel must beat, per regime.
func printPeerTable(w io.Writer, doc *results.Document, suite string) {
	rows := doc.PeerRows(suite)
	if len(rows) == 0 {
		return
	}
	_, pct := copyShare(doc)
	fmt.Fprintf(w, "\n%s baselines beside the vendor peer (ratio < 1: faster than the peer):\n", suite)
	t := newTable(w)
	t.Header("regime", "shape", "M", "kernel", "us/call", "% copy", "peer", "peer us", "peer % copy", "ratio")
	for _, r := range rows {
		t.Append(r.Regime, r.Shape, r.M, r.Kernel+" "+r.Variant, fmt.Sprintf("%.2f", r.KernelUS), pct(r.KernelGBps), r.Peer, fmt.Sprintf("%.2f", r.PeerUS), pct(r.PeerGBps), fmt.Sprintf("%.3f", r.Ratio))
	}
	t.Render()
}
