// Package ewrot is the elementwise-fed rotate-and-quantize producers
// (ewrot.hip): an elementwise op whose bf16 result feeds the producer
// chain of families/producers (channel scale, 8 Givens layers, e4m3), in
// one launch. Three ops (Mode): the MLP's silu(g)·u, the attention output
// gate x·sigmoid(gate), and the GDN output's per-head gated RMSNorm; each
// in the decode-band form (per-group scales, all partitions at once) and
// the per-token form (row-major or fragment-tiled codes).
//
// The arithmetic contract is at the top of ewrot.hip; mirror.go follows it
// op for op (ExpF32, OpRows), and the producer half is refimpl's mirror of
// hipsrc/rot/rotq.h. The unfused chain the fused kernels must equal byte
// for byte is ew_op_bf16 followed by the producers' own kernels.
package ewrot

import (
	"fmt"

	"github.com/parharness/parharness/families/producers"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/refimpl"
)

// Family is this folder's name in the registry.
const Family = "ewrot"

// The family's Ops.
const (
	OpElementwise = "ew"    // inputs -> the op's bf16 rows [M, K] (the unfused chain's first launch)
	OpGroup       = "group" // inputs -> per-group codes, group scales, row sums (decode band)
	OpToken       = "token" // inputs -> per-token codes (row-major or tiled), token scales, row sums
)

// Launch forms.
const (
	FormRows    = "rows"      // grid (G, ceil(M/8)), 256 threads: a warp per (row, group)
	FormGroup   = "groupwise" // producers.GroupWiseGrid
	FormRowWise = "rowwise"   // producers.RowWiseGrid, K <= producers.ProducerMaxK
)

// GroupMaxM is the largest M of the decode band (as producers.GroupMaxM).
const GroupMaxM = producers.GroupMaxM

func init() {
	for _, k := range []kernels.Kernel{
		{Name: "ew_op_bf16", Op: OpElementwise, Form: FormRows, Role: kernels.Baseline, Tag: "op",
			Doc: "the unfused elementwise op (silu-mul, sigmoid gate or gated RMSNorm) -> bf16 rows, the producers' input"},
		{Name: "ew_rotq_group", Op: OpGroup, Form: FormGroup, MaxM: GroupMaxM, Role: kernels.Baseline, Tag: "group",
			Doc: "decode band: elementwise op + rotate + per-group e4m3 codes, scales and row sums for all partitions in one launch"},
		{Name: "ew_rotq_token", Op: OpToken, Form: FormRowWise, Role: kernels.Baseline, Tag: "token",
			Doc: "per token: elementwise op + rotate + bf16 rounding + token-scaled e4m3 codes (row-major or tiled) and row sums"},
	} {
		k.Family, k.Module = Family, "ewrot"
		kernels.Register(k)
	}
}

// Mode is an elementwise op (the kernels' mode argument).
type Mode uint32

const (
	SiluMul     Mode = 0 // y = bf16(bf16(g·sig(g))·u), g and u the halves of a [M, 2K] row
	SigmoidGate Mode = 1 // y = bf16(x·bf16(sig(gate)))
	GatedNorm   Mode = 2 // y = bf16(((x·r)·w)·(z·sig(z))), r = 1/sqrt(mean over the head of x² + eps)
)

// Modes are every op, in mode order.
var Modes = []Mode{SiluMul, SigmoidGate, GatedNorm}

func (m Mode) String() string {
	switch m {
	case SiluMul:
		return "silu-mul"
	case SigmoidGate:
		return "sigmoid-gate"
	case GatedNorm:
		return "gated-norm"
	}
	return fmt.Sprintf("mode(%d)", uint32(m))
}

// Linear is the shapes-file linear each op feeds in the deployed model:
// its (K, P) are the op's deployed shapes.
func (m Mode) Linear() string {
	return [...]string{"mlp_down", "attn_o", "gdn_out"}[m]
}

// InputCols is the width of input a's rows: 2K for silu-mul (g then u),
// K otherwise.
func (m Mode) InputCols(K int) int {
	if m == SiluMul {
		return 2 * K
	}
	return K
}

// HeadDim is the gated norm's head size in the deployed model (Qwen3-Next
// GDN head_v_dim).
const HeadDim = 128

// Bufs are the device buffers of an ewrot launch.
type Bufs struct {
	A, B, W            gpu.Ptr // op inputs: a [M, InputCols], b [M, K] (modes 1, 2), w [D] (mode 2)
	Idx, CS, ChS       gpu.Ptr // rotation records and channel scales (refimpl.RotRecords)
	Codes, Scale, RSum gpu.Ptr // e4m3 codes, scales, row sums
	Out                gpu.Ptr // ew_op_bf16's bf16 rows [M, K]
}

// Params are the op's parameters: the mode, the gated norm's head size D
// (a multiple of 128 dividing K) and eps.
type Params struct {
	Mode Mode
	D    int
	Eps  float32
}

// Check says whether p can run at K (the kernels do not check).
func (p Params) Check(K int) error {
	if K <= 0 || K%refimpl.GroupSize != 0 {
		return fmt.Errorf("ewrot: K=%d, want a positive multiple of %d", K, refimpl.GroupSize)
	}
	if p.Mode > GatedNorm {
		return fmt.Errorf("ewrot: mode %d, want 0, 1 or 2", uint32(p.Mode))
	}
	if p.Mode == GatedNorm && (p.D <= 0 || p.D%refimpl.GroupSize != 0 || K%p.D != 0) {
		return fmt.Errorf("ewrot: gated norm head size D=%d at K=%d: want a multiple of %d dividing K", p.D, K, refimpl.GroupSize)
	}
	return nil
}

// RowsGrid is ew_op_bf16's grid: a warp per (row, group), 8 rows a block.
func RowsGrid(M, K int) (grid, block gpu.Dim3) {
	return gpu.Dim3{X: uint32(K / refimpl.GroupSize), Y: uint32((M + 7) / 8), Z: 1}, gpu.D1(256)
}

// Launch is the one place an ewrot kernel's geometry and arguments are
// written. tiled picks the tiled code layout of the per-token kernel.
func Launch(kernel string, M, K, P int, tiled bool, p Params, b Bufs) (grid, block gpu.Dim3, args []any, err error) {
	if err = p.Check(K); err != nil {
		return
	}
	k, ok := kernels.Lookup(kernel)
	if !ok || k.Family != Family {
		err = fmt.Errorf("ewrot.Launch: %q is not a registered ewrot kernel", kernel)
		return
	}
	m, kk, mode, d, t := uint32(M), uint32(K), uint32(p.Mode), uint32(p.D), uint32(0)
	if tiled {
		t = 1
	}
	switch k.Form {
	case FormRows:
		grid, block = RowsGrid(M, K)
		args = []any{b.A, b.B, b.W, b.Out, m, kk, mode, d, p.Eps}
	case FormGroup:
		rpw := producers.RowsPerWarp(M)
		grid, block = producers.GroupWiseGrid(M, K, P, rpw)
		args = []any{b.A, b.B, b.W, b.Idx, b.CS, b.ChS, b.Codes, b.Scale, b.RSum, m, kk, uint32(rpw), mode, d, p.Eps}
	case FormRowWise:
		if err = producers.FusedTokenCheck(K); err != nil {
			return
		}
		grid, block = producers.RowWiseGrid(M, P, tiled)
		args = []any{b.A, b.B, b.W, b.Idx, b.CS, b.ChS, b.Codes, b.Scale, b.RSum, m, kk, t, mode, d, p.Eps}
	default:
		err = fmt.Errorf("ewrot.Launch: kernel %s has no launch form %q (families/ewrot/launch.go)", kernel, k.Form)
	}
	return
}

// LaunchClasses names the launch-geometry classes of one launch: the
// kernel, threads per block, rows per warp, one row chunk or many and
// whether the last is partial, tiled padding, odd M, odd G, one partition
// or several, and the mode (each mode is its own code path).
func LaunchClasses(kernel string, M, K, P int, mode Mode) ([]string, error) {
	k, ok := kernels.Lookup(kernel)
	if !ok || k.Family != Family {
		return nil, fmt.Errorf("ewrot.LaunchClasses: %q is not registered", kernel)
	}
	p := Params{Mode: mode, D: HeadDim}
	grid, block, _, err := Launch(kernel, M, K, P, false, p, Bufs{})
	if err != nil {
		return nil, err
	}
	many := func(n uint32) string {
		if n == 1 {
			return "one"
		}
		return "many"
	}
	common := fmt.Sprintf("%s oddM=%t oddG=%t P=%s", mode, M%2 == 1, (K/refimpl.GroupSize)%2 == 1, map[bool]string{true: "1", false: ">1"}[P == 1])
	switch k.Form {
	case FormRows:
		return []string{fmt.Sprintf("%s chunks=%s partial=%t %s", kernel, many(grid.Y), M%8 != 0, common)}, nil
	case FormGroup:
		rpw := producers.RowsPerWarp(M)
		rows := int(block.X) / 32 * rpw
		return []string{fmt.Sprintf("%s threads=%d rpw=%d chunks=%s partial=%t %s", kernel, block.X, rpw, many(grid.Z), M%rows != 0, common)}, nil
	default:
		return []string{fmt.Sprintf("%s rows=%s padded=%t %s", kernel, many(grid.X), refimpl.PadRows(M) != M, common)}, nil
	}
}
