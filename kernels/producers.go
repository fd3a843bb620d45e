package kernels

import (
	"fmt"

	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/refimpl"
)

// The rotate-and-quantize producers (hipsrc/producers.hip) and their launch
// geometry. The arguments, in order, are those of the kernel signatures;
// gates and benches call these helpers so the geometry lives in one place.
func init() {
	for _, k := range []Kernel{
		{Name: "pq_rotq_group", Module: "producers", Doc: "decode band: rotate + per-group e4m3 scales, codes and row sums for all partitions in one launch"},
		{Name: "pq_rot_bf16", Module: "producers", Doc: "prefill pass A: rotate -> bf16 rows and per-group amax"},
		{Name: "pq_rot_bf16_lr", Module: "producers", Doc: "prefill pass A, lanes = rows: bank-conflict-free, byte-identical to pq_rot_bf16"},
		{Name: "pq_rot_bf16_sh", Module: "producers", Doc: "prefill pass A with the row-group in registers, layers routed by 4 warp shuffles on a Go-built schedule (refimpl.BuildShuffleRecords); byte-identical to pq_rot_bf16; grid as GroupWiseGrid"},
		{Name: "pq_tokq", Module: "producers", Doc: "prefill pass C: token scale, e4m3 codes (row-major or tiled), row sums"},
		{Name: "pq_rotq_token", Module: "producers", Doc: "fused per-token producer (pass A + pass C, row in shared memory), row-major or tiled"},
	} {
		Register(k)
	}
}

// Producer geometry constants (hipsrc/producers.hip).
const (
	ProducerWarps = 8     // warps per block
	ProducerMaxK  = 17408 // MAXK: largest K the fused per-token producer parks in shared memory
	// DecodeSingleWarpM is the largest M launched with one-warp blocks
	// (bench2 grpq on the H200, 2026-11-29).
	DecodeSingleWarpM = 64
	Group             = refimpl.GroupSize
)

// RowsPerWarp picks how many rows a warp of the group-wise kernels
// (pq_rotq_group, pq_rot_bf16) handles: its rotation records are loaded
// once and reused for every row.
func RowsPerWarp(M int) int {
	switch {
	case M <= 64:
		return 1
	case M <= 1024:
		return 4
	default:
		return 16
	}
}

// GroupWiseGrid is the grid of pq_rotq_group and pq_rot_bf16: (G, P, row
// chunks). In the decode band (M <= DecodeSingleWarpM) every block is one
// warp, so a group's rows spread over many SMs instead of queueing on one
// SM's shared-memory pipe; above it, ProducerWarps warps share a block.
func GroupWiseGrid(M, K, P, rpw int) (grid, block gpu.Dim3) {
	warps := ProducerWarps
	if M <= DecodeSingleWarpM {
		warps = 1
	}
	rows := warps * rpw
	return gpu.Dim3{X: uint32(K / Group), Y: uint32(P), Z: uint32((M + rows - 1) / rows)}, gpu.D1(32 * warps)
}

// RowWiseGrid is the grid of pq_tokq and pq_rotq_token: one block of
// ProducerWarps warps per row (per padded row when tiled) and partition.
// The kernels stride over the row's groups by that constant, so the block
// must be exactly this size.
func RowWiseGrid(M, P int, tiled bool) (grid, block gpu.Dim3) {
	rows := M
	if tiled {
		rows = refimpl.PadRows(M)
	}
	return gpu.Dim3{X: uint32(rows), Y: uint32(P), Z: 1}, gpu.D1(32 * ProducerWarps)
}

// FusedTokenCheck is the fused per-token producer's contract: it parks a
// whole row in shared memory sized for ProducerMaxK, and the kernel does
// not check K itself (a larger K would overrun shared memory).
func FusedTokenCheck(K int) error {
	if K <= 0 || K%Group != 0 || K > ProducerMaxK {
		return fmt.Errorf("pq_rotq_token: K=%d, want a positive multiple of %d up to MAXK=%d", K, Group, ProducerMaxK)
	}
	return nil
}

// LaneRowGrid is the grid of pq_rot_bf16_lr: (G, P, 64-row chunks), 64 threads.
func LaneRowGrid(M, K, P int) (grid, block gpu.Dim3) {
	return gpu.Dim3{X: uint32(K / Group), Y: uint32(P), Z: uint32((M + 63) / 64)}, gpu.D1(64)
}
