package producers

import (
	"fmt"

	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/refimpl"
)

// The rotate-and-quantize producers (producers.hip) and their launch
// geometry. The arguments, in order, are those of the kernel signatures;
// gates and benches call these helpers so the geometry lives in one place.
func init() {
	for _, k := range []kernels.Kernel{
		{Name: "pq_rotq_group", Op: OpGroup, Form: FormRecords, Role: kernels.Baseline, Tag: "group", Caps: kernels.PDL,
			Doc: "rotate + per-group e4m3 scales, codes and row sums for all partitions in one launch: the decode band's producer, and the plain form of the per-group prefill producer"},
		{Name: "pq_rot_bf16", Op: OpPassA, Form: FormRecords, Role: kernels.Baseline, Tag: "passA",
			Doc: "prefill pass A: rotate -> bf16 rows and per-group amax"},
		{Name: "pq_rot_bf16_lr", Op: OpPassA, Form: FormLaneRow, Role: kernels.Variant, Tag: "passA-lr",
			Doc: "prefill pass A, lanes = rows: bank-conflict-free, byte-identical to pq_rot_bf16"},
		{Name: "pq_rot_bf16_sh", Op: OpPassA, Form: FormShuffle, Role: kernels.Variant, Tag: "passA-sh",
			Doc: "prefill pass A with the row-group in registers, layers routed by 4 warp shuffles on a Go-built schedule (refimpl.BuildShuffleRecords); byte-identical to pq_rot_bf16"},
		{Name: "pq_rotq_group_sh", Op: OpGroup, Form: FormShuffle, Role: kernels.Variant, Tag: "group-sh",
			Doc: "the PG producer: per-group e4m3 scales, codes and row sums at any M (prefill included) on pq_rot_bf16_sh's conflict-free layout (values in registers, layers routed by warp shuffles on the Euler-split schedule, no layer syncs); byte-identical to pq_rotq_group"},
		{Name: "pq_tokq", Op: OpPassC, Form: FormRowWise, Role: kernels.Baseline, Tag: "passC",
			Doc: "prefill pass C: token scale, e4m3 codes (row-major or tiled), row sums from pass A's rows"},
		{Name: "pq_rotq_token", Op: OpToken, Form: FormFused, Role: kernels.Baseline, Tag: "fused",
			Doc: "fused per-token producer (pass A + pass C, row in shared memory), row-major or tiled"},
	} {
		k.Family, k.Module = Family, "producers"
		kernels.Register(k)
	}
}

// Family is this folder's name in the registry.
const Family = "producers"

// The producers' Ops: what each computes (kernels of one Op are checked
// against the same mirror output).
const (
	OpGroup = "group" // bf16 rows -> rotated per-group e4m3 codes, group scales, row sums (decode band)
	OpPassA = "passA" // bf16 rows -> rotated bf16 rows and per-group amaxes
	OpPassC = "passC" // pass A's rows and amaxes -> per-token codes, token scales, row sums
	OpToken = "token" // bf16 rows -> per-token codes, token scales, row sums (fused pass A + pass C)
)

// Launch forms: the geometry and argument list (ProducerLaunch).
const (
	FormRecords = "records" // group-wise grid, rotation records (Idx, CS, ChS), rows per warp
	FormLaneRow = "lanerow" // (G, P, 64-row chunks), 64 threads, rotation records
	FormShuffle = "shuffle" // group-wise grid, shuffle-routed records (ShCtrl, ShCS, ShFin, ChS)
	FormRowWise = "rowwise" // one block per row and partition, reads pass A's outputs
	FormFused   = "fused"   // one block per row and partition, rotation records, K <= MaxK
)

// GroupMaxM is the top of the decode band, where the W4A8 GEMMs read the
// per-group producer's codes; above it the per-group producers
// (pq_rotq_group and the PG form) serve the per-group prefill path.
const GroupMaxM = 128

// Producer geometry constants (producers.hip; TestGoConstantsMatchKernelDefines ties them).
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

// ProducerBufs are the device buffers a producer launch may take; each
// kernel uses the ones its signature names (ProducerLaunch).
type ProducerBufs struct {
	X                   gpu.Ptr // bf16 rows [M, K]
	Idx, CS, ChS        gpu.Ptr // rotation records and channel scales (refimpl.RotRecords)
	ShCtrl, ShCS, ShFin gpu.Ptr // shuffle-routed records (refimpl.ShuffleRecords); ChS as above
	Codes, Scale, RSum  gpu.Ptr // e4m3 codes, scales (per group or per token), row sums
	XR, GAmax           gpu.Ptr // pass A's bf16 rows and group amaxes
}

// ProducerLaunch is the one place a producer's geometry and argument list
// are written: gates and benches launch through it. rpw is the rows per
// warp of the group-wise kernels (0: RowsPerWarp's); tiled picks the
// fragment-tiled code layout of pq_tokq and pq_rotq_token.
func ProducerLaunch(kernel string, M, K, P, rpw int, tiled bool, b ProducerBufs) (grid, block gpu.Dim3, args []any, err error) {
	if rpw == 0 {
		rpw = RowsPerWarp(M)
	}
	m, kk, r, t := uint32(M), uint32(K), uint32(rpw), uint32(0)
	if tiled {
		t = 1
	}
	k, ok := kernels.Lookup(kernel)
	if !ok || k.Family != Family {
		err = fmt.Errorf("ProducerLaunch: %q is not a registered producer kernel", kernel)
		return
	}
	switch {
	case k.Op == OpGroup && k.Form == FormRecords:
		grid, block = GroupWiseGrid(M, K, P, rpw)
		args = []any{b.X, b.Idx, b.CS, b.ChS, b.Codes, b.Scale, b.RSum, m, kk, r}
	case k.Op == OpGroup && k.Form == FormShuffle:
		grid, block = GroupWiseGrid(M, K, P, rpw)
		args = []any{b.X, b.ShCtrl, b.ShCS, b.ShFin, b.ChS, b.Codes, b.Scale, b.RSum, m, kk, r}
	case k.Op == OpPassA && k.Form == FormRecords:
		grid, block = GroupWiseGrid(M, K, P, rpw)
		args = []any{b.X, b.Idx, b.CS, b.ChS, b.XR, b.GAmax, m, kk, r}
	case k.Op == OpPassA && k.Form == FormShuffle:
		grid, block = GroupWiseGrid(M, K, P, rpw)
		args = []any{b.X, b.ShCtrl, b.ShCS, b.ShFin, b.ChS, b.XR, b.GAmax, m, kk, r}
	case k.Op == OpPassA && k.Form == FormLaneRow:
		grid, block = LaneRowGrid(M, K, P)
		args = []any{b.X, b.Idx, b.CS, b.ChS, b.XR, b.GAmax, m, kk}
	case k.Op == OpPassC && k.Form == FormRowWise:
		grid, block = RowWiseGrid(M, P, tiled)
		args = []any{b.XR, b.GAmax, b.Codes, b.Scale, b.RSum, m, kk, t}
	case k.Op == OpToken && k.Form == FormFused:
		if err = FusedTokenCheck(K); err != nil {
			return
		}
		grid, block = RowWiseGrid(M, P, tiled)
		args = []any{b.X, b.Idx, b.CS, b.ChS, b.Codes, b.Scale, b.RSum, m, kk, t}
	default:
		err = fmt.Errorf("ProducerLaunch: kernel %s: op %q has no launch form %q (families/producers/launch.go)", kernel, k.Op, k.Form)
	}
	return
}

// LaunchClasses names the launch-geometry classes one producer launch
// exercises, derived from its grid and block (ProducerLaunch): the kernel,
// threads per block, rows per warp, one row chunk or many and whether the
// last is partial, odd M, odd G, one partition or several, and for the
// row-wise kernels whether the tiled layout pads rows. Coverage of these
// is what the quick suite is built from (quickCases).
func LaunchClasses(kernel string, M, K, P int) ([]string, error) {
	k, ok := kernels.Lookup(kernel)
	if !ok {
		return nil, fmt.Errorf("LaunchClasses: %q is not registered", kernel)
	}
	grid, block, _, err := ProducerLaunch(kernel, M, K, P, 0, false, ProducerBufs{})
	if err != nil {
		return nil, err
	}
	switch k.Form {
	case FormRecords, FormShuffle, FormLaneRow:
		rows := 64 // lanes = rows
		rpw := 0
		if k.Form != FormLaneRow {
			rpw = RowsPerWarp(M)
			rows = int(block.X) / 32 * rpw
		}
		return []string{GroupWiseClass(kernel, grid, block, M, K, P, rpw, rows)}, nil
	case FormRowWise, FormFused:
		return []string{RowWiseClass(kernel, grid, block, M, K, P)}, nil
	}
	return nil, fmt.Errorf("LaunchClasses: kernel %s: form %q has no classes", kernel, k.Form)
}

// GroupWiseClass is the class of a group-wise producer launch (grid.Z row
// chunks of rows rows, rpw rows a warp): threads per block, rpw, one
// chunk or many and whether the last is partial, then geometryTail.
func GroupWiseClass(kernel string, grid, block gpu.Dim3, M, K, P, rpw, rows int) string {
	return fmt.Sprintf("%s threads=%d rpw=%d chunks=%s partial=%t %s", kernel, block.X, rpw, oneOrMany(grid.Z), M%rows != 0, geometryTail(M, K, P))
}

// RowWiseClass is the class of a row-wise producer launch (grid.X row
// blocks): threads per block, one row block or many and whether the tiled
// layout pads rows, then geometryTail.
func RowWiseClass(kernel string, grid, block gpu.Dim3, M, K, P int) string {
	return fmt.Sprintf("%s threads=%d rows=%s padded=%t %s", kernel, block.X, oneOrMany(grid.X), refimpl.PadRows(M) != M, geometryTail(M, K, P))
}

// geometryTail is what every producer class ends with: odd M, odd G, one
// partition or several.
func geometryTail(M, K, P int) string {
	return fmt.Sprintf("oddM=%t oddG=%t P=%s", M%2 == 1, (K/Group)%2 == 1, map[bool]string{true: "1", false: ">1"}[P == 1])
}

func oneOrMany(n uint32) string {
	if n == 1 {
		return "one"
	}
	return "many"
}

// GroupProducer is the law choosing the per-group producer for M rows on
// a code arch: the PG form (pq_rotq_group_sh, conflict-free, no layer
// syncs) on gfx1201, where the source log measured the ownership layout
// 1.9x faster, and on sm_90a at prefill M (> GroupMaxM), where it took
// 0.63-0.72x the plain form's time on every deployed (K, P) at M = 512 and
// 2048 (bench2 pg, H200, 2026-12-02, results/h200-2026-12-02); the plain
// pq_rotq_group in the sm_90a decode band, where the PG form has no H200
// figure yet (bench2 grpq times both).
func GroupProducer(codeArch string, M int) string {
	if codeArch == "gfx1201" || M > GroupMaxM {
		return "pq_rotq_group_sh"
	}
	return "pq_rotq_group"
}
