package ewrot

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/parharness/parharness/families/internal/faketest"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/internal/fakegpu"
	"github.com/parharness/parharness/refimpl"
	"github.com/parharness/parharness/shapes"
)

// The gate end to end on a fake device that computes: an emulator stands
// in for the ewrot kernels and the producers' peers of the unfused chain,
// reading each launch's inputs from device memory and writing what the
// kernel must. The op half walks the kernel's own work split (a warp per
// row-group, lane l on channels 4l..4l+3, the head sum by the lanes'
// butterfly, the weight at c mod D, silu-mul's u at column K + c), not
// OpRows's row loop; the producer half is refimpl's whole-matrix
// functions on records read back from the device. The gate must pass on
// it, and fail, naming the kernel, when any one kernel writes nothing or
// one wrong byte.

type emulator struct {
	spoil func(kernel string, out *emulated)
}

// emulated is what one launch writes (nil: an output it does not write).
type emulated struct{ rows, codes, scale, rsum []byte }

// emulateOp is ew_op_bf16's rows, warp by warp and lane by lane.
func emulateOp(mode Mode, a, b, w []uint16, M, K, D int, eps float32) []uint16 {
	out := make([]uint16, M*K)
	f := refimpl.BF16ToF32
	cols := mode.InputCols(K)
	for m := 0; m < M; m++ {
		for g := 0; g < K/128; g++ {
			var r float32
			if mode == GatedNorm {
				gpd := D / 128
				h0 := g / gpd * gpd
				var S float32
				for h := h0; h < h0+gpd; h++ {
					var lane [32]float32
					for l := range lane {
						c := m*cols + h*128 + 4*l
						q0, q1, q2, q3 := f(a[c]), f(a[c+1]), f(a[c+2]), f(a[c+3])
						s := q0 * q0
						s = s + float32(q1*q1)
						s = s + float32(q2*q2)
						s = s + float32(q3*q3)
						lane[l] = s
					}
					for mask := 16; mask > 0; mask >>= 1 {
						var nx [32]float32
						for l := range lane {
							nx[l] = lane[l] + lane[l^mask]
						}
						lane = nx
					}
					S = S + lane[0]
				}
				r = 1 / float32(math.Sqrt(float64(S/float32(D)+eps)))
			}
			for l := 0; l < 32; l++ {
				for j := 0; j < 4; j++ {
					c := g*128 + 4*l + j
					var x, y, ww float32
					x = f(a[m*cols+c])
					switch mode {
					case SiluMul:
						y = f(a[m*cols+K+c])
					default:
						y = f(b[m*K+c])
					}
					if mode == GatedNorm {
						ww = f(w[c%D])
					}
					out[m*K+c] = refimpl.F32ToBF16(Elem(mode, x, y, ww, r))
				}
			}
		}
	}
	return out
}

// quantize is the producer half on bf16 rows x: per-group outputs, or
// per-token ones in the layout.
func quantize(rr *refimpl.RotRecords, x []uint16, M, K, P int, group, tiled bool) (codes []byte, scale, rsum []float32) {
	for p := 0; p < P; p++ {
		v := rr.RotateF32(x, M, p)
		if group {
			q := refimpl.QuantizeActGroup(v, M, K)
			codes, scale, rsum = append(codes, q.Codes...), append(scale, q.GroupScale...), append(rsum, q.RowSums...)
			continue
		}
		_, f := refimpl.RoundRowsBF16(v)
		q := refimpl.QuantizeActToken(f, M, K)
		c := q.Codes
		if tiled {
			c = refimpl.TileRows(q.Codes, M, K)
		}
		codes, scale, rsum = append(codes, c...), append(scale, q.TokenScale...), append(rsum, q.RowSums...)
	}
	return
}

func (e *emulator) exec(d *fakegpu.Device, l fakegpu.Launch) error {
	ptr := func(i int) gpu.Ptr { return l.Args[i].(gpu.Ptr) }
	arg := func(i int) int { return int(l.Args[i].(uint32)) }
	mem := func(p gpu.Ptr, n int) []byte {
		b, err := d.Mem(p, n)
		if err != nil {
			panic(err)
		}
		return b
	}
	records := func(i, P, K int) *refimpl.RotRecords {
		G := K / 128
		rr := &refimpl.RotRecords{P: P, K: K, Krot: 8, Idx: make([]uint32, P*8*G*32), CS: gates.F32s(mem(ptr(i+1), 16*P*8*G*32)), ChS: gates.F32s(mem(ptr(i+2), 4*P*K))}
		raw := mem(ptr(i), 4*len(rr.Idx))
		for j := range rr.Idx {
			rr.Idx[j] = binary.LittleEndian.Uint32(raw[4*j:])
		}
		return rr
	}
	var out emulated
	var dst [4]gpu.Ptr // rows, codes, scale, rsum
	switch l.Kernel {
	case "ew_op_bf16":
		M, K, mode, D := arg(4), arg(5), Mode(arg(6)), arg(7)
		eps := l.Args[8].(float32)
		a := gates.U16s(mem(ptr(0), 2*M*mode.InputCols(K)))
		var b, w []uint16
		if mode != SiluMul {
			b = gates.U16s(mem(ptr(1), 2*M*K))
		}
		if mode == GatedNorm {
			w = gates.U16s(mem(ptr(2), 2*D))
		}
		out.rows = gates.U16Bytes(emulateOp(mode, a, b, w, M, K, D, eps))
		dst[0] = ptr(3)
	case "ew_rotq_group", "ew_rotq_token":
		M, K, mode, D, P := arg(9), arg(10), Mode(arg(12)), arg(13), int(l.Grid.Y)
		eps := l.Args[14].(float32)
		a := gates.U16s(mem(ptr(0), 2*M*mode.InputCols(K)))
		var b, w []uint16
		if mode != SiluMul {
			b = gates.U16s(mem(ptr(1), 2*M*K))
		}
		if mode == GatedNorm {
			w = gates.U16s(mem(ptr(2), 2*D))
		}
		x := emulateOp(mode, a, b, w, M, K, D, eps)
		codes, scale, rsum := quantize(records(3, P, K), x, M, K, P, l.Kernel == "ew_rotq_group", l.Kernel == "ew_rotq_token" && arg(11) == 1)
		out.codes, out.scale, out.rsum = codes, gates.F32Bytes(scale), gates.F32Bytes(rsum)
		dst[1], dst[2], dst[3] = ptr(6), ptr(7), ptr(8)
	case "pq_rotq_group", "pq_rotq_token":
		M, K, P := arg(7), arg(8), int(l.Grid.Y)
		x := gates.U16s(mem(ptr(0), 2*M*K))
		codes, scale, rsum := quantize(records(1, P, K), x, M, K, P, l.Kernel == "pq_rotq_group", l.Kernel == "pq_rotq_token" && arg(9) == 1)
		out.codes, out.scale, out.rsum = codes, gates.F32Bytes(scale), gates.F32Bytes(rsum)
		dst[1], dst[2], dst[3] = ptr(4), ptr(5), ptr(6)
	default:
		return fmt.Errorf("emulator: no stand-in for %s", l.Kernel)
	}
	if e.spoil != nil {
		e.spoil(l.Kernel, &out)
	}
	for i, b := range [][]byte{out.rows, out.codes, out.scale, out.rsum} {
		if b != nil {
			copy(mem(dst[i], len(b)), b)
		}
	}
	return nil
}

var emulatedCases = []Case{
	newCase(SiluMul, shapes.KP{K: 384, P: 2}, 5, "edge"),
	newCase(GatedNorm, shapes.KP{K: 512, P: 2}, 19, "normal"),
	newCase(SigmoidGate, shapes.KP{K: 640, P: 1}, 200, "subnormal"),
}

func runEmulated(t *testing.T, e *emulator) gates.Result {
	env, dev := faketest.Env(t, fakeTargets[0])
	dev.Exec = e.exec
	return gates.RunGate(env, gates.Gate{Name: "ewrot-emulated", Device: true, Run: func(t *gates.T) {
		for i, c := range emulatedCases {
			pc, err := Prepare(uint64(i), c, c.M <= GroupMaxM)
			t.Check(err, "inputs")
			RunCase(t, pc, uint64(i))
			t.Release()
		}
	}})
}

func TestGatePassesEmulatedKernels(t *testing.T) {
	if r := runEmulated(t, &emulator{}); r.Status != gates.Pass {
		t.Fatalf("status %s: %s %v", r.Status, r.Reason, r.Failures)
	}
}

// One kernel wrong (nothing written, or one byte of its main output
// flipped) fails the gate, and the failures name that kernel (a spoiled
// producers peer shows as fused differing from the unfused chain).
func TestGateFailsOneWrongKernel(t *testing.T) {
	for _, kernel := range []string{"ew_op_bf16", "ew_rotq_group", "ew_rotq_token", "pq_rotq_group", "pq_rotq_token"} {
		for _, how := range []string{"nothing", "one byte"} {
			t.Run(kernel+"/"+how, func(t *testing.T) {
				e := &emulator{spoil: func(k string, out *emulated) {
					if k != kernel {
						return
					}
					if how == "nothing" {
						*out = emulated{}
						return
					}
					b := &out.codes
					if out.rows != nil {
						b = &out.rows
					}
					*b = append([]byte{}, *b...)
					(*b)[len(*b)/2] ^= 0x01
				}}
				r := runEmulated(t, e)
				if r.Status != gates.Fail {
					t.Fatalf("status %s with %s spoiled (%s)", r.Status, kernel, how)
				}
				all := strings.Join(append([]string{r.Reason}, r.Failures...), "\n")
				if !strings.Contains(all, kernel) {
					t.Errorf("failures do not name %s:\n%s", kernel, all)
				}
			})
		}
	}
}
