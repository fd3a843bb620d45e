package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/kernels"
)

func init() {
	register(command{name: "doctor", usage: "the first-run checklist: libraries, devices, permissions, then each device step in its own process, and the first thing to fix", run: runDoctor})
}

// doctorStep is one device step of the checklist: a parharness command run
// in its own child process, so a fault or hang in it (a sticky device error,
// a killed process) is reported and the next step still runs.
type doctorStep struct {
	name   string
	proves string
	args   []string // parharness arguments; --json, --backend, --device, --build are added
}

// doctorSteps are the device steps in the order that keeps a fault from
// hiding the rest: the codec and the harness's own guards first (a card
// that fails these cannot be trusted with anything else), then the
// producers, the GEMMs, and the benches.
var doctorSteps = []doctorStep{
	{"e4m3", "the fp8 convert wrapper and the software codec equal the Go contract on the device (all 2^32 inputs)", []string{"gate", "--quick", "--require-device", "--only", "^e4m3-device"}},
	{"selftest", "canaries and poison checks catch overruns and unwritten elements on this device", []string{"gate", "--quick", "--require-device", "--only", "^harness-selftest$"}},
	{"resources", "every kernel loads; the driver reports no spills", []string{"gate", "--quick", "--require-device", "--only", "^resources-device$"}},
	{"producers", "every rotate-and-quantize producer equals the Go mirror byte for byte", []string{"gate", "--quick", "--require-device", "--only", "^producers$"}},
	{"gemm", "every W4A8 GEMM is within its bounds of the fp64 reference", []string{"gate", "--quick", "--require-device", "--only", "^gemm$"}},
	{"launch", "the graph-timed launch floor", []string{"bench2", "launch"}},
	{"copy", "the copy ceiling, checked output, the A/B protocol's positive control", []string{"bench2", "copy"}},
	{"dec", "the decode GEMM timed beside the vendor fp8 GEMM, every variant checked", []string{"bench2", "dec", "--m", "1,8"}},
}

// stepRunner runs parharness with args and returns its exit code and
// combined output; the default runs this executable as a child process.
type stepRunner func(ctx context.Context, args []string) (int, string, error)

func runSelf(ctx context.Context, args []string) (int, string, error) {
	self, err := os.Executable()
	if err != nil {
		return -1, "", err
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	// On a time limit or an interrupt, SIGTERM first: the child writes what
	// it measured, marked partial; it is killed if it has not exited 30 s on.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), nil
	case err != nil:
		return -1, out.String(), err
	}
	return 0, out.String(), nil
}

// The checklist's view of the device layer (a test's fakes).
var (
	doctorOpen  = gpu.OpenDevice
	doctorList  = gpu.ListDevices
	doctorProbe = gpu.Probe
)

// describeDevice is one line of what a results file records of a device.
func describeDevice(i gpu.Info) string {
	units := fmt.Sprintf("%d SMs", i.SMs)
	if i.Backend == "hip" {
		units = fmt.Sprintf("%d CUs (the driver reports %d)", i.CUs, i.SMs)
	}
	s := fmt.Sprintf("%s (%s, %s %s): %s, %d MiB, last-level cache %d MiB; code objects build/%s", i.Name, i.Arch, i.Backend, i.Driver, units, i.TotalMem>>20, i.LLCBytes>>20, i.CodeArch())
	if i.PCIBusID != "" {
		s += ", PCI " + i.PCIBusID
	}
	return s
}

// doctorRow is one line of the final table.
type doctorRow struct{ step, result, detail string }

func runDoctor(args []string, stdout, stderr io.Writer) (int, error) {
	return doctor(args, stdout, stderr, runSelf)
}

func doctor(args []string, stdout, stderr io.Writer, run stepRunner) (int, error) {
	fs := newFlags("doctor", stderr)
	backend := fs.String("backend", "auto", "device backend: auto, cuda, hip or none")
	device := deviceFlag(fs)
	buildDir := fs.String("build", defaultBuildDir(), "code object directory")
	outDir := fs.String("out", "", "write each step's results JSON and log here (default: a new directory under the system temp dir)")
	benches := fs.Bool("benches", true, "run the bench steps (launch, copy, dec) after the gates")
	stepTimeout := fs.Duration("step-timeout", 10*time.Minute, "longest a step may run before it is killed (the child's own watchdog ends a hung kernel sooner)")
	if err := parse(fs, args); err != nil {
		return ExitUsage, err
	}
	if *stepTimeout <= 0 {
		return ExitUsage, usagef("--step-timeout %v: must be positive", *stepTimeout)
	}
	if *outDir == "" {
		d, err := os.MkdirTemp("", "parharness-doctor-")
		if err != nil {
			return ExitUsage, err
		}
		*outDir = d
	} else if err := os.MkdirAll(*outDir, 0o755); err != nil {
		return ExitUsage, usagef("--out: %v", err)
	}
	version, commit := toolVersion()
	fmt.Fprintf(stdout, "parharness %s (%s), %s %s/%s; step outputs in %s\n\n", version, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH, *outDir)

	var rows []doctorRow
	add := func(step, result, detail string) { rows = append(rows, doctorRow{step, result, detail}) }

	// Code objects.
	for _, arch := range kernels.CodeArchs {
		mods, _ := kernels.ByModule(arch)
		missing := 0
		for _, m := range mods {
			if _, err := os.Stat(kernels.ObjectPath(*buildDir, arch, m)); err != nil {
				missing++
			}
		}
		if missing > 0 {
			add("build/"+arch, "missing", fmt.Sprintf("%d of %d code objects absent from %s: run `make kernels` (clang-19) where they build and copy build/", missing, len(mods), filepath.Join(*buildDir, arch)))
		} else {
			add("build/"+arch, "ok", fmt.Sprintf("%d code objects in %s", len(mods), filepath.Join(*buildDir, arch)))
		}
	}

	// Device nodes and permissions (their absence only warns once a device
	// opens: a container may expose the device without the usual nodes).
	nodes := deviceNodeRows()
	nodesAt := len(rows)

	// The libraries, as opening a device would find them (no context).
	if *backend != "none" {
		for _, r := range doctorProbe(*backend) {
			result := "ok"
			switch {
			case r.Path != "":
			case r.Lib == "cuBLASLt" || r.Lib == "hipBLASLt" || r.Lib == "NVML":
				result = "warn" // benches measure no vendor ceiling or clocks without it
			case *backend == "auto" || *backend == "":
				result = "absent" // the other vendor's runtime; the device row says whether one opened
			default:
				result = "not found"
			}
			add(r.Lib, result, oneLine(r.String()))
		}
	}
	// Every device the backend lists, then the one the steps will use
	// (opened here and closed: the steps open their own).
	if infos, _ := doctorList(*backend); len(infos) > 0 {
		for n, i := range infos {
			add(fmt.Sprintf("device %d", n), "listed", describeDevice(i))
			if i.Backend == "hip" && i.CodeArch() != kernels.GFX1201 {
				add(fmt.Sprintf("device %d", n), "warn", fmt.Sprintf("%s is not gfx1201 (an integrated GPU?): pick the card with --device or HIP_VISIBLE_DEVICES", i.Arch))
			}
		}
	}
	dev, devErr := doctorOpen(*backend, *device)
	if dev == nil {
		add("device", "none", oneLine(devErr.Error()))
	} else {
		i := dev.Info()
		add("device", "ok", "opened: "+describeDevice(i))
		if i.Backend == "hip" && i.CodeArch() != kernels.GFX1201 {
			add("device", "warn", fmt.Sprintf("the device opened is %s, not gfx1201: the kernels are built for gfx1201 and sm_90a; pick the card with --device or HIP_VISIBLE_DEVICES", i.Arch))
		}
		dev.Close()
	}

	for i := range nodes {
		if dev != nil && nodes[i].result == "none" {
			nodes[i].result = "warn"
		}
	}
	rows = slices.Insert(rows, nodesAt, nodes...)

	// The device steps, each in its own process.
	if dev != nil {
		for _, s := range doctorSteps {
			if !*benches && s.args[0] == "bench2" {
				continue
			}
			json := filepath.Join(*outDir, s.name+".json")
			a := append(append([]string{}, s.args...), "--json", json, "--backend", *backend, "--device", *device, "--build", *buildDir)
			ctx, cancel := context.WithTimeout(context.Background(), *stepTimeout)
			start := time.Now()
			code, out, err := run(ctx, a)
			timedOut := ctx.Err() != nil
			cancel()
			_ = os.WriteFile(filepath.Join(*outDir, s.name+".log"), []byte(out), 0o644)
			secs := time.Since(start).Seconds()
			switch {
			case err != nil:
				add(s.name, "ERROR", fmt.Sprintf("could not run: %v", err))
			case timedOut:
				add(s.name, "HUNG", fmt.Sprintf("killed after %s; log %s", *stepTimeout, filepath.Join(*outDir, s.name+".log")))
			case code == ExitOK:
				add(s.name, "ok", fmt.Sprintf("%.0f s: %s", secs, s.proves))
			case code == ExitFail:
				add(s.name, "FAIL", fmt.Sprintf("%s (log %s)", lastProblem(out), filepath.Join(*outDir, s.name+".log")))
			default:
				add(s.name, "ERROR", fmt.Sprintf("exit %d: %s (log %s)", code, lastProblem(out), filepath.Join(*outDir, s.name+".log")))
			}
		}
	}

	t := newTable(stdout)
	t.Header("step", "result", "detail")
	for _, r := range rows {
		t.Append(r.step, r.result, r.detail)
	}
	t.Render()
	for _, r := range rows {
		if !slices.Contains([]string{"ok", "warn", "listed", "absent"}, r.result) {
			fmt.Fprintf(stdout, "\nfirst thing to fix: %s: %s\n", r.step, r.detail)
			if dev == nil {
				return ExitUsage, nil
			}
			return ExitFail, nil
		}
	}
	fmt.Fprintln(stdout, "\nevery step passed")
	return ExitOK, nil
}

// lastProblem is the most telling line of a step's output: the last line
// that reports a failure, else its last non-empty line.
func lastProblem(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "FAIL") || strings.HasPrefix(l, "ERROR") || strings.Contains(l, "parharness ") && strings.Contains(l, ":") {
			return oneLine(l)
		}
	}
	if len(lines) > 0 {
		return oneLine(lines[len(lines)-1])
	}
	return "no output"
}

// deviceNodeRows checks the device nodes a backend needs: they exist and
// this process may read and write them (on Linux, through the groups that
// own them: render and video for /dev/kfd and /dev/dri).
func deviceNodeRows() []doctorRow {
	var rows []doctorRow
	groups, _ := os.Getgroups()
	inGroup := func(gid uint32) bool {
		if uint32(os.Getegid()) == gid {
			return true
		}
		for _, g := range groups {
			if uint32(g) == gid {
				return true
			}
		}
		return false
	}
	check := func(path string) (doctorRow, bool) {
		fi, err := os.Stat(path)
		if err != nil {
			return doctorRow{}, false
		}
		if err := syscall.Access(path, 6); err != nil { // R_OK|W_OK
			detail := fmt.Sprintf("%s is not readable and writable by this user (%v)", path, err)
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && !inGroup(st.Gid) {
				detail += fmt.Sprintf("; it belongs to group %d, which this user is not in: add the user to it (usually render or video) and log in again", st.Gid)
			}
			return doctorRow{path, "denied", detail}, true
		}
		return doctorRow{path, "ok", "readable and writable"}, true
	}
	found := false
	for _, p := range []string{"/dev/kfd", "/dev/nvidiactl", "/dev/nvidia0"} {
		if r, ok := check(p); ok {
			rows, found = append(rows, r), true
		}
	}
	if renders, _ := filepath.Glob("/dev/dri/renderD*"); len(renders) > 0 {
		for _, p := range renders {
			if r, ok := check(p); ok {
				rows = append(rows, r)
			}
		}
	}
	if !found {
		rows = append(rows, doctorRow{"device nodes", "none", "no /dev/kfd (AMD) or /dev/nvidiactl (NVIDIA): no GPU driver is loaded on this machine"})
	}
	return rows
}
