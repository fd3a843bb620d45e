package par

import (
	"bytes"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
)

// Every index runs exactly once, for n below, at and above the worker
// count (run with -race: the bodies write their own slots only).
func TestForRunsEachIndexOnce(t *testing.T) {
	for _, n := range []int{0, 1, 2, runtime.GOMAXPROCS(0), 1000} {
		hits := make([]int32, n)
		For(n, func(i int) { atomic.AddInt32(&hits[i], 1) })
		for i, h := range hits {
			if h != 1 {
				t.Fatalf("n=%d: index %d ran %d times", n, i, h)
			}
		}
	}
}

// A panic in a body reaches the caller with its index, after the other
// bodies returned.
func TestForRaisesABodysPanic(t *testing.T) {
	defer func() {
		r := recover()
		p, ok := r.(Panic)
		if !ok {
			t.Fatalf("recovered %#v, want a par.Panic", r)
		}
		if p.Index != 37 || p.Value != "boom" || !strings.Contains(p.String(), "index 37: boom") {
			t.Errorf("panic %v, want index 37 value boom", p)
		}
	}()
	For(100, func(i int) {
		if i == 37 {
			panic("boom")
		}
	})
	t.Fatal("For returned after a panicking body")
}

// Equal and IndexNot find a difference anywhere: first and last byte,
// either side of a chunk boundary, and in a short tail.
func TestEqualAndIndexNotFindEveryPosition(t *testing.T) {
	n := 3*chunk + 12345
	a := bytes.Repeat([]byte{0xFF}, n)
	if !Equal(a, bytes.Clone(a)) || IndexNot(a, 0xFF) != -1 {
		t.Fatal("equal slices reported different")
	}
	if Equal(a, a[:n-1]) {
		t.Fatal("slices of different lengths reported equal")
	}
	for _, at := range []int{0, 1, chunk - 1, chunk, 2*chunk + 7, n - 1} {
		b := bytes.Clone(a)
		b[at] = 0x7F
		if Equal(a, b) || Equal(b, a) {
			t.Errorf("a difference at %d was not seen by Equal", at)
		}
		if got := IndexNot(b, 0xFF); got != at {
			t.Errorf("IndexNot with one byte at %d = %d", at, got)
		}
		b[n-1] = 0 // a later one does not hide the first
		if got := IndexNot(b, 0xFF); got != at {
			t.Errorf("IndexNot with bytes at %d and %d = %d", at, n-1, got)
		}
	}
	if got := IndexNot([]byte{5, 5, 6}, 5); got != 2 {
		t.Errorf("IndexNot on a short slice = %d, want 2", got)
	}
	if IndexNot(nil, 0) != -1 || !Equal(nil, []byte{}) {
		t.Error("empty slices")
	}
}
