package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/results"
)

// parharness sanitize: the gate suite re-run under NVIDIA's
// compute-sanitizer. The value gates see a race only when the scheduling
// exposes it; racecheck sees shared-memory hazards whatever the outcome,
// memcheck out-of-bounds and misaligned accesses, synccheck invalid
// barrier use, initcheck reads of uninitialised global memory. The gates
// run in a child process (this binary's `gate`, --require-device) under
// `compute-sanitizer --tool T --error-exitcode 86`; the tool's summary
// becomes one more gate record, "sanitizer-T", beside the child's gate
// records in the results document. The gates do not refuse to run under a
// sanitizer (only the bench refuses to time under one, gpu.ProfilerInjected).

func init() {
	register(command{name: "sanitize", usage: "re-run the gates under compute-sanitizer: [--tool racecheck|memcheck|synccheck|initcheck] [--json FILE] [-- GATE FLAGS]", run: runSanitize})
}

// sanitizeDevice says which device the gates would get (tests replace it).
var sanitizeDevice = func(backend string) (gpu.Info, error) {
	dev, err := gpu.OpenDevice(backend, "")
	if err != nil {
		return gpu.Info{}, err
	}
	defer dev.Close()
	return dev.Info(), nil
}

// sanitizeSelf is the binary the sanitizer runs (tests replace it).
var sanitizeSelf = os.Executable

// sanitizerTools are compute-sanitizer's tools.
var sanitizerTools = []string{"memcheck", "racecheck", "synccheck", "initcheck"}

// sanitizerErrorExit is the exit code the tool is told to use when it
// reports an error (--error-exitcode), apart from the gates' 0, 1 and 2.
const sanitizerErrorExit = 86

// findSanitizer returns compute-sanitizer's path: on PATH, else the
// newest /usr/local/cuda*/bin (or compute-sanitizer/) copy.
func findSanitizer() (string, error) {
	if p, err := exec.LookPath("compute-sanitizer"); err == nil {
		return p, nil
	}
	var found []string
	for _, pat := range []string{"/usr/local/cuda*/bin/compute-sanitizer", "/usr/local/cuda*/compute-sanitizer/compute-sanitizer"} {
		m, _ := filepath.Glob(pat)
		found = append(found, m...)
	}
	if len(found) == 0 {
		return "", errors.New("compute-sanitizer is not on PATH nor under /usr/local/cuda*/bin (it comes with the CUDA toolkit; --sanitizer PATH names it)")
	}
	sort.Strings(found)
	return found[len(found)-1], nil
}

// sanitizerRecord is the gate record of one sanitizer run: PASS when the
// tool printed its summary with nothing found and exited 0 or as the
// gates did; FAIL when it reported an error or hazard (its first report
// lines are the failures); ERROR when it did not print a summary (it or
// the program died first) or could not start.
func sanitizerRecord(tool string, rep SanitizerReport, exit int, runErr error, secs float64) results.GateRecord {
	r := results.GateRecord{Gate: "sanitizer-" + tool, Seconds: secs, Metrics: map[string]float64{}}
	r.Metrics["errors"] = float64(rep.Errors)
	if rep.Race {
		r.Metrics["hazards"] = float64(rep.Hazards)
		r.Metrics["warnings"] = float64(rep.Warnings)
	}
	r.Metrics["report_lines"] = float64(rep.Reports)
	switch {
	case runErr != nil:
		r.Status, r.Reason = gates.Error, fmt.Sprintf("compute-sanitizer --tool %s could not run: %v", tool, runErr)
	case rep.Found():
		r.Status = gates.Fail
		r.Reason = fmt.Sprintf("compute-sanitizer --tool %s: %s", tool, rep)
		byKernel, allRing := raceByKernel(rep.RaceKernels, mbarrierWaiters)
		allRing = allRing && rep.Unattributed == 0
		every := "every hazard is"
		if rep.Capped {
			every = "every recorded hazard (racecheck reached its cap: later ones, in any kernel, went unrecorded) is"
		}
		switch {
		case allRing:
			r.Reason += "; " + every + " in a kernel that hands shared memory over through mbarriers, which racecheck does not take as ordering (docs/gates.md): not by itself evidence of a race"
		case len(rep.Lines) > 0:
			r.Reason += ": " + rep.Lines[0]
		}
		if rep.Internal {
			r.Reason += "; the tool stopped on an internal error, so launches after it were not checked"
		}
		if len(rep.RaceKernels) > 0 {
			r.Metrics["race_kernels"] = float64(len(rep.RaceKernels))
		}
		r.Failures = append(byKernel, rep.Lines...)
	case rep.Internal:
		r.Status = gates.Error
		r.Reason = fmt.Sprintf("compute-sanitizer --tool %s stopped on an internal error (exit %d): the launches after it were not checked, so its summary (%s) proves nothing", tool, exit, rep)
		r.Failures = append([]string(nil), rep.Lines...)
	case !rep.Summary:
		r.Status = gates.Error
		r.Reason = fmt.Sprintf("compute-sanitizer --tool %s printed no summary (exit %d): it or the gates ended before the end of the run", tool, exit)
		r.Failures = append([]string(nil), rep.Lines...)
	case exit == sanitizerErrorExit:
		r.Status, r.Reason = gates.Fail, fmt.Sprintf("compute-sanitizer --tool %s exited %d (errors found) with a summary of %s", tool, exit, rep)
	default:
		r.Status = gates.Pass
		r.Reason = ""
		r.Notes = []string{fmt.Sprintf("compute-sanitizer --tool %s: %s", tool, rep)}
	}
	return r
}

// raceByKernel lists racecheck's hazards by kernel, most first, marking
// the kernels that wait on mbarriers (waits[kernel]); all is true when
// there are hazards and every one is in such a kernel. racecheck does not
// take an mbarrier arrive/wait pair as ordering: a correct ring of that
// protocol reports hazards (docs/gates.md).
func raceByKernel(counts map[string]int, waits map[string]bool) (lines []string, all bool) {
	ks := make([]string, 0, len(counts))
	for k := range counts {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		if counts[ks[i]] != counts[ks[j]] {
			return counts[ks[i]] > counts[ks[j]]
		}
		return ks[i] < ks[j]
	})
	all = len(ks) > 0
	for _, k := range ks {
		line := fmt.Sprintf("%s: %d hazards", k, counts[k])
		if waits[k] {
			line += " (waits on mbarriers: racecheck does not order their hand-offs)"
		} else {
			all = false
		}
		lines = append(lines, line)
	}
	return lines, all
}

// mbarrierWaiters are the kernels whose golden sync inventory has an
// mbarrier wait, on any arch.
var mbarrierWaiters = func() map[string]bool {
	out := map[string]bool{}
	inv, err := gates.GoldenSyncInventory()
	if err != nil {
		return out
	}
	for _, ks := range inv {
		for k, c := range ks {
			for key := range c {
				if strings.HasPrefix(key, "mbarrier.try_wait") || strings.HasPrefix(key, "mbarrier.test_wait") {
					out[k] = true
				}
			}
		}
	}
	return out
}()

// sanitizeGateArgs are the child's gate flags: the user's, with --quick
// unless a suite is named, and --require-device (a sanitizer run without
// the device proves nothing).
func sanitizeGateArgs(user []string, jsonPath string) []string {
	args := []string{"gate"}
	suite, require := false, false
	for _, a := range user {
		f := strings.TrimLeft(strings.SplitN(a, "=", 2)[0], "-")
		suite = suite || f == "quick" || f == "full"
		require = require || f == "require-device"
	}
	if !suite {
		args = append(args, "--quick")
	}
	if !require {
		args = append(args, "--require-device")
	}
	args = append(args, "--json", jsonPath)
	return append(args, user...)
}

func runSanitize(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("sanitize", stderr)
	tool := fs.String("tool", "racecheck", "the compute-sanitizer tool: "+strings.Join(sanitizerTools, ", "))
	jsonPath := fs.String("json", "", "write the results JSON (the gates' records and the sanitizer's) to this file")
	sanitizer := fs.String("sanitizer", "", "compute-sanitizer's path (default: PATH, then /usr/local/cuda*/bin)")
	backend := fs.String("backend", "auto", "device backend to check for a device: auto, cuda, hip or none")
	timeout := fs.Duration("timeout", 0, "kill the run after this long (0: no limit; racecheck runs the gates 10-100x slower)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK, err
		}
		return ExitUsage, usageError{err.Error()}
	}
	if err := checkFlags(fs); err != nil {
		return ExitUsage, err
	}
	known := false
	for _, t := range sanitizerTools {
		known = known || t == *tool
	}
	if !known {
		return ExitUsage, usagef("--tool %q: want one of %s", *tool, strings.Join(sanitizerTools, ", "))
	}
	gateArgs := fs.Args()
	version, commit := toolVersion()
	doc := &results.Document{Schema: results.SchemaVersion, Tool: version, Commit: commit, Date: time.Now().UTC().Format(time.RFC3339),
		Command: append([]string{"parharness", "sanitize"}, args...), Records: []results.Record{}}
	finish := func(r results.GateRecord) (int, error) {
		doc.Gates = append(doc.Gates, r)
		line := fmt.Sprintf("%-4s %-24s %6.2fs  %s", r.Status, r.Gate, r.Seconds, oneLine(r.Reason))
		fmt.Fprintln(stdout, line)
		for _, f := range r.Failures {
			fmt.Fprintf(stdout, "     | %s\n", f)
		}
		if *jsonPath != "" {
			if err := results.Write(*jsonPath, doc); err != nil {
				return ExitUsage, fmt.Errorf("writing %s: %v", *jsonPath, err)
			}
			fmt.Fprintf(stdout, "results written to %s\n", *jsonPath)
		}
		code := ExitOK
		for _, g := range doc.Gates {
			switch {
			case g.Status == gates.Fail:
				code = ExitFail
			case g.Status == gates.Error && code == ExitOK:
				code = ExitUsage
			}
		}
		return code, nil
	}
	skip := func(reason string) (int, error) {
		return finish(results.GateRecord{Gate: "sanitizer-" + *tool, Status: gates.Skip, Reason: reason})
	}

	path := *sanitizer
	if path == "" {
		p, err := findSanitizer()
		if err != nil {
			return skip(err.Error())
		}
		path = p
	}
	info, err := sanitizeDevice(*backend)
	if err != nil {
		return skip(fmt.Sprintf("no device: %v", err))
	}
	if info.Backend != "cuda" {
		return skip(fmt.Sprintf("the device is %s (%s): compute-sanitizer runs on NVIDIA devices only", info.Name, info.Backend))
	}
	self, err := sanitizeSelf()
	if err != nil {
		return ExitUsage, fmt.Errorf("finding this binary to run under the sanitizer: %v", err)
	}
	inner, err := os.CreateTemp("", "parharness-sanitize-*.json")
	if err != nil {
		return ExitUsage, err
	}
	inner.Close()
	defer os.Remove(inner.Name())

	ctx := context.Background()
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	cmdArgs := append([]string{"--tool", *tool, "--error-exitcode", fmt.Sprint(sanitizerErrorExit), self}, sanitizeGateArgs(gateArgs, inner.Name())...)
	fmt.Fprintf(stdout, "%s %s\n", path, strings.Join(cmdArgs, " "))
	cmd := exec.CommandContext(ctx, path, cmdArgs...)
	var out bytes.Buffer
	cmd.Stdout = io.MultiWriter(stdout, &out)
	cmd.Stderr = io.MultiWriter(stderr, &out)
	start := time.Now()
	runErr := cmd.Run()
	secs := time.Since(start).Seconds()
	exit := 0
	var ee *exec.ExitError
	if errors.As(runErr, &ee) {
		exit, runErr = ee.ExitCode(), nil
	}
	if ctx.Err() != nil {
		runErr = fmt.Errorf("killed after --timeout %s", *timeout)
	}
	if child, err := results.Read(inner.Name()); err == nil {
		doc.Device, doc.Seed, doc.CodeObjects = child.Device, child.Seed, child.CodeObjects
		doc.Gates = append(doc.Gates, child.Gates...)
	} else {
		fmt.Fprintf(stderr, "parharness sanitize: the gates' results under the sanitizer: %v\n", err)
	}
	return finish(sanitizerRecord(*tool, ParseSanitizer(out.String()), exit, runErr, secs))
}
