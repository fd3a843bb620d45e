package gates_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/internal/fakegpu"
	"github.com/parharness/parharness/kernels"
)

// poisonEnv is a gate environment on a fake device (which keeps one shared
// memory between kernels, runs smem_fill and smem_count on it, and runs
// nothing else) with the built code objects.
func poisonEnv(t *testing.T, info gpu.Info) (*gates.Env, *fakegpu.Device) {
	t.Helper()
	build := filepath.Join("..", "build")
	if err := fakegpu.Built(build, info); err != nil {
		t.Skip(err)
	}
	dev := fakegpu.New(info)
	return &gates.Env{Seed: 1, Dev: dev, Kernels: kernels.NewLoader(build, dev), BuildDir: build}, dev
}

// copyGate launches copy_v4 plainly, extended, and plainly again.
var copyGate = gates.Gate{Name: "poison-test", Device: true, Run: func(t *gates.T) {
	src, dst := t.Buffer("src", 4096), t.Buffer("dst", 4096)
	t.Upload(src, make([]byte, 4096))
	args := []any{src.Ptr(), dst.Ptr(), uint64(256)}
	t.Launch("copy_v4", gpu.D1(1), gpu.D1(256), 0, args...)
	t.LaunchEx("copy_v4", gpu.D1(1), gpu.D1(256), 0, gpu.LaunchOpts{}, args...)
	t.Launch("copy_v4", gpu.D1(1), gpu.D1(256), 0, args...)
}}

// Every launch a gate makes, plain or extended, runs on freshly poisoned
// shared memory: smem_fill, at the device's largest block, on two blocks
// an SM, directly before it; the first launch of a gate probes the poison
// once and records shared_poison_seen (1 where shared memory is kept, 0
// where the device clears it, which passes with a note).
func TestSharedPoisonBeforeEveryGateLaunch(t *testing.T) {
	for _, info := range fakegpu.Targets(1 << 20) {
		for _, clearing := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/clears=%v", info.Arch, clearing), func(t *testing.T) {
				info.SharedPerBlock = 64 << 10
				env, dev := poisonEnv(t, info)
				dev.ClearsShared = clearing
				res := gates.RunGate(env, copyGate)
				if res.Status != gates.Pass {
					t.Fatalf("gate %s: %s", res.Status, res.Reason)
				}
				want := 1.0
				if clearing {
					want = 0
				}
				if got, ok := res.Metrics["shared_poison_seen"]; !ok || got != want {
					t.Errorf("shared_poison_seen = %v (recorded %v), want %v", got, ok, want)
				}
				var order []string
				for _, l := range dev.Launches {
					if l.Kernel == kernels.BufDiffKernel {
						continue // the input check's (inputcheck_ext_test.go)
					}
					order = append(order, l.Kernel)
					if l.Kernel == kernels.SharedFillKernel {
						if l.SharedBytes != info.SharedPerBlock || int(l.Grid.X) != 2*info.SMs || l.Args[1].(uint32) != kernels.SharedPoison {
							t.Errorf("smem_fill launched with %d bytes, grid %d, byte %#x; want %d, %d, %#x", l.SharedBytes, l.Grid.X, l.Args[1], info.SharedPerBlock, 2*info.SMs, kernels.SharedPoison)
						}
					}
				}
				wantOrder := []string{"smem_fill", "smem_count", "smem_fill", "copy_v4", "smem_fill", "copy_v4", "smem_fill", "copy_v4"}
				if fmt.Sprint(order) != fmt.Sprint(wantOrder) {
					t.Errorf("launches %v, want %v", order, wantOrder)
				}
			})
		}
	}
}

// A fill that does not reach all of shared memory (the probe finds part
// poison, part what an earlier kernel left) fails the gate, naming the
// probe: its launches could not be trusted to run on poisoned shared
// memory.
func TestSharedPoisonBrokenFillFails(t *testing.T) {
	info := fakegpu.Targets(1 << 20)[0]
	info.SharedPerBlock = 64 << 10
	env, dev := poisonEnv(t, info)
	dev.SharedFillLimit = info.SharedPerBlock / 2
	res := gates.RunGate(env, copyGate)
	if res.Status != gates.Fail || !strings.Contains(res.Reason, "the fill or the probe is broken") {
		t.Errorf("a half fill: gate %s (%s), want FAIL naming the probe", res.Status, res.Reason)
	}
}
