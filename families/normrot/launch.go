// Package normrot gates and benches the norm-fed rotate-and-quantize
// producers (normrot.hip): the decoder layer's residual add and Gemma
// RMSNorm (vLLM's op order and rounding points) fused with the producers'
// channel scale, Givens rotation and e4m3 quantization, so a norm-fed
// linear gets its activations from one launch instead of two. The unfused
// chain (pq_addnorm, then the producers family's kernels on its hs) is
// what the gate proves the fused kernels equal byte for byte and what the
// benches time them against.
package normrot

import (
	"fmt"

	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/refimpl"
)

// Family is this folder's name in the registry.
const Family = "normrot"

// The family's Ops.
const (
	OpNorm  = "addnorm"   // x, residual, w -> hs, residual' (the unfused chain's first launch)
	OpGroup = "normgroup" // + per-group codes, group scales, row sums for all partitions (decode band)
	OpToken = "normtoken" // + per-token codes (row-major or tiled), token scales, row sums
)

// Launch forms (Launch).
const (
	FormRowNorm = "rownorm" // one 256-thread block per row
	FormItems   = "items"   // (ceil(P*G / 8), M) blocks of 8 warps, a warp per (partition, group)
	FormToken   = "token"   // one block per row (padded row when tiled) and partition, Waves warps
)

// Geometry constants (normrot.hip; TestGoConstantsMatchKernelDefines ties them).
const (
	MaxK        = 12288 // NR_MAXK: the largest K whose row the kernels park in shared memory
	DecodeWarps = 8     // NR_DECODE_WARPS: warps (items) per decode block
	NormWarps   = 8     // warps per pq_addnorm block
	GroupMaxM   = 128   // the decode band the per-group kernel serves
	Group       = refimpl.GroupSize
)

// Eps is the RMSNorm epsilon the gate and benches launch with (the
// rms_norm_eps of the Qwen3 configs; any float32 is a valid argument).
const Eps float32 = 1e-6

// WaveChoices are the per-token kernel's block sizes, in warps per row.
var WaveChoices = []int{8, 16, 32}

// TokenKernel is the per-token kernel compiled for waves warps per block.
func TokenKernel(waves int) string { return fmt.Sprintf("pq_addnorm_rotq_token_w%d", waves) }

func init() {
	ks := []kernels.Kernel{
		{Name: "pq_addnorm", Op: OpNorm, Form: FormRowNorm, Role: kernels.Baseline, Tag: "norm",
			Doc: "residual add + Gemma RMSNorm alone -> hs, residual (the unfused chain's first launch)"},
		{Name: "pq_addnorm_rotq_group", Op: OpGroup, Form: FormItems, MaxM: GroupMaxM, Role: kernels.Baseline, Tag: "fused",
			Doc: "decode band: residual add + Gemma RMSNorm + rotate + per-group e4m3 for all partitions in one launch -> hs, residual, codes, scales, row sums"},
	}
	for i, w := range WaveChoices {
		role := kernels.Variant
		if i == 0 {
			role = kernels.Baseline
		}
		var targets []string
		if w > MaxWaves(kernels.SM90a) {
			targets = []string{kernels.GFX1201}
		}
		ks = append(ks, kernels.Kernel{Name: TokenKernel(w), Op: OpToken, Form: FormToken, Role: role, Tag: fmt.Sprintf("w%d", w), Targets: targets,
			Doc: fmt.Sprintf("prefill per token, %d warps per row: residual add + Gemma RMSNorm + rotate + per-token e4m3 (row-major or tiled)", w)})
	}
	for _, k := range ks {
		k.Family, k.Module = Family, "normrot"
		kernels.Register(k)
	}
}

// WavesPerRow is the per-token kernel's block size for M rows of K: the
// rule of the source log (issue 15, item 3): few rows want many warps per
// row to keep the loads in flight, many rows want small blocks so more
// rows share an SM; a long row (K >= 8192) keeps 16 above M = 64. Scored
// by bench2 tokstream's regret table.
func WavesPerRow(M, K int) int {
	switch {
	case M <= 16:
		return 32
	case M <= 64:
		return 16
	case K >= 8192:
		return 16
	default:
		return 8
	}
}

// MaxWaves is the largest per-token block a target has, in warps: 32 on
// gfx1201; 16 on sm_90a, where a 1024-thread block leaves 64 registers a
// thread and the 32-warp form spilled 136 bytes of local memory
// (resources-device on the H200, 2026-12-02), so it is not built there.
func MaxWaves(codeArch string) int {
	if codeArch == kernels.SM90a {
		return 16
	}
	return 32
}

// WavesPerRowOn is the per-token block for M rows of K in P partitions on
// a target of sms multiprocessors. gfx1201: the source log's rule
// (WavesPerRow). sm_90a, derived from the kernel's grid of M·P blocks
// (bench2 tokstream, H200, 2026-12-02, results/h200-2026-12-02): 16 warps
// while the grid holds at most one block per SM, where a row's loads are
// all the SM has in flight and twice the warps keep twice the bytes in
// flight; else 8, where more resident blocks per SM hide the latency and
// the larger block only adds barrier waits. The source rule capped at 16
// warps scored +5.1% there (its K >= 8192 branch and M = 64 at P = 3 lost
// to 8 warps by 10.7-14.8%); this rule picks the measured best in all 15
// cells of that run, which derived it (in sample).
func WavesPerRowOn(codeArch string, M, K, P, sms int) int {
	if codeArch != kernels.SM90a {
		return min(WavesPerRow(M, K), MaxWaves(codeArch))
	}
	if M*P <= sms {
		return 16
	}
	return 8
}

// ShapeCheck is the kernels' contract on K: whole 128-groups, and a row
// that fits the shared-memory row buffer (the kernels do not check it).
func ShapeCheck(K int) error {
	if K <= 0 || K%Group != 0 || K > MaxK {
		return fmt.Errorf("normrot: K=%d, want a positive multiple of %d up to NR_MAXK=%d (normrot.hip)", K, Group, MaxK)
	}
	return nil
}

// Bufs are the device buffers of a launch; each kernel uses the ones its
// signature names.
type Bufs struct {
	X, Res, W          gpu.Ptr // bf16 x [M,K], residual [M,K], norm weight [K]
	Idx, CS, ChS       gpu.Ptr // rotation records and channel scales (refimpl.RotRecords)
	HS, ResOut         gpu.Ptr // bf16 hs [M,K] and residual' [M,K]
	Codes, Scale, RSum gpu.Ptr // e4m3 codes, scales (per group or per token), row sums
}

// Launch is the one place the family's geometry and argument lists are
// written. waves is the per-token kernel's block size (0: WavesPerRow's,
// and it must match the kernel's name otherwise); tiled picks the
// fragment-tiled code layout of the per-token kernels.
func Launch(kernel string, M, K, P int, tiled bool, eps float32, b Bufs) (grid, block gpu.Dim3, args []any, err error) {
	k, ok := kernels.Lookup(kernel)
	if !ok || k.Family != Family {
		err = fmt.Errorf("normrot.Launch: %q is not a registered normrot kernel", kernel)
		return
	}
	if err = ShapeCheck(K); err != nil {
		return
	}
	m, kk, t := uint32(M), uint32(K), uint32(0)
	if tiled {
		t = 1
	}
	switch k.Form {
	case FormRowNorm:
		grid, block = gpu.Dim3{X: m, Y: 1, Z: 1}, gpu.D1(32*NormWarps)
		args = []any{b.X, b.Res, b.W, b.HS, b.ResOut, m, kk, eps}
	case FormItems:
		grid, block = ItemsGrid(M, K, P)
		args = []any{b.X, b.Res, b.W, b.Idx, b.CS, b.ChS, b.HS, b.ResOut, b.Codes, b.Scale, b.RSum, m, kk, uint32(P), eps}
	case FormToken:
		var waves int
		if _, err = fmt.Sscanf(k.Tag, "w%d", &waves); err != nil {
			err = fmt.Errorf("normrot.Launch: kernel %s: tag %q names no warp count", kernel, k.Tag)
			return
		}
		grid, block = TokenGrid(M, P, waves, tiled)
		args = []any{b.X, b.Res, b.W, b.Idx, b.CS, b.ChS, b.HS, b.ResOut, b.Codes, b.Scale, b.RSum, m, kk, t, eps}
	default:
		err = fmt.Errorf("normrot.Launch: kernel %s: form %q has no launch (families/normrot/launch.go)", kernel, k.Form)
	}
	return
}

// ItemsGrid is the decode kernel's grid: DecodeWarps (partition, group)
// items per block, ceil(P*G / DecodeWarps) blocks per row, a row per y.
func ItemsGrid(M, K, P int) (grid, block gpu.Dim3) {
	items := P * K / Group
	return gpu.Dim3{X: uint32((items + DecodeWarps - 1) / DecodeWarps), Y: uint32(M), Z: 1}, gpu.D1(32 * DecodeWarps)
}

// TokenGrid is the per-token kernels' grid: a block of waves warps per row
// (per padded row when tiled) and partition.
func TokenGrid(M, P, waves int, tiled bool) (grid, block gpu.Dim3) {
	rows := M
	if tiled {
		rows = refimpl.PadRows(M)
	}
	return gpu.Dim3{X: uint32(rows), Y: uint32(P), Z: 1}, gpu.D1(32 * waves)
}

// LaunchClasses names the launch-geometry classes of one launch: the
// kernel, its block, for the decode kernel one block per row or several
// and whether the last block has idle warps, for the per-token kernels
// whether the warps stride over the row more than once and the tiled
// layout pads rows, and for all odd M, odd G, one partition or several.
// The gate's cases are built to reach every class (gateCases).
func LaunchClasses(kernel string, M, K, P int) ([]string, error) {
	k, ok := kernels.Lookup(kernel)
	if !ok || k.Family != Family {
		return nil, fmt.Errorf("normrot.LaunchClasses: %q is not a registered normrot kernel", kernel)
	}
	grid, block, _, err := Launch(kernel, M, K, P, false, Eps, Bufs{})
	if err != nil {
		return nil, err
	}
	G := K / Group
	many := func(n int) string {
		if n == 1 {
			return "one"
		}
		return "many"
	}
	common := fmt.Sprintf("oddM=%t oddG=%t P=%s", M%2 == 1, G%2 == 1, map[bool]string{true: "1", false: ">1"}[P == 1])
	warps := int(block.X) / 32
	switch k.Form {
	case FormRowNorm:
		return []string{fmt.Sprintf("%s strides=%s rows=%s %s", kernel, many((G+warps-1)/warps), many(M), common)}, nil
	case FormItems:
		return []string{fmt.Sprintf("%s blocks/row=%s idle=%t rows=%s %s", kernel, many(int(grid.X)), (P*G)%DecodeWarps != 0, many(M), common)}, nil
	case FormToken:
		return []string{fmt.Sprintf("%s strides=%s padded=%t rows=%s %s", kernel, many((G+warps-1)/warps), refimpl.PadRows(M) != M, many(M), common)}, nil
	}
	return nil, fmt.Errorf("normrot.LaunchClasses: kernel %s: form %q has no classes", kernel, k.Form)
}
