package main

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parharness/parharness/results"
)

// Two gate runs with different seeds write results files that share every
// metric key and case name (the CPU gates here; the device gates' keys are
// tested on a fake device in their families): a per-case key names the
// case, and the seed is a value.
func TestGateJSONKeysIndependentOfSeed(t *testing.T) {
	build := filepath.Join("..", "..", "build")
	if _, err := os.Stat(filepath.Join(build, "sm_90a")); err != nil {
		t.Skipf("no code objects (run make kernels): %v", err)
	}
	dir := t.TempDir()
	keys := map[string][]string{}
	for _, seed := range []string{"1", "2"} {
		js := filepath.Join(dir, seed+".json")
		code, out, stderr := run(t, "gate", "--backend", "none", "--only", "^(identity|isa-sm90a|isa-gfx1201|producers-semantics|resources-gfx1201|resources-ptx)$", "--seed", seed, "--json", js, "--build", build)
		if code != ExitOK {
			t.Fatalf("seed %s: exit %d\n%s\n%s", seed, code, out, stderr)
		}
		doc, err := results.Read(js)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range doc.Gates {
			for _, k := range slices.Sorted(maps.Keys(g.Metrics)) {
				keys[seed] = append(keys[seed], g.Gate+" "+k)
			}
			for _, k := range slices.Sorted(maps.Keys(g.CaseSeeds)) {
				keys[seed] = append(keys[seed], g.Gate+" case "+k)
			}
		}
	}
	if len(keys["1"]) < 50 {
		t.Fatalf("only %d keys: %v", len(keys["1"]), keys["1"])
	}
	if !slices.Equal(keys["1"], keys["2"]) {
		t.Errorf("the two runs' keys differ:\n%v\n%v", keys["1"], keys["2"])
	}
}
