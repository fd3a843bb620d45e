package gates_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/internal/fakegpu"
	"github.com/parharness/parharness/kernels"
)

// After every launch the device compares each input with its second
// device copy (buf_diff), after the comparison's self-test at the gate's
// first upload; the gate passes when nothing wrote an input.
func TestInputCheckAfterEveryLaunch(t *testing.T) {
	for _, info := range fakegpu.Targets(1 << 20) {
		t.Run(info.Arch, func(t *testing.T) {
			env, dev := poisonEnv(t, info)
			live := dev.Live()
			res := gates.RunGate(env, copyGate)
			if res.Status != gates.Pass {
				t.Fatalf("gate %s: %s", res.Status, res.Reason)
			}
			if got := dev.Live(); got != live {
				t.Errorf("%d live allocations after the gate, %d before: the device copies or the comparison's result word leak", got, live)
			}
			var order []string
			selfTest := 0
			for _, l := range dev.Launches {
				switch {
				case l.Kernel == kernels.BufDiffKernel && len(order) == 0:
					selfTest++
				case l.Kernel == kernels.BufDiffKernel:
					order = append(order, fmt.Sprintf("%s(%d)", l.Kernel, l.Args[2]))
				case l.Kernel == "copy_v4":
					order = append(order, l.Kernel)
				}
			}
			if selfTest < 20 {
				t.Errorf("%d self-test launches of buf_diff before the first copy, want 20 or more", selfTest)
			}
			want := strings.Repeat("copy_v4 buf_diff(4096) ", 3)
			if got := strings.Join(order, " ") + " "; got != want {
				t.Errorf("launches %q, want %q", got, want)
			}
		})
	}
}

// A kernel that writes any byte of an input fails the gate naming the
// offset and both bytes; a write into the input's device copy fails it
// too, named as such.
func TestInputCheckCatchesEveryWrite(t *testing.T) {
	info := fakegpu.Targets(1 << 20)[0]
	for _, off := range []int{0, 1, 15, 16, 2047, 4080, 4095} {
		for _, where := range []string{"input", "copy"} {
			t.Run(fmt.Sprintf("%s/%d", where, off), func(t *testing.T) {
				env, dev := poisonEnv(t, info)
				var shadow gpu.Ptr
				dev.Exec = func(d *fakegpu.Device, l fakegpu.Launch) error {
					if l.Kernel != "copy_v4" {
						return nil
					}
					p := l.Args[0].(gpu.Ptr)
					if where == "copy" {
						p = shadow
					}
					m, err := d.Mem(p, 4096)
					if err == nil {
						m[off] ^= 0x40
					}
					return err
				}
				res := gates.RunGate(env, gates.Gate{Name: "scribble", Device: true, Run: func(t *gates.T) {
					src, dst := t.Buffer("src", 4096), t.Buffer("dst", 4096)
					t.Upload(src, make([]byte, 4096))
					shadow = src.Shadow()
					t.Launch("copy_v4", gpu.D1(1), gpu.D1(256), 0, src.Ptr(), dst.Ptr(), uint64(256))
				}})
				want := fmt.Sprintf("input buffer src was written at byte offset %d (0x40, uploaded 0x00)", off)
				if where == "copy" {
					want = fmt.Sprintf("the device copy of input buffer src was written at byte offset %d", off)
				}
				if res.Status != gates.Fail || !strings.Contains(res.Reason, want) {
					t.Errorf("%s: %s, want FAIL naming %q", res.Status, res.Reason, want)
				}
			})
		}
	}
}

// A broken comparison fails its self-test, and so the gate, whatever the
// class of its fault; the gate then reads inputs back to the host, which
// still catches a write.
func TestInputCheckSelfTestCatchesBrokenComparisons(t *testing.T) {
	info := fakegpu.Targets(1 << 20)[0]
	exact := fakegpu.FirstDiff
	broken := map[string]func(a, b []byte) int{
		"never finds": func(a, b []byte) int { return -1 },
		"skips the tail": func(a, b []byte) int {
			n := len(a) &^ 15
			return exact(a[:n], b[:n])
		},
		"one grid pass only": func(a, b []byte) int {
			n := min(len(a), 4*info.SMs*256*16)
			return exact(a[:n], b[:n])
		},
		"word granular": func(a, b []byte) int {
			if i := exact(a, b); i >= 0 {
				return i &^ 3
			}
			return -1
		},
		"first word of a vector only": func(a, b []byte) int {
			for i := 0; i+16 <= len(a); i += 16 {
				if j := exact(a[i:i+4], b[i:i+4]); j >= 0 {
					return i + j
				}
			}
			return -1
		},
		"highest, not lowest": func(a, b []byte) int {
			for i := len(a) - 1; i >= 0; i-- {
				if a[i] != b[i] {
					return i
				}
			}
			return -1
		},
		"reports equal buffers as differing": func(a, b []byte) int {
			if i := exact(a, b); i >= 0 {
				return i
			}
			return 0
		},
	}
	for name, f := range broken {
		t.Run(name, func(t *testing.T) {
			env, dev := poisonEnv(t, info)
			dev.BufDiff = f
			var src gpu.Ptr
			dev.Exec = func(d *fakegpu.Device, l fakegpu.Launch) error {
				if l.Kernel == "copy_v4" {
					m, err := d.Mem(src, 4096)
					if err == nil {
						m[4093] = 7
					}
					return err
				}
				return nil
			}
			res := gates.RunGate(env, gates.Gate{Name: "broken-diff", Device: true, Run: func(t *gates.T) {
				in, out := t.Buffer("src", 4096), t.Buffer("dst", 4096)
				src = in.Ptr()
				t.Upload(in, make([]byte, 4096))
				t.Launch("copy_v4", gpu.D1(1), gpu.D1(256), 0, in.Ptr(), out.Ptr(), uint64(256))
			}})
			all := strings.Join(res.Failures, "; ")
			if res.Status != gates.Fail || !strings.Contains(res.Reason, "buf_diff self-test") ||
				!strings.Contains(all, "input buffer src was written at byte offset 4093") {
				t.Errorf("%s: %s, want FAIL naming the self-test and the host re-read's find", res.Status, all)
			}
		})
	}
}
