// Package golden compares test output with golden files in testdata/.
//
// Check(t, path, got) passes when got equals the file's bytes. On a
// mismatch it writes path+".got" beside the golden file and reports the
// first differing line; `go test -update` rewrites the golden files instead.
// One implementation for every package with golden tests, so all of them
// behave (and are regenerated) the same way.
package golden

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"
)

// Update is the -update flag of every test binary that imports golden.
var Update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// Check compares got with the golden file at path (or rewrites it under -update).
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *Update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if bytes.Equal(got, want) {
		os.Remove(path + ".got")
		return
	}
	os.WriteFile(path+".got", got, 0o644)
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < max(len(gl), len(wl)); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Errorf("%s differs from golden at line %d:\n got: %q\nwant: %q\n(full output in %s.got; go test -update if the change is intended)", path, i+1, g, w, path)
			return
		}
	}
}
