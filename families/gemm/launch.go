package gemm

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/refimpl"
	"github.com/parharness/parharness/shapes"
)

// The W4A8 GEMMs (gemm.hip): registration, launch geometry, the
// argument contract and the decode band's split-K selection law. Gates and
// benches launch through DecLaunch / PreLaunch so geometry and arguments
// live in one place.
func init() {
	mma := map[string]string{kernels.SM90a: MatrixOpMMASync, kernels.GFX1201: MatrixOpWMMAFP8}
	sm90 := []string{kernels.SM90a}
	for _, k := range []kernels.Kernel{
		{Name: "pq_gemm_dec_m8", Op: OpDec, Form: FormDec, MinM: 1, MaxM: 8, Role: kernels.Baseline, Tag: "dec", Caps: kernels.PDL | kernels.Cluster, MatrixOp: mma,
			Doc: "decode-band W4A8 GEMM, M <= 8: per-group scales, split-K with an in-kernel deterministic reduce, all partitions in one launch (sm_90: activations staged in shared memory, PDL, cluster reduce at S=2)"},
		{Name: "pq_gemm_dec_m16", Op: OpDec, Form: FormDec, MinM: 9, MaxM: 16, Role: kernels.Baseline, Tag: "dec", Caps: kernels.PDL | kernels.Cluster, MatrixOp: mma,
			Doc: "decode-band W4A8 GEMM, 8 < M <= 16 (pq_gemm_dec_m8's template, two 8-row op tiles)"},
		{Name: "pq_gemm_dec_m32", Op: OpDec, Form: FormDec, MinM: 17, MaxM: 32, Role: kernels.Baseline, Tag: "dec", Caps: kernels.PDL | kernels.Cluster, MatrixOp: mma,
			Doc: "decode-band W4A8 GEMM, 16 < M <= 32 (four 8-row op tiles, activation chunks of 4 groups)"},
		{Name: "pq_gemm_dec_m64", Op: OpDec, Form: FormDec, MinM: 33, MaxM: 64, Role: kernels.Baseline, Tag: "dec", Caps: kernels.PDL | kernels.Cluster, MatrixOp: mma,
			Doc: "decode-band W4A8 GEMM, 32 < M <= 64 (eight 8-row op tiles, 2 groups in flight, chunks of 2 groups)"},
		{Name: "pq_gemm_dec_v1_m8", Op: OpDec, Form: FormDec, MinM: 1, MaxM: 8, Role: kernels.Variant, Tag: "v1", Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpMMASync},
			Doc: "previous decode generation, M <= 8 (per-warp activation reads from L2, per-block split-K)"},
		{Name: "pq_gemm_dec_v1_m16", Op: OpDec, Form: FormDec, MinM: 9, MaxM: 16, Role: kernels.Variant, Tag: "v1", Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpMMASync},
			Doc: "previous decode generation, 8 < M <= 16"},
		{Name: "pq_gemm_dec_v1_m32", Op: OpDec, Form: FormDec, MinM: 17, MaxM: 32, Role: kernels.Variant, Tag: "v1", Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpMMASync},
			Doc: "previous decode generation, 16 < M <= 32"},
		{Name: "pq_gemm_dec_v1_m64", Op: OpDec, Form: FormDec, MinM: 33, MaxM: 64, Role: kernels.Variant, Tag: "v1", Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpMMASync},
			Doc: "previous decode generation, 32 < M <= 64"},
		{Name: "pq_gemm_dec_wg_m8", Shared: 40288, Op: OpDec, Form: FormDec, MinM: 1, MaxM: 8, Role: kernels.Variant, Tag: "wg", Caps: kernels.PDL | kernels.Cluster | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "decode-band W4A8 GEMM on Hopper's wgmma at the fp8 rate, M <= 8: the staged body's block and split-K protocols; weights and scale words by bulk copy into per-warp mbarrier rings, their unsigned codes as e4m3 bytes (byte c is c·2^-9, 5 ops a word) as the register operand (64 columns per warpgroup; the zero point folded with the row sums), the e4m3 activation rows as the 128B-swizzled shared-memory operand by cp.async (M on the op's N side), 4 ops per group (m64n8k32) for any M in the class, each group retired before the next is read (ptxas reuses an in-flight op's A registers: sass-wgmma-hazards); faster than the staged body from M = 16 on, slower at M <= 8 (H200, results/h200-2026-12-02d)"},
		{Name: "pq_gemm_dec_wg_m16", Shared: 53344, Op: OpDec, Form: FormDec, MinM: 9, MaxM: 16, Role: kernels.Variant, Tag: "wg", Caps: kernels.PDL | kernels.Cluster | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wg_m8's body, 8 < M <= 16 (m64n16k32)"},
		{Name: "pq_gemm_dec_wg_m32", Shared: 53344, Op: OpDec, Form: FormDec, MinM: 17, MaxM: 32, Role: kernels.Variant, Tag: "wg", Caps: kernels.PDL | kernels.Cluster | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wg_m8's body with the codes converted to c − z (14 ops a word, no row-sum term; the unsigned codes ran 2-7% slower at M = 64 on the H200), 16 < M <= 32 (m64n32k32)"},
		{Name: "pq_gemm_dec_wg_m64", Shared: 70720, Op: OpDec, Form: FormDec, MinM: 33, MaxM: 64, Role: kernels.Variant, Tag: "wg", Caps: kernels.PDL | kernels.Cluster | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wg_m32's body (codes as c − z), 32 < M <= 64 (m64n64k32, 2 weight slots per warp for 3 blocks per SM)"},
		{Name: "pq_gemm_dec_memonly_m8", Op: OpDec, Form: FormDec, MinM: 1, MaxM: 8, Role: kernels.Attribution, Tag: "memonly", Caps: kernels.PDL | kernels.Cluster, Targets: sm90,
			Doc: "attribution only (not a GEMM, never gated): pq_gemm_dec_m8's loads, staging and split-K store without conversion, op or fold"},
		{Name: "pq_gemm_pre", Op: OpPre, Form: FormPreTiled, Role: kernels.Baseline, Tag: "pq_gemm_pre", MatrixOp: mma,
			Doc: "per-token prefill W4A8 GEMM: fragment-tiled activations, weights through shared memory, 128x128 tiles, fold once per 128-group"},
		{Name: "pq_gemm_dec5_m8", Op: OpDec5, Form: FormDec, MinM: 1, MaxM: 8, Role: kernels.Baseline, Tag: "dec5", Caps: kernels.PDL | kernels.Cluster, MatrixOp: mma,
			Doc: "decode-band W5A8 GEMM, M <= 8: pq_gemm_dec_m8's body on 5-bit codes (the 4-bit words plus a plane stream, codes as c - 16)"},
		{Name: "pq_gemm_dec5_m16", Op: OpDec5, Form: FormDec, MinM: 9, MaxM: 16, Role: kernels.Baseline, Tag: "dec5", Caps: kernels.PDL | kernels.Cluster, MatrixOp: mma,
			Doc: "decode-band W5A8 GEMM, 8 < M <= 16 (pq_gemm_dec_m16's body, 5-bit)"},
		{Name: "pq_gemm_dec5_m32", Op: OpDec5, Form: FormDec, MinM: 17, MaxM: 32, Role: kernels.Baseline, Tag: "dec5", Caps: kernels.PDL | kernels.Cluster, MatrixOp: mma,
			Doc: "decode-band W5A8 GEMM, 16 < M <= 32 (pq_gemm_dec_m32's body, 5-bit)"},
		{Name: "pq_gemm_dec5_m64", Op: OpDec5, Form: FormDec, MinM: 33, MaxM: 64, Role: kernels.Baseline, Tag: "dec5", Caps: kernels.PDL | kernels.Cluster, MatrixOp: mma,
			Doc: "decode-band W5A8 GEMM, 32 < M <= 64 (pq_gemm_dec_m64's body, 5-bit)"},
		{Name: "pq_gemm_pre5", Op: OpPre5, Form: FormPreTiled, Role: kernels.Baseline, Tag: "pre5", MatrixOp: mma,
			Doc: "per-token prefill W5A8 GEMM: pq_gemm_pre's body on 5-bit codes (plane words staged beside the weight words, codes as c - 16)"},
		{Name: "pq_gemm_pre_zpe", Op: OpPre, Form: FormPreZPE, Role: kernels.Variant, Tag: "zpe", MatrixOp: mma,
			Doc: "per-token prefill W4A8 GEMM with the zero-point term as an epilogue product: the loop folds sc*tmp only; fp16 row sums times exact hi+lo fp16 zero-scales, 16 groups a chunk, on the f16 matrix op"},
		{Name: "pq_gemm_pre_wg", Op: OpPre, Form: FormPreWGMMA, Role: kernels.Variant, Tag: "wg", Caps: kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "per-token prefill W4A8 GEMM on Hopper's wgmma (fp8 at the op's native rate): row-major activations staged 128B-swizzled as the shared-memory operand, weights converted in registers to e4m3 codes minus their zero point as the register operand (no row-sum term), a producer warpgroup and two consumers, 128x128 tiles, one FMA fold per 128-group"},
		{Name: "pq_gemm_dec_rl_m8", Op: OpDec, Form: FormDec, MinM: 1, MaxM: 8, Role: kernels.Variant, Tag: TagRowLayout, Caps: kernels.PDL | kernels.Cluster, MatrixOp: mma,
			Doc: "pq_gemm_dec_m8 on row-layout weights (refimpl.RepackRow: byte n*K/2 + k/2), the fragment words rebuilt in registers by lane shuffles: bit-identical outputs, timed against the fragment order in bench2 wp"},
		{Name: "pq_gemm_dec_rl_m16", Op: OpDec, Form: FormDec, MinM: 9, MaxM: 16, Role: kernels.Variant, Tag: TagRowLayout, Caps: kernels.PDL | kernels.Cluster, MatrixOp: mma,
			Doc: "pq_gemm_dec_m16 on row-layout weights (as pq_gemm_dec_rl_m8)"},
		{Name: "pq_gemm_dec_rl_m32", Op: OpDec, Form: FormDec, MinM: 17, MaxM: 32, Role: kernels.Variant, Tag: TagRowLayout, Caps: kernels.PDL | kernels.Cluster, MatrixOp: mma,
			Doc: "pq_gemm_dec_m32 on row-layout weights (as pq_gemm_dec_rl_m8)"},
		{Name: "pq_gemm_dec_rl_m64", Op: OpDec, Form: FormDec, MinM: 33, MaxM: 64, Role: kernels.Variant, Tag: TagRowLayout, Caps: kernels.PDL | kernels.Cluster, MatrixOp: mma,
			Doc: "pq_gemm_dec_m64 on row-layout weights (as pq_gemm_dec_rl_m8)"},
		{Name: "pq_gemm_dec_ks_m8", Op: OpDec, Form: FormDecKS, MinM: 1, MaxM: 8, Role: kernels.Variant, Tag: TagKS, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpMMASync},
			Doc: "decode-band W4A8 GEMM with split-K inside the block, M <= 8: one 16-column tile per block, its S warps split K and sum their partial tiles in shared memory in warp order (no ws, no counters); each warp streams weights and scale words by bulk copy into an mbarrier ring, activations and their scales by cp.async into the same slots; the staged body's mma.sync operands and fold"},
		{Name: "pq_gemm_dec_ks_m16", Op: OpDec, Form: FormDecKS, MinM: 9, MaxM: 16, Role: kernels.Variant, Tag: TagKS, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpMMASync},
			Doc: "pq_gemm_dec_ks_m8's body, 8 < M <= 16 (two 8-row op tiles)"},
		{Name: "pq_gemm_dec_ks2_m8", Op: OpDec, Form: FormDecKS, MinM: 1, MaxM: 8, Role: kernels.Variant, Tag: TagKS2, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpMMASync},
			Doc: "pq_gemm_dec_ks_m8's body with two 16-column tiles per warp (32 columns a block): each activation fragment loaded and converted once for both, a slot's copies and waits shared by 2 KiB of weights"},
		{Name: "pq_gemm_dec_ks2_m16", Op: OpDec, Form: FormDecKS, MinM: 9, MaxM: 16, Role: kernels.Variant, Tag: TagKS2, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpMMASync},
			Doc: "pq_gemm_dec_ks2_m8's body, 8 < M <= 16"},
		{Name: "pq_gemm_dec_wk_m8", Op: OpDec, Form: FormDecKS, MinM: 1, MaxM: 8, Role: kernels.Variant, Tag: TagWK, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "decode-band W4A8 GEMM on the fp8 wgmma with split-K inside the block, M <= 8: 64 columns a block, its S warpgroups split K and sum their partial tiles in shared memory in warpgroup order (no ws, no counters); weights by one bulk copy a warp and round into two-slot mbarrier rings, activations, their scales and the scale words by cp.async into a per-warpgroup ring of swizzled tiles, two groups a round with one op wait; unsigned codes (w4_e4m3u_frag) and the row-sum fold"},
		{Name: "pq_gemm_dec_wk_m16", Op: OpDec, Form: FormDecKS, MinM: 9, MaxM: 16, Role: kernels.Variant, Tag: TagWK, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wk_m8's body, 8 < M <= 16 (m64n16k32)"},
		{Name: "pq_gemm_dec_wk_m32", Op: OpDec, Form: FormDecKS, MinM: 17, MaxM: 32, Role: kernels.Variant, Tag: TagWK, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wk_m8's body, 16 < M <= 32 (m64n32k32)"},
		{Name: "pq_gemm_dec_wk_m64", Op: OpDec, Form: FormDecKS, MinM: 33, MaxM: 64, Role: kernels.Variant, Tag: TagWK, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wk_m8's body, 32 < M <= 64 (m64n64k32), one group a round"},
		{Name: "pq_gemm_dec_wk1_m8", Op: OpDec, Form: FormDecKS, MinM: 1, MaxM: 8, Role: kernels.Variant, Tag: TagWK1, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wk_m8 with one weight slot a warp: the refill overlaps only the round's own conversion and ops"},
		{Name: "pq_gemm_dec_wk1_m16", Op: OpDec, Form: FormDecKS, MinM: 9, MaxM: 16, Role: kernels.Variant, Tag: TagWK1, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wk1_m8's body, 8 < M <= 16 (m64n16k32); fixed-piece staging (FP): each thread copies one 16-byte piece column of one group for rows 16/U apart, asg and rs over the whole warpgroup, each row pair's asg and rs adjacent so the fold reads them with one 16-byte load"},
		{Name: "pq_gemm_dec_wk1_m24", Op: OpDec, Form: FormDecKS, MinM: 17, MaxM: 24, Role: kernels.Variant, Tag: TagWK1, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wk1_m16's body, 16 < M <= 24 (m64n24k32)"},
		{Name: "pq_gemm_dec_wk1_m32", Op: OpDec, Form: FormDecKS, MinM: 25, MaxM: 32, Role: kernels.Variant, Tag: TagWK1, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wk1_m16's body, 24 < M <= 32 (m64n32k32)"},
		{Name: "pq_gemm_dec_wk1_m40", Op: OpDec, Form: FormDecKS, MinM: 33, MaxM: 40, Role: kernels.Variant, Tag: TagWK1, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wk1_m16's body, 32 < M <= 40 (m64n40k32), one group a round (two groups a round spill under FP)"},
		{Name: "pq_gemm_dec_wk1_m48", Op: OpDec, Form: FormDecKS, MinM: 41, MaxM: 48, Role: kernels.Variant, Tag: TagWK1, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wk1_m16's body, 40 < M <= 48 (m64n48k32), one group a round"},
		{Name: "pq_gemm_dec_wk1_m56", Op: OpDec, Form: FormDecKS, MinM: 49, MaxM: 56, Role: kernels.Variant, Tag: TagWK1, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wk1_m16's body, 48 < M <= 56 (m64n56k32), one group a round"},
		{Name: "pq_gemm_dec_wk1_m64", Op: OpDec, Form: FormDecKS, MinM: 57, MaxM: 64, Role: kernels.Variant, Tag: TagWK1, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wk1_m16's body, 56 < M <= 64 (m64n64k32), one group a round"},
		{Name: "pq_gemm_dec_wks_m8", Op: OpDec, Form: FormDecSK, MinM: 1, MaxM: 8, Role: kernels.Variant, Tag: TagWKS, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wk1_m8's body (a warpgroup streams a part of the work) in stream-K order: the (64-column tile, group) units in tile-major order split evenly over the grid's blocks and then over each block's S warpgroups, so every SM streams the same bytes whatever N/64 is; a part crossing a tile boundary keeps its first tile's partial in shared memory; tiles inside a block are summed there in warpgroup order, tiles shared between blocks through ws slots and a counter per tile, the last block summing them in block order (deterministic)"},
		{Name: "pq_gemm_dec_wks_m16", Op: OpDec, Form: FormDecSK, MinM: 9, MaxM: 16, Role: kernels.Variant, Tag: TagWKS, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wks_m8's stream-K split over pq_gemm_dec_wk1_m16's body, 8 < M <= 16"},
		{Name: "pq_gemm_dec_wks_m24", Op: OpDec, Form: FormDecSK, MinM: 17, MaxM: 24, Role: kernels.Variant, Tag: TagWKS, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wks_m8's stream-K split over pq_gemm_dec_wk1_m24's body, 16 < M <= 24"},
		{Name: "pq_gemm_dec_wks_m32", Op: OpDec, Form: FormDecSK, MinM: 25, MaxM: 32, Role: kernels.Variant, Tag: TagWKS, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wks_m8's stream-K split over pq_gemm_dec_wk1_m32's body, 24 < M <= 32"},
		{Name: "pq_gemm_dec_wks_m40", Op: OpDec, Form: FormDecSK, MinM: 33, MaxM: 40, Role: kernels.Variant, Tag: TagWKS, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wks_m8's stream-K split over pq_gemm_dec_wk1_m40's body, 32 < M <= 40"},
		{Name: "pq_gemm_dec_wks_m48", Op: OpDec, Form: FormDecSK, MinM: 41, MaxM: 48, Role: kernels.Variant, Tag: TagWKS, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wks_m8's stream-K split over pq_gemm_dec_wk1_m48's body, 40 < M <= 48"},
		{Name: "pq_gemm_dec_wks_m56", Op: OpDec, Form: FormDecSK, MinM: 49, MaxM: 56, Role: kernels.Variant, Tag: TagWKS, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wks_m8's stream-K split over pq_gemm_dec_wk1_m56's body, 48 < M <= 56"},
		{Name: "pq_gemm_dec_wks_m64", Op: OpDec, Form: FormDecSK, MinM: 57, MaxM: 64, Role: kernels.Variant, Tag: TagWKS, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wks_m8's stream-K split over pq_gemm_dec_wk1_m64's body, 56 < M <= 64"},
		{Name: "pq_gemm_dec_wp_m8", Op: OpDec, Form: FormDecKS, MinM: 1, MaxM: 8, Role: kernels.Variant, Tag: TagWP, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "decode-band W4A8 GEMM on the fp8 wgmma, warp-specialized, M <= 8: 64 columns a block of a producer warpgroup (every copy, 56 registers: weights and scale words by bulk copy from one lane of its first warp, activations, asg and rs by cp.async from its other three, into a ring of 8 stages on full/empty mbarriers) and two consumer warpgroups (224 registers) taking the tile's rounds alternately; a consumer issues a round's ops, then folds the previous round's while they run (wait_group 1); the two partial tiles summed in shared memory in consumer order; wk1's operands (unsigned codes) and fold"},
		{Name: "pq_gemm_dec_wp_m16", Op: OpDec, Form: FormDecKS, MinM: 9, MaxM: 16, Role: kernels.Variant, Tag: TagWP, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wp_m8's body, 8 < M <= 16 (m64n16k32)"},
		{Name: "pq_gemm_dec_wp_m24", Op: OpDec, Form: FormDecKS, MinM: 17, MaxM: 24, Role: kernels.Variant, Tag: TagWP, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wp_m8's body, 16 < M <= 24 (m64n24k32)"},
		{Name: "pq_gemm_dec_wp_m32", Op: OpDec, Form: FormDecKS, MinM: 25, MaxM: 32, Role: kernels.Variant, Tag: TagWP, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wp_m8's body, 24 < M <= 32 (m64n32k32)"},
		{Name: "pq_gemm_dec_wp_m40", Op: OpDec, Form: FormDecKS, MinM: 33, MaxM: 40, Role: kernels.Variant, Tag: TagWP, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wp_m8's body, 32 < M <= 40 (m64n40k32), one group a round"},
		{Name: "pq_gemm_dec_wp_m48", Op: OpDec, Form: FormDecKS, MinM: 41, MaxM: 48, Role: kernels.Variant, Tag: TagWP, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wp_m8's body, 40 < M <= 48 (m64n48k32), one group a round"},
		{Name: "pq_gemm_dec_wp_m56", Op: OpDec, Form: FormDecKS, MinM: 49, MaxM: 56, Role: kernels.Variant, Tag: TagWP, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wp_m8's body, 48 < M <= 56 (m64n56k32), one group a round"},
		{Name: "pq_gemm_dec_wp_m64", Op: OpDec, Form: FormDecKS, MinM: 57, MaxM: 64, Role: kernels.Variant, Tag: TagWP, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wp_m8's body, 56 < M <= 64 (m64n64k32), one group a round"},
		{Name: "pq_gemm_dec_wp3_m8", Op: OpDec, Form: FormDecKS, MinM: 1, MaxM: 8, Role: kernels.Variant, Tag: TagWP3, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wp_m8's body with three consumer warpgroups (152 registers, rounds c, c + 3, ..., each folded after its own ops: no second temporary) beside the producer (56 registers), a ring of 9 stages, M <= 8"},
		{Name: "pq_gemm_dec_wp3_m16", Op: OpDec, Form: FormDecKS, MinM: 9, MaxM: 16, Role: kernels.Variant, Tag: TagWP3, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wp3_m8's body, 8 < M <= 16 (m64n16k32), 9 stages"},
		{Name: "pq_gemm_dec_wp3_m24", Op: OpDec, Form: FormDecKS, MinM: 17, MaxM: 24, Role: kernels.Variant, Tag: TagWP3, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wp3_m8's body, 16 < M <= 24 (m64n24k32), 9 stages"},
		{Name: "pq_gemm_dec_wp3_m32", Op: OpDec, Form: FormDecKS, MinM: 25, MaxM: 32, Role: kernels.Variant, Tag: TagWP3, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wp3_m8's body, 24 < M <= 32 (m64n32k32), 9 stages"},
		{Name: "pq_gemm_dec_wp3_m40", Op: OpDec, Form: FormDecKS, MinM: 33, MaxM: 40, Role: kernels.Variant, Tag: TagWP3, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wp3_m8's body, 32 < M <= 40 (m64n40k32), 12 stages, one group a round"},
		{Name: "pq_gemm_dec_wp3_m48", Op: OpDec, Form: FormDecKS, MinM: 41, MaxM: 48, Role: kernels.Variant, Tag: TagWP3, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wp3_m8's body, 40 < M <= 48 (m64n48k32), 12 stages, one group a round"},
		{Name: "pq_gemm_dec_wp3_m56", Op: OpDec, Form: FormDecKS, MinM: 49, MaxM: 56, Role: kernels.Variant, Tag: TagWP3, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wp3_m8's body, 48 < M <= 56 (m64n56k32), 12 stages, one group a round"},
		{Name: "pq_gemm_dec_wp3_m64", Op: OpDec, Form: FormDecKS, MinM: 57, MaxM: 64, Role: kernels.Variant, Tag: TagWP3, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wp3_m8's body, 56 < M <= 64 (m64n64k32), 12 stages, one group a round"},
		{Name: "pq_gemm_dec_wps_m8", Op: OpDec, Form: FormDecSK, MinM: 1, MaxM: 8, Role: kernels.Variant, Tag: TagWPS, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wp3_m8's body in stream-K order: the (64-column tile, group) units in tile-major order split evenly over one block an SM, so every SM streams the same bytes whatever N/64 is; a block's tiles are segments of one ring (the rounds number on across them), each summed over the three consumers in consumer order; a tile shared between blocks goes through ws slots and a counter per tile, the last of its blocks summing them in block order (deterministic), M <= 8"},
		{Name: "pq_gemm_dec_wps_m16", Op: OpDec, Form: FormDecSK, MinM: 9, MaxM: 16, Role: kernels.Variant, Tag: TagWPS, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wps_m8's split over pq_gemm_dec_wp3_m16's body, 8 < M <= 16 (m64n16k32)"},
		{Name: "pq_gemm_dec_wps_m24", Op: OpDec, Form: FormDecSK, MinM: 17, MaxM: 24, Role: kernels.Variant, Tag: TagWPS, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wps_m8's split over pq_gemm_dec_wp3_m24's body, 16 < M <= 24 (m64n24k32)"},
		{Name: "pq_gemm_dec_wps_m32", Op: OpDec, Form: FormDecSK, MinM: 25, MaxM: 32, Role: kernels.Variant, Tag: TagWPS, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wps_m8's split over pq_gemm_dec_wp3_m32's body, 24 < M <= 32 (m64n32k32)"},
		{Name: "pq_gemm_dec_wps_m40", Op: OpDec, Form: FormDecSK, MinM: 33, MaxM: 40, Role: kernels.Variant, Tag: TagWPS, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wps_m8's split over pq_gemm_dec_wp3_m40's body, 32 < M <= 40 (m64n40k32)"},
		{Name: "pq_gemm_dec_wps_m48", Op: OpDec, Form: FormDecSK, MinM: 41, MaxM: 48, Role: kernels.Variant, Tag: TagWPS, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wps_m8's split over pq_gemm_dec_wp3_m48's body, 40 < M <= 48 (m64n48k32)"},
		{Name: "pq_gemm_dec_wps_m56", Op: OpDec, Form: FormDecSK, MinM: 49, MaxM: 56, Role: kernels.Variant, Tag: TagWPS, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wps_m8's split over pq_gemm_dec_wp3_m56's body, 48 < M <= 56 (m64n56k32)"},
		{Name: "pq_gemm_dec_wps_m64", Op: OpDec, Form: FormDecSK, MinM: 57, MaxM: 64, Role: kernels.Variant, Tag: TagWPS, Caps: kernels.PDL | kernels.DynShared, Targets: sm90, MatrixOp: map[string]string{kernels.SM90a: MatrixOpWGMMA},
			Doc: "pq_gemm_dec_wps_m8's split over pq_gemm_dec_wp3_m64's body, 56 < M <= 64 (m64n64k32); its epilogue computes its addresses at each segment's end (held across the rounds they spill)"},
	} {
		k.Family, k.Module = Family, "gemm"
		kernels.Register(k)
	}
}

// Family is this folder's name in the registry.
const Family = "gemm"

// The GEMMs' Ops and launch forms.
const (
	OpDec  = "dec"  // decode band: per-group activation scales, split-K, bf16 [M, N]
	OpPre  = "pre"  // per-token prefill: token scales, bf16 [M, N]
	OpDec5 = "dec5" // OpDec on 5-bit weights (refimpl.RepackW5: words, planes, scale words)
	OpPre5 = "pre5" // OpPre on 5-bit weights

	FormDec      = "dec"        // DecLaunch: grid (N/64, S), 128 threads
	FormDecKS    = "dec-ks"     // DecLaunch: grid N/(16·DecKSTiles), DecKSThreads·S threads (the split inside the block), dynamic shared memory DecShared(kernel, M, S)
	FormDecSK    = "dec-sk"     // DecLaunch: grid DecSKBlocks (stream-K: every SM), 128·S threads, dynamic shared memory DecShared(kernel, M, S), ws DecSKWorkspaceBytes
	FormPreTiled = "tiled"      // PreLaunch: fragment-tiled activations [P, Mpad, K], row-sum zero-point fold
	FormPreWGMMA = "wgmma-rows" // PreLaunch: row-major activations [P, M, K], codes taken as q - z, dynamic shared memory
	FormPreZPE   = "tiled-zpe"  // PreLaunch: tiled activations, fp16 row sums [P, Mpad, Gp] (ZPERowSums), zero point in the epilogue
)

// TagRowLayout is the registry tag of the decode kernels that read the row
// layout (refimpl.RepackRow) instead of the fragment order
// (refimpl.RepackW4). They take the same arguments, grid and launch
// options as the fragment-order kernel of their M class; the weight buffer
// differs, so DecLaunch passes DecArgs.WRow in W's place for them
// (DecWeightLayout). The tag is the marker because the layout is a
// property of this family's decode contract only: kernels.Kernel needs no
// field for it.
const TagRowLayout = "rl"

// WeightLayout is the order a decode kernel reads its 4-bit weight codes in.
type WeightLayout int

const (
	LayoutFragment WeightLayout = iota // refimpl.RepackW4: the op's fragment order (every kernel but the rl variants)
	LayoutRow                          // refimpl.RepackRow: column n's K codes in k order, byte n*K/2 + k/2
)

func (l WeightLayout) String() string {
	if l == LayoutRow {
		return "row"
	}
	return "fragment"
}

// DecWeightLayout is the weight layout decode kernel k reads.
func DecWeightLayout(k kernels.Kernel) WeightLayout {
	if k.Family == Family && k.Op == OpDec && k.Tag == TagRowLayout {
		return LayoutRow
	}
	return LayoutFragment
}

// DecOp and PreOp are the decode and prefill Ops of a weight width (4 or 5).
func DecOp(bits int) string {
	if bits == 5 {
		return OpDec5
	}
	return OpDec
}

// PreOp is DecOp for prefill.
func PreOp(bits int) string {
	if bits == 5 {
		return OpPre5
	}
	return OpPre
}

// Matrix instructions the ISA gates look for inside each GEMM's loop.
const (
	MatrixOpMMASync = "mma.sync.aligned"            // sm_90a: f16 mma.sync (Hopper has no native fp8 mma.sync)
	MatrixOpWGMMA   = "wgmma.mma_async"             // sm_90a: the warpgroup op, fp8 at its native rate
	MatrixOpWMMAFP8 = "v_wmma_f32_16x16x16_fp8_fp8" // gfx1201: the native fp8 WMMA
)

// GEMM geometry constants (gemm.hip; TestGoConstantsMatchKernelDefines ties them).
const (
	DecMaxM    = 64  // decode band: M <= 64
	DecBN      = 64  // columns per decode block (4 warps x 16)
	DecThreads = 128 // threads per decode block
	DecMaxS    = 64  // largest split-K count
	DecKSMaxS  = 16  // largest split of the in-block split-K kernels (DKS_MAXS: 32·S threads a block)
	DecKSRing  = 4   // ring slots per warp of the in-block split-K kernels (DKS_R)
	DecWKMaxS  = 4   // largest split of the wgmma in-block kernels (DWK_MAXS: 128·S threads a block)
	PreBM      = 128 // prefill block tile rows
	PreBN      = 128 // prefill block tile columns
	PreThreads = 256
	// PreRasterGroup is the number of M tiles per rasterization group.
	PreRasterGroup = 8
)

// DecKernel names the decode baseline serving M (the registry's row whose
// M range holds it; every target has one).
func DecKernel(M int) string {
	k, err := kernels.BaselineFor(Family, OpDec, M, "")
	if err != nil {
		panic(err) // a registry without a decode baseline for M in 1..DecMaxM is a programming error
	}
	return k.Name
}

// DecKernels are the registered decode kernels serving M on arch ("" any),
// baseline first, then variants, then attribution kernels; experimental
// ones only when full.
func DecKernels(M int, arch string, full bool) []kernels.Kernel {
	return DecKernelsBits(4, M, arch, full)
}

// DecKernelsBits is DecKernels for bits-wide weights (4 or 5).
func DecKernelsBits(bits, M int, arch string, full bool) []kernels.Kernel {
	return kernels.Select(kernels.Query{Family: Family, Op: DecOp(bits), M: M, Arch: arch, Full: full})
}

// GemmShape is one (merged) linear as the GEMM sees it.
type GemmShape struct {
	K     int
	Parts []int // partition widths along N (1..3)
}

// N is the total output width.
func (s GemmShape) N() int {
	n := 0
	for _, p := range s.Parts {
		n += p
	}
	return n
}

// G is K / 128.
func (s GemmShape) G() int { return s.K / refimpl.GroupSize }

// Bounds returns the kernel's partition boundaries nend0, nend1: column n
// belongs to partition (n >= nend0) + (n >= nend1).
func (s GemmShape) Bounds() (uint32, uint32) {
	n := s.N()
	e0, e1 := n, n
	if len(s.Parts) > 1 {
		e0 = s.Parts[0]
	}
	if len(s.Parts) > 2 {
		e1 = s.Parts[0] + s.Parts[1]
	}
	return uint32(e0), uint32(e1)
}

// Check verifies the kernels' contract for a shape: K a multiple of 128,
// 1..3 partitions, each a multiple of align (DecBN for decode, PreBN for
// prefill) so no column block straddles two partitions.
func (s GemmShape) Check(align int) error {
	if s.K <= 0 || s.K%refimpl.GroupSize != 0 {
		return fmt.Errorf("gemm: K=%d is not a positive multiple of %d", s.K, refimpl.GroupSize)
	}
	if len(s.Parts) < 1 || len(s.Parts) > refimpl.MaxRotationsPerLaunch {
		return fmt.Errorf("gemm: %d partitions, the kernels take 1..%d", len(s.Parts), refimpl.MaxRotationsPerLaunch)
	}
	for i, p := range s.Parts {
		if p <= 0 || p%align != 0 {
			return fmt.Errorf("gemm: partition %d is %d wide, not a positive multiple of the %d-column block", i, p, align)
		}
	}
	return nil
}

// DecSplitK is the decode band's split-K law, fitted on the H200 (bench2
// dec, 2026-11-29; figures below from the re-run in
// results/h200-2026-11-29/dec.json, commit da5a3f0): S = 4 up to M = 16
// (the weight stream needs the parallelism; at M = 16, S = 2 is slower by
// 1.7 / 2.6 / 25.3 / 3.4% on qkv / gate_up / down / in_proj), doubled
// while the grid has fewer than 1.5 blocks per SM (narrow N); S = 2 above
// M = 16, where the S = 2 cluster reduce (DecLaunchOpts) beats wider ws
// reduces (down, M = 40..64: S = 2 -7.8..-12.3% against S = 4 and 8),
// except up to M = 32 on a narrow N, where it is doubled the same way (down
// M = 32, 80 column blocks: S = 4 26.1 µs against S = 2 32.3, H200
// 2026-12-02, results/h200-2026-12-02d/dec.json). At least 4 groups per
// split and at most DecMaxS. Regret on the 2026-11-29 table: 0.3%
// time-weighted, worst cell gate_up M = 5 (+3.8% against S = 1).
func DecSplitK(M, N, K, sms int) int {
	G := K / refimpl.GroupSize
	s := 2
	if M <= 16 {
		s = 4
	}
	for M <= 32 && (N/DecBN)*s*2 < 3*sms && s < DecMaxS {
		s *= 2
	}
	s = min(s, max(1, G/4), DecMaxS)
	// Even out the splits: the smallest S with the same groups per split.
	gps := (G + s - 1) / s
	return max((G+gps-1)/gps, 1)
}

// DecGateLaunches is how many times the decode gate launches each (kernel,
// S, launch kind) of a case: the first is checked against the reference,
// every later one must give its bits exactly.
const DecGateLaunches = 3

// H200SMs is the SM count the law is printed for when no device is at hand.
const H200SMs = 132

// WriteDecSplitKTable prints the law over shapes and an M ladder.
func WriteDecSplitKTable(w io.Writer, names []string, shapes []GemmShape, Ms []int, sms int) {
	fmt.Fprintf(w, "decode split-K law (SMs=%d: S=4 for M<=16, S=2 above, each doubled below 1.5 blocks/SM up to M=32; >= 4 groups per split)\n", sms)
	fmt.Fprintf(w, "%-10s %6s %6s", "shape", "K", "N")
	for _, m := range Ms {
		fmt.Fprintf(w, " %5s", fmt.Sprintf("M=%d", m))
	}
	fmt.Fprintln(w)
	for i, s := range shapes {
		fmt.Fprintf(w, "%-10s %6d %6d", names[i], s.K, s.N())
		for _, m := range Ms {
			fmt.Fprintf(w, " %5d", DecSplitK(m, s.N(), s.K, sms))
		}
		fmt.Fprintln(w)
	}
}

// DecArgs are the decode kernel's buffers.
type DecArgs struct {
	W, SZ        gpu.Ptr // repacked weights, scale words
	Act, ASG, RS gpu.Ptr // codes [P,M,K], group scales and row sums [P,M,G]
	Out          gpu.Ptr // bf16 [M,N]
	WS           gpu.Ptr // fp32 [S,M,N] (unused when S = 1)
	Sema         gpu.Ptr // u32 [N/16] (DecSemaBytes), zero before the first launch
	Kernel       string  // "" = the baseline of DecOp(Bits) serving M; else a registered kernel of that Op serving M
	Bits         int     // weight width: 0 or 4 (W4A8), 5 (W5A8: W holds RepackW5's words, Planes its planes)
	Planes       gpu.Ptr // 5-bit plane stream (Bits 5 only)
	WRow         gpu.Ptr // row-layout codes (refimpl.RepackRow), passed in W's place to LayoutRow kernels; scale words stay SZ
	SMs          int     // the device's SMs: the stream-K kernels' grid (DecSKBlocks; 0: H200SMs)
	PerSM        int     // stream-K: the driver's count of the launch's blocks an SM holds (gpu.Occupier; 0: decResidentAt's estimate)
}

func (a DecArgs) sms() int {
	if a.SMs > 0 {
		return a.SMs
	}
	return H200SMs
}

// skSlots is DecSKSlots for a stream-K launch of kernel with these args.
func (a DecArgs) skSlots(kernel string, M, S int) int {
	return DecSKSlots(kernel, M, S, a.sms(), a.PerSM)
}

// DecWorkspaceBytes is the split-K workspace a decode launch needs.
func DecWorkspaceBytes(M, N, S int) int {
	if S <= 1 {
		return 0
	}
	return 4 * S * M * N
}

// DecSemaBytes is the size of the split-K counters: one per 16-column warp
// tile (the sm_90 staged kernels count per warp; the v1 kernels and every
// gfx1201 decode kernel count per 64-column block and use the first N/64).
func DecSemaBytes(N int) int { return 4 * (N / 16) }

// DecMaxK bounds a decode launch's K: the wgmma bodies stage activation
// rows with a 32-bit row step of up to 16 K (gemm_dec_wk's FP pieces,
// gemm_dec_wp's copiers: 12 K).
const DecMaxK = 1 << 28

// DecLaunch returns the kernel, grid, block and arguments of a decode launch.
func DecLaunch(s GemmShape, M, S int, a DecArgs) (kernel string, grid, block gpu.Dim3, args []any, err error) {
	if err = s.Check(DecBN); err != nil {
		return
	}
	if M < 1 || M > DecMaxM {
		err = fmt.Errorf("gemm: decode M=%d outside 1..%d", M, DecMaxM)
		return
	}
	if s.K >= DecMaxK {
		err = fmt.Errorf("gemm: decode K=%d: the wgmma decode bodies step activation rows by 32-bit multiples of K (up to 16 K), so every decode launch keeps K below %d", s.K, DecMaxK)
		return
	}
	// A warp-specialized kernel's S is its block's consumer count: with
	// fewer groups than consumers the idle ones add zero partials.
	if wp, ok := decWPGeom[a.Kernel]; (S < 1 || S > DecMaxS || S > s.G()) && !(ok && S == wp.C) {
		err = fmt.Errorf("gemm: split-K %d outside 1..min(%d, G=%d)", S, DecMaxS, s.G())
		return
	}
	e0, e1 := s.Bounds()
	N := s.N()
	bits := max(a.Bits, 4)
	if bits != 4 && bits != 5 {
		err = fmt.Errorf("gemm: decode Bits=%d, the kernels take 4 or 5", a.Bits)
		return
	}
	op := DecOp(bits)
	w := a.W
	if a.Kernel == "" {
		base, berr := kernels.BaselineFor(Family, op, M, "")
		if err = berr; err != nil {
			return
		}
		kernel = base.Name
	} else {
		k, ok := kernels.Lookup(a.Kernel)
		if !ok || k.Family != Family || k.Op != op || (k.Form != FormDec && !splitsInBlock(k)) || !k.ServesM(M) {
			err = fmt.Errorf("gemm: kernel %s is not a registered %d-bit decode kernel (op %s, form %s, %s or %s) serving M=%d", a.Kernel, bits, op, FormDec, FormDecKS, FormDecSK, M)
			return
		}
		if g := decKSGeomByTag[k.Tag]; !DecKSFits(k.Name, M, S) {
			if g.minS == g.maxS {
				err = fmt.Errorf("gemm: kernel %s launches at split S=%d only (its block's %d consumer warpgroups), not S=%d", k.Name, g.minS, g.minS, S)
			} else {
				err = fmt.Errorf("gemm: kernel %s splits K inside one block: S=%d does not fit it (at most %d splits of %d threads and %d bytes of shared memory; M=%d needs %d)",
					k.Name, S, g.maxS, DecKSThreads(k.Name), sm90SharedPerBlock, M, DecShared(k.Name, M, S))
			}
			return
		}
		kernel = a.Kernel
		if DecWeightLayout(k) == LayoutRow {
			if a.WRow == 0 {
				err = fmt.Errorf("gemm: kernel %s reads row-layout weights: DecArgs.WRow is unset (refimpl.RepackRow's codes)", k.Name)
				return
			}
			w = a.WRow
		}
	}
	grid = gpu.Dim3{X: uint32(N / DecBN), Y: uint32(S), Z: 1}
	block = gpu.D1(DecThreads)
	if DecInBlock(kernel) {
		grid, block = gpu.D1(N/(16*DecKSTiles(kernel))), gpu.D1(DecKSBlockThreads(kernel, S))
	}
	if DecStreamK(kernel) {
		grid, block = gpu.D1(DecSKBlocks(kernel, M, N, s.K, S, a.skSlots(kernel, M, S))), gpu.D1(DecKSBlockThreads(kernel, S))
	}
	args = []any{w, a.SZ, a.Act, a.ASG, a.RS, a.Out, a.WS, a.Sema, uint32(M), uint32(N), uint32(s.K), e0, e1, uint32(S)}
	if bits == 5 {
		if a.Planes == 0 {
			err = fmt.Errorf("gemm: 5-bit decode kernel %s: no plane stream (DecArgs.Planes)", kernel)
			return
		}
		args = append([]any{a.W, a.Planes}, args[1:]...)
	}
	return
}

// DecClusterS is the split count the staged decode kernels reduce through a
// thread block cluster's distributed shared memory instead of ws and sema.
// Measured on the H200 (2026-11-29, `parharness bench2 dec`, variant "ws"
// against the cluster launch): clusters of 2 (the law's S at M > 16 on qkv,
// gate_up, in_proj) -9..-11% at M = 64 (results/h200-2026-11-29/dec.json);
// clusters of 4 (S = 4 at M <= 16) -3..-5% on qkv and down but +8% on
// gate_up and +25% on in_proj (512+ CTAs placed in 4-CTA clusters; see
// docs/history.md), so only S = 2 launches as clusters.
const DecClusterS = 2

// DecShared is the dynamic shared memory a decode launch of kernel at M
// rows and split S needs: for the mma.sync in-block split-K kernels (tags
// ks, ks2) S warps' rings of DecKSRing slots and mbarriers (gemm.hip
// dks_slot: the weight tile, 16 scale words, asg and rs of 8·MT rows, M
// activation rows at a 144-byte stride); for the wgmma ones (tags wk, wk1) S
// warpgroups' bytes by the kernel's decWKGeom (wkGeom.perWG) and 1024
// bytes of alignment slack; else its registry row's Shared (gemm.hip
// DWG_SMEM_<NB> for the wgmma kernels: three activation chunk buffers and
// their asg and rs, the warps' weight rings and mbarriers, 1024 bytes of
// alignment slack; DecWgSmem); 0 for static shared memory.
func DecShared(kernel string, M, S int) int {
	k, _ := kernels.Lookup(kernel)
	if g, ok := decWPGeom[kernel]; ok {
		return g.bytes()
	}
	if g, ok := decWKGeom[kernel]; ok {
		if g.SK { // each warpgroup's first-tile partial and broadcast word
			return S*(g.perWG()+4*g.NB*64) + 16 + 1024
		}
		return S*g.perWG() + 1024
	}
	if k.Form == FormDecKS {
		return S * DecKSRing * (decKSSlot(DecKSTiles(kernel), (k.MaxM+7)/8, M) + 8)
	}
	return k.Shared
}

// decKSSlot is gemm.hip's dks_slot(NT, MT, M): one ring slot's bytes.
func decKSSlot(NT, MT, M int) int { return 1088*NT + 64*MT + decKSRow*M }

// DecKSTiles is the 16-column tiles per block of an in-block split-K
// kernel (by its tag in decKSGeomByTag: gemm_dec_ks's NT, one warp's
// columns; gemm_dec_wk's four warps of a warpgroup); 0 for any other
// kernel. TestDecKSEntriesMatchRegistry ties it to the DEC_KS_ENTRY and
// DEC_WK_ENTRY lines.
func DecKSTiles(kernel string) int {
	k, _ := kernels.Lookup(kernel)
	if !splitsInBlock(k) {
		return 0
	}
	return decKSGeomByTag[k.Tag].tiles
}

// DecKSThreads is the threads of one split of an in-block split-K kernel
// (a warp for gemm_dec_ks, a warpgroup for gemm_dec_wk); 0 for any other.
func DecKSThreads(kernel string) int {
	k, _ := kernels.Lookup(kernel)
	if !splitsInBlock(k) {
		return 0
	}
	return decKSGeomByTag[k.Tag].threads
}

// DecKSBlockThreads is the block of an in-block split-K kernel at split S:
// S splits of DecKSThreads and, for the warp-specialized kernels (tag wp),
// the producer warpgroup; 0 for any other kernel.
func DecKSBlockThreads(kernel string, S int) int {
	k, _ := kernels.Lookup(kernel)
	if !splitsInBlock(k) {
		return 0
	}
	g := decKSGeomByTag[k.Tag]
	return g.threads*S + g.extra
}

// DecWGUnsigned reports whether a wgmma decode kernel takes the weight
// codes unsigned (e4m3 byte c = c·2^-9, the zero point folded with the row
// sums) rather than as c − z: gemm.hip's DEC_WG_ENTRY UNS argument, tied to
// this table by TestDecWGEntriesMatchTable. The gate's magnitude follows it
// (refFor). The wgmma in-block kernels (tags wk, wk1) always take them unsigned.
func DecWGUnsigned(kernel string) bool {
	if _, ok := decWKGeom[kernel]; ok {
		return true
	}
	if _, ok := decWPGeom[kernel]; ok {
		return true
	}
	return decWGUnsigned[kernel]
}

var decWGUnsigned = map[string]bool{"pq_gemm_dec_wg_m8": true, "pq_gemm_dec_wg_m16": true, "pq_gemm_dec_wg_m32": false, "pq_gemm_dec_wg_m64": false}

// decKSGeomByTag is each in-block split-K tag's block: 16-column tiles,
// threads per split, the smallest and largest split, and threads beside
// the splits (wp: the producer warpgroup).
var decKSGeomByTag = map[string]struct{ tiles, threads, minS, maxS, extra int }{
	TagKS: {1, 32, 1, DecKSMaxS, 0}, TagKS2: {2, 32, 1, DecKSMaxS, 0}, TagWK: {4, 128, 1, DecWKMaxS, 0}, TagWK1: {4, 128, 1, DecWKMaxS, 0},
	TagWKS: {4, 128, 1, DecWKMaxS, 0}, TagWP: {4, 128, DecWPSplit, DecWPSplit, 128}, TagWP3: {4, 128, DecWP3Split, DecWP3Split, 128},
	TagWPS: {4, 128, DecWP3Split, DecWP3Split, 128},
}

// wkGeom is one wgmma in-block kernel's DEC_WK_ENTRY(NAME, NB, R, U, RA, FP)
// numbers: op width NB (its M class's rows), R weight slots per warp of U
// groups each, RA activation slots per warpgroup.
type wkGeom struct {
	NB, R, U, RA int
	FP           bool // fixed-piece staging, asg and rs by row pair (the entry's FP)
	SK           bool // stream-K split (the entry's SK; FormDecSK)
}

// perWG is one warpgroup's shared bytes in gemm_dec_wk's layout:
// activation tiles with their asg and rs and the block's 256 scale bytes
// a group, four warps' weight rings of 1 KiB a group, one mbarrier a slot.
func (g wkGeom) perWG() int {
	return g.RA*g.U*(g.NB*128+8*g.NB+256) + DecThreads/32*g.R*(g.U*1024+8)
}

// decWKGeom holds every wgmma in-block kernel's geometry, tied to
// gemm.hip's DEC_WK_ENTRY lines by TestDecKSEntriesMatchRegistry.
var decWKGeom = map[string]wkGeom{
	"pq_gemm_dec_wk_m8":   {NB: 8, R: 2, U: 2, RA: 3},
	"pq_gemm_dec_wk_m16":  {NB: 16, R: 2, U: 2, RA: 3},
	"pq_gemm_dec_wk_m32":  {NB: 32, R: 2, U: 2, RA: 3},
	"pq_gemm_dec_wk_m64":  {NB: 64, R: 2, U: 1, RA: 3},
	"pq_gemm_dec_wk1_m8":  {NB: 8, R: 1, U: 2, RA: 3},
	"pq_gemm_dec_wk1_m16": {NB: 16, R: 1, U: 2, RA: 3, FP: true},
	"pq_gemm_dec_wk1_m24": {NB: 24, R: 1, U: 2, RA: 3, FP: true},
	"pq_gemm_dec_wk1_m32": {NB: 32, R: 1, U: 2, RA: 3, FP: true},
	"pq_gemm_dec_wk1_m40": {NB: 40, R: 1, U: 1, RA: 3, FP: true},
	"pq_gemm_dec_wk1_m48": {NB: 48, R: 1, U: 1, RA: 3, FP: true},
	"pq_gemm_dec_wk1_m56": {NB: 56, R: 1, U: 1, RA: 3, FP: true},
	"pq_gemm_dec_wk1_m64": {NB: 64, R: 1, U: 1, RA: 3, FP: true},
	"pq_gemm_dec_wks_m8":  {NB: 8, R: 1, U: 2, RA: 3, SK: true},
	"pq_gemm_dec_wks_m16": {NB: 16, R: 1, U: 2, RA: 3, FP: true, SK: true},
	"pq_gemm_dec_wks_m24": {NB: 24, R: 1, U: 2, RA: 3, FP: true, SK: true},
	"pq_gemm_dec_wks_m32": {NB: 32, R: 1, U: 2, RA: 3, FP: true, SK: true},
	"pq_gemm_dec_wks_m40": {NB: 40, R: 1, U: 1, RA: 3, FP: true, SK: true},
	"pq_gemm_dec_wks_m48": {NB: 48, R: 1, U: 1, RA: 3, FP: true, SK: true},
	"pq_gemm_dec_wks_m56": {NB: 56, R: 1, U: 1, RA: 3, FP: true, SK: true},
	"pq_gemm_dec_wks_m64": {NB: 64, R: 1, U: 1, RA: 3, FP: true, SK: true},
}

// wpGeom is one warp-specialized kernel's DEC_WP_ENTRY(NAME, NB, U, D, C,
// SK) numbers: op width NB, U groups a round, D stages, C consumer
// warpgroups, SK the stream-K split (FormDecSK).
type wpGeom struct {
	NB, U, D, C int
	SK          bool
}

// bytes is gemm_dec_wp's dynamic shared memory: D stages (U activation
// tiles of NB rows of 128 bytes, four warps' U KiB of weight words, U
// groups' asg/rs pairs and 64 scale words, rounded up to 1 KiB), the
// partial tiles of consumers 1..C-1 (NB x 64 fp32 each) and 1024 bytes of
// alignment slack.
func (g wpGeom) bytes() int {
	stage := g.U*g.NB*128 + 4*g.U*1024 + 4*g.U*(2*g.NB+64)
	stage = (stage + 1023) / 1024 * 1024
	return g.D*stage + (g.C-1)*4*g.NB*DecBN + 1024
}

// decWPGeom holds every warp-specialized kernel's geometry, tied to
// gemm.hip's DEC_WP_ENTRY lines by TestDecWPEntriesMatchRegistry.
var decWPGeom = map[string]wpGeom{
	"pq_gemm_dec_wp_m8":   {NB: 8, U: 2, D: 8, C: 2},
	"pq_gemm_dec_wp_m16":  {NB: 16, U: 2, D: 8, C: 2},
	"pq_gemm_dec_wp_m24":  {NB: 24, U: 2, D: 8, C: 2},
	"pq_gemm_dec_wp_m32":  {NB: 32, U: 2, D: 6, C: 2},
	"pq_gemm_dec_wp_m40":  {NB: 40, U: 1, D: 8, C: 2},
	"pq_gemm_dec_wp_m48":  {NB: 48, U: 1, D: 8, C: 2},
	"pq_gemm_dec_wp_m56":  {NB: 56, U: 1, D: 8, C: 2},
	"pq_gemm_dec_wp_m64":  {NB: 64, U: 1, D: 8, C: 2},
	"pq_gemm_dec_wp3_m8":  {NB: 8, U: 2, D: 9, C: 3},
	"pq_gemm_dec_wps_m8":  {NB: 8, U: 2, D: 9, C: 3, SK: true},
	"pq_gemm_dec_wp3_m16": {NB: 16, U: 2, D: 9, C: 3},
	"pq_gemm_dec_wps_m16": {NB: 16, U: 2, D: 9, C: 3, SK: true},
	"pq_gemm_dec_wp3_m24": {NB: 24, U: 2, D: 9, C: 3},
	"pq_gemm_dec_wps_m24": {NB: 24, U: 2, D: 9, C: 3, SK: true},
	"pq_gemm_dec_wp3_m32": {NB: 32, U: 2, D: 9, C: 3},
	"pq_gemm_dec_wps_m32": {NB: 32, U: 2, D: 9, C: 3, SK: true},
	"pq_gemm_dec_wp3_m40": {NB: 40, U: 1, D: 12, C: 3},
	"pq_gemm_dec_wps_m40": {NB: 40, U: 1, D: 12, C: 3, SK: true},
	"pq_gemm_dec_wp3_m48": {NB: 48, U: 1, D: 12, C: 3},
	"pq_gemm_dec_wps_m48": {NB: 48, U: 1, D: 12, C: 3, SK: true},
	"pq_gemm_dec_wp3_m56": {NB: 56, U: 1, D: 12, C: 3},
	"pq_gemm_dec_wps_m56": {NB: 56, U: 1, D: 12, C: 3, SK: true},
	"pq_gemm_dec_wp3_m64": {NB: 64, U: 1, D: 12, C: 3},
	"pq_gemm_dec_wps_m64": {NB: 64, U: 1, D: 12, C: 3, SK: true},
}

// decKSRow is gemm.hip's DKS_ROW: the staged activation row stride.
const decKSRow = 144

// DecKSFits reports whether a decode kernel can launch at split S and M
// rows as far as its block goes: for the in-block split-K kernels at most
// their tag's largest split (DecKSMaxS warps, DecWKMaxS warpgroups: the
// launch bounds) whose rings fit one block's shared memory; every other
// decode kernel splits across blocks (true).
func DecKSFits(kernel string, M, S int) bool {
	k, _ := kernels.Lookup(kernel)
	if !splitsInBlock(k) {
		return true
	}
	g := decKSGeomByTag[k.Tag]
	return S >= g.minS && S <= g.maxS && DecShared(kernel, M, S) <= sm90SharedPerBlock
}

// DecInBlock reports whether kernel reduces its split-K partials inside
// the block (FormDecKS): it never writes ws or the counters.
func DecInBlock(kernel string) bool {
	k, _ := kernels.Lookup(kernel)
	return k.Form == FormDecKS
}

// splitsInBlock reports whether k's block holds S splits side by side
// (FormDecKS, and the stream-K FormDecSK's S warpgroups a block).
func splitsInBlock(k kernels.Kernel) bool { return k.Form == FormDecKS || k.Form == FormDecSK }

// DecStreamK reports whether kernel splits the work stream-K (FormDecSK):
// a grid of DecSKBlocks blocks whatever N is, tiles shared between blocks
// summed through DecSKWorkspaceBytes of ws and a counter per 64 columns.
func DecStreamK(kernel string) bool {
	k, _ := kernels.Lookup(kernel)
	return k.Form == FormDecSK
}

// DecSKSlots is how many blocks of a stream-K launch of kernel at M rows
// and split S the device holds at once: sms SMs of perSM blocks each (the
// driver's count, gpu.Occupier), or of decResidentAt's estimate where
// perSM is 0.
func DecSKSlots(kernel string, M, S, sms, perSM int) int {
	if perSM <= 0 {
		perSM = decResidentAt(kernel, M, S)
	}
	return max(perSM, 1) * max(sms, 1)
}

// DecSKBlocks is the grid of a stream-K launch at split S on a device
// that holds slots of its blocks at once (DecSKSlots): one block a slot,
// so all run in one wave, but at most one block per S units of work (no
// warpgroup idle on a small GEMM), and enough blocks that a warpgroup's
// part is at most G units (gemm_dec_wk's bound: a part spans at most two
// tiles; the kernel traps past it).
//
// The warp-specialized stream-K kernels (tag wps) take any number of
// tiles a block and split a block's rounds over its consumers by turn:
// one block a slot, at most one a unit.
func DecSKBlocks(kernel string, M, N, K, S, slots int) int {
	G := K / refimpl.GroupSize
	T := (N / DecBN) * G
	if g, ok := decWPGeom[kernel]; ok && g.SK {
		return max(1, min(max(slots, 1), T))
	}
	b := min(max(slots, 1), max(1, T/S))
	for b < T && (T+b-1)/b > S*G {
		b++
	}
	return b
}

// DecSKWorkspaceBytes is the ws of a stream-K launch: two partial tiles
// (the block's first and last, in the accumulator order: its M class's NB
// rows x 64 columns of fp32) for every block.
func DecSKWorkspaceBytes(kernel string, M, N, K, S, slots int) int {
	nb := decWKGeom[kernel].NB
	if g, ok := decWPGeom[kernel]; ok {
		nb = g.NB
	}
	return 2 * DecSKBlocks(kernel, M, N, K, S, slots) * 4 * nb * DecBN
}

// DecSKSharedTiles is how many 64-column tiles of a stream-K launch are
// summed across blocks (through ws): 0 means ws stays untouched.
func DecSKSharedTiles(kernel string, M, N, K, S, slots int) int {
	G := K / refimpl.GroupSize
	T := (N / DecBN) * G
	B := DecSKBlocks(kernel, M, N, K, S, slots)
	blk := func(u int) int { return ((u+1)*B - 1) / T }
	n := 0
	for t := 0; t < N/DecBN; t++ {
		if blk(t*G) != blk((t+1)*G-1) {
			n++
		}
	}
	return n
}

// DecSumTerms bounds the partial sums a decode launch adds into one output
// (the reference's error bound counts them): S for the split-K kernels;
// for stream-K a tile's partials in each block (wks: at most S + 1, the
// parts of a block cover a tile's units once; wps: its C consumers') over
// the blocks that share it.
func DecSumTerms(kernel string, M, N, K, S, slots int) int {
	if !DecStreamK(kernel) {
		return S
	}
	G := K / refimpl.GroupSize
	T := (N / DecBN) * G
	B := DecSKBlocks(kernel, M, N, K, S, slots)
	perBlock := max(T/B, 1)
	inBlock := S + 1 // wks: a part that crosses a tile adds a second partial to it
	if g, ok := decWPGeom[kernel]; ok && g.SK {
		inBlock = g.C // wps: a segment's consumer partials, one each
	}
	return inBlock * ((G+perBlock-1)/perBlock + 1)
}

// decFootprintRegs are the registers per thread of the decode kernels that
// launch at their own footprint law (ptxas -v, sm_90a, on the GPU host: the
// report kept in gates/testdata/ptxas/clean.txt, which a test ties to this
// table).
var decFootprintRegs = map[string]int{
	"pq_gemm_dec_wg_m8": 60, "pq_gemm_dec_wg_m16": 68, "pq_gemm_dec_wg_m32": 72, "pq_gemm_dec_wg_m64": 120,
	"pq_gemm_dec_wk_m8": 101, "pq_gemm_dec_wk_m16": 111, "pq_gemm_dec_wk_m32": 124, "pq_gemm_dec_wk_m64": 122,
	"pq_gemm_dec_wk1_m8": 108, "pq_gemm_dec_wk1_m16": 112, "pq_gemm_dec_wk1_m24": 128, "pq_gemm_dec_wk1_m32": 128,
	"pq_gemm_dec_wk1_m40": 111, "pq_gemm_dec_wk1_m48": 125, "pq_gemm_dec_wk1_m56": 128, "pq_gemm_dec_wk1_m64": 128,
	"pq_gemm_dec_wks_m8": 108, "pq_gemm_dec_wks_m16": 128, "pq_gemm_dec_wks_m24": 128, "pq_gemm_dec_wks_m32": 128,
	"pq_gemm_dec_wks_m40": 127, "pq_gemm_dec_wks_m48": 127, "pq_gemm_dec_wks_m56": 128, "pq_gemm_dec_wks_m64": 128,
}

// Hopper's per-SM limits (CUDA programming guide, compute capability 9.0):
// 228 KiB of shared memory per SM, 1 KiB of it reserved per resident block,
// at most 227 KiB to one block;
// 64 Ki registers, allocated per warp in units of 256.
const (
	sm90SharedPerSM    = 228 << 10
	sm90SharedPerCTA   = 1 << 10
	sm90SharedPerBlock = 227 << 10 // the most dynamic shared memory one block may take
	sm90RegsPerSM      = 64 << 10
	sm90RegAllocUnits  = 256
	sm90MaxCTAsPerSM   = 32
	sm90ThreadsPerSM   = 2048
)

// DecResidentBlocks is how many blocks of a footprint-law decode kernel
// (decFootprintRegs) fit on one SM at once, from its shared memory and
// registers (0: not such a kernel).
func DecResidentBlocks(kernel string) int { return decResidentAt(kernel, 0, 1) }

// decResidentAt is DecResidentBlocks for a launch at M rows and split S
// (an in-block kernel's block and shared memory grow with S): the least of
// the blocks that shared memory, registers (per warp, in allocation
// units), threads and the block limit allow.
func decResidentAt(kernel string, M, S int) int {
	regs, ok := decFootprintRegs[kernel]
	if !ok {
		return 0
	}
	threads := DecThreads
	if k, _ := kernels.Lookup(kernel); splitsInBlock(k) {
		threads = DecKSBlockThreads(kernel, S)
	}
	bySmem := sm90SharedPerSM / (DecShared(kernel, M, S) + sm90SharedPerCTA)
	perWarp := (regs*32 + sm90RegAllocUnits - 1) / sm90RegAllocUnits * sm90RegAllocUnits
	byRegs := sm90RegsPerSM / (perWarp * threads / 32)
	return min(bySmem, byRegs, sm90ThreadsPerSM/threads, sm90MaxCTAsPerSM)
}

// DecSplitKFootprint is the split-K law of the decode kernels with a
// footprint of their own (the wgmma bodies). A block holds
// DecResidentBlocks' share of an SM, so a launch of nb column blocks x S
// splits runs in ceil(nb·S / (resident·SMs)) waves of blocks that each
// stream ceil(G/S) groups; every split adds a partial tile of the
// kernel's NB rows (its M class's op width, 8·ceil(MaxM/8): the tile the
// body computes and reduces, whatever M) to write and reduce. The law
// takes the S of DecOwnFixedS (at most G/4) with the least
//
//	waves · ceil(G/S) + (3/32)·NB·S
//
// (the smallest S on a tie), then evens the splits out as DecSplitK does.
// Waves x groups alone picked S = 5..14, which measured up to 79% slower
// than the best S (the reduce cost it ignores grows with the tile and S).
// The 3/32 is fitted on the H200 (2026-12-02: 20 cells at M = 1, 8, 16,
// 32, 64, every wg split of DecOwnFixedS; worst cell within 3.0% of its
// best split, results/h200-2026-12-02d/dec-wg.json). Counting M rows
// instead of NB picked the same there, but S = 3 for S = 2 between the
// classes (qkv and in_proj, M = 40..56: +10..+12%); with NB the 44 cells of
// M = 1..64 at every 8 rows score 0.9% time-weighted, worst cell +3.4%
// (in_proj M = 16; H200, 2026-12-04, results/h200-2026-12-04/dec-wg.json).
func DecSplitKFootprint(kernel string, M, N, K, sms int) int {
	G := K / refimpl.GroupSize
	slots := max(DecResidentBlocks(kernel), 1) * sms
	nb := N / DecBN
	k, _ := kernels.Lookup(kernel)
	rows := 8 * ((max(k.MaxM, M, 1) + 7) / 8) // the class's op width (M if the kernel is unknown)
	best, bestCost := 1, -1.0
	for _, s := range DecOwnFixedS {
		if s > max(1, G/4) {
			continue
		}
		gps := (G + s - 1) / s
		cost := float64((nb*s+slots-1)/slots*gps) + 3.0/32*float64(rows*s)
		if bestCost < 0 || cost < bestCost-1e-9 {
			best, bestCost = s, cost
		}
	}
	gps := (G + best - 1) / best
	return max((G+gps-1)/gps, 1)
}

// DecOwnFixedS are the split counts the own-law decode kernels choose from
// (DecSplitKFootprint) and that the dec suite times them at beside their
// law's S (variants "<tag>S<S>").
var DecOwnFixedS = []int{1, 2, 3, 4, 6, 8}

// DecSplitFor is the split count kernel k launches at by its own law: the
// kernels of an OwnLaws tag by that law, every other decode kernel by
// DecSplitK.
func DecSplitFor(k kernels.Kernel, M, N, K, sms int) int {
	if l, ok := OwnLawOf(k.Tag); ok {
		return l.Split(k.Name, M, N, K, sms)
	}
	return DecSplitK(M, N, K, sms)
}

// DecSplitKS is the split law of the mma.sync in-block split-K kernels
// (tags ks, ks2): the S of DecKSFixedS that fits its block at M (DecKSFits)
// whose ceil(G/S) groups per warp come nearest to decKSGroupsPerWarp (10;
// 8 for two tiles per warp above M = 8), the smaller S on a tie, evened
// out as DecSplitK does (which never raises S).
//
// A bare weight stream reads fastest at about 10 KiB per warp on the H200
// (10, 20 and 40 KiB per warp: 6.31, 7.69 and 11.48 µs on qkv;
// results/h200-2026-12-02d/readfloor.txt), and so did the ks kernels (1
// KiB a group): time-weighted regret +0.2%, worst cell +1.4% over 8 cells.
// The ks2 kernels (2 KiB a group) were fastest at the same 10 groups per
// warp at M <= 8 (within 1.6% in 6 cells) and at 8 (S = 5 at G = 40) at
// M = 16, where 10 cost +10.6% and +13.8% (2 cells), against S = 2, 4, 5,
// 8, 10 (H200, 2026-12-02, results/h200-2026-12-02f/README.md).
func DecSplitKS(kernel string, M, N, K, sms int) int {
	G := K / refimpl.GroupSize
	best, bestD := 1, -1
	for _, s := range DecKSFixedS {
		if s > G || !DecKSFits(kernel, M, s) {
			continue
		}
		d := (G+s-1)/s - decKSGroupsPerWarp(kernel, M)
		if d < 0 {
			d = -d
		}
		if bestD < 0 || d < bestD {
			best, bestD = s, d
		}
	}
	gps := (G + best - 1) / best
	return max((G+gps-1)/gps, 1)
}

// decKSGroupsPerWarp is the groups per warp DecSplitKS aims at.
func decKSGroupsPerWarp(kernel string, M int) int {
	if DecKSTiles(kernel) == 2 && M > 8 {
		return 8
	}
	return 10
}

// DecKSFixedS are the splits of the in-block split-K kernels the dec suite
// times beside their law's (variants "ksS<S>") and DecSplitKS picks from.
var DecKSFixedS = []int{2, 3, 4, 5, 6, 8, 10, 12, 16}

// TagWG is the registry tag of the wgmma decode kernels (pq_gemm_dec_wg_*).
const TagWG = "wg"

// TagKS and TagKS2 are the registry tags of the in-block split-K decode
// kernels (FormDecKS) with one and two 16-column tiles per warp
// (pq_gemm_dec_ks_*, pq_gemm_dec_ks2_*).
const (
	TagKS  = "ks"
	TagKS2 = "ks2"
)

// TagWK is the registry tag of the wgmma in-block split-K decode kernels
// (FormDecKS, pq_gemm_dec_wk_*: a warpgroup a split).
const TagWK = "wk"

// TagWK1 is the registry tag of the wk kernels with one weight slot a
// warp (pq_gemm_dec_wk1_*).
const TagWK1 = "wk1"

// TagWP is the registry tag of the warp-specialized decode kernels
// (FormDecKS, pq_gemm_dec_wp_*): a producer warpgroup and DecWPSplit
// consumer warpgroups a block.
const TagWP = "wp"

// TagWP3 is the registry tag of the warp-specialized decode kernels with
// three consumer warpgroups (pq_gemm_dec_wp3_*).
const TagWP3 = "wp3"

// TagWPS is the registry tag of the wp3 bodies split stream-K
// (FormDecSK, pq_gemm_dec_wps_*): one block an SM, any number of tiles
// a block.
const TagWPS = "wps"

// DecWPSplit and DecWP3Split are the one split of the wp and wp3
// kernels: their consumer warpgroups.
const (
	DecWPSplit  = 2
	DecWP3Split = 3
)

// DecSplitWP is the warp-specialized kernels' split law: the only split
// their block has, its consumer warpgroups (DecWPSplit for an unknown
// kernel).
func DecSplitWP(kernel string, M, N, K, sms int) int {
	if g, ok := decWPGeom[kernel]; ok {
		return g.C
	}
	return DecWPSplit
}

// TagWKS is the registry tag of the wk1 bodies split stream-K
// (FormDecSK, pq_gemm_dec_wks_*).
const TagWKS = "wks"

// DecSplitWKS is the split law of the stream-K kernels (tag wks): the
// largest S of 1..DecWKMaxS that fits one block (DecKSFits). Every S
// keeps every SM streaming (DecSKBlocks); a larger S sums more of each
// tile inside the block, so fewer partial tiles go through ws.
func DecSplitWKS(kernel string, M, N, K, sms int) int {
	for s := min(DecWKMaxS, K/refimpl.GroupSize); s > 1; s-- {
		if DecKSFits(kernel, M, s) {
			return s
		}
	}
	return 1
}

// DecWKFixedS are the splits the dec suite times the wk kernels at.
var DecWKFixedS = []int{1, 2, 3, 4}

// DecSplitWK is the split law of the wgmma in-block kernels (tags wk, wk1):
// the S of 1..DecWKMaxS that fits (DecKSFits, S <= G) whose N/64
// blocks run in the fewest waves (decResidentAt blocks an SM), the
// largest such S. Its blocks are bound by each warpgroup's serial chain
// of rounds, not by bandwidth, so a partial last wave costs a whole one:
// on gate_up (272 blocks) S = 4 (one block an SM, 3 waves) measured 1.6-
// 4.7% slower than S = 1 (one wave) at M = 1..32, while S = 4 was the
// best split of qkv, down and in_proj (80-128 blocks, one wave at every
// S) in every cell (H200, 2026-12-03, bench2 dec, wkS1..wkS4 of the
// three-slot kernels, results/h200-2026-12-03). On the two- and one-slot
// kernels: regret 0.0% (wk) and 0.1% (wk1, worst cell +1.0%) over 36
// cells (results/h200-2026-12-03b).
func DecSplitWK(kernel string, M, N, K, sms int) int {
	G := K / refimpl.GroupSize
	nb := max(N/DecBN, 1)
	best, bestWaves := 1, -1
	for s := 1; s <= min(DecWKMaxS, G); s++ {
		if !DecKSFits(kernel, M, s) {
			continue
		}
		slots := max(decResidentAt(kernel, M, s), 1) * sms
		if w := (nb + slots - 1) / slots; bestWaves < 0 || w <= bestWaves {
			best, bestWaves = s, w
		}
	}
	return best
}

// OwnLaw is the split law of the decode kernels of one registry tag.
type OwnLaw struct {
	Tag   string
	Name  string                                    // the law's name in the regret tables
	Split func(kernel string, M, N, K, sms int) int // the law's S
	Fixed []int                                     // the splits the dec suite times beside the law's
	MaxS  int                                       // the largest split these kernels launch at
	MinS  int                                       // the smallest (0: 1)
}

// OwnLaws are the decode kernel tags with a split law of their own. bench2
// dec times each at its law's S and at its Fixed splits as variants
// "<tag>S<S>", with a regret table per tag.
var OwnLaws = []OwnLaw{
	{TagWG, "gemm.DecSplitKFootprint/" + TagWG, DecSplitKFootprint, DecOwnFixedS, DecMaxS, 1},
	{TagKS, "gemm.DecSplitKS/" + TagKS, DecSplitKS, DecKSFixedS, DecKSMaxS, 1},
	{TagKS2, "gemm.DecSplitKS/" + TagKS2, DecSplitKS, DecKSFixedS, DecKSMaxS, 1},
	{TagWK, "gemm.DecSplitWK/" + TagWK, DecSplitWK, DecWKFixedS, DecWKMaxS, 1},
	{TagWK1, "gemm.DecSplitWK/" + TagWK1, DecSplitWK, DecWKFixedS, DecWKMaxS, 1},
	{TagWKS, "gemm.DecSplitWKS/" + TagWKS, DecSplitWKS, DecWKFixedS, DecWKMaxS, 1},
	{TagWP, "gemm.DecSplitWP/" + TagWP, DecSplitWP, []int{DecWPSplit}, DecWPSplit, DecWPSplit},
	{TagWP3, "gemm.DecSplitWP/" + TagWP3, DecSplitWP, []int{DecWP3Split}, DecWP3Split, DecWP3Split},
	{TagWPS, "gemm.DecSplitWP/" + TagWPS, DecSplitWP, []int{DecWP3Split}, DecWP3Split, DecWP3Split},
}

// OwnLawTags are OwnLaws' tags.
var OwnLawTags = func() []string {
	var tags []string
	for _, l := range OwnLaws {
		tags = append(tags, l.Tag)
	}
	return tags
}()

// DecBody is the decode body law on sm_90a: which own-law tag to launch
// (at that tag's law's S) for M rows of an N-column problem on sms SMs.
// wp3, the warp-specialized body, runs one 512-thread block per SM and
// one block per 64-column tile, so a partial last wave after the first
// costs a whole block's time; wps splits the same body stream-K over one
// block an SM and pays instead a hand-off of the tiles shared between
// blocks (a release by a counter, the other blocks' partials). The law
// takes wps
//   - where the tiles fill more than one wave and leave the last at most
//     half full, whatever M: there the idle SMs of the last wave cost more
//     than the hand-off, and as the last wave fills the gain shrinks while
//     the hand-off does not;
//   - in one wave between half and two-thirds full, from M =
//     DecBodySpreadM (at least half full, so that a tile spans at most
//     three blocks and its gather at most three partials): there
//     wp3's blocks become issue-bound as M grows (ncu --clock-control
//     none, H100, 2026-12-06, down M = 64, 80 tiles on 132 SMs: 33% of
//     DRAM and 30% of the SMs' issue over the device, 6.7 cycles per
//     issued instruction; results/2026-12-06h/README.md section 5) and
//     spreading them over every SM pays for the hand-off.
//
// It takes wp3 everywhere else. sms 0 counts as one SM (every tile
// count whole waves: wp3). Fitted on gate_up, qkv, down and in_proj on one H100
// (results/2026-12-06e; the second case on results/2026-12-06j, where
// down is the only shape in it); other devices and shapes are out of
// sample.
func DecBody(M, N, sms int) string {
	sms = max(sms, 1)
	tiles := N / DecBN
	if tiles > sms && 2*(tiles%sms) <= sms && tiles%sms != 0 {
		return TagWPS
	}
	if 2*tiles >= sms && 3*tiles <= 2*sms && M >= DecBodySpreadM {
		return TagWPS
	}
	return TagWP3
}

// DecBodySpreadM is the least M at which DecBody spreads one partial wave
// of tiles over every SM (wps): on down (80 of 132 SMs, H100, 2026-12-06,
// the build whose stream-K tail reads the count first) wpspdl against
// wp3pdl is +2.0% at M = 32, then -4.7%, -3.0%, -6.3%, -6.9% at M = 40,
// 48, 56, 64 in the stream regime and -1.0..-2.8% isolated from M = 40,
// where wp3 steps up (its m40 body); results/2026-12-06j/README.md.
const DecBodySpreadM = 40

// OwnLawOf is the own split law of the decode kernels tagged tag.
func OwnLawOf(tag string) (OwnLaw, bool) {
	for _, l := range OwnLaws {
		if l.Tag == tag {
			return l, true
		}
	}
	return OwnLaw{}, false
}

// DecLaunchOpts are the launch options of a decode launch at split S: for
// S = DecClusterS, the splits of a column block as one cluster (1 x S). The
// kernels take the same arguments either way (a plain launch reduces
// through ws and sema) and give the same bits.
func DecLaunchOpts(S int) gpu.LaunchOpts {
	if S != DecClusterS {
		return gpu.LaunchOpts{}
	}
	return gpu.LaunchOpts{Cluster: gpu.Dim3{X: 1, Y: uint32(S), Z: 1}}
}

// The prefill launch forms: FormPreTiled (pq_gemm_pre: mma.sync, both
// targets) reads the fragment-tiled activations (refimpl.TileRows) and
// folds the zero point with the row sums; FormPreWGMMA (pq_gemm_pre_wg:
// wgmma, sm_90a only) reads row-major ones and takes the codes as q − z, so
// it does not read the row sums. Both take the same arguments (weights,
// scale words, token scales, row sums), the same grid and give the same
// product.
const (
	preWGThreads    = 384                                // PW_THREADS: 2 consumer warpgroups + 1 producer
	preWGStages     = 4                                  // gemm.hip PW_STAGES
	preWGStageBytes = 25600                              // PW_STAGE_BYTES
	preWGShared     = preWGStages*preWGStageBytes + 1024 // PW_SMEM: the stages + 1024-byte alignment slack
)

// PreRowMajor reports whether a prefill kernel reads row-major activations
// [P, M, K] (else the tiled layout [P, Mpad, K]).
func PreRowMajor(kernel string) bool {
	k, _ := kernels.Lookup(kernel)
	return k.Form == FormPreWGMMA
}

// PreKernels are the registered prefill kernels on arch ("" any), baseline
// first; experimental ones only when full.
func PreKernels(M int, arch string, full bool) []kernels.Kernel {
	return PreKernelsBits(4, M, arch, full)
}

// PreKernelsBits is PreKernels for bits-wide weights (4 or 5).
func PreKernelsBits(bits, M int, arch string, full bool) []kernels.Kernel {
	return kernels.Select(kernels.Query{Family: Family, Op: PreOp(bits), M: M, Arch: arch, Full: full, Roles: []kernels.Role{kernels.Baseline, kernels.Variant}})
}

// PreArgs are the prefill kernel's buffers.
type PreArgs struct {
	W, SZ           gpu.Ptr // repacked weights, scale words
	Act, TScale, RS gpu.Ptr // codes (tiled [P,Mpad,K], or row-major [P,M,K] for PreRowMajor kernels), token scales [P,M], row sums [P,M,G]
	Out             gpu.Ptr // bf16 [M,N]
	Kernel          string  // "": the prefill baseline of PreOp(Bits)
	Bits            int     // weight width: 0 or 4, 5 (W holds RepackW5's words, Planes its planes)
	Planes          gpu.Ptr // 5-bit plane stream (Bits 5 only)
	RS16            gpu.Ptr // fp16 row sums [P, Mpad, Gp] (ZPERowSums) for FormPreZPE kernels, which read no RS
}

// PreLaunch returns the kernel, grid, block, dynamic shared memory and
// arguments of a prefill launch.
func PreLaunch(s GemmShape, M int, a PreArgs) (kernel string, grid, block gpu.Dim3, shared int, args []any, err error) {
	if err = s.Check(PreBN); err != nil {
		return
	}
	if M < 1 {
		err = fmt.Errorf("gemm: prefill M=%d", M)
		return
	}
	bits := max(a.Bits, 4)
	if bits != 4 && bits != 5 {
		err = fmt.Errorf("gemm: prefill Bits=%d, the kernels take 4 or 5", a.Bits)
		return
	}
	op := PreOp(bits)
	name := a.Kernel
	if name == "" {
		base, berr := kernels.BaselineFor(Family, op, M, "")
		if err = berr; err != nil {
			return
		}
		name = base.Name
	}
	k, ok := kernels.Lookup(name)
	if !ok || k.Family != Family || k.Op != op {
		err = fmt.Errorf("gemm: %q is not a registered %d-bit prefill kernel (op %s)", name, bits, op)
		return
	}
	kernel = k.Name
	threads := PreThreads
	rs := a.RS
	switch k.Form {
	case FormPreTiled:
	case FormPreZPE:
		rs = a.RS16
		if rs == 0 {
			err = fmt.Errorf("gemm: kernel %s reads fp16 row sums: PreArgs.RS16 is unset (ZPERowSums)", k.Name)
			return
		}
	case FormPreWGMMA:
		shared, threads = preWGShared, preWGThreads
	default:
		err = fmt.Errorf("gemm: kernel %s: prefill form %q has no launch (families/gemm/launch.go PreLaunch)", k.Name, k.Form)
		return
	}
	e0, e1 := s.Bounds()
	N := s.N()
	blocks := (M + PreBM - 1) / PreBM * (N / PreBN)
	args = []any{a.W, a.SZ, a.Act, a.TScale, rs, a.Out, uint32(M), uint32(N), uint32(s.K), e0, e1}
	if bits == 5 {
		if a.Planes == 0 {
			err = fmt.Errorf("gemm: 5-bit prefill kernel %s: no plane stream (PreArgs.Planes)", k.Name)
			return
		}
		args = append([]any{a.W, a.Planes}, args[1:]...)
	}
	return kernel, gpu.D1(blocks), gpu.D1(threads), shared, args, nil
}

// ShapeLabel renders a shape as K=.. N=a+b+c.
func (s GemmShape) String() string {
	ps := make([]string, len(s.Parts))
	for i, p := range s.Parts {
		ps[i] = fmt.Sprint(p)
	}
	return fmt.Sprintf("K=%d N=%s", s.K, strings.Join(ps, "+"))
}

// GemmLabels maps the short names the GEMM gate and benches use to the
// linears of the shapes files (package shapes).
var GemmLabels = []struct{ Label, Linear string }{
	{"qkv", "attn_qkv"}, {"o_proj", "attn_o"}, {"gate_up", "mlp_gate_up"}, {"down", "mlp_down"}, {"in_proj", "gdn_in_qkvz"},
}

// GemmShapes returns the labelled W4A8 GEMM shapes of a built-in shapes set
// ("qwen38-27b-tp2"), in GemmLabels order, optionally only those labels.
func GemmShapes(set string, only ...string) ([]string, []GemmShape, error) {
	s, err := shapes.Builtin(set)
	if err != nil {
		return nil, nil, err
	}
	return GemmShapesOf(s, only...)
}

// GemmShapesOf is GemmShapes for a loaded shapes set (a built-in one or a
// --shapes file). Every shape must meet the prefill contract (the stricter
// of the two), so a shapes file the kernels cannot take fails here, naming
// the linear, not at a launch.
func GemmShapesOf(s *shapes.Set, only ...string) ([]string, []GemmShape, error) {
	var names []string
	var out []GemmShape
	for _, l := range GemmLabels {
		if len(only) > 0 && !slices.Contains(only, l.Label) {
			continue
		}
		lin, ok := s.Linear(l.Linear)
		if !ok {
			return nil, nil, fmt.Errorf("gemm: shapes set %s has no linear %s", s.Name, l.Linear)
		}
		gs := GemmShape{K: lin.K, Parts: lin.Widths()}
		if err := gs.Check(PreBN); err != nil {
			return nil, nil, fmt.Errorf("gemm: shapes set %s, linear %s: %v", s.Name, l.Linear, err)
		}
		names = append(names, l.Label)
		out = append(out, gs)
	}
	return names, out, nil
}

// DecGateSplits are the split counts the gate launches a decode case with:
// the law's S, then S = 1 (the direct store), 3 (uneven splits) and 8 (two
// rounds of the 4-at-a-time reduce) where G allows.
func DecGateSplits(M, N, K, sms int) []int {
	law := DecSplitK(M, N, K, sms)
	Ss := []int{law}
	for _, s := range []int{1, 3, 8} {
		if s != law && s <= K/refimpl.GroupSize {
			Ss = append(Ss, s)
		}
	}
	return Ss
}

// The GEMM launch classes come in three facets per kernel, each of which
// the suites cover in every combination the domain reaches: how the grid
// and its reduction are cut (split count and reduce path, or M tiles and
// rasterization groups), how M fills the tiles (partial op or M tile, odd
// M, padding), and what the shape decides (partitions, odd G). Facets
// rather than their full product keep the derived quick suite small while
// every value of every dimension still runs on every kernel.

// shapeClass is the shape facet of a kernel's launch.
func shapeClass(kernel string, s GemmShape) string {
	return fmt.Sprintf("%s P=%d oddG=%t", kernel, len(s.Parts), s.G()%2 == 1)
}

// DecLaunchClasses names the launch-geometry classes of one decode launch:
// the split count's reduce path (none, the S = DecClusterS cluster reduce
// at the law, one round of the ws reduce, several; for the in-block
// kernels a few warps or many) and whether the last
// split holds fewer groups; whether the last 8-row op tile is partial,
// whether the kernel's op tiles are all used, odd M; partitions and odd G.
func DecLaunchClasses(kernel string, s GemmShape, M, S int, atLaw bool) []string {
	k, _ := kernels.Lookup(kernel)
	red := "S=1"
	switch {
	case S == 1:
	case k.Form == FormDecKS && S <= 4:
		red = "in-block S=2..4"
	case k.Form == FormDecKS:
		red = "in-block S>4"
	case S == DecClusterS && atLaw && k.Caps&kernels.Cluster != 0:
		red = "S=2-cluster"
	case S <= 4:
		red = "S=2..4"
	default:
		red = "S>4"
	}
	G := s.G()
	gps := (G + S - 1) / S
	tiles, maxTiles := (M+7)/8, (max(k.MaxM, 1)+7)/8
	cls := []string{
		fmt.Sprintf("%s %s unevenSplit=%t", kernel, red, G%gps != 0),
		fmt.Sprintf("%s partialOpTile=%t allOpTiles=%t oddM=%t", kernel, M%8 != 0, tiles == maxTiles, M%2 == 1),
		shapeClass(kernel, s),
	}
	if g, ok := decWPGeom[kernel]; ok {
		cls = append(cls, wpRoundClass(kernel, g, G))
	}
	return cls
}

// wpRoundClass is the round facet of a warp-specialized launch over G
// groups (rounds of g.U groups, consumer c of g.C taking rounds c, c + C,
// ...). Consumer 0's round count picks the paths of gemm_dec_wp's
// consumer loop (with two consumers: 1 the lone round, 2 the peeled pair,
// 3 one steady iteration and a lone round, 4 one and the pair, 5 or more
// several); then whether some consumer has no round, the ring wrapping
// (more rounds than stages: the producer waits on empty stages), a last
// round of fewer than U groups, and rounds not a multiple of C (the last
// consumers one round short).
func wpRoundClass(kernel string, g wpGeom, G int) string {
	nr := (G + g.U - 1) / g.U
	c0 := (nr + g.C - 1) / g.C
	rounds := fmt.Sprint(c0)
	if c0 >= 5 {
		rounds = ">=5"
	}
	return fmt.Sprintf("%s consumer0Rounds=%s consumerIdle=%t ringWraps=%t partialRound=%t unevenRounds=%t", kernel, rounds, nr < g.C, nr > g.D, G%g.U != 0, nr%g.C != 0)
}

// PreLaunchClasses names the launch-geometry classes of one prefill
// launch: one M tile, one rasterization group of them or several, whether
// the last group is partial and whether the last M tile is; for the tiled
// form whether tiled rows are padded, odd M; partitions and odd G.
func PreLaunchClasses(kernel string, s GemmShape, M int) []string {
	k, _ := kernels.Lookup(kernel)
	numM := (M + PreBM - 1) / PreBM
	tiles := "one"
	switch {
	case numM == 1:
	case numM <= PreRasterGroup:
		tiles = "one-group"
	default:
		tiles = "groups"
	}
	padded := k.Form == FormPreTiled && refimpl.PadRows(M) != M
	return []string{
		fmt.Sprintf("%s mtiles=%s partialGroup=%t partialTile=%t", kernel, tiles, numM > PreRasterGroup && numM%PreRasterGroup != 0, M%PreBM != 0),
		fmt.Sprintf("%s padded=%t oddM=%t", kernel, padded, M%2 == 1),
		shapeClass(kernel, s),
	}
}
