package kernels

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/parharness/parharness/internal/fakegpu"
)

// bufDiffOn is the comparison of the repository's build on a fake device
// that runs buf_diff (skipped where make kernels has not run).
func bufDiffOn(t *testing.T) (*BufDiff, *fakegpu.Device) {
	t.Helper()
	info := fakegpu.Targets(1 << 20)[0]
	build := filepath.Join("..", "build")
	if err := fakegpu.Built(build, info); err != nil {
		t.Skip(err)
	}
	dev := fakegpu.New(info)
	d, err := NewLoader(build, dev).BufDiff()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, dev
}

// First names the lowest differing byte, -1 for equal or empty buffers,
// and refuses what it cannot compare or a result past the bytes compared.
func TestBufDiffFirst(t *testing.T) {
	d, dev := bufDiffOn(t)
	const n = 100
	a, _ := dev.Malloc(n)
	b, _ := dev.Malloc(n)
	for _, c := range []struct {
		name string
		flip []int
		n    int
		want int
	}{
		{name: "equal", n: n, want: -1},
		{name: "empty", flip: []int{0}, n: 0, want: -1},
		{name: "first byte", flip: []int{0}, n: n, want: 0},
		{name: "vector end", flip: []int{15}, n: n, want: 15},
		{name: "lowest of two", flip: []int{99, 17}, n: n, want: 17},
		{name: "past n", flip: []int{99}, n: 99, want: -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			ma, _ := dev.Mem(a, n)
			mb, _ := dev.Mem(b, n)
			clear(ma)
			clear(mb)
			for _, i := range c.flip {
				mb[i] = 1
			}
			got, err := d.First(a, b, c.n)
			if err != nil || got != c.want {
				t.Errorf("First = %d, %v; want %d", got, err, c.want)
			}
		})
	}
	t.Run("misaligned", func(t *testing.T) {
		if _, err := d.First(a+1, b, n); err == nil || !strings.Contains(err.Error(), "not 16-byte aligned") {
			t.Errorf("error %v, want one naming the alignment", err)
		}
	})
	t.Run("result past n", func(t *testing.T) {
		dev.BufDiff = func(a, b []byte) int { return len(a) }
		defer func() { dev.BufDiff = nil }()
		if _, err := d.First(a, b, n); err == nil || !strings.Contains(err.Error(), "the kernel is broken") {
			t.Errorf("error %v, want one calling the kernel broken", err)
		}
	})
}

// The self-test passes on an exact comparison and frees its scratch
// buffers.
func TestBufDiffSelfTestPasses(t *testing.T) {
	d, dev := bufDiffOn(t)
	live := dev.Live()
	if err := d.SelfTest(7); err != nil {
		t.Fatal(err)
	}
	if got := dev.Live(); got != live {
		t.Errorf("%d live allocations after the self-test, want %d", got, live)
	}
}
