package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/results"
)

// A multi-device command (gate or bench2 with --devices) runs itself once
// per device, each in its own child process with --device and its own
// --json, all at once: one device's fault or hang cannot stop another's
// run, and no device ever has two timed runs at once. The parent reads
// the children's documents and writes one.

// devicesList resolves a --devices value: "all" (every device the backend
// lists) or a comma-separated list of indices or PCI bus ids.
func devicesList(backend, arg string) ([]string, error) {
	if arg == "all" {
		infos, err := listDevices(backend)
		if len(infos) == 0 {
			if err == nil {
				err = fmt.Errorf("the backend lists no device")
			}
			return nil, fmt.Errorf("--devices all: %v", err)
		}
		sels := make([]string, len(infos))
		for i := range infos {
			sels[i] = strconv.Itoa(i)
		}
		return sels, nil
	}
	var sels []string
	for _, s := range strings.Split(arg, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			return nil, usagef("--devices %q: an empty entry", arg)
		}
		if slices.Contains(sels, s) {
			return nil, usagef("--devices %q: device %s twice", arg, s)
		}
		sels = append(sels, s)
	}
	return sels, nil
}

// listDevices is gpu.ListDevices (a test's fake).
var listDevices = gpu.ListDevices

// childRun is one device's child: what it ran with and how it ended.
type childRun struct {
	sel     string
	json    string
	exit    int
	out     string
	err     error
	timeout bool
	// interrupted: the parent got SIGINT or SIGTERM and passed SIGTERM on.
	interrupted bool
	seconds     float64
	doc         *results.Document // nil when it wrote none (or an unreadable one)
	docErr      error
}

// runChildren runs parharness once per device selector, in parallel, with
// argsFor(i, sel, json) as each child's arguments, each under timeout.
func runChildren(parent context.Context, run stepRunner, sels []string, dir string, timeout time.Duration, argsFor func(i int, sel, json string) []string) []childRun {
	out := make([]childRun, len(sels))
	var wg sync.WaitGroup
	for i, sel := range sels {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := childRun{sel: sel, json: filepath.Join(dir, fmt.Sprintf("device-%d.json", i))}
			// A document left by an earlier run must never pass for this one's.
			if err := os.Remove(c.json); err != nil && !os.IsNotExist(err) {
				c.err = err
				out[i] = c
				return
			}
			ctx, cancel := context.WithTimeout(parent, timeout)
			defer cancel()
			start := time.Now()
			c.exit, c.out, c.err = run(ctx, argsFor(i, sel, c.json))
			c.interrupted = parent.Err() != nil
			c.timeout = !c.interrupted && ctx.Err() != nil
			c.seconds = time.Since(start).Seconds()
			_ = os.WriteFile(strings.TrimSuffix(c.json, ".json")+".log", []byte(c.out), 0o644)
			if _, err := os.Stat(c.json); err == nil {
				c.doc, c.docErr = results.Read(c.json)
			} else {
				c.docErr = err
			}
			out[i] = c
		}()
	}
	wg.Wait()
	return out
}

// deviceRun is a child's record in the parent's document: PASS when it
// exited 0, FAIL when it ran and found a wrong result (exit 1 with a whole
// document), ERROR when it could not run, faulted, hung or left no
// complete document.
func (c childRun) deviceRun() results.DeviceRun {
	r := results.DeviceRun{Selector: c.sel, Exit: c.exit, Seconds: c.seconds}
	if c.doc != nil {
		r.Device, r.Gates, r.Ceilings = c.doc.Device, c.doc.Gates, c.doc.Ceilings
	}
	switch {
	case c.err != nil:
		r.Status, r.Exit, r.Reason = results.Error, -1, "could not start: "+c.err.Error()
	case c.interrupted:
		r.Status, r.Reason = results.Error, "interrupted (the parent passed SIGINT or SIGTERM on)"
	case c.timeout:
		r.Status, r.Exit, r.Reason = results.Error, -1, "stopped: still running after the time limit (hung?)"
	case c.doc == nil:
		r.Status, r.Reason = results.Error, fmt.Sprintf("exit %d without a results document (%v): %s", c.exit, c.docErr, lastProblem(c.out))
	case c.doc.Device == nil:
		r.Status, r.Reason = results.Error, "the device did not open: "+lastProblem(c.out)
	case c.doc.Partial:
		r.Status, r.Reason = results.Error, fmt.Sprintf("exit %d, partial: %s", c.exit, c.doc.PartialReason)
	case c.exit == ExitOK:
		r.Status = results.Pass
	case c.exit == ExitFail:
		r.Status, r.Reason = results.Fail, lastProblem(c.out)
	default:
		r.Status, r.Reason = results.Error, fmt.Sprintf("exit %d: %s", c.exit, lastProblem(c.out))
	}
	return r
}

// twinDifferences names the gates whose status differs between devices of
// one kind (name and arch): a card that fails where its twin passes.
func twinDifferences(runs []results.DeviceRun) []string {
	var out []string
	for i := range runs {
		for j := i + 1; j < len(runs); j++ {
			a, b := runs[i], runs[j]
			if a.Device == nil || b.Device == nil || a.Device.Name != b.Device.Name || a.Device.Arch != b.Device.Arch {
				continue
			}
			bs := map[string]string{}
			for _, g := range b.Gates {
				bs[g.Gate] = g.Status
			}
			for _, g := range a.Gates {
				if sb, ok := bs[g.Gate]; ok && sb != g.Status {
					out = append(out, fmt.Sprintf("gate %s is %s on device %s and %s on device %s, the same %s", g.Gate, g.Status, a.Selector, sb, b.Selector, a.Device.Name))
				}
			}
		}
	}
	return out
}

// withoutFlag drops --name VALUE and --name=VALUE from args.
func withoutFlag(args []string, name string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-"+name || a == "--"+name:
			i++ // and its value
		case strings.HasPrefix(a, "-"+name+"=") || strings.HasPrefix(a, "--"+name+"="):
		default:
			out = append(out, a)
		}
	}
	return out
}

// parseShard reads --shard I/N (0 <= I < N).
func parseShard(s string) (*results.Shard, error) {
	if s == "" {
		return nil, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return nil, usagef("--shard %q: want I/N with 0 <= I < N, e.g. 0/4", s)
	}
	return &results.Shard{Index: i, Count: n}, nil
}

// interruptible is a context that SIGINT or SIGTERM cancel: a multi-device
// parent passes the signal on to its children (runSelf sends them SIGTERM,
// so each writes what it measured, marked partial) and still writes the
// combined document.
func interruptible() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
}

// onDevices resolves a multi-device command's devices, makes the
// children's output directory, and strips --devices and --json from the
// arguments the children share.
func onDevices(args []string, backend, devicesArg, jsonPath string) (sels []string, dir string, base []string, err error) {
	if sels, err = devicesList(backend, devicesArg); err != nil {
		return nil, "", nil, err
	}
	if dir, err = childOutput(jsonPath); err != nil {
		return nil, "", nil, err
	}
	return sels, dir, withoutFlag(withoutFlag(args, "devices"), "json"), nil
}

// childOutput is where the children's documents and logs go: beside the
// parent's --json, or in a new temporary directory.
func childOutput(jsonPath string) (string, error) {
	if jsonPath != "" {
		d := strings.TrimSuffix(jsonPath, filepath.Ext(jsonPath)) + ".devices"
		return d, os.MkdirAll(d, 0o755)
	}
	return os.MkdirTemp("", "parharness-devices-")
}

// printDeviceRuns writes one line per device run.
func printDeviceRuns(w io.Writer, runs []results.DeviceRun) {
	t := newTable(w)
	t.Header("device", "name", "status", "exit", "seconds", "reason")
	for _, r := range runs {
		name := "-"
		if r.Device != nil {
			name = r.Device.Name + " (" + r.Device.Arch + ")"
		}
		t.Append(r.Selector, name, r.Status, r.Exit, fmt.Sprintf("%.1f", r.Seconds), oneLine(r.Reason))
	}
	t.Render()
}
