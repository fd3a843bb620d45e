package producers

import (
	"strings"
	"testing"

	"github.com/parharness/parharness/gates"
)

// TestCompareOutCatches proves the producer comparator fails on what it
// exists to catch: a wrong element, and a write past the expected output.
func TestCompareOutCatches(t *testing.T) {
	want := []byte{1, 2, 3, 4}
	run := func(got []byte) gates.Result {
		return gates.RunGate(&gates.Env{}, gates.Gate{Name: "cmp", Run: func(t *gates.T) {
			gates.CompareBytes(t, "out", got, want, 1, func(i int) string { return "" })
		}})
	}
	if r := run([]byte{1, 2, 3, 4, 0xFF, 0xFF}); r.Status != gates.Pass {
		t.Fatalf("equal output with intact poison failed: %v", r.Reason)
	}
	if r := run([]byte{1, 2, 9, 4, 0xFF, 0xFF}); r.Status != gates.Fail || !strings.Contains(r.Reason, "1 of 4 elements differ") {
		t.Fatalf("a wrong element passed: %v %q", r.Status, r.Reason)
	}
	if r := run([]byte{1, 2, 3, 4, 0xFF, 0x00}); r.Status != gates.Fail || !strings.Contains(r.Reason, "past the end") {
		t.Fatalf("a write past the output passed: %v %q", r.Status, r.Reason)
	}
	// An element left at the poison value is a mismatch (the mirror never
	// produces 0xFF codes).
	if r := run([]byte{1, 0xFF, 3, 4, 0xFF, 0xFF}); r.Status != gates.Fail {
		t.Fatalf("an unwritten element passed")
	}
}
