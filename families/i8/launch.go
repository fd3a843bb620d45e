// Package i8 is the I8 mode of the W4A8 path: int8 activations with
// per-group or per-token scales (i8prod.hip) and the decode GEMMs that take
// them on the integer matrix op (i8gemm.hip), against int4 AWQ weights.
//
// The model. A producer rotates the bf16 activations exactly as the e4m3
// producers do (the shared blocks of hipsrc/rot/rotq.h) and quantizes them
// symmetrically to int8: scale = amax/127, code = clamp(rne(v/scale),
// -127, 127), with the int32 sum of each 128-group's codes (the zero-point
// term of the GEMM). The GEMM sums a·q per group in int32 on the integer
// op, subtracts z·rs in int32, and folds each group into fp32 with two
// roundings: y = Σ_g sa·(s·float(Σa·q − z·rs)). The integer part is exact,
// so the gate's bound holds only the fold's and the bf16 output's
// roundings (gemmElemBound).
//
// The producers' launch geometry is that of the e4m3 producers (the same
// work split; families/producers GroupWiseGrid, RowWiseGrid); the GEMM's
// grid is that of the e4m3 decode GEMM (N/64 column blocks x S splits,
// 128 threads), and its split-K law is the e4m3 decode law
// (gemm.DecSplitK): the same weight stream over the same grid.
package i8

import (
	"fmt"

	"github.com/parharness/parharness/families/gemm"
	"github.com/parharness/parharness/families/producers"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/refimpl"
)

// Family is this folder's name in the registry.
const Family = "i8"

// The I8 Ops: what each computes (kernels of one Op are checked against
// the same mirror output or reference).
const (
	OpGroup = "group" // bf16 rows -> rotated per-group int8 codes, group scales, int32 row sums (decode band)
	OpPassC = "passC" // pass A's bf16 rows and amaxes -> per-token int8 codes, token scales, int32 row sums
	OpToken = "token" // bf16 rows -> per-token int8 codes, token scales, int32 row sums (fused pass A + pass C)
	OpDec   = "dec"   // decode-band GEMM on int8 codes: bf16 [M, N]
	OpPre   = "pre"   // per-token prefill GEMM on tiled int8 codes: bf16 [M, N]
)

// Launch forms (ProducerLaunch, DecLaunch).
const (
	FormRecords  = "records" // group-wise grid, rotation records, rows per warp
	FormRowWise  = "rowwise" // one block per row and partition, reads pass A's outputs
	FormFused    = "fused"   // one block per row and partition, rotation records, K <= producers.ProducerMaxK
	FormDec      = "dec"     // grid (N/64, S), 128 threads
	FormPreTiled = "tiled"   // grid ceil(M/128)·N/128, 256 threads, tiled activations [P, Mpad, K]
)

// Matrix instructions the ISA gates look for inside each I8 GEMM's loop.
const (
	MatrixOpMMAU8S8 = "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32" // sm_90a: weights unsigned 0..15, activations signed
	MatrixOpWMMAIU8 = "v_wmma_i32_16x16x16_iu8"                         // gfx1201: the integer WMMA
	MatrixOpMMAS8U8 = "mma.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32" // sm_90a prefill: activations signed (A), weights unsigned (B)
)

// Geometry constants (i8prod.hip, i8gemm.hip; TestGoConstantsMatchKernelDefines ties them).
const (
	Warps      = 8     // WARPS: warps per producer block
	MaxK       = 17408 // MAXK of the fused per-token producer
	DecBN      = 64    // DEC_BN: columns per GEMM block
	DecThreads = 128   // 32 * DEC_WARPS
	DecMaxM    = 64
	ARCap      = 2048 // AR_CAP: (m, group) pairs of sa and rs staged in shared memory
	Int8Max    = refimpl.Int8Max
)

func init() {
	mma := map[string]string{kernels.SM90a: MatrixOpMMAU8S8, kernels.GFX1201: MatrixOpWMMAIU8}
	mma90 := map[string]string{kernels.SM90a: MatrixOpMMAU8S8}
	sm90 := []string{kernels.SM90a}
	for _, k := range []kernels.Kernel{
		{Name: "pq_i8_group", Module: "i8prod", Op: OpGroup, Form: FormRecords, MaxM: producers.GroupMaxM, Role: kernels.Baseline, Tag: "i8-group",
			Doc: "decode band: rotate + per-group int8 codes (amax/127, round half to even, clamp ±127), group scales and int32 row sums for all partitions in one launch"},
		{Name: "pq_i8_tokq", Module: "i8prod", Op: OpPassC, Form: FormRowWise, Role: kernels.Baseline, Tag: "i8-passC",
			Doc: "prefill pass C: per-token int8 codes (row-major or tiled), token scales, int32 row sums from pass A's rows and amaxes"},
		{Name: "pq_i8_token", Module: "i8prod", Op: OpToken, Form: FormFused, Role: kernels.Baseline, Tag: "i8-fused",
			Doc: "fused per-token int8 producer (pass A + int8 pass C, row in shared memory), row-major or tiled; byte-identical to pq_rot_bf16 then pq_i8_tokq"},
		{Name: "pq_i8_gemm_dec_m8", Module: "i8gemm", Op: OpDec, Form: FormDec, MinM: 1, MaxM: 8, Role: kernels.Baseline, Tag: "i8-dec", MatrixOp: mma,
			Doc: "decode-band I8 GEMM, M <= 8: int8 activations x int4 weights on the integer op (int32 per group, zero point in int32), fp32 fold, split-K with a deterministic in-kernel reduce"},
		{Name: "pq_i8_gemm_dec_m16", Module: "i8gemm", Op: OpDec, Form: FormDec, MinM: 9, MaxM: 16, Role: kernels.Baseline, Tag: "i8-dec", MatrixOp: mma,
			Doc: "decode-band I8 GEMM, 8 < M <= 16 (two 8-row op tiles)"},
		{Name: "pq_i8_gemm_dec_m32", Module: "i8gemm", Op: OpDec, Form: FormDec, MinM: 17, MaxM: 32, Role: kernels.Baseline, Tag: "i8-dec", MatrixOp: mma,
			Doc: "decode-band I8 GEMM, 16 < M <= 32 (four 8-row op tiles)"},
		{Name: "pq_i8_gemm_dec_m64", Module: "i8gemm", Op: OpDec, Form: FormDec, MinM: 33, MaxM: 64, Role: kernels.Baseline, Tag: "i8-dec", MatrixOp: mma,
			Doc: "decode-band I8 GEMM, 32 < M <= 64 (eight 8-row op tiles)"},
		{Name: "pq_i8_gemm_dec_st_m8", Module: "i8gemm", Op: OpDec, Form: FormDec, MinM: 1, MaxM: 8, Role: kernels.Variant, Tag: "i8-staged", Targets: sm90, MatrixOp: mma90,
			Doc: "sm_90a: the I8 decode GEMM with activations, scales and row sums staged by cp.async in double-buffered chunks, a predicated weight stream and per-warp split-K counters (the e4m3 staged body's structure); bit-identical to pq_i8_gemm_dec_m8"},
		{Name: "pq_i8_gemm_dec_st_m16", Module: "i8gemm", Op: OpDec, Form: FormDec, MinM: 9, MaxM: 16, Role: kernels.Variant, Tag: "i8-staged", Targets: sm90, MatrixOp: mma90,
			Doc: "sm_90a: staged I8 decode GEMM, 8 < M <= 16"},
		{Name: "pq_i8_gemm_dec_st_m32", Module: "i8gemm", Op: OpDec, Form: FormDec, MinM: 17, MaxM: 32, Role: kernels.Variant, Tag: "i8-staged", Targets: sm90, MatrixOp: mma90,
			Doc: "sm_90a: staged I8 decode GEMM, 16 < M <= 32"},
		{Name: "pq_i8_gemm_dec_st_m64", Module: "i8gemm", Op: OpDec, Form: FormDec, MinM: 33, MaxM: 64, Role: kernels.Variant, Tag: "i8-staged", Targets: sm90, MatrixOp: mma90,
			Doc: "sm_90a: staged I8 decode GEMM, 32 < M <= 64"},
		{Name: "pq_i8_gemm_pre", Module: "i8gemm", Op: OpPre, Form: FormPreTiled, Role: kernels.Baseline, Tag: "i8-pre", Status: kernels.Experimental,
			MatrixOp: map[string]string{kernels.SM90a: MatrixOpMMAS8U8, kernels.GFX1201: MatrixOpWMMAIU8},
			Doc:      "per-token prefill I8 GEMM: fragment-tiled int8 activations (pq_i8_tokq / pq_i8_token tiled), token scales, int32 row sums; the e4m3 prefill GEMM's 128x128 tiles and stages on the integer op, one fma fold per group, As in the epilogue (experimental: not yet run on a device)"},
	} {
		k.Family = Family
		kernels.Register(k)
	}
}

// ProducerBufs are the device buffers an I8 producer launch may take.
type ProducerBufs struct {
	X            gpu.Ptr // bf16 rows [M, K]
	Idx, CS, ChS gpu.Ptr // rotation records and channel scales (refimpl.RotRecords)
	XR, GAmax    gpu.Ptr // pass A's bf16 rows and group amaxes (pass C's inputs)
	Codes        gpu.Ptr // int8 codes
	Scale        gpu.Ptr // f32 scales, per group [P,M,G] or per token [P,M]
	RSum         gpu.Ptr // int32 row sums [P,M,G]
}

// ProducerLaunch is the one place an I8 producer's geometry and argument
// list are written. rpw is the rows per warp of pq_i8_group (0:
// producers.RowsPerWarp's); tiled picks the fragment-tiled code layout of
// the per-token kernels.
func ProducerLaunch(kernel string, M, K, P, rpw int, tiled bool, b ProducerBufs) (grid, block gpu.Dim3, args []any, err error) {
	if rpw == 0 {
		rpw = producers.RowsPerWarp(M)
	}
	k, ok := kernels.Lookup(kernel)
	if !ok || k.Family != Family {
		err = fmt.Errorf("i8.ProducerLaunch: %q is not a registered I8 kernel", kernel)
		return
	}
	if K <= 0 || K%refimpl.GroupSize != 0 || M < 1 || P < 1 || P > refimpl.MaxRotationsPerLaunch {
		err = fmt.Errorf("i8.ProducerLaunch: %s: M=%d K=%d P=%d, want M >= 1, K a positive multiple of %d, P in 1..%d", kernel, M, K, P, refimpl.GroupSize, refimpl.MaxRotationsPerLaunch)
		return
	}
	m, kk, r, t := uint32(M), uint32(K), uint32(rpw), uint32(0)
	if tiled {
		t = 1
	}
	switch {
	case k.Op == OpGroup && k.Form == FormRecords:
		if M > producers.GroupMaxM {
			err = fmt.Errorf("i8.ProducerLaunch: %s serves M <= %d, not M=%d", kernel, producers.GroupMaxM, M)
			return
		}
		grid, block = producers.GroupWiseGrid(M, K, P, rpw)
		args = []any{b.X, b.Idx, b.CS, b.ChS, b.Codes, b.Scale, b.RSum, m, kk, r}
	case k.Op == OpPassC && k.Form == FormRowWise:
		grid, block = producers.RowWiseGrid(M, P, tiled)
		args = []any{b.XR, b.GAmax, b.Codes, b.Scale, b.RSum, m, kk, t}
	case k.Op == OpToken && k.Form == FormFused:
		if K > MaxK {
			err = fmt.Errorf("i8.ProducerLaunch: %s: K=%d above MAXK=%d (the row is parked in shared memory)", kernel, K, MaxK)
			return
		}
		grid, block = producers.RowWiseGrid(M, P, tiled)
		args = []any{b.X, b.Idx, b.CS, b.ChS, b.Codes, b.Scale, b.RSum, m, kk, t}
	default:
		err = fmt.Errorf("i8.ProducerLaunch: kernel %s: op %q has no producer launch form %q (families/i8/launch.go)", kernel, k.Op, k.Form)
	}
	return
}

// ProducerClasses names the launch-geometry classes of one producer launch
// (grid and block from ProducerLaunch): threads per block, rows per warp,
// one row chunk or many and a partial last one (group-wise); one row or
// many and padded tiled rows (row-wise); odd M, odd G, one partition or
// several.
func ProducerClasses(kernel string, M, K, P int) ([]string, error) {
	k, ok := kernels.Lookup(kernel)
	if !ok || k.Family != Family {
		return nil, fmt.Errorf("i8.ProducerClasses: %q is not a registered I8 kernel", kernel)
	}
	grid, block, _, err := ProducerLaunch(kernel, M, K, P, 0, false, ProducerBufs{})
	if err != nil {
		return nil, err
	}
	switch k.Form {
	case FormRecords:
		rpw := producers.RowsPerWarp(M)
		return []string{producers.GroupWiseClass(kernel, grid, block, M, K, P, rpw, int(block.X)/32*rpw)}, nil
	case FormRowWise, FormFused:
		return []string{producers.RowWiseClass(kernel, grid, block, M, K, P)}, nil
	}
	return nil, fmt.Errorf("i8.ProducerClasses: kernel %s: form %q has no classes", kernel, k.Form)
}

// DecArgs are an I8 decode GEMM launch's buffers.
type DecArgs struct {
	W, SZ        gpu.Ptr // repacked weights (refimpl.RepackW4), scale words
	Act, ASG, RS gpu.Ptr // int8 codes [P,M,K], group scales f32 and row sums i32 [P,M,G]
	Out          gpu.Ptr // bf16 [M,N]
	WS           gpu.Ptr // fp32 [S,M,N] (unused when S = 1)
	Sema         gpu.Ptr // u32 [N/16] (DecSemaBytes), zero before the first launch
	Kernel       string  // "": the baseline serving M
}

// DecKernel names the I8 decode baseline serving M.
func DecKernel(M int) (string, error) {
	k, err := kernels.BaselineFor(Family, OpDec, M, "")
	if err != nil {
		return "", err
	}
	return k.Name, nil
}

// DecSplitK is the I8 decode law: the e4m3 decode law (gemm.DecSplitK),
// since the grid and the weight stream, which set the parallelism a
// decode GEMM needs, are the same.
func DecSplitK(M, N, K, sms int) int { return gemm.DecSplitK(M, N, K, sms) }

// DecWorkspaceBytes is the split-K workspace a launch at S needs.
func DecWorkspaceBytes(M, N, S int) int { return gemm.DecWorkspaceBytes(M, N, S) }

// DecSemaBytes is the size of the split-K counters: one per 16-column warp
// tile (the staged kernels count per warp tile; the per-warp bodies per
// 64-column block and use the first N/64).
func DecSemaBytes(N int) int { return 4 * (N / 16) }

// DecKernels are the registered I8 decode kernels serving M on arch ("":
// any), baseline first; experimental ones only when full.
func DecKernels(M int, arch string, full bool) []kernels.Kernel {
	return kernels.Select(kernels.Query{Family: Family, Op: OpDec, M: M, Arch: arch, Full: full, Roles: []kernels.Role{kernels.Baseline, kernels.Variant}})
}

// DecLaunch returns the kernel, grid, block and arguments of an I8 decode
// launch, after checking the kernels' contract (the shape's, M and S).
func DecLaunch(s gemm.GemmShape, M, S int, a DecArgs) (kernel string, grid, block gpu.Dim3, args []any, err error) {
	if err = s.Check(DecBN); err != nil {
		return
	}
	if M < 1 || M > DecMaxM {
		err = fmt.Errorf("i8: decode M=%d outside 1..%d", M, DecMaxM)
		return
	}
	if S < 1 || S > gemm.DecMaxS || S > s.G() {
		err = fmt.Errorf("i8: split-K %d outside 1..min(%d, G=%d)", S, gemm.DecMaxS, s.G())
		return
	}
	kernel = a.Kernel
	if kernel == "" {
		if kernel, err = DecKernel(M); err != nil {
			return
		}
	}
	k, ok := kernels.Lookup(kernel)
	if !ok || k.Family != Family || k.Op != OpDec || k.Form != FormDec || !k.ServesM(M) {
		err = fmt.Errorf("i8: kernel %s is not a registered I8 decode kernel serving M=%d", kernel, M)
		return
	}
	e0, e1 := s.Bounds()
	grid = gpu.Dim3{X: uint32(s.N() / DecBN), Y: uint32(S), Z: 1}
	block = gpu.D1(DecThreads)
	args = []any{a.W, a.SZ, a.Act, a.ASG, a.RS, a.Out, a.WS, a.Sema, uint32(M), uint32(s.N()), uint32(s.K), e0, e1, uint32(S)}
	return
}

// DecClasses names the launch classes of one decode launch: the split's
// reduce path (none, one, several splits) and whether the last split holds
// fewer groups; whether the last 8-row op tile is partial and whether the
// kernel's op tiles are all used, odd M; partitions and odd G.
func DecClasses(kernel string, s gemm.GemmShape, M, S int) []string {
	k, _ := kernels.Lookup(kernel)
	red := map[bool]string{true: "S=1", false: "S>1"}[S == 1]
	G := s.G()
	gps := (G + S - 1) / S
	tiles, maxTiles := (M+7)/8, (max(k.MaxM, 1)+7)/8
	return []string{
		fmt.Sprintf("%s %s unevenSplit=%t staged=%t", kernel, red, G%gps != 0, M*gps <= ARCap),
		fmt.Sprintf("%s partialOpTile=%t allOpTiles=%t oddM=%t", kernel, M%8 != 0, tiles == maxTiles, M%2 == 1),
		fmt.Sprintf("%s P=%d oddG=%t", kernel, len(s.Parts), G%2 == 1),
	}
}

// Prefill geometry (i8gemm.hip PRE_*).
const (
	PreBM      = 128
	PreBN      = 128
	PreThreads = 256
)

// PreArgs are a prefill launch's buffers.
type PreArgs struct {
	W, SZ           gpu.Ptr // repacked weights, scale words
	Act, TScale, RS gpu.Ptr // tiled int8 codes [P, Mpad, K], token scales [P, M] f32, row sums [P, M, G] i32
	Out             gpu.Ptr // bf16 [M, N]
	Kernel          string  // "": the prefill baseline
}

// PreLaunch returns the kernel, grid, block and arguments of a prefill
// launch, after checking the contract (partitions multiples of 128).
func PreLaunch(s gemm.GemmShape, M int, a PreArgs) (kernel string, grid, block gpu.Dim3, args []any, err error) {
	if err = s.Check(PreBN); err != nil {
		return
	}
	if M < 1 {
		err = fmt.Errorf("i8: prefill M=%d", M)
		return
	}
	kernel = a.Kernel
	if kernel == "" {
		k, berr := kernels.BaselineFor(Family, OpPre, M, "")
		if err = berr; err != nil {
			return
		}
		kernel = k.Name
	}
	if k, ok := kernels.Lookup(kernel); !ok || k.Family != Family || k.Op != OpPre || k.Form != FormPreTiled {
		err = fmt.Errorf("i8: %q is not a registered I8 prefill kernel", kernel)
		return
	}
	e0, e1 := s.Bounds()
	blocks := (M + PreBM - 1) / PreBM * (s.N() / PreBN)
	return kernel, gpu.D1(blocks), gpu.D1(PreThreads), []any{a.W, a.SZ, a.Act, a.TScale, a.RS, a.Out, uint32(M), uint32(s.N()), uint32(s.K), e0, e1}, nil
}
