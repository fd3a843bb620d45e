package cdefs

import "testing"

func TestInts(t *testing.T) {
	got := Ints([]byte("#define A 4\n#define B (A * 8u) // bytes\n#define C \"text\"\n#define D B + 1\n"))
	for k, want := range map[string]int64{"A": 4, "B": 32, "D": 33} {
		if got[k] != want {
			t.Errorf("%s = %d, want %d (all: %v)", k, got[k], want, got)
		}
	}
	if _, ok := got["C"]; ok {
		t.Errorf("a string define was evaluated: %v", got)
	}
}
