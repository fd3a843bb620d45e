package gemm

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/internal/golden"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/refimpl"
)

// The split-K law as a table over both TP files' GEMM shapes and the decode
// ladder: a change to DecSplitK shows up as a reviewed golden diff.
func TestDecSplitKTableGolden(t *testing.T) {
	var buf bytes.Buffer
	for _, set := range []string{"qwen38-27b-tp2", "qwen38-27b-tp1"} {
		names, shs, err := GemmShapes(set)
		if err != nil {
			t.Fatal(err)
		}
		buf.WriteString(set + "\n")
		WriteDecSplitKTable(&buf, names, shs, []int{1, 2, 5, 8, 16, 24, 40, 48, 64}, H200SMs)
	}
	golden.Check(t, filepath.Join("testdata", "dec_splitk_h200.txt"), buf.Bytes())
}

// The law's invariants on any (M, N, K): 1 <= S <= min(DecMaxS, G), every
// split has at least one group, and no split is empty at the chosen S.
func TestDecSplitKInvariants(t *testing.T) {
	for _, K := range []int{128, 256, 1024, 3072, 5120, 8704, 17408} {
		G := K / refimpl.GroupSize
		for _, N := range []int{64, 512, 5120, 7168, 17408} {
			for M := 1; M <= DecMaxM; M++ {
				S := DecSplitK(M, N, K, H200SMs)
				if S < 1 || S > DecMaxS || S > G {
					t.Fatalf("M=%d N=%d K=%d: S=%d outside 1..min(%d, G=%d)", M, N, K, S, DecMaxS, G)
				}
				gps := (G + S - 1) / S
				if (S-1)*gps >= G {
					t.Fatalf("M=%d N=%d K=%d: S=%d leaves split %d empty (%d groups per split)", M, N, K, S, S-1, gps)
				}
			}
		}
	}
}

func TestDecLaunchOpts(t *testing.T) {
	for S := 1; S <= DecMaxS; S++ {
		o := DecLaunchOpts(S)
		if S == DecClusterS {
			if o.Cluster != (gpu.Dim3{X: 1, Y: uint32(S), Z: 1}) || o.PDL {
				t.Errorf("S=%d: %v, want a 1x%d cluster", S, o, S)
			}
		} else if o != (gpu.LaunchOpts{}) {
			t.Errorf("S=%d: %v, want a plain launch", S, o)
		}
	}
}

// Every M of the decode band has exactly one decode baseline, and every
// registered decode kernel launches at the M it serves and is refused
// outside its range.
func TestDecKernelsServeTheirRange(t *testing.T) {
	sh := GemmShape{K: 5120, Parts: []int{1024}}
	for M := 1; M <= DecMaxM; M++ {
		ks := DecKernels(M, "", true)
		if len(ks) == 0 || ks[0].Name != DecKernel(M) || ks[0].Role != kernels.Baseline {
			t.Fatalf("M=%d: decode kernels %v, want the baseline %s first", M, ks, DecKernel(M))
		}
		for _, k := range ks {
			S := 2 // fits every in-block kernel but the three-consumer ones
			if g, ok := decWPGeom[k.Name]; ok {
				S = g.C
			}
			if _, _, _, _, err := DecLaunch(sh, M, S, DecArgs{Kernel: k.Name, WRow: 1}); err != nil {
				t.Errorf("M=%d kernel %s: %v", M, k.Name, err)
			}
		}
	}
	if _, _, _, _, err := DecLaunch(sh, 1, 4, DecArgs{Kernel: "pq_gemm_dec_m64"}); err == nil {
		t.Errorf("DecLaunch accepted the 33..64 kernel for M=1")
	}
	if _, _, _, _, err := DecLaunch(sh, 1, 4, DecArgs{Kernel: "pq_gemm_pre"}); err == nil {
		t.Errorf("DecLaunch accepted a prefill kernel")
	}
}

// Every registered kernel of the family is defined in its source: its name
// appears as a token there (an entry point or an entry macro's first
// argument).
func TestRegisteredKernelsInSource(t *testing.T) {
	for _, k := range kernels.Select(kernels.Query{Family: Family, Full: true}) {
		src, err := os.ReadFile(k.Module + ".hip")
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`\b` + regexp.QuoteMeta(k.Name) + `\b`).Match(src) {
			t.Errorf("kernel %s is registered but %s never names it", k.Name, k.Source())
		}
	}
}

// The wgmma prefill asks for its dynamic shared memory (preWGShared, tied
// to PW_SMEM by TestGoConstantsMatchKernelDefines); pq_gemm_pre for none.
func TestPreWGShared(t *testing.T) {
	_, _, _, shared, _, err := PreLaunch(GemmShape{K: 5120, Parts: []int{6144, 512, 512}}, 2048, PreArgs{Kernel: "pq_gemm_pre_wg"})
	if err != nil || shared != preWGShared {
		t.Errorf("PreLaunch(pq_gemm_pre_wg): shared %d, err %v; want %d", shared, err, preWGShared)
	}
	if _, _, _, shared, _, _ := PreLaunch(GemmShape{K: 5120, Parts: []int{5120}}, 2048, PreArgs{}); shared != 0 {
		t.Errorf("pq_gemm_pre asks for %d bytes of dynamic shared memory", shared)
	}
	if _, _, _, _, _, err := PreLaunch(GemmShape{K: 5120, Parts: []int{5120}}, 2048, PreArgs{Kernel: "pq_gemm_dec_m8"}); err == nil {
		t.Errorf("PreLaunch accepted a decode kernel")
	}
	if !PreRowMajor("pq_gemm_pre_wg") || PreRowMajor("pq_gemm_pre") {
		t.Errorf("PreRowMajor: wrong layout")
	}
}

// pq_gemm_pre_wg converts a weight code c with zero point z to the e4m3 value
// c − z through f16 magic numbers (hipsrc/arch/wgmma.h, w4_zero_const and
// w4_word_cz): (c | 0x6400) − (0x6400 + z) for the low nibble of a byte,
// (16c | 0x6400)·(1/16) + (0xD400 + 16z) in one fma for the high one, then
// cvt to e4m3. Every step must be exact for all 16 × 16 (c, z), or the
// kernel's zero-point algebra (no row-sum term) is wrong. The test keeps
// Go copies of the constants and fails when the source's expressions stop
// matching them, so a change there has to be re-derived here. (The nibble
// order is the GEMM gate's to check.)
func TestPreWGWeightConversionExact(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "hipsrc", "arch", "wgmma.h"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"(0x6400u + z) * 0x00010001u", "(0xD400u + 16u * z) * 0x00010001u", `"r"(0x2C002C00u), "r"(zc.fma)`, "(int)(short)(scale_word >> 16) + 8"} {
		if !strings.Contains(string(src), want) {
			t.Fatalf("hipsrc/arch/wgmma.h no longer contains %q: re-derive this test", want)
		}
	}
	for z := 0; z < 16; z++ {
		word := uint32(uint16(int16(z-8))) << 16 // the scale word's zero half: d = z − 8
		zz := int(int16(word>>16)) + 8
		sub, fma := refimpl.F16ToF64(uint16(0x6400+zz)), refimpl.F16ToF64(uint16(0xD400+16*zz))
		for c := 0; c < 16; c++ {
			lo := refimpl.RoundF16(refimpl.F16ToF64(uint16(0x6400|c)) - sub)
			hi := refimpl.RoundF16(refimpl.F16ToF64(uint16(0x6400|c<<4))*refimpl.F16ToF64(0x2C00) + fma) // fma: one rounding of the exact value
			for _, v := range []float64{lo, hi} {
				if v != float64(c-z) {
					t.Fatalf("c=%d z=%d: f16 step gives %g, want %d", c, z, v, c-z)
				}
				if e := refimpl.DecodeE4M3(refimpl.EncodeE4M3(float32(v))); float64(e) != v {
					t.Fatalf("c=%d z=%d: e4m3 of %g is %g", c, z, v, e)
				}
			}
		}
	}
}

// The wgmma decode bodies take the weight codes c unsigned: the e4m3 byte
// c is the value c·2^-9 for every code (0..7 subnormal, 8..15 the first
// binade), so w8_bytes' bytes are the operand and the fold scales by 2^9
// and subtracts sc·z·rs. The test pins the source's pieces of that algebra
// and checks the encoding for all 16 codes and the fold's constants for
// all 16 zero points.
func TestDecWGUnsignedCodesExact(t *testing.T) {
	for file, wants := range map[string][]string{
		filepath.Join("..", "..", "hipsrc", "arch", "wgmma.h"): {"w8_bytes(w0, a[0], a[2]);", "w8_bytes(w1, a[1], a[3]);"},
		"gemm.hip": {"const float sc90 = 512.0f * sc0, sc91 = 512.0f * sc1;", "zq0 = sc0 * (float)((int)(short)(z.x >> 16) + 8)",
			"w4_e4m3u_frag(ww0[s], ww1[s], af[s]);"},
	} {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range wants {
			if !strings.Contains(string(src), w) {
				t.Fatalf("%s no longer contains %q: re-derive this test", file, w)
			}
		}
	}
	for c := 0; c < 16; c++ {
		if v := float64(refimpl.DecodeE4M3(uint8(c))); v != float64(c)*0x1p-9 {
			t.Fatalf("e4m3 byte %d is %g, want %d·2^-9", c, v, c)
		}
	}
	// sc·z and 2^9·sc exact in fp32 for an f16 sc and z = d + 8 in 0..15.
	for _, sc := range []float32{0x1p-14, 0.000123, 0.0397, 1, 65504} {
		sc = float32(refimpl.RoundF16(float64(sc)))
		for z := 0; z < 16; z++ {
			word := uint32(uint16(int16(z-8))) << 16
			zq := sc * float32(int(int16(word>>16))+8)
			if float64(zq) != float64(sc)*float64(z) || float64(512*sc) != 512*float64(sc) {
				t.Fatalf("sc %g z %d: sc·z = %g (exact %g)", sc, z, zq, float64(sc)*float64(z))
			}
		}
	}
}

// The row-layout kernels get DecArgs.WRow where every other decode kernel
// gets W (the rest of the argument list is the same), and a launch without
// it is refused, not run on fragment-order weights.
func TestDecLaunchPassesRowLayoutWeights(t *testing.T) {
	sh := GemmShape{K: 1024, Parts: []int{256}}
	a := DecArgs{W: 0x1000, SZ: 0x2000, WRow: 0x3000}
	for _, M := range []int{1, 9, 17, 33} {
		var rl []kernels.Kernel
		for _, k := range DecKernels(M, "", true) {
			if DecWeightLayout(k) == LayoutRow {
				rl = append(rl, k)
			}
		}
		if len(rl) != 1 {
			t.Fatalf("M=%d: %d row-layout decode kernels, want 1: %v", M, len(rl), rl)
		}
		a.Kernel = ""
		_, _, _, frag, err := DecLaunch(sh, M, 2, a)
		if err != nil {
			t.Fatal(err)
		}
		a.Kernel = rl[0].Name
		_, _, _, row, err := DecLaunch(sh, M, 2, a)
		if err != nil {
			t.Fatal(err)
		}
		if frag[0] != a.W || row[0] != a.WRow || !slices.Equal(frag[1:], row[1:]) {
			t.Errorf("M=%d %s: arguments %v, want the baseline's %v with WRow first", M, rl[0].Name, row, frag)
		}
		b := a
		b.WRow = 0
		if _, _, _, _, err := DecLaunch(sh, M, 2, b); err == nil {
			t.Errorf("M=%d %s: launched without row-layout weights", M, rl[0].Name)
		}
	}
}

// The wgmma kernels' residency and split law, worked by hand from their
// shared memory and registers on a 132-SM H200.
func TestDecSplitKWGWaves(t *testing.T) {
	for _, c := range []struct {
		kernel   string
		resident int
	}{{"pq_gemm_dec_wg_m8", 5}, {"pq_gemm_dec_wg_m16", 4}, {"pq_gemm_dec_wg_m32", 4}, {"pq_gemm_dec_wg_m64", 3}, {"pq_gemm_dec_m8", 0}} {
		t.Run("resident/"+c.kernel, func(t *testing.T) {
			if got := DecResidentBlocks(c.kernel); got != c.resident {
				t.Errorf("%d blocks per SM, want %d", got, c.resident)
			}
		})
	}
	// cost = waves · ceil(G/S) + (3/32)·NB·S over S in DecOwnFixedS (NB: the M class's rows).
	for _, c := range []struct {
		name           string
		kernel         string
		M, N, K, wantS int
	}{
		// 112 column blocks, 660 slots, G = 40, M = 1 (the m8 class: 8
		// rows): S = 4 is one wave of 10-group blocks (10 + 3); S = 8 is
		// two waves of 5 (10 + 6), S = 3 one of 14 (14 + 2.25).
		{"qkv/m8", "pq_gemm_dec_wg_m8", 1, 7168, 5120, 4},
		// M = 40 in the m64 class (64 rows, 396 slots): S = 2 (20 + 12)
		// ties S = 3 (14 + 18) and wins on the tie. Counting M's 40 rows
		// picked S = 3 (14 + 11.25), measured 10.8% slower (H200,
		// 2026-12-04).
		{"qkv/m64-M40", "pq_gemm_dec_wg_m64", 40, 7168, 5120, 2},
		// 272 column blocks, M = 8: S = 2 is one wave of 20 groups
		// (21.5); S = 4 two waves of 10 (23), S = 3 two of 14 (30.25).
		{"gate_up/m8", "pq_gemm_dec_wg_m8", 8, 17408, 5120, 2},
		// 396 slots, M = 64: S = 2 (one wave of 20, 20 + 12) ties S = 3
		// (one wave of 14, 14 + 18) and wins on the tie; S = 1 costs 46.
		{"qkv/m64", "pq_gemm_dec_wg_m64", 64, 7168, 5120, 2},
		// down, G = 68, 80 column blocks, 528 slots, M = 16: S = 6 is one
		// wave of 12 groups (12 + 9); S = 4 gives 17 + 6, S = 8 two waves
		// of 9 (18 + 12).
		{"down/m16", "pq_gemm_dec_wg_m16", 16, 5120, 8704, 6},
	} {
		t.Run("law/"+c.name, func(t *testing.T) {
			if got := DecSplitKFootprint(c.kernel, c.M, c.N, c.K, H200SMs); got != c.wantS {
				t.Errorf("S=%d, want %d", got, c.wantS)
			}
		})
	}
}

// decFootprintRegs are the register counts of the ptxas report the repository
// keeps (gates/testdata/ptxas/clean.txt, from the GPU host): the split law
// reads them, so a new report must reach the table.
func TestDecWGRegsMatchPtxasReport(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "gates", "testdata", "ptxas", "clean.txt"))
	if err != nil {
		t.Fatal(err)
	}
	entry := regexp.MustCompile(`Compiling entry function '([^']+)'`)
	used := regexp.MustCompile(`Used (\d+) registers`)
	report := map[string]int{}
	name := ""
	for _, line := range strings.Split(string(b), "\n") {
		if m := entry.FindStringSubmatch(line); m != nil {
			name = m[1]
		} else if m := used.FindStringSubmatch(line); m != nil && name != "" {
			report[name], _ = strconv.Atoi(m[1])
			name = ""
		}
	}
	for k, regs := range decFootprintRegs {
		t.Run(k, func(t *testing.T) {
			if got, ok := report[k]; !ok || got != regs {
				t.Errorf("decFootprintRegs says %d registers, the ptxas report %d (present: %v)", regs, got, ok)
			}
		})
	}
}

// Every registered decode kernel of the footprint law (DecSplitKFootprint:
// tag TagWG) has its registers in decFootprintRegs and its shared memory in its registry row: without
// them DecResidentBlocks would be 0 and the law would silently assume one
// block per SM.
func TestOwnLawKernelsHaveAFootprint(t *testing.T) {
	n := 0
	for _, k := range kernels.Select(kernels.Query{Family: Family, Op: OpDec, Full: true}) {
		if k.Tag != TagWG {
			continue
		}
		n++
		t.Run(k.Name, func(t *testing.T) {
			if _, ok := decFootprintRegs[k.Name]; !ok {
				t.Errorf("no registers in decFootprintRegs (the ptxas report's figure)")
			}
			if k.Shared == 0 {
				t.Errorf("no dynamic shared memory in the registry row")
			}
			if DecResidentBlocks(k.Name) < 1 {
				t.Errorf("DecResidentBlocks = %d", DecResidentBlocks(k.Name))
			}
		})
	}
	if n == 0 {
		t.Fatal("no decode kernel carries the footprint law's tag: the test checks nothing")
	}
}

// The in-block split-K kernels launch one block per 16-column tile with
// one warp per split, take the baseline's argument list, size their
// dynamic shared memory by M and S, and refuse a split past their block.
func TestDecLaunchInBlock(t *testing.T) {
	sh := GemmShape{K: 5120, Parts: []int{6144, 512, 512}}
	a := DecArgs{W: 0x1000, SZ: 0x2000, Act: 0x3000, ASG: 0x4000, RS: 0x5000, Out: 0x6000, WS: 0x7000, Sema: 0x8000}
	for _, c := range []struct {
		kernel string
		M, S   int
		shared int // S warps x DecKSRing slots x (1088 + 64 MT + 144 M + 8 for the mbarrier)
	}{
		{"pq_gemm_dec_ks_m8", 1, 4, 4 * 4 * (1088 + 64 + 144 + 8)},
		{"pq_gemm_dec_ks_m8", 8, 16, 16 * 4 * (1088 + 64 + 8*144 + 8)},
		{"pq_gemm_dec_ks_m16", 13, 3, 3 * 4 * (1088 + 128 + 13*144 + 8)},
		{"pq_gemm_dec_ks2_m8", 5, 8, 8 * 4 * (2*1088 + 64 + 5*144 + 8)},
		{"pq_gemm_dec_ks2_m16", 16, 11, 11 * 4 * (2*1088 + 128 + 16*144 + 8)},
		// S warpgroups x (RA = 3 activation slots x U groups x (NB rows x 128 B + asg, rs + 256 B of scale words) + 4 warps x R slots x (U x 1024 + 8)) + 1024
		{"pq_gemm_dec_wk_m8", 1, 4, 4*(3*2*(8*128+64+256)+4*2*(2*1024+8)) + 1024},
		{"pq_gemm_dec_wk_m8", 8, 1, 1*(3*2*(8*128+64+256)+4*2*(2*1024+8)) + 1024},
		{"pq_gemm_dec_wk_m16", 11, 3, 3*(3*2*(16*128+128+256)+4*2*(2*1024+8)) + 1024},
		{"pq_gemm_dec_wk_m32", 17, 4, 4*(3*2*(32*128+256+256)+4*2*(2*1024+8)) + 1024},
		{"pq_gemm_dec_wk_m64", 64, 4, 4*(3*1*(64*128+512+256)+4*2*(1*1024+8)) + 1024},
		{"pq_gemm_dec_wk1_m8", 1, 4, 4*(3*2*(8*128+64+256)+4*1*(2*1024+8)) + 1024},
		{"pq_gemm_dec_wk1_m64", 64, 2, 2*(3*1*(64*128+512+256)+4*1*(1*1024+8)) + 1024},
	} {
		t.Run(fmt.Sprintf("%s/M=%d/S=%d", c.kernel, c.M, c.S), func(t *testing.T) {
			b := a
			b.Kernel = c.kernel
			kern, grid, block, args, err := DecLaunch(sh, c.M, c.S, b)
			if err != nil {
				t.Fatal(err)
			}
			nt, threads := 1, 32
			switch {
			case strings.HasPrefix(c.kernel, "pq_gemm_dec_ks2_"):
				nt = 2
			case strings.HasPrefix(c.kernel, "pq_gemm_dec_wk_"), strings.HasPrefix(c.kernel, "pq_gemm_dec_wk1_"):
				nt, threads = 4, 128
			}
			if kern != c.kernel || grid != gpu.D1(7168/(16*nt)) || block != gpu.D1(threads*c.S) || DecKSTiles(c.kernel) != nt {
				t.Errorf("%s grid %v block %v tiles %d, want %s grid %v block %v tiles %d", kern, grid, block, DecKSTiles(c.kernel), c.kernel, gpu.D1(7168/(16*nt)), gpu.D1(threads*c.S), nt)
			}
			_, _, _, base, err := DecLaunch(sh, c.M, c.S, a)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(args, base) {
				t.Errorf("arguments %v, want the baseline's %v", args, base)
			}
			if got := DecShared(c.kernel, c.M, c.S); got != c.shared {
				t.Errorf("DecShared = %d, want %d", got, c.shared)
			}
			if !DecInBlock(c.kernel) || DecInBlock(DecKernel(c.M)) {
				t.Errorf("DecInBlock: %s %v, baseline %v", c.kernel, DecInBlock(c.kernel), DecInBlock(DecKernel(c.M)))
			}
		})
	}
	b := a
	b.Kernel = "pq_gemm_dec_ks_m8"
	if _, _, _, _, err := DecLaunch(sh, 1, DecKSMaxS+1, b); err == nil || !strings.Contains(err.Error(), "does not fit") {
		t.Errorf("S=%d: err %v, want the block's limit", DecKSMaxS+1, err)
	}
	// ks2_m16 at M = 16 holds 12 warps' rings (18464 B each) in 227 KiB, not 13.
	b.Kernel = "pq_gemm_dec_ks2_m16"
	if _, _, _, _, err := DecLaunch(sh, 16, 13, b); err == nil || !strings.Contains(err.Error(), "does not fit") {
		t.Errorf("ks2_m16 M=16 S=13: err %v, want the shared-memory limit", err)
	}
	if _, _, _, _, err := DecLaunch(sh, 16, 12, b); err != nil {
		t.Errorf("ks2_m16 M=16 S=12: %v", err)
	}
	// wk: a warpgroup a split, at most DecWKMaxS of them.
	b.Kernel = "pq_gemm_dec_wk_m8"
	if _, _, _, _, err := DecLaunch(sh, 8, DecWKMaxS+1, b); err == nil || !strings.Contains(err.Error(), "does not fit") {
		t.Errorf("wk_m8 S=%d: err %v, want the block's limit", DecWKMaxS+1, err)
	}
}

// The in-block law aims at 10 groups per warp (8 for two tiles a warp
// above M = 8) among the splits that fit the block, and never picks one
// that does not.
func TestDecSplitKS(t *testing.T) {
	for _, c := range []struct {
		name, kernel string
		M, K, want   int
	}{
		{"ks/G=40", "pq_gemm_dec_ks_m8", 1, 5120, 4},        // 10 groups of 1 KiB
		{"ks/G=68", "pq_gemm_dec_ks_m8", 8, 8704, 8},        // 9 groups (S = 6: 12, S = 10: 7)
		{"ks2/G=40", "pq_gemm_dec_ks2_m8", 1, 5120, 4},      // 10 groups of 2 KiB
		{"ks2/G=68", "pq_gemm_dec_ks2_m16", 16, 8704, 8},    // 9 groups
		{"ks2/G=136", "pq_gemm_dec_ks2_m16", 16, 17408, 12}, // S = 16 (9 groups) does not fit; 12 gives 12
	} {
		t.Run(c.name, func(t *testing.T) {
			got := DecSplitKS(c.kernel, c.M, 7168, c.K, H200SMs)
			if got != c.want {
				t.Errorf("S=%d, want %d", got, c.want)
			}
			if !DecKSFits(c.kernel, c.M, got) {
				t.Errorf("S=%d does not fit the block at M=%d", got, c.M)
			}
		})
	}
	for _, k := range []string{"pq_gemm_dec_ks_m8", "pq_gemm_dec_ks_m16", "pq_gemm_dec_ks2_m8", "pq_gemm_dec_ks2_m16"} {
		kk, _ := kernels.Lookup(k)
		for M := kk.MinM; M <= kk.MaxM; M++ {
			for _, K := range []int{384, 5120, 8704, 17408} {
				if S := DecSplitKS(k, M, 7168, K, H200SMs); !DecKSFits(k, M, S) {
					t.Errorf("%s M=%d K=%d: S=%d does not fit", k, M, K, S)
				}
			}
		}
	}
}

// Every DEC_WG_ENTRY's UNS argument is DecWGUnsigned of its kernel, and
// every wgmma decode kernel of the registry has an entry.
func TestDecWGEntriesMatchTable(t *testing.T) {
	src, err := os.ReadFile("gemm.hip")
	if err != nil {
		t.Fatal(err)
	}
	entries := regexp.MustCompile(`(?m)^DEC_WG_ENTRY\((\w+), \d+, \d+, \d+, (true|false)\)`).FindAllStringSubmatch(string(src), -1)
	if len(entries) == 0 {
		t.Fatal("no DEC_WG_ENTRY lines found: the test checks nothing")
	}
	seen := map[string]bool{}
	for _, e := range entries {
		if got := DecWGUnsigned(e[1]); got != (e[2] == "true") {
			t.Errorf("%s: DecWGUnsigned %v, the entry's UNS %s", e[1], got, e[2])
		}
		seen[e[1]] = true
	}
	for _, k := range kernels.Select(kernels.Query{Family: Family, Op: OpDec, Full: true}) {
		if k.Tag == TagWG && !seen[k.Name] {
			t.Errorf("%s: a wgmma decode kernel without a DEC_WG_ENTRY line", k.Name)
		}
	}
}

// Every DEC_KS_ENTRY(name, NT, MT) of gemm.hip is a registered in-block
// kernel whose DecKSTiles is NT and whose M range is MT's (DecShared sizes
// the slots from both), and every registered in-block kernel has an entry.
func TestDecKSEntriesMatchRegistry(t *testing.T) {
	src, err := os.ReadFile("gemm.hip")
	if err != nil {
		t.Fatal(err)
	}
	entries := regexp.MustCompile(`(?m)^DEC_KS_ENTRY\((\w+), (\d+), (\d+)\)`).FindAllStringSubmatch(string(src), -1)
	seen := map[string]bool{}
	for _, e := range entries {
		nt, _ := strconv.Atoi(e[2])
		mt, _ := strconv.Atoi(e[3])
		k, ok := kernels.Lookup(e[1])
		switch {
		case !ok || k.Form != FormDecKS:
			t.Errorf("%s: not a registered %s kernel", e[1], FormDecKS)
		case DecKSTiles(k.Name) != nt:
			t.Errorf("%s: DecKSTiles %d, the entry's NT %d", k.Name, DecKSTiles(k.Name), nt)
		case (k.MaxM+7)/8 != mt:
			t.Errorf("%s: MaxM %d needs %d op tiles, the entry's MT is %d", k.Name, k.MaxM, (k.MaxM+7)/8, mt)
		}
		seen[e[1]] = true
	}
	// DEC_WK_ENTRY(name, NB, R, U, RA, FP, SK): a wk, wk1 or wks kernel,
	// four tiles a block, its geometry the one decWKGeom (so DecShared)
	// holds, NB its M class's op width; DecKSFits must take S = DWK_MAXS at
	// every M it serves and refuse DWK_MAXS + 1, or a launch exceeds the
	// launch bound. SK (stream-K) kernels and only they are FormDecSK.
	wk := regexp.MustCompile(`(?m)^DEC_WK_ENTRY\((\w+), (\d+), (\d+), (\d+), (\d+), (true|false), (true|false)\)`).FindAllStringSubmatch(string(src), -1)
	if len(wk) == 0 {
		t.Error("no DEC_WK_ENTRY lines found")
	}
	for _, e := range wk {
		var g wkGeom
		for i, p := range []*int{&g.NB, &g.R, &g.U, &g.RA} {
			*p, _ = strconv.Atoi(e[2+i])
		}
		g.FP, g.SK = e[6] == "true", e[7] == "true"
		k, ok := kernels.Lookup(e[1])
		oneSlot := k.Tag == TagWK1 || k.Tag == TagWKS
		switch {
		case !ok || (k.Tag != TagWK && k.Tag != TagWK1 && k.Tag != TagWKS):
			t.Errorf("%s: not a registered kernel tagged %s, %s or %s", e[1], TagWK, TagWK1, TagWKS)
		case g.SK != (k.Form == FormDecSK) || g.SK != (k.Tag == TagWKS) || (!g.SK && k.Form != FormDecKS):
			t.Errorf("%s: SK %v, form %s, tag %s: the %s kernels and only they split stream-K (%s), the others in the block (%s)", k.Name, g.SK, k.Form, k.Tag, TagWKS, FormDecSK, FormDecKS)
		case (g.R == 1) != oneSlot:
			t.Errorf("%s: tagged %s with %d weight slots: the %s and %s kernels and only they take one", k.Name, k.Tag, g.R, TagWK1, TagWKS)
		case g.FP && !oneSlot:
			t.Errorf("%s: tagged %s with FP: only %s and %s kernels stage fixed pieces", k.Name, k.Tag, TagWK1, TagWKS)
		case DecKSTiles(k.Name) != 4 || DecKSThreads(k.Name) != 128:
			t.Errorf("%s: DecKSTiles %d, DecKSThreads %d, want 4 and 128 (a warpgroup a split)", k.Name, DecKSTiles(k.Name), DecKSThreads(k.Name))
		case 8*((k.MaxM+7)/8) != g.NB:
			t.Errorf("%s: MaxM %d needs NB = %d, the entry's NB is %d", k.Name, k.MaxM, 8*((k.MaxM+7)/8), g.NB)
		case decWKGeom[k.Name] != g:
			t.Errorf("%s: the entry's geometry %+v, decWKGeom holds %+v", k.Name, g, decWKGeom[k.Name])
		case !DecKSFits(k.Name, k.MaxM, DecWKMaxS) || DecKSFits(k.Name, k.MinM, DecWKMaxS+1):
			t.Errorf("%s: launch bound %d warpgroups; DecKSFits S = %d %v, S = %d %v (want true, false)",
				k.Name, DecWKMaxS, DecWKMaxS, DecKSFits(k.Name, k.MaxM, DecWKMaxS), DecWKMaxS+1, DecKSFits(k.Name, k.MinM, DecWKMaxS+1))
		}
		seen[e[1]] = true
	}
	// DEC_WP_ENTRY(name, NB, U, D, C, SK): a warp-specialized kernel, four
	// tiles a block of C consumer warpgroups and the producer
	// (DWP_THREADS(C), the launch bound), its geometry decWPGeom's, NB its
	// M class's op width, tagged wp (C = 2), wp3 (C = 3) or wps (C = 3,
	// stream-K: FormDecSK), launched at S = C only.
	wp := regexp.MustCompile(`(?m)^DEC_WP_ENTRY\((\w+), (\d+), (\d+), (\d+), (\d+), (true|false)\)`).FindAllStringSubmatch(string(src), -1)
	if len(wp) == 0 || !strings.Contains(string(src), "#define DWP_THREADS(C) (128 * ((C) + 1))") {
		t.Error("no DEC_WP_ENTRY lines or no DWP_THREADS(C) = 128 (C + 1) found")
	}
	for _, e := range wp {
		var g wpGeom
		for i, p := range []*int{&g.NB, &g.U, &g.D, &g.C} {
			*p, _ = strconv.Atoi(e[2+i])
		}
		g.SK = e[6] == "true"
		tag, form := map[int]string{2: TagWP, 3: TagWP3}[g.C], FormDecKS
		if g.SK {
			tag, form = map[int]string{3: TagWPS}[g.C], FormDecSK
		}
		k, ok := kernels.Lookup(e[1])
		switch {
		case !ok || tag == "" || k.Tag != tag || k.Form != form:
			t.Errorf("%s: not a registered %s kernel tagged %q (C = %d, SK %v)", e[1], form, tag, g.C, g.SK)
		case DecKSBlockThreads(k.Name, g.C) != 128*(g.C+1):
			t.Errorf("%s: DecKSBlockThreads %d, DWP_THREADS(%d) = %d", k.Name, DecKSBlockThreads(k.Name, g.C), g.C, 128*(g.C+1))
		case DecKSTiles(k.Name) != 4:
			t.Errorf("%s: DecKSTiles %d, want 4 (64 columns a block)", k.Name, DecKSTiles(k.Name))
		case 8*((k.MaxM+7)/8) != g.NB:
			t.Errorf("%s: MaxM %d needs NB = %d, the entry's NB is %d", k.Name, k.MaxM, 8*((k.MaxM+7)/8), g.NB)
		case decWPGeom[k.Name] != g:
			t.Errorf("%s: the entry's geometry %+v, decWPGeom holds %+v", k.Name, g, decWPGeom[k.Name])
		case !DecKSFits(k.Name, k.MaxM, g.C) || DecKSFits(k.Name, k.MaxM, g.C-1) || DecKSFits(k.Name, k.MaxM, g.C+1):
			t.Errorf("%s: DecKSFits must take S = %d only", k.Name, g.C)
		case DecSplitWP(k.Name, k.MaxM, 7168, 5120, 132) != g.C:
			t.Errorf("%s: DecSplitWP %d, want its consumers, %d", k.Name, DecSplitWP(k.Name, k.MaxM, 7168, 5120, 132), g.C)
		}
		seen[e[1]] = true
	}
	for _, k := range kernels.Select(kernels.Query{Family: Family, Op: OpDec, Full: true}) {
		if splitsInBlock(k) && !seen[k.Name] {
			t.Errorf("%s: registered with form %s, no DEC_KS_ENTRY, DEC_WK_ENTRY or DEC_WP_ENTRY in gemm.hip", k.Name, k.Form)
		}
	}
	if len(entries) == 0 || len(wk) == 0 {
		t.Fatal("no DEC_KS_ENTRY or no DEC_WK_ENTRY lines found: the test checks nothing")
	}
	if !DecKSFits("pq_gemm_dec_m8", 8, 64) {
		t.Error("DecKSFits refuses a kernel that splits across blocks")
	}
}

// DecSplitWK takes the largest split whose blocks run in one wave where
// one exists (qkv, down, in_proj: 80-128 blocks of 64 columns on 132
// SMs) and the fewest waves otherwise (gate_up's 272 blocks: one wave only
// at S = 1), never past a kernel's launch bound or shared memory.
func TestDecSplitWK(t *testing.T) {
	for _, c := range []struct {
		name       string
		kernel     string
		M, N, K, S int
	}{
		{"qkv/m8", "pq_gemm_dec_wk_m8", 1, 7168, 5120, 4},
		{"down/m16", "pq_gemm_dec_wk_m16", 16, 5120, 8704, 4},
		{"in_proj/m32", "pq_gemm_dec_wk_m32", 32, 8192, 5120, 4},
		{"gate_up/m8", "pq_gemm_dec_wk_m8", 8, 17408, 5120, 1},
		{"gate_up/m16", "pq_gemm_dec_wk_m16", 9, 17408, 5120, 1},
		{"short-K", "pq_gemm_dec_wk_m8", 1, 7168, 256, 2}, // G = 2 groups: at most 2 splits
	} {
		t.Run(c.name, func(t *testing.T) {
			got := DecSplitWK(c.kernel, c.M, c.N, c.K, H200SMs)
			if got != c.S {
				t.Errorf("DecSplitWK = %d, want %d", got, c.S)
			}
			if !DecKSFits(c.kernel, c.M, got) {
				t.Errorf("S = %d does not fit the block", got)
			}
		})
	}
}

// A K whose 16-fold row step would not fit 32 bits is refused before any
// launch, with the bound in the message.
func TestDecLaunchRefusesHugeK(t *testing.T) {
	a := DecArgs{W: 0x1000, SZ: 0x2000, Act: 0x3000, ASG: 0x4000, RS: 0x5000, Out: 0x6000, WS: 0x7000, Sema: 0x8000, Kernel: "pq_gemm_dec_wp3_m8"}
	for _, c := range []struct {
		K    int
		fail bool
	}{{DecMaxK - 128, false}, {DecMaxK, true}} {
		t.Run(fmt.Sprintf("K=%d", c.K), func(t *testing.T) {
			_, _, _, _, err := DecLaunch(GemmShape{K: c.K, Parts: []int{64}}, 1, DecWP3Split, a)
			if c.fail != (err != nil) || (err != nil && !strings.Contains(err.Error(), fmt.Sprint(DecMaxK))) {
				t.Errorf("DecLaunch(K=%d): err %v, want failure %t naming %d", c.K, err, c.fail, DecMaxK)
			}
		})
	}
}
