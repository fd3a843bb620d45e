package gates_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/internal/fakegpu"
)

// RequireFilled passes a buffer that holds only its fill, and fails one
// with a wrong byte anywhere (the first byte, either side of a 4 KiB and a
// 64 KiB piece, the last), naming that byte, for every fill (0 included)
// and lengths around those pieces.
func TestRequireFilled(t *testing.T) {
	info := fakegpu.Targets(1 << 20)[0]
	for _, fill := range []byte{0, 0xFF, 0x5A} {
		for _, n := range []int{1, 4095, 4096, 4097, 3*4096 + 17, 64<<10 + 1, 3 << 16} {
			for _, at := range []int{-1, 0, 4095, 4096, 64<<10 - 1, 64 << 10, n - 1} {
				if at >= n {
					continue
				}
				t.Run(fmt.Sprintf("fill=%#x/n=%d/at=%d", fill, n, at), func(t *testing.T) {
					env, _ := poisonEnv(t, info)
					res := gates.RunGate(env, gates.Gate{Name: "require-filled", Device: true, Run: func(gt *gates.T) {
						b := gt.Buffer("ws", n)
						src := make([]byte, n)
						for i := range src {
							src[i] = fill
						}
						if at >= 0 {
							src[at] ^= 1
						}
						gt.Init(b, src)
						gt.RequireFilled("test", b, fill, "a planted byte")
					}})
					if at < 0 {
						if res.Status != gates.Pass {
							t.Fatalf("all filled: %s %v", res.Status, res.Failures)
						}
						return
					}
					want := fmt.Sprintf("1 bytes are not %#02x, first at byte %d", fill, at)
					if res.Status != gates.Fail || !strings.Contains(strings.Join(res.Failures, "\n"), want) {
						t.Fatalf("byte %d changed: %s %v, want a failure naming %q", at, res.Status, res.Failures, want)
					}
				})
			}
		}
	}
}

// Init writes an output: it gets no device copy (the input check's) and no
// comparison after a launch, so a kernel may change it.
func TestInitMakesNoDeviceCopy(t *testing.T) {
	env, dev := poisonEnv(t, fakegpu.Targets(1 << 20)[0])
	var withInit, withUpload int
	res := gates.RunGate(env, gates.Gate{Name: "init", Device: true, Run: func(gt *gates.T) {
		a := gt.Buffer("in", 4096)
		gt.Upload(a, make([]byte, 4096)) // the first upload also sets up the comparison
		before := dev.Live()
		o := gt.Buffer("out", 4096)
		gt.Init(o, make([]byte, 4096))
		withInit = dev.Live() - before
		before = dev.Live()
		i := gt.Buffer("in2", 4096)
		gt.Upload(i, make([]byte, 4096))
		withUpload = dev.Live() - before
	}})
	if res.Status != gates.Pass {
		t.Fatalf("%s %v", res.Status, res.Failures)
	}
	if withInit != withUpload-1 {
		t.Errorf("a buffer written with Init holds %d allocations, one with Upload %d: want one fewer (no device copy)", withInit, withUpload)
	}
}
