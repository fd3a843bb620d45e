package gpu

import (
	"errors"
	"strings"
	"testing"
)

// loadLib against libc: what binds, what is skipped, and what the error of
// a failed search says, on any machine.

func TestLoadLibSkipsToTheCandidateThatBinds(t *testing.T) {
	var strlen func(s *byte) uintptr
	absent := func() {}
	l, err := loadLib(libSpec{
		lib:   "test libc",
		names: []string{"libparharness-absent.so", "libc.so.6"},
		syms:  []symbol{{"strlen", &strlen, false}, {"parharness_absent", &absent, true}},
		anyOf: [][]string{{"parharness_absent", "strlen"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if l.path != "libc.so.6" {
		t.Errorf("bound %s, want libc.so.6", l.path)
	}
	s := []byte("hello\x00")
	if n := strlen(&s[0]); n != 5 {
		t.Errorf("bound strlen(\"hello\") = %d", n)
	}
	if absent != nil {
		t.Error("an optional symbol the library lacks left its variable set")
	}
}

func TestLoadLibErrorNamesEveryCandidate(t *testing.T) {
	var a, b, c func()
	_, err := loadLib(libSpec{
		lib:   "test libc",
		names: []string{"libparharness-absent.so", "libc.so.6"},
		globs: []string{t.TempDir() + "/libnothing.so*"},
		syms:  []symbol{{"parharness_absent_1", &a, false}, {"parharness_absent_2", &b, false}, {"parharness_absent_3", &c, true}},
	})
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("not an *Error: %T %v", err, err)
	}
	t.Logf("%v", err)
	if e.Lib != "test libc" || len(e.Tried) != 3 || !strings.HasPrefix(err.Error(), "test libc not loaded: tried libparharness-absent.so: ") {
		t.Fatalf("got %#v", e)
	}
	if !strings.HasPrefix(e.Tried[0], "libparharness-absent.so: ") || !strings.Contains(e.Tried[0], "cannot open shared object file") ||
		strings.HasPrefix(e.Tried[0], "libparharness-absent.so: libparharness-absent.so") {
		t.Errorf("missing file: %q", e.Tried[0])
	}
	if e.Tried[1] != "libc.so.6: symbols parharness_absent_1, parharness_absent_2 not found" {
		t.Errorf("missing symbols: %q", e.Tried[1])
	}
	if !strings.HasSuffix(e.Tried[2], "/libnothing.so*: no match") {
		t.Errorf("empty glob: %q", e.Tried[2])
	}
	if a != nil || b != nil {
		t.Error("a failed candidate bound a variable")
	}
}

// A group of alternatives none of which the library has is reported by
// its last name.
func TestLoadLibAnyOf(t *testing.T) {
	var x, y func()
	_, err := loadLib(libSpec{
		lib:   "test libc",
		names: []string{"libc.so.6"},
		syms:  []symbol{{"parharness_new", &x, true}, {"parharness_old", &y, true}},
		anyOf: [][]string{{"parharness_new", "parharness_old"}},
	})
	var e *Error
	if !errors.As(err, &e) || len(e.Tried) != 1 || e.Tried[0] != "libc.so.6: symbol parharness_old not found" {
		t.Errorf("got %v", err)
	}
}

// The CUDA driver's table binds package variables: each its own, and
// optional only those one feature alone needs (cuLaunchKernelEx, CUDA
// 12.0+, for LaunchEx; the PCI bus id calls for OpenDevice and Info; the
// occupancy call for Occupier).
func TestCUDASymbolTable(t *testing.T) {
	checkSymbolEntries(t, "CUDA", cudaSymbols)
	optional := map[string]bool{"cuLaunchKernelEx": true, "cuDeviceGetByPCIBusId": true, "cuDeviceGetPCIBusId": true, "cuOccupancyMaxActiveBlocksPerMultiprocessor": true}
	for _, s := range cudaSymbols {
		if s.optional != optional[s.name] {
			t.Errorf("%s: optional = %v", s.name, s.optional)
		}
	}
}
