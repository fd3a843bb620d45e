package gates

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A kernel with a CTA barrier inside its loop and a fence after it, and
// the same kernel with the barrier moved out of the loop: the counts are
// equal, the depths are not.
const ptxSyncInLoop = `
.visible .entry k(
	.param .u64 k_param_0
)
{
	.reg .pred 	%p<2>;
$L__BB0_1:
	ld.shared.u32 	%r1, [%r2];
	barrier.sync 	0;
	@%p1 bra 	$L__BB0_1;
	fence.acq_rel.gpu;
	atom.relaxed.gpu.global.add.u32 	%r3, [%rd1], 1;
	ret;
}
`

const ptxSyncMovedOut = `
.visible .entry k(
	.param .u64 k_param_0
)
{
	.reg .pred 	%p<2>;
$L__BB0_1:
	ld.shared.u32 	%r1, [%r2];
	@%p1 bra 	$L__BB0_1;
	barrier.sync 	0;
	fence.acq_rel.gpu;
	atom.relaxed.gpu.global.add.u32 	%r3, [%rd1], 1;
	ret;
}
`

func countsOf(t *testing.T, ptx string) SyncCounts {
	t.Helper()
	syms, err := ParsePTX(ptx)
	if err != nil {
		t.Fatal(err)
	}
	return CountSync("sm_90a", syms[0])
}

func TestCountSync(t *testing.T) {
	got := countsOf(t, ptxSyncInLoop)
	want := SyncCounts{"barrier.sync@loop1": 1, "fence.acq_rel.gpu@loop0": 1, "atom.relaxed.gpu.global.add.u32@loop0": 1}
	if len(got) != len(want) {
		t.Fatalf("counts %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d, want %d (all: %v)", k, got[k], v, got)
		}
	}
}

func TestCompareSync(t *testing.T) {
	golden := map[string]SyncCounts{"k": countsOf(t, ptxSyncInLoop)}
	t.Run("unchanged", func(t *testing.T) {
		if d := CompareSync(golden, map[string]SyncCounts{"k": countsOf(t, ptxSyncInLoop)}, "sm_90a"); len(d) != 0 {
			t.Errorf("diffs %v", d)
		}
	})
	t.Run("moved-out-of-loop", func(t *testing.T) {
		d := CompareSync(golden, map[string]SyncCounts{"k": countsOf(t, ptxSyncMovedOut)}, "sm_90a")
		if len(d) != 2 || d[0].Key != "barrier.sync@loop0" || d[0].Old != 0 || d[0].New != 1 || d[1].Key != "barrier.sync@loop1" || d[1].Old != 1 || d[1].New != 0 {
			t.Fatalf("diffs %+v: want barrier.sync leaving depth 1 for depth 0", d)
		}
		msg := d[1].String()
		for _, w := range []string{"k (sm_90a)", "barrier.sync@loop1", "1 in the golden inventory, 0 in the build", "-update"} {
			if !strings.Contains(msg, w) {
				t.Errorf("message %q lacks %q", msg, w)
			}
		}
	})
	t.Run("dropped", func(t *testing.T) {
		dropped := strings.Replace(ptxSyncInLoop, "\tfence.acq_rel.gpu;\n", "", 1)
		d := CompareSync(golden, map[string]SyncCounts{"k": countsOf(t, dropped)}, "sm_90a")
		if len(d) != 1 || d[0].Key != "fence.acq_rel.gpu@loop0" || d[0].New != 0 {
			t.Fatalf("diffs %+v", d)
		}
	})
	t.Run("new-kernel", func(t *testing.T) {
		d := CompareSync(golden, map[string]SyncCounts{"k2": {}}, "sm_90a")
		if len(d) != 1 || d[0].Old != -1 || !strings.Contains(d[0].String(), "not in the golden inventory") {
			t.Fatalf("diffs %+v", d)
		}
	})
}

func TestSyncKey(t *testing.T) {
	for _, c := range []struct {
		arch, mnemonic string
		counted        bool
	}{
		{"sm_90a", "barrier.sync", true},
		{"sm_90a", "bar.warp.sync", true},
		{"sm_90a", "barrier.cluster.arrive.release.aligned", true},
		{"sm_90a", "cp.async.wait_group", true},
		{"sm_90a", "cp.async.cg.shared.global", false},
		{"sm_90a", "mbarrier.try_wait.parity.shared::cta.b64", true},
		{"sm_90a", "wgmma.wait_group.sync.aligned", true},
		{"sm_90a", "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3", false},
		{"sm_90a", "shfl.sync.bfly.b32", false},
		{"sm_90a", "griddepcontrol.wait", true},
		{"sm_90a", "red.global.add.f32", true},
		{"gfx1201", "s_barrier_signal", true},
		{"gfx1201", "s_barrier_wait", true},
		{"gfx1201", "global_inv", true},
		{"gfx1201", "global_atomic_add_u32", true},
		{"gfx1201", "ds_add_u32", true},
		{"gfx1201", "ds_load_2addr_b32", false},
		{"gfx1201", "s_wait_dscnt", false},
		{"gfx1201", "global_load_b128", false},
	} {
		if got := SyncKey(c.arch, c.mnemonic) != ""; got != c.counted {
			t.Errorf("%s %s: counted %v, want %v", c.arch, c.mnemonic, got, c.counted)
		}
	}
}

func TestSyncInventoryRoundTrip(t *testing.T) {
	inv := SyncInventory{"sm_90a": {"k": countsOf(t, ptxSyncInLoop), "empty": {}}}
	back, err := ParseSyncInventory(inv.Format())
	if err != nil {
		t.Fatal(err)
	}
	if string(back.Format()) != string(inv.Format()) {
		t.Errorf("round trip:\n%s\nwant\n%s", back.Format(), inv.Format())
	}
	if c, ok := back["sm_90a"]["empty"]; !ok || len(c) != 0 {
		t.Errorf("a kernel without sync instructions is lost: %v", back)
	}
	for _, bad := range []string{"sm_90a k barrier.sync@loop0", "sm_90a k barrier.sync 1", "sm_90a k barrier.sync@loop0 -1",
		"sm_90a k barrier.sync@loop0 1\nsm_90a k barrier.sync@loop0 2"} {
		if _, err := ParseSyncInventory([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func FuzzParseSyncInventory(f *testing.F) {
	f.Add(string(syncGolden))
	f.Add("sm_90a k (none) 0\n")
	f.Add("# c\nsm_90a k bar.sync@loop1 3\n")
	f.Fuzz(func(t *testing.T, text string) {
		inv, err := ParseSyncInventory([]byte(text))
		if err != nil {
			return
		}
		back, err := ParseSyncInventory(inv.Format())
		if err != nil {
			t.Fatalf("the formatted inventory does not parse: %v", err)
		}
		if string(back.Format()) != string(inv.Format()) {
			t.Fatalf("format is not a fixed point")
		}
	})
}

// With no LLVM disassembler on PATH the gate checks the sm_90a half only
// and says so in its metrics (archs_unchecked), not only in its log.
func TestSyncInventoryCountsTheUncheckedHalf(t *testing.T) {
	if _, err := os.Stat(filepath.Join("..", "build", "sm_90a")); err != nil {
		t.Skipf("no ../build/sm_90a (run make kernels): %v", err)
	}
	t.Setenv("PATH", t.TempDir())
	res := RunGate(&Env{BuildDir: filepath.Join("..", "build")}, Gate{Name: "sync-inventory", Run: gateSyncInventory})
	if res.Status != Pass || res.Metrics["archs_checked"] != 1 || res.Metrics["archs_unchecked"] != 1 {
		t.Errorf("status %s, metrics %v: want PASS with archs_checked 1 and archs_unchecked 1 (%s)", res.Status, res.Metrics, res.Reason)
	}
}

// TestCountSyncOrderedLoads: a load or store with a memory order is
// counted under its full mnemonic, so an acquire read of a counter that
// becomes a plain (or a relaxed) load changes the inventory; cache-hinted
// and shared-memory loads are not counted.
func TestCountSyncOrderedLoads(t *testing.T) {
	body := func(op string) string {
		return ".visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n\t" + op + " \t%r1, [%rd1];\n\tld.global.cg.f32 \t%f1, [%rd2];\n\tld.shared.u32 \t%r2, [%r3];\n\tret;\n}\n"
	}
	for _, c := range []struct {
		op, key string
	}{
		{"ld.acquire.gpu.global.u32", "ld.acquire.gpu.global.u32@loop0"},
		{"ld.relaxed.gpu.global.u32", "ld.relaxed.gpu.global.u32@loop0"},
		{"ld.volatile.global.u32", "ld.volatile.global.u32@loop0"},
		{"ld.global.u32", ""},
	} {
		t.Run(c.op, func(t *testing.T) {
			got := countsOf(t, body(c.op))
			want := SyncCounts{}
			if c.key != "" {
				want[c.key] = 1
			}
			if !maps.Equal(got, want) {
				t.Errorf("counts %v, want %v", got, want)
			}
		})
	}
	t.Run("st.relaxed", func(t *testing.T) {
		got := countsOf(t, ".visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n\tst.relaxed.gpu.global.u32 \t[%rd1], %r1;\n\tret;\n}\n")
		if !maps.Equal(got, SyncCounts{"st.relaxed.gpu.global.u32@loop0": 1}) {
			t.Errorf("counts %v, want the relaxed store", got)
		}
	})
}
