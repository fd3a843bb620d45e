// Package skinny is the skinny bf16 GEMM family (skinny.hip): y[M, N] =
// x[M, K]·w[N, K]ᵀ in bf16 with fp32 accumulation for the decode step's
// narrow linears (the GDN gate projections in_proj_b / in_proj_a, N = 48
// per rank at TP 2), M = 1..64, split-K over 256-wide K slices with a
// deterministic in-kernel reduce.
//
// The model: one block per (n-tile, slice) computes the slice's fp32
// partial products of its n-tile into a workspace [S, M, N]; the last block
// of an n-tile to arrive (an atomic counter per n-tile) sums the S partials
// in slice order 0..S-1 and writes bf16, then resets its counter, so the
// bits do not depend on arrival order and a CUDA graph can replay the
// launch. The kernel's arithmetic is a contract (skinny.hip's header):
// Mirror computes the same float32 operations in the same order, and the
// gate requires the device's bits to equal it, besides being within the
// bf16 rounding floor of the fp64 reference (refimpl.BF16GEMM).
//
// This file: the registry rows, the launch geometry and argument contract,
// and the shapes the gate and bench use.
package skinny

import (
	"fmt"

	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/shapes"
)

func init() {
	for _, k := range []kernels.Kernel{
		{Name: "skinny_bf16_n8", Op: OpGEMM, Form: FormN8, MinM: 1, MaxM: MaxM, Role: kernels.Baseline, Tag: "n8", Caps: kernels.DynShared,
			Doc: "skinny bf16 GEMM, M <= 64: split-K over 256-wide K slices, one block per (8-column n-tile, slice), x slice staged in shared memory, 16-byte weight loads, fp32 partials reduced in slice order by the last block (deterministic; counters reset for graph replay)"},
		{Name: "skinny_bf16_n16", Op: OpGEMM, Form: FormN16, MinM: 1, MaxM: MaxM, Role: kernels.Variant, Tag: "n16", Caps: kernels.DynShared,
			Doc: "skinny_bf16_n8's body with a 16-column n-tile (4 columns per warp): half the blocks, each twice the weights, for wide N"},
		{Name: "skinny_bf16_cl_n8", Op: OpGEMM, Form: FormCluster, MinM: 1, MaxM: ClusterMaxM, Role: kernels.Variant, Tag: "cl", Caps: kernels.DynShared | kernels.Cluster, Targets: []string{kernels.SM90a},
			Doc: "decode form, M <= 8: the S <= 8 splits of an 8-column n-tile are one thread-block cluster, each CTA J consecutive slices; rank 0 sums the CTAs' partials in split order through distributed shared memory (no workspace, counters or fences)"},
	} {
		k.Family, k.Module = Family, "skinny"
		kernels.Register(k)
	}
}

// Family is this folder's name in the registry.
const Family = "skinny"

// OpGEMM is the family's one output contract: bf16 y = x·wᵀ, fp32
// accumulate, the bits of Mirror.
const OpGEMM = "bf16"

// The launch forms: the n-tile (columns per block), which sets the grid.
const (
	FormN8  = "n8"  // 8 columns per block, 2 per warp
	FormN16 = "n16" // 16 columns per block, 4 per warp
	// FormCluster: 8 columns per block, the S splits of an n-tile one 1 x S
	// cluster of J slices each (ClusterSplits), M <= ClusterMaxM.
	FormCluster = "cluster"
)

// The cluster form's limits (skinny.hip CL_MAXM, CL_JMAX): M rows, slices
// per CTA, and the portable cluster size.
const (
	ClusterMaxM = 8
	ClusterMaxJ = 8
	ClusterMaxS = 8
	// ClusterThreads: 8 warps per CTA, one column each (CL_WARPS).
	ClusterThreads = 256
)

// Geometry constants (skinny.hip; TestGoConstantsMatchKernelDefines ties them).
const (
	Slice = 256 // k per split-K slice: S = K / Slice
	// RedBatch is the number of slices' partials the last block loads at
	// once per element in its reduce.
	RedBatch = 32
	Threads  = 128 // threads per block (4 warps)
	LaneK    = 8   // k per lane in a slice (one 16-byte vector)
	Rows     = 8   // rows per reduce-scatter round
	MaxM     = 64  // largest M (the x slice in shared memory: MaxM x 512 bytes)
)

// warpLanes is the width of the warp-sum tree (32 lanes on both targets).
const warpLanes = Slice / LaneK

// NTile is the n-tile of a skinny kernel (its launch form's columns per
// block); 0 for a form this file has no launch for.
func NTile(k kernels.Kernel) int {
	switch k.Form {
	case FormN8:
		return 8
	case FormN16:
		return 16
	case FormCluster:
		return 8
	}
	return 0
}

// BlockThreads is kernel k's block size: Threads, or ClusterThreads for
// the cluster form.
func BlockThreads(k kernels.Kernel) int {
	if k.Form == FormCluster {
		return ClusterThreads
	}
	return Threads
}

// ClusterSplits is the cluster form's split of K's slices: the most splits
// S <= ClusterMaxS that divide them evenly with J = slices / S <=
// ClusterMaxJ per CTA (more CTAs pull the weights in parallel); ok is false
// when no such split exists (K = 8448: 33 slices).
func ClusterSplits(K int) (S, J int, ok bool) {
	slices := K / Slice
	for S = ClusterMaxS; S >= 1; S-- {
		if slices%S == 0 && slices/S <= ClusterMaxJ {
			return S, slices / S, true
		}
	}
	return 0, 0, false
}

// Splits is kernel k's split-K geometry on shape s: S splits of J slices
// each (J = 1 but for the cluster form).
func Splits(k kernels.Kernel, s Shape) (S, J int, err error) {
	if k.Form != FormCluster {
		return s.S(), 1, nil
	}
	S, J, ok := ClusterSplits(s.K)
	if !ok {
		return 0, 0, &ContractError{s.Label, "K", fmt.Sprintf("= %d: its %d slices split into no S <= %d clusters of at most %d slices (%s)", s.K, s.K/Slice, ClusterMaxS, ClusterMaxJ, k.Name)}
	}
	return S, J, nil
}

// UsesWorkspace is whether kernel k reduces through ws and the counters
// (every form but the cluster one, which reduces in distributed shared
// memory).
func UsesWorkspace(k kernels.Kernel) bool { return k.Form != FormCluster }

// CheckKernel is Check for kernel k: its n-tile, its M range and its split.
func (s Shape) CheckKernel(k kernels.Kernel, M int) error {
	if err := s.Check(M, NTile(k)); err != nil {
		return err
	}
	if !k.ServesM(M) {
		return &ContractError{s.Label, "M", fmt.Sprintf("= %d is outside %s's %d..%d", M, k.Name, k.MinM, k.MaxM)}
	}
	_, _, err := Splits(k, s)
	return err
}

// LaunchOpts are kernel's launch options on shape s: the 1 x S cluster of
// the cluster form, none otherwise.
func LaunchOpts(kernel string, s Shape) gpu.LaunchOpts {
	k, ok := kernels.Lookup(kernel)
	if !ok || k.Form != FormCluster {
		return gpu.LaunchOpts{}
	}
	S, _, _ := ClusterSplits(s.K)
	return gpu.LaunchOpts{Cluster: gpu.Dim3{X: 1, Y: uint32(S), Z: 1}}
}

// Shape is one GEMM as the kernel sees it: N output columns, K inputs.
type Shape struct {
	Label string
	N, K  int
}

// S is the split-K count, K / Slice.
func (s Shape) S() int { return s.K / Slice }

func (s Shape) String() string { return fmt.Sprintf("%s (N=%d K=%d)", s.Label, s.N, s.K) }

// ContractError is a launch the kernels' contract refuses: which shape,
// which argument (K, N, M or the kernel) and why.
type ContractError struct {
	Shape, Arg, Why string
}

func (e *ContractError) Error() string {
	return fmt.Sprintf("skinny: %s: %s %s", e.Shape, e.Arg, e.Why)
}

// Check verifies the kernels' contract for a shape and M with n-tile nt:
// K a positive multiple of Slice, N a positive multiple of nt, 1 <= M <=
// MaxM (a *ContractError otherwise).
func (s Shape) Check(M, nt int) error {
	if s.K <= 0 || s.K%Slice != 0 {
		return &ContractError{s.Label, "K", fmt.Sprintf("= %d is not a positive multiple of the %d-wide slice", s.K, Slice)}
	}
	if nt <= 0 || s.N <= 0 || s.N%nt != 0 {
		return &ContractError{s.Label, "N", fmt.Sprintf("= %d is not a positive multiple of the %d-column n-tile", s.N, nt)}
	}
	if M < 1 || M > MaxM {
		return &ContractError{s.Label, "M", fmt.Sprintf("= %d is outside 1..%d", M, MaxM)}
	}
	return nil
}

// Args are a launch's buffers.
type Args struct {
	X, W     gpu.Ptr // bf16 x [M, K], w [N, K], row-major
	Out      gpu.Ptr // bf16 y [M, N]
	WS       gpu.Ptr // fp32 partials [S, M, N] (WorkspaceBytes)
	Counters gpu.Ptr // u32 [N / n-tile] (CounterBytes), zero before the first launch; zero again after each
	Kernel   string  // "": the baseline serving M
}

// WorkspaceBytes is the split-K workspace of a launch: S x M x N fp32.
func WorkspaceBytes(s Shape, M int) int { return 4 * s.S() * M * s.N }

// CounterBytes is the size of the counters for any registered kernel: one
// u32 per n-tile of the narrowest (8-column) form.
func CounterBytes(s Shape) int { return 4 * (s.N / 8) }

// SharedBytes is a launch's dynamic shared memory: the x slices, M x J x
// Slice bf16.
func SharedBytes(M, J int) int { return 2 * Slice * M * J }

// Launch returns the kernel, grid, block, dynamic shared memory and
// arguments of one launch: grid (N / n-tile, S) of BlockThreads threads;
// the cluster form also needs LaunchOpts.
func Launch(s Shape, M int, a Args) (kernel string, grid, block gpu.Dim3, shared int, args []any, err error) {
	if M < 1 || M > MaxM {
		err = &ContractError{s.Label, "M", fmt.Sprintf("= %d is outside 1..%d", M, MaxM)}
		return
	}
	name := a.Kernel
	if name == "" {
		base, berr := kernels.BaselineFor(Family, OpGEMM, M, "")
		if err = berr; err != nil {
			return
		}
		name = base.Name
	}
	k, ok := kernels.Lookup(name)
	if !ok || k.Family != Family || k.Op != OpGEMM || !k.ServesM(M) {
		err = &ContractError{s.Label, "kernel", fmt.Sprintf("%q is not a registered skinny kernel (op %s) serving M=%d", name, OpGEMM, M)}
		return
	}
	nt := NTile(k)
	if nt == 0 {
		err = &ContractError{s.Label, "kernel", fmt.Sprintf("%s: form %q has no launch (families/skinny/launch.go NTile)", k.Name, k.Form)}
		return
	}
	if err = s.CheckKernel(k, M); err != nil {
		return
	}
	S, J, _ := Splits(k, s)
	grid = gpu.Dim3{X: uint32(s.N / nt), Y: uint32(S), Z: 1}
	args = []any{a.X, a.W, a.Out, a.WS, a.Counters, uint32(M), uint32(s.N), uint32(s.K)}
	return k.Name, grid, gpu.D1(BlockThreads(k)), SharedBytes(M, J), args, nil
}

// Kernels are the registered skinny kernels serving M on arch ("" any),
// baseline first; experimental ones only when full.
func Kernels(M int, arch string, full bool) []kernels.Kernel {
	return kernels.Select(kernels.Query{Family: Family, Op: OpGEMM, M: M, Arch: arch, Full: full})
}

// ShapeSets are the built-in shapes sets whose bf16 linears the family
// serves (gdn_in_ba: N = 48 at TP 2, 96 at TP 1).
var ShapeSets = []struct{ Label, Set string }{{"tp2", "qwen38-27b-tp2"}, {"tp1", "qwen38-27b-tp1"}}

// Synthetic are the wide shapes beside the deployed ones: where the grid
// holds many n-tiles per slice, and the weight stream (2.6 and 13 MB) is
// long enough to measure bandwidth.
var Synthetic = []Shape{{"synthetic/N256", 256, 5120}, {"synthetic/N1280", 1280, 5120}}

// Shapes are the gate's and bench's shapes: every bf16 linear of the
// built-in sets (labelled set/linear), then Synthetic.
func Shapes() ([]Shape, error) {
	var out []Shape
	for _, ss := range ShapeSets {
		set, err := shapes.Builtin(ss.Set)
		if err != nil {
			return nil, err
		}
		sh, err := ShapesOf(set, ss.Label+"/")
		if err != nil {
			return nil, err
		}
		out = append(out, sh...)
	}
	return append(out, Synthetic...), nil
}

// ShapesOf are the bf16 linears of a shapes set, labelled prefix + name;
// one the kernels cannot take is an error naming it.
func ShapesOf(set *shapes.Set, prefix string) ([]Shape, error) {
	var out []Shape
	for _, l := range set.Linears {
		if l.Kind != shapes.BF16 {
			continue
		}
		s := Shape{Label: prefix + l.Name, N: l.N(), K: l.K}
		if err := s.Check(1, 8); err != nil {
			return nil, fmt.Errorf("skinny: shapes set %s, linear %s (line %d): %v", set.Name, l.Name, l.Line, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// LaunchClasses names the launch-geometry classes of one launch, in two
// facets per kernel computed from its grid (Launch): the reduce's shape (S
// = 1, one batch of RedBatch partials or less, exactly whole batches,
// a partial last batch; one n-tile or several), and how M fills the
// reduce-scatter rounds of Rows rows (one round or several, a partial
// last round, odd M). The gate's cases cover every class its shapes and
// M = 1..MaxM reach (gateCases).
func LaunchClasses(kernel string, s Shape, M int) ([]string, error) {
	_, grid, _, _, _, err := Launch(s, M, Args{Kernel: kernel})
	if err != nil {
		return nil, err
	}
	S := int(grid.Y)
	rounds := map[bool]string{true: "one", false: "many"}[M <= Rows]
	if k, _ := kernels.Lookup(kernel); k.Form == FormCluster {
		_, J, _ := ClusterSplits(s.K)
		return []string{
			fmt.Sprintf("%s cluster S=1:%t J=1:%t J=max:%t ntiles=%s", kernel, S == 1, J == 1, J == ClusterMaxJ, map[bool]string{true: "one", false: "many"}[grid.X == 1]),
			fmt.Sprintf("%s rows=%d", kernel, M),
		}, nil
	}
	red := "S=1"
	switch {
	case S == 1:
	case S < RedBatch:
		red = "S<batch"
	case S%RedBatch == 0:
		red = "S=whole-batches"
	default:
		red = "S=partial-batch"
	}
	tiles := map[bool]string{true: "one", false: "many"}[grid.X == 1]
	return []string{
		fmt.Sprintf("%s reduce %s ntiles=%s", kernel, red, tiles),
		fmt.Sprintf("%s rounds=%s partialRound=%t oddM=%t", kernel, rounds, M%Rows != 0, M%2 == 1),
	}, nil
}
