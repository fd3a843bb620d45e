package gates_test

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"testing"

	_ "github.com/parharness/parharness/families/basics"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/internal/fakegpu"
	"github.com/parharness/parharness/kernels"
)

// smemModel is one shared memory for the whole fake device: smem_fill
// writes it, smem_count counts it, and any other kernel "clobbers" it (as
// a real kernel's own stores would), so the test sees whether the poison
// is laid down again before each launch.
type smemModel struct {
	mem   []byte
	clear bool // the device clears shared memory between kernels
}

func (m *smemModel) exec(d *fakegpu.Device, l fakegpu.Launch) error {
	if m.clear {
		clear(m.mem)
	}
	switch l.Kernel {
	case "smem_fill":
		v := byte(l.Args[1].(uint32))
		for i := range m.mem[:l.Args[0].(uint32)] {
			m.mem[i] = v
		}
	case "smem_count":
		n, v := l.Args[0].(uint32), byte(l.Args[1].(uint32))
		var hit, zero uint64
		for _, b := range m.mem[:n] {
			hit += map[bool]uint64{true: 1}[b == v]
			zero += map[bool]uint64{true: 1}[b == 0]
		}
		out, err := d.Mem(l.Args[2].(gpu.Ptr), 16)
		if err != nil {
			return err
		}
		binary.LittleEndian.PutUint64(out, hit*uint64(l.Grid.X))
		binary.LittleEndian.PutUint64(out[8:], zero*uint64(l.Grid.X))
	default:
		m.mem[7] = 0x5A
	}
	return nil
}

// Every launch a gate makes, plain or extended, runs on freshly poisoned
// shared memory: smem_fill, at the device's largest block, on two blocks
// an SM, directly before it; the first launch of a gate probes the poison
// once and records shared_poison_seen (1 where shared memory is kept, 0
// where the device clears it).
func TestSharedPoisonBeforeEveryGateLaunch(t *testing.T) {
	build := filepath.Join("..", "build")
	for _, info := range fakegpu.Targets(1 << 20) {
		for _, clearing := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/clears=%v", info.Arch, clearing), func(t *testing.T) {
				info := info
				info.SharedPerBlock = 64 << 10
				if err := fakegpu.Built(build, info); err != nil {
					t.Skip(err)
				}
				dev := fakegpu.New(info)
				env := &gates.Env{Seed: 1, Dev: dev, Kernels: kernels.NewLoader(build, dev), BuildDir: build}
				m := &smemModel{mem: make([]byte, info.SharedPerBlock), clear: clearing}
				dev.Exec = m.exec
				res := gates.RunGate(env, gates.Gate{Name: "poison-test", Device: true, Run: func(t *gates.T) {
					src, dst := t.Buffer("src", 4096), t.Buffer("dst", 4096)
					t.Upload(src, make([]byte, 4096))
					args := []any{src.Ptr(), dst.Ptr(), uint64(256)}
					t.Launch("copy_v4", gpu.D1(1), gpu.D1(256), 0, args...)
					t.LaunchEx("copy_v4", gpu.D1(1), gpu.D1(256), 0, gpu.LaunchOpts{}, args...)
					t.Launch("copy_v4", gpu.D1(1), gpu.D1(256), 0, args...)
				}})
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
					order = append(order, l.Kernel)
					if l.Kernel == "smem_fill" {
						if l.SharedBytes != info.SharedPerBlock || int(l.Grid.X) != 2*info.SMs || l.Args[1].(uint32) != gates.SharedPoison {
							t.Errorf("smem_fill launched with %d bytes, grid %d, byte %#x; want %d, %d, %#x", l.SharedBytes, l.Grid.X, l.Args[1], info.SharedPerBlock, 2*info.SMs, gates.SharedPoison)
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
