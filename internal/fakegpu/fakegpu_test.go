package fakegpu

import (
	"strings"
	"testing"

	"github.com/parharness/parharness/gpu"
)

func TestMemory(t *testing.T) {
	d := New(gpu.Info{Arch: "sm_90"})
	a, _ := d.Malloc(10)
	b, _ := d.Malloc(4)
	if err := d.HtoD(a.Add(2), []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 10)
	if err := d.DtoH(got, a); err != nil || string(got) != "\x00\x00\x01\x02\x03\x00\x00\x00\x00\x00" {
		t.Fatalf("%v %v", got, err)
	}
	if err := d.Memset(b, 7, 4); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		p gpu.Ptr
		n int
	}{{a.Add(8), 3}, {b.Add(4), 1}, {a - 1, 1}} {
		if err := d.Memset(c.p, 0, c.n); err == nil || !strings.Contains(err.Error(), "not inside one live allocation") {
			t.Errorf("access %#x+%d: %v", c.p, c.n, err)
		}
	}
	if err := d.Free(a); err != nil {
		t.Fatal(err)
	}
	if err := d.Free(a); err == nil {
		t.Error("double free accepted")
	}
	if err := d.HtoD(a, []byte{1}); err == nil {
		t.Error("write after free accepted")
	}
	if err := d.HtoD(b, []byte{1}); err != nil {
		t.Errorf("other allocation after a free: %v", err)
	}
	// A launch with a freed buffer is refused; one inside a live one runs.
	f, _ := module{}.Function("k")
	if err := d.Launch(f, gpu.D1(1), gpu.D1(32), 0, 0, a, uint32(1)); err == nil || !strings.Contains(err.Error(), "k argument 0") {
		t.Errorf("launch with a freed buffer: %v", err)
	}
	if err := d.Launch(f, gpu.D1(1), gpu.D1(32), 0, 0, b.Add(3), uint32(1)); err != nil || len(d.Launches) != 1 {
		t.Errorf("launch inside a live buffer: %v (%d recorded)", err, len(d.Launches))
	}
	if _, err := d.at(b+1<<62, 1); err == nil {
		t.Error("a far pointer past an allocation was accepted")
	}
}

// Memset fills exactly the bytes asked for, at any length.
func TestMemsetFillsExactly(t *testing.T) {
	d := New(gpu.Info{Arch: "sm_90"})
	for _, n := range []int{0, 1, 2, 3, 7, 64, 1000, 1 << 16} {
		p, _ := d.Malloc(n + 2)
		if err := d.Memset(p.Add(1), 0xA5, n); err != nil {
			t.Fatal(err)
		}
		m, _ := d.Mem(p, n+2)
		for i, v := range m {
			want := byte(0xA5)
			if i == 0 || i == n+1 {
				want = 0
			}
			if v != want {
				t.Fatalf("n=%d: byte %d is %#02x, want %#02x", n, i, v, want)
			}
		}
	}
}
