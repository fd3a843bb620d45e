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

func TestMismatches(t *testing.T) {
	got := Mismatches("k.hip", []byte("#define A 4\n#define B 8\n"), map[string]int64{"A": 4, "B": 9, "C": 1})
	want := []string{"B is 8 in k.hip, 9 on the Go side", "k.hip: no integer #define C"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("Mismatches = %q, want %q", got, want)
	}
}
