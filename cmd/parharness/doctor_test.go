package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/internal/fakegpu"
)

// On a machine without a GPU the checklist says there is no device and why,
// runs no device step, and exits 2.
func TestDoctorWithoutDevice(t *testing.T) {
	var out, errb bytes.Buffer
	ran := 0
	code, err := doctor([]string{"--backend", "none", "--out", t.TempDir()}, &out, &errb, func(context.Context, []string) (int, string, error) {
		ran++
		return 0, "", nil
	})
	if err != nil || code != ExitUsage || ran != 0 {
		t.Fatalf("exit %d, err %v, %d steps run; want 2 and none", code, err, ran)
	}
	if !strings.Contains(out.String(), "first thing to fix") || !strings.Contains(out.String(), "none") {
		t.Errorf("output does not say what is missing:\n%s", out.String())
	}
}

// With a device, every step runs in order in its own child (here a fake
// runner), each with its own --json; a failing step and a hung step are
// reported and the steps after them still run; the first failure is the
// first thing to fix, and the exit code is 1.
func TestDoctorRunsEveryStepPastFailures(t *testing.T) {
	so, sl, sp := doctorOpen, doctorList, doctorProbe
	defer func() { doctorOpen, doctorList, doctorProbe = so, sl, sp }()
	r9700 := gpu.Info{Backend: "hip", Arch: "gfx1201", Name: "fake R9700", SMs: 32, CUs: 64, LLCBytes: 64 << 20}
	doctorOpen = func(string, string) (gpu.Device, error) { return fakegpu.New(r9700), nil }
	doctorList = func(string) ([]gpu.Info, error) {
		return []gpu.Info{{Backend: "hip", Arch: "gfx1036", Name: "fake iGPU"}, r9700}, nil
	}
	doctorProbe = func(string) []gpu.LibraryReport {
		return []gpu.LibraryReport{{Lib: "HIP runtime library", Path: "/opt/rocm-6.4.1/lib/libamdhip64.so.6", Version: "6.4.1"}}
	}
	var order []string
	run := func(ctx context.Context, args []string) (int, string, error) {
		i := slices.Index(args, "--json")
		if i < 0 || i+1 >= len(args) {
			t.Errorf("step without --json: %v", args)
		}
		name := strings.TrimSuffix(args[i+1][strings.LastIndex(args[i+1], "/")+1:], ".json")
		order = append(order, name)
		switch name {
		case "producers":
			return 1, "PASS x\nFAIL producers  7.72s  pq_rot_bf16 K=5120 rows: 3 of 9 elements differ\n", nil
		case "gemm":
			<-ctx.Done() // hangs until the step timeout kills it
			return -1, "", nil
		}
		return 0, "ok\n", nil
	}
	var out, errb bytes.Buffer
	code, err := doctor([]string{"--out", t.TempDir(), "--build", "../../build", "--step-timeout", "50ms"}, &out, &errb, run)
	if err != nil || code != ExitFail {
		t.Fatalf("exit %d, err %v; want 1", code, err)
	}
	var want []string
	for _, s := range doctorSteps {
		want = append(want, s.name)
	}
	if !slices.Equal(order, want) {
		t.Errorf("steps ran %v, want %v", order, want)
	}
	o := unwrapTables(out.String())
	for _, w := range []string{"FAIL", "HUNG", "first thing to fix: producers: FAIL producers", "fake R9700", "64 CUs (the driver reports 32)",
		"gfx1036 is not gfx1201", "libamdhip64.so.6, version 6.4.1"} {
		if !strings.Contains(o, w) {
			t.Errorf("output lacks %q:\n%s", w, o)
		}
	}
}
