package main

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/olekukonko/tablewriter/tw"

	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/internal/progress"
	"github.com/parharness/parharness/internal/textutil"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/results"
)

func init() {
	register(command{name: "gate", usage: "run the correctness gates: [--quick|--full] [--only REGEX] [--json FILE]", run: runGate})
}

// deviceEnv is what every device-using command opens: the device (or why
// not), the kernel loader and the run's identity for results.
type deviceEnv struct {
	dev      gpu.Device
	devErr   error
	loader   *kernels.Loader
	buildDir string
}

func (s *deviceEnv) close() {
	if s.loader != nil {
		s.loader.Close()
	}
	if s.dev != nil {
		s.dev.Close()
	}
}

func openDevice(backend, device, buildDir string) *deviceEnv {
	s := &deviceEnv{buildDir: buildDir}
	s.dev, s.devErr = gpu.OpenDevice(backend, device)
	if s.dev != nil {
		s.loader = kernels.NewLoader(buildDir, s.dev)
	}
	return s
}

// deviceFlag is the --device flag of every command that opens a device.
func deviceFlag(fs *flag.FlagSet) *string {
	return fs.String("device", "", "the device to open: an index (0 is the default) or a PCI bus id such as 0000:03:00.0")
}

// deviceRecord describes the device for the results document.
func deviceRecord(dev gpu.Device) *results.Device {
	if dev == nil {
		return nil
	}
	i := dev.Info()
	return &results.Device{Backend: i.Backend, Name: i.Name, Arch: i.Arch, Driver: i.Driver, SMs: i.SMs, CUs: i.CUs,
		ClockMHz: i.ClockMHz, MemClockMHz: i.MemClockMHz, MemBusBits: i.MemBusBits, L2Bytes: i.L2Bytes,
		LLCBytes: i.LLCBytes, TotalMem: i.TotalMem}
}

// codeObjectHashes returns sha256 of every code object for the arch.
func codeObjectHashes(buildDir string, dev gpu.Device) map[string]string {
	out := map[string]string{}
	var archs []string
	if dev != nil {
		archs = []string{dev.Info().CodeArch()}
	} else {
		archs = []string{"sm_90a", "gfx1201"}
	}
	for _, a := range archs {
		files, _ := filepath.Glob(filepath.Join(buildDir, a, "*"+kernels.Ext(a)))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			h := sha256.Sum256(b)
			out[filepath.ToSlash(filepath.Join(a, filepath.Base(f)))] = hex.EncodeToString(h[:])
		}
	}
	return out
}

func runGate(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("gate", stderr)
	quick := fs.Bool("quick", false, "run the quick suite (the default)")
	full := fs.Bool("full", false, "run the full suite (quick gates plus exhaustive sweeps)")
	only := fs.String("only", "", "run only gates whose name matches this regular expression")
	jsonPath := fs.String("json", "", "write results JSON to this file (atomically)")
	backend := fs.String("backend", "auto", "device backend: auto, cuda, hip or none (env PARHARNESS_BACKEND)")
	device := deviceFlag(fs)
	buildDir := fs.String("build", defaultBuildDir(), "directory holding the code objects that make kernels built")
	seed := fs.Uint64("seed", 0, "base seed for random inputs (0: derive from the clock; the seed is always recorded)")
	watchdog := fs.Duration("watchdog", 120*time.Second, "longest wait for the device before declaring a kernel hung (0 disables)")
	requireDev := fs.Bool("require-device", false, "count a device gate that SKIPs as a failure (use on GPU machines)")
	failFast := fs.Bool("fail-fast", false, "stop each gate at its first failure (mutation runs)")
	checkpoint := fs.String("checkpoint", "", "draw weights from this ParoQuant checkpoint directory instead of synthetic ones")
	devicesArg := fs.String("devices", "", "run the suite on several devices in parallel, one child process each: all, or a list of indices or PCI bus ids")
	deviceTimeout := fs.Duration("device-timeout", 30*time.Minute, "with --devices: longest one device's run may take before it is killed")
	cpuProfile := cpuProfileFlag(fs)
	if err := parse(fs, args); err != nil {
		return ExitUsage, err
	}
	if *devicesArg != "" {
		if *cpuProfile != "" {
			return ExitUsage, usagef("--cpuprofile profiles one process: drop --devices, or profile one device's run")
		}
		if *device != "" {
			return ExitUsage, usagef("--device and --devices are exclusive")
		}
		return gateOnDevices(args, *backend, *devicesArg, *jsonPath, *buildDir, *deviceTimeout, stdout)
	}
	if *quick && *full {
		return ExitUsage, usagef("--quick and --full are exclusive")
	}
	suite := gates.Quick
	if *full {
		suite = gates.Full // every quick gate is registered in Full too (gates.Register enforces it)
	}
	var re *regexp.Regexp
	if *only != "" {
		var err error
		if re, err = regexp.Compile(*only); err != nil {
			return ExitUsage, usagef("--only: %v", err)
		}
	}
	selected := gates.Select(suite, re)
	if len(selected) == 0 {
		return ExitUsage, usagef("no gate matches --only %q in the %s suite (see `parharness list`)", *only, suiteName(suite))
	}
	if *seed == 0 {
		*seed = uint64(time.Now().UnixNano())
	}
	stopProfile, err := startCPUProfile(*cpuProfile, stderr)
	if err != nil {
		return ExitUsage, err
	}
	defer stopProfile()

	denv := openDevice(*backend, *device, *buildDir)
	defer denv.close()
	version, commit := toolVersion()
	doc := &results.Document{
		Schema: results.SchemaVersion, Tool: version, Commit: commit, Date: time.Now().UTC().Format(time.RFC3339),
		Command: append([]string{"parharness", "gate"}, args...), Device: deviceRecord(denv.dev), Seed: *seed,
		CodeObjects: codeObjectHashes(*buildDir, denv.dev),
	}
	if denv.dev != nil {
		i := denv.dev.Info()
		fmt.Fprintf(stdout, "device: %s (%s, %s, %d SMs, L2 %d MiB) via %s\n", i.Name, i.Arch, i.Backend, i.SMs, i.L2Bytes>>20, i.Driver)
	} else {
		fmt.Fprintf(stdout, "device: none (%v)\n", denv.devErr)
	}
	fmt.Fprintf(stdout, "suite %s, %d gates, seed %d\n", suiteName(suite), len(selected), *seed)
	noDevice := ""
	if denv.devErr != nil {
		noDevice = denv.devErr.Error()
	}

	// The watchdog's hang handler writes what is known, marked partial.
	var mu sync.Mutex
	current := ""
	gpu.SetWatchdog(*watchdog, func(what string, after time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		doc.Gates = append(doc.Gates, results.GateRecord{Gate: current, Status: gates.Fail,
			Reason: fmt.Sprintf("hung: %s did not return within %s (watchdog)", what, after)})
		fmt.Fprintf(stderr, "parharness gate: gate %s FAILED: hung in %s for %s\n", current, what, after)
		stopProfile() // the watchdog exits the process next
		if *jsonPath != "" {
			if err := results.WritePartial(*jsonPath, doc, fmt.Sprintf("gate %s hung; gates after it did not run", current)); err != nil {
				fmt.Fprintf(stderr, "parharness gate: writing partial results: %v\n", err)
			} else {
				fmt.Fprintf(stderr, "parharness gate: partial results written to %s\n", *jsonPath)
			}
		}
	})

	stop := onInterrupt(stderr, func(reason string) {
		stopProfile() // onInterrupt exits the process next
		mu.Lock()
		defer mu.Unlock()
		if *jsonPath != "" {
			if err := results.WritePartial(*jsonPath, doc, fmt.Sprintf("%s during gate %s; it and the gates after it did not finish", reason, current)); err == nil {
				fmt.Fprintf(stderr, "parharness gate: partial results written to %s\n", *jsonPath)
			}
		}
	})
	defer stop()

	// Long gates report progress on stderr, apart from the results on
	// stdout (internal/progress: quiet for 10 s, then a redrawn line on a
	// terminal or a line every 10 s in a log).
	env := &gates.Env{Dev: denv.dev, DevErr: denv.devErr, Kernels: denv.loader, BuildDir: *buildDir, Seed: *seed, Full: *full,
		Checkpoint: *checkpoint, Log: stdout, FailFast: *failFast, Progress: func(label, unit string, total int) *progress.Meter {
			return progress.New(stderr, label, unit, total, progress.ForWriter(stderr))
		}}
	var res []gates.Result
	for _, g := range selected {
		mu.Lock()
		current = g.Name
		mu.Unlock()
		r := gates.RunGate(env, g)
		if *requireDev && g.Device && r.Status == gates.Skip {
			r.Status = gates.Error // could not run, which --require-device does not allow
			r.Reason = "--require-device: " + r.Reason
		}
		line := fmt.Sprintf("%-4s %-24s %6.2fs  %s", r.Status, r.Gate, r.Seconds, oneLine(shortReason(r.Reason, noDevice)))
		if w := textutil.Width(stdout); len([]rune(line)) > w && w > 1 {
			line = string([]rune(line)[:w-1]) + "…" // the whole reason is in the table below and the JSON
		}
		fmt.Fprintln(stdout, line)
		res = append(res, r)
		mu.Lock()
		doc.Gates = append(doc.Gates, r)
		mu.Unlock()
	}
	printGateTable(stdout, res, noDevice)
	stop() // the complete document must not be overwritten by a partial one
	if *jsonPath != "" {
		if err := results.Write(*jsonPath, doc); err != nil {
			return ExitUsage, fmt.Errorf("writing %s: %v", *jsonPath, err)
		}
		fmt.Fprintf(stdout, "results written to %s\n", *jsonPath)
	}
	pass, fail, skip, errs := count(res)
	fmt.Fprintf(stdout, "%d passed, %d failed, %d skipped", pass, fail, skip)
	if errs > 0 {
		fmt.Fprintf(stdout, ", %d could not run (ERROR)", errs)
	}
	fmt.Fprintln(stdout)
	switch {
	case fail > 0:
		return ExitFail, nil // a wrong result
	case errs > 0:
		return ExitUsage, nil // nothing wrong was found, but something could not run
	}
	return ExitOK, nil
}

func suiteName(s gates.Suite) string {
	if s == gates.Full {
		return "full"
	}
	return "quick"
}

func count(rs []gates.Result) (pass, fail, skip, errs int) {
	for _, r := range rs {
		switch r.Status {
		case gates.Pass:
			pass++
		case gates.Fail:
			fail++
		case gates.Skip:
			skip++
		case gates.Error:
			errs++
		}
	}
	return
}

func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " ..."
	}
	return s
}

func printGateTable(w io.Writer, rs []gates.Result, noDevice string) {
	t := newTable(w).Shrink(3, 4).Align(tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignLeft, tw.AlignLeft)
	t.Header("gate", "status", "seconds", "key figures", "reason / first failure")
	headline := map[string][]string{}
	for _, g := range gates.All() {
		headline[g.Name] = g.Headline
	}
	for _, r := range rs {
		t.Append(r.Gate, r.Status, fmt.Sprintf("%.2f", r.Seconds), metricsLine(r.Metrics, headline[r.Gate]), oneLine(shortReason(r.Reason, noDevice)))
	}
	t.Render()
	for _, r := range rs {
		if r.Status == gates.Fail && len(r.Failures) > 1 {
			fmt.Fprintf(w, "%s failures:\n", r.Gate)
			for _, f := range r.Failures {
				fmt.Fprintf(w, "  %s\n", f)
			}
		}
	}
}

// figuresShown is how many figures the gate table shows per gate; the
// rest are counted (the results JSON has them all).
const figuresShown = 6

// metricsLine shows a gate's figures, its headline ones first, then by
// name, at most figuresShown of them, integers exactly. A metric measured
// per case (results.Case keys) shows as its largest value, the worst
// case of an error or margin, with the number of cases:
// "rel max=4.9e-15 (12 cases)".
func metricsLine(m map[string]float64, headline []string) string {
	type figure struct {
		max   float64
		cases int // 0: a plain metric
	}
	figs := map[string]*figure{}
	for k, v := range m {
		name, c, err := results.ParseMetricKey(k)
		if err != nil || len(c.Labels()) == 0 {
			name = k
		}
		f := figs[name]
		if f == nil {
			f = &figure{max: v}
			figs[name] = f
		}
		f.max = max(f.max, v)
		if err == nil && len(c.Labels()) > 0 {
			f.cases++
		}
	}
	var names []string
	for _, h := range headline {
		if _, ok := figs[h]; ok {
			names = append(names, h)
		}
	}
	rest := make([]string, 0, len(figs))
	for n := range figs {
		if !slices.Contains(names, n) {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	names = append(names, rest...)
	var parts []string
	for _, n := range names[:min(len(names), figuresShown)] {
		f := figs[n]
		if f.cases > 0 {
			parts = append(parts, fmt.Sprintf("%s max=%s (%d cases)", n, formatMetric(f.max), f.cases))
		} else {
			parts = append(parts, n+"="+formatMetric(f.max))
		}
	}
	if more := len(names) - figuresShown; more > 0 {
		parts = append(parts, fmt.Sprintf("(+%d more)", more))
	}
	return strings.Join(parts, " ")
}

// formatMetric prints an integral value exactly (4294967296, not
// 4.295e+09) and any other to 4 significant digits.
func formatMetric(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// shortReason is a gate's reason with the no-device reason, which the
// device line above already printed whole, shortened to a pointer to it.
func shortReason(reason, noDevice string) string {
	if noDevice != "" && strings.Contains(reason, noDevice) {
		return strings.Replace(reason, noDevice, "no device (see the device line above)", 1)
	}
	return reason
}

// childRunner runs a multi-device command's children (a test's fake).
var childRunner stepRunner = runSelf

// gateOnDevices runs `gate` once per device, in parallel, and writes one
// document with a run per device; a card whose gates differ from its twin's
// is called out.
func gateOnDevices(args []string, backend, devicesArg, jsonPath, buildDir string, timeout time.Duration, stdout io.Writer) (int, error) {
	sels, dir, base, err := onDevices(args, backend, devicesArg, jsonPath)
	if err != nil {
		return ExitUsage, err
	}
	fmt.Fprintf(stdout, "gate on %d devices (%s) in parallel; each device's document and log in %s\n", len(sels), strings.Join(sels, ", "), dir)
	start := time.Now()
	ctx, stopSignals := interruptible()
	defer stopSignals()
	children := runChildren(ctx, childRunner, sels, dir, timeout, func(i int, sel, json string) []string {
		// --require-device: a device gate that cannot run on this card fails
		// its run instead of skipping.
		return append(append([]string{"gate"}, base...), "--require-device", "--device", sel, "--json", json)
	})
	version, commit := toolVersion()
	doc := &results.Document{Schema: results.SchemaVersion, Tool: version, Commit: commit, Date: start.UTC().Format(time.RFC3339),
		Command: append([]string{"parharness", "gate"}, args...), CodeObjects: codeObjectHashes(buildDir, nil)}
	code := ExitOK
	for _, c := range children {
		r := c.deviceRun()
		doc.DeviceRuns = append(doc.DeviceRuns, r)
		if r.Status != results.Pass {
			code = ExitFail
		}
	}
	printDeviceRuns(stdout, doc.DeviceRuns)
	for _, d := range twinDifferences(doc.DeviceRuns) {
		fmt.Fprintf(stdout, "TWIN %s\n", d)
		code = ExitFail
	}
	fmt.Fprintf(stdout, "%d devices in %.1f s\n", len(sels), time.Since(start).Seconds())
	write := results.Write
	if ctx.Err() != nil {
		code = 130
		write = func(path string, d *results.Document) error {
			return results.WritePartial(path, d, "interrupted: each device's run ended early (its document, if any, is partial)")
		}
	}
	if jsonPath != "" {
		if err := write(jsonPath, doc); err != nil {
			return ExitUsage, fmt.Errorf("writing %s: %v", jsonPath, err)
		}
		fmt.Fprintf(stdout, "results written to %s\n", jsonPath)
	}
	return code, nil
}
