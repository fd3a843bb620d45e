package mutate

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildSnippet builds the snippet's mutants with the Makefile's flags
// and the real compiler (skipped where clang or make is missing): the
// outcomes include a mutant that builds, one the compiler refuses (with
// its first error line, naming the source, not the temporary copy) and one
// whose code is identical; every stored object decompresses to the object
// the manifest's hash names.
func TestBuildSnippet(t *testing.T) {
	ctx := context.Background()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make:", err)
	}
	clang, err := MakeVar(ctx, "..", "CLANG")
	if err != nil {
		t.Skip(err)
	}
	if _, err := exec.LookPath(clang); err != nil {
		t.Skipf("no %s (the Makefile's CLANG): %v", clang, err)
	}
	nv, err := MakeVar(ctx, "..", "NVFLAGS")
	if err != nil {
		t.Fatal(err)
	}
	s := loadSnippet(t)
	ms := Generate([]*Source{s}, Options{PerOpFile: 1, Targets: ArchNV})
	out := t.TempDir()
	cfg := BuildConfig{Root: "..", Out: out, Clang: clang, Flags: map[string]string{"sm_90a": nv}, Targets: Targets[:1],
		Modules: []string{"mutate/" + snippetPath}}
	m := &Manifest{Targets: []string{"sm_90a"}}
	if err := Build(ctx, cfg, ms, m); err != nil {
		t.Fatal(err)
	}
	back, err := ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Mutants) != len(ms) {
		t.Fatalf("the manifest has %d mutants, the list %d", len(back.Mutants), len(ms))
	}
	if len(back.Modules) != 1 || back.Modules[0].SHA256["sm_90a"] == "" || len(back.Modules[0].Deps) == 0 {
		t.Fatalf("modules %+v: want the snippet with its base hash and its headers", back.Modules)
	}
	n := map[string]int{}
	for _, bm := range back.Mutants {
		n[bm.Build]++
		t.Run(bm.ID, func(t *testing.T) {
			switch bm.Build {
			case BuildFailed:
				if !strings.Contains(bm.Error, "error") || !strings.Contains(bm.Error, "mutate/testdata/snippet.hip") {
					t.Errorf("did-not-build error %q: want the compiler's error line naming the source", bm.Error)
				}
			case BuildIdentical:
				if len(bm.Objects) != 0 {
					t.Error("an identical mutant has objects")
				}
			case BuildOK:
				o, ok := bm.Objects["sm_90a"]["snippet"]
				if !ok {
					t.Fatal("a built mutant has no sm_90a object")
				}
				b, err := readGzip(filepath.Join(out, o.Path))
				if err != nil {
					t.Fatal(err)
				}
				if sha(b) != o.SHA256 || sha(b) == back.Modules[0].SHA256["sm_90a"] {
					t.Error("the stored object is not the one the manifest names, or equals the base")
				}
				if !strings.Contains(string(b), ".entry snippet_kernel") {
					t.Error("the stored object is not the snippet's PTX")
				}
			default:
				t.Errorf("build status %q", bm.Build)
			}
		})
	}
	for _, st := range []string{BuildOK, BuildFailed, BuildIdentical} {
		if n[st] == 0 {
			t.Errorf("no snippet mutant is %q (outcomes %v): the snippet is meant to produce each", st, n)
		}
	}
	// The unused helper's mutants never change the object.
	for _, bm := range back.Mutants {
		if bm.Func == "unused_helper" && bm.Build != BuildIdentical && bm.Build != BuildFailed {
			t.Errorf("%s mutates a function nothing calls, yet its object changed", bm.ID)
		}
	}
	if entries, _ := os.ReadDir(out); len(entries) < 2 {
		t.Errorf("the mutant directory holds %d entries", len(entries))
	}
}

// TestHeaderMutantBuildsDependents: a mutant of a header compiles every
// module that includes it, against a mutated copy of the include tree.
func TestHeaderMutantBuildsDependents(t *testing.T) {
	ctx := context.Background()
	clang, err := MakeVar(ctx, "..", "CLANG")
	if err != nil {
		t.Skip(err)
	}
	if _, err := exec.LookPath(clang); err != nil {
		t.Skipf("no %s: %v", clang, err)
	}
	nv, err := MakeVar(ctx, "..", "NVFLAGS")
	if err != nil {
		t.Fatal(err)
	}
	srcs, err := LoadSources("..", []string{"hipsrc/format/e4m3.h"})
	if err != nil {
		t.Fatal(err)
	}
	var pick []Mutant
	for _, m := range Sites(srcs[0], Options{Targets: ArchNV}) {
		if m.Func == "e4m3_fix" && m.Operator == "eq-ne-swap" { // the snippet calls e4m3_encode2_hw, which calls e4m3_fix
			pick = append(pick, m)
			break
		}
	}
	if len(pick) == 0 {
		t.Fatal("no e4m3.h site to build")
	}
	out := t.TempDir()
	cfg := BuildConfig{Root: "..", Out: out, Clang: clang, Flags: map[string]string{"sm_90a": nv}, Targets: Targets[:1],
		Modules: []string{"mutate/" + snippetPath, "families/basics/copy.hip"}}
	m := &Manifest{}
	if err := Build(ctx, cfg, pick, m); err != nil {
		t.Fatal(err)
	}
	bm := m.Mutants[0]
	if strings.Join(bm.Modules, ",") != "snippet" {
		t.Errorf("modules %v: want only the snippet (copy.hip does not include format/e4m3.h)", bm.Modules)
	}
	if bm.Build != BuildOK || bm.Objects["sm_90a"]["snippet"].Path == "" {
		t.Errorf("the header mutant: %s %s, objects %v", bm.Build, bm.Error, bm.Objects)
	}
	// The real header is untouched.
	b, _ := os.ReadFile("../hipsrc/format/e4m3.h")
	if string(b) != string(srcs[0].Text) {
		t.Fatal("building a header mutant changed hipsrc/format/e4m3.h itself")
	}
}
