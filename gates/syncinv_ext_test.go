package gates_test

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/internal/golden"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/mutate"
)

// TestSyncInventoryGolden takes the inventory of the build in ../build
// (every registered kernel, both code archs) and compares it with the
// golden file the sync-inventory gate embeds; -update rewrites the file.
// Without the kernels built, or without llvm-objdump, it skips: the golden
// file must hold both archs, so it is only taken where both can be read.
func TestSyncInventoryGolden(t *testing.T) {
	inv := gates.SyncInventory{}
	for _, arch := range gates.SyncArchs {
		got, err := gates.BuildSyncInventory(filepath.Join("..", "build"), arch)
		if errors.Is(err, gates.ErrNoCode) {
			t.Skip(err)
		}
		if err != nil {
			t.Fatal(err)
		}
		inv[arch] = got
	}
	golden.Check(t, filepath.Join("testdata", "sync-inventory.txt"), inv.Format())
}

// TestSyncInventoryKillsDroppedSyncs builds sync-dropped and
// order-relaxed mutants with mutate's build code (the real compiler and the
// Makefile's flags) and applies the sync-inventory comparison to each
// mutant's PTX: every one that builds to different code must differ from
// the golden inventory in some kernel of its module. The two mutants that
// survived every value gate on the H200 (2026-12-01) are among them.
// -short builds only the catalogue's default pick (one site per file and
// operator); otherwise every site but gemm.hip's sync-dropped ones, of
// which the first of each function.
func TestSyncInventoryKillsDroppedSyncs(t *testing.T) {
	ctx := context.Background()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make:", err)
	}
	clang, err := mutate.MakeVar(ctx, "..", "CLANG")
	if err != nil {
		t.Skip(err)
	}
	if _, err := exec.LookPath(clang); err != nil {
		t.Skipf("no %s (the Makefile's CLANG): %v", clang, err)
	}
	nv, err := mutate.MakeVar(ctx, "..", "NVFLAGS")
	if err != nil {
		t.Fatal(err)
	}
	golden, err := gates.GoldenSyncInventory()
	if err != nil {
		t.Fatal(err)
	}
	srcs, err := mutate.LoadSources("..", []string{"families/*/*.hip", "hipsrc/format/*.h", "hipsrc/rot/*.h", "hipsrc/i8/*.h"})
	if err != nil {
		t.Fatal(err)
	}
	var kept []*mutate.Source
	for _, s := range srcs {
		if !strings.HasPrefix(s.Path, "families/basics/") {
			kept = append(kept, s)
		}
	}
	perFile := 0
	if testing.Short() {
		perFile = 1
	}
	all := mutate.Generate(kept, mutate.Options{PerOpFile: perFile, Targets: mutate.ArchNV, Operators: mutate.SyncOperators})
	var ms []mutate.Mutant
	gemmFuncs := map[[2]string]bool{}
	for _, m := range all {
		if m.File == "families/gemm/gemm.hip" && m.Operator == "sync-dropped" && !testing.Short() {
			k := [2]string{m.Func, m.Operator}
			if gemmFuncs[k] {
				continue
			}
			gemmFuncs[k] = true
		}
		ms = append(ms, m)
	}
	relaxed := 0
	for _, m := range ms {
		if m.Operator == "order-relaxed" {
			relaxed++
		}
	}
	if relaxed == 0 {
		t.Error("no order-relaxed mutant: the stream-K hand-off's ordered count is no longer in the sources, or the operator lost its sites")
	}
	for _, want := range []string{"producers-sync-dropped-27c4c5", "skinny-sync-dropped-10022c"} {
		found := false
		for _, m := range ms {
			found = found || m.ID == want
		}
		if !found {
			t.Logf("%s (a survivor of the H200 run) is no longer in the mutant list: the sources moved", want)
		}
	}
	modules, err := filepath.Glob(filepath.Join("..", "families", "*", "*.hip"))
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range modules {
		modules[i] = filepath.ToSlash(strings.TrimPrefix(m, ".."+string(filepath.Separator)))
	}
	out := t.TempDir()
	cfg := mutate.BuildConfig{Root: "..", Out: out, Clang: clang, Flags: map[string]string{"sm_90a": nv},
		Targets: mutate.Targets[:1], Modules: modules}
	man := &mutate.Manifest{Targets: []string{"sm_90a"}}
	if err := mutate.Build(ctx, cfg, ms, man); err != nil {
		t.Fatal(err)
	}
	_, byModule := kernels.ByModule("sm_90a")
	for _, bm := range man.Mutants {
		t.Run(bm.ID, func(t *testing.T) {
			if bm.Build != mutate.BuildOK {
				t.Skipf("%s: %s", bm.Build, bm.Error)
			}
			var diffs []gates.SyncDiff
			for mod, o := range bm.Objects["sm_90a"] {
				f, err := os.Open(filepath.Join(out, o.Path))
				if err != nil {
					t.Fatal(err)
				}
				zr, err := gzip.NewReader(f)
				if err != nil {
					t.Fatal(err)
				}
				ptx, err := io.ReadAll(zr)
				f.Close()
				if err != nil {
					t.Fatal(err)
				}
				syms, err := gates.ParsePTX(string(ptx))
				if err != nil {
					t.Fatal(err)
				}
				got := map[string]gates.SyncCounts{}
				for _, s := range syms {
					for _, k := range byModule[mod] {
						if k.Name == s.Name {
							got[s.Name] = gates.CountSync("sm_90a", s)
						}
					}
				}
				diffs = append(diffs, gates.CompareSync(golden["sm_90a"], got, "sm_90a")...)
			}
			if len(diffs) == 0 {
				t.Fatalf("%s:%d (%s) %q dropped: the sync inventory of its module's kernels is unchanged (the gate would pass it)", bm.File, bm.Line, bm.Func, bm.Before)
			}
			for _, d := range diffs {
				t.Logf("killed: %s %s: %d -> %d", d.Kernel, d.Key, d.Old, d.New)
			}
		})
	}
}
