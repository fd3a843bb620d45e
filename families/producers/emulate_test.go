package producers

import (
	"fmt"
	"strings"
	"testing"

	"github.com/parharness/parharness/families/internal/faketest"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/internal/fakegpu"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/refimpl"
)

// The gate end to end on a fake device that computes: an emulator stands
// in for every producer kernel, reading the launch's inputs from device
// memory (the uploaded activations and records, or pass A's rows) and
// writing what the kernel must, computed with refimpl's whole-matrix
// functions (and the shuffle schedule's own emulation for the shuffle
// form), never with the gate's mirror. The gate must pass on it, and fail
// when any one kernel writes nothing or one wrong byte in a later case.

// emulator is a fakegpu Exec for the producer kernels; spoil, when set,
// may change the output bytes of a launch at M before they are written.
type emulator struct {
	spoil func(kernel string, M int, out *emulated)
	n     int // launches so far
}

// emulated is what one launch writes (nil: an output it does not write).
type emulated struct{ codes, scale, rsum, xr, gamax []byte }

func (e *emulator) exec(d *fakegpu.Device, l fakegpu.Launch) error {
	k, ok := kernels.Lookup(l.Kernel)
	if !ok || k.Family != Family {
		return fmt.Errorf("emulator: %s is not a producer kernel", l.Kernel)
	}
	ptr := func(i int) gpu.Ptr { return l.Args[i].(gpu.Ptr) }
	arg := func(i int) int { return int(l.Args[i].(uint32)) }
	mem := func(p gpu.Ptr, n int) []byte {
		b, err := d.Mem(p, n)
		if err != nil {
			panic(err)
		}
		return b
	}
	P := int(l.Grid.Y)
	var M, K int
	var out, dst emulated
	switch k.Op {
	case OpGroup, OpToken:
		outAt := 4
		var rotate func(x []uint16, M, p int) []float32
		if k.Form != FormShuffle {
			M, K = arg(7), arg(8)
		}
		if k.Form == FormShuffle {
			M, K = arg(8), arg(9)
			G := K / refimpl.GroupSize
			sr := &refimpl.ShuffleRecords{P: P, K: K, Krot: refimpl.DefaultKrot,
				Ctrl:  gates.U32s(mem(ptr(1), 4*P*G*refimpl.DefaultKrot*32)),
				CS:    gates.F32s(mem(ptr(2), 16*P*G*refimpl.DefaultKrot*32)),
				Final: gates.U32s(mem(ptr(3), 4*P*G*32)), ChS: gates.F32s(mem(ptr(4), 4*P*K))}
			rotate, outAt = sr.RotateWarp, 5
		} else {
			rotate = readRecords(mem, ptr(1), ptr(2), ptr(3), P, K).RotateF32
		}
		x := gates.U16s(mem(ptr(0), 2*M*K))
		var codes []byte
		var scales, rsums []float32
		for p := 0; p < P; p++ {
			v := rotate(x, M, p)
			if k.Op == OpGroup {
				q := refimpl.QuantizeActGroup(v, M, K)
				codes, scales, rsums = append(codes, q.Codes...), append(scales, q.GroupScale...), append(rsums, q.RowSums...)
				continue
			}
			_, f := refimpl.RoundRowsBF16(v)
			q := refimpl.QuantizeActToken(f, M, K)
			if arg(9) == 1 {
				codes = append(codes, refimpl.TileRows(q.Codes, M, K)...)
			} else {
				codes = append(codes, q.Codes...)
			}
			scales, rsums = append(scales, q.TokenScale...), append(rsums, q.RowSums...)
		}
		out = emulated{codes: codes, scale: gates.F32Bytes(scales), rsum: gates.F32Bytes(rsums)}
		dst = emulated{codes: mem(ptr(outAt), len(codes)), scale: mem(ptr(outAt+1), 4*len(scales)), rsum: mem(ptr(outAt+2), 4*len(rsums))}
	case OpPassA:
		var rotate func(x []uint16, M, p int) []float32
		var xr, gamax gpu.Ptr
		switch k.Form {
		case FormShuffle:
			M, K = arg(7), arg(8)
			G := K / refimpl.GroupSize
			sr := &refimpl.ShuffleRecords{P: P, K: K, Krot: refimpl.DefaultKrot,
				Ctrl:  gates.U32s(mem(ptr(1), 4*P*G*refimpl.DefaultKrot*32)),
				CS:    gates.F32s(mem(ptr(2), 16*P*G*refimpl.DefaultKrot*32)),
				Final: gates.U32s(mem(ptr(3), 4*P*G*32)), ChS: gates.F32s(mem(ptr(4), 4*P*K))}
			rotate, xr, gamax = sr.RotateWarp, ptr(5), ptr(6)
		default:
			M, K = arg(6), arg(7)
			rotate, xr, gamax = readRecords(mem, ptr(1), ptr(2), ptr(3), P, K).RotateF32, ptr(4), ptr(5)
		}
		x := gates.U16s(mem(ptr(0), 2*M*K))
		var rows []uint16
		var amax []float32
		for p := 0; p < P; p++ {
			h, f := refimpl.RoundRowsBF16(rotate(x, M, p))
			rows, amax = append(rows, h...), append(amax, refimpl.GroupAmax(f, M, K)...)
		}
		out = emulated{xr: gates.U16Bytes(rows), gamax: gates.F32Bytes(amax)}
		dst = emulated{xr: mem(xr, 2*len(rows)), gamax: mem(gamax, 4*len(amax))}
	case OpPassC:
		M, K = arg(5), arg(6)
		rows := gates.U16s(mem(ptr(0), 2*P*M*K))
		var codes []byte
		var scales, rsums []float32
		for p := 0; p < P; p++ {
			f := make([]float32, M*K)
			for i := range f {
				f[i] = refimpl.BF16ToF32(rows[p*M*K+i])
			}
			q := refimpl.QuantizeActToken(f, M, K)
			if arg(7) == 1 {
				codes = append(codes, refimpl.TileRows(q.Codes, M, K)...)
			} else {
				codes = append(codes, q.Codes...)
			}
			scales, rsums = append(scales, q.TokenScale...), append(rsums, q.RowSums...)
		}
		out = emulated{codes: codes, scale: gates.F32Bytes(scales), rsum: gates.F32Bytes(rsums)}
		dst = emulated{codes: mem(ptr(2), len(codes)), scale: mem(ptr(3), 4*len(scales)), rsum: mem(ptr(4), 4*len(rsums))}
	default:
		return fmt.Errorf("emulator: op %q", k.Op)
	}
	if e.spoil != nil {
		e.spoil(l.Kernel, M, &out)
	}
	e.n++
	for _, pair := range [][2][]byte{{dst.codes, out.codes}, {dst.scale, out.scale}, {dst.rsum, out.rsum}, {dst.xr, out.xr}, {dst.gamax, out.gamax}} {
		copy(pair[0], pair[1])
	}
	return nil
}

// readRecords reads the rotation records of P partitions back from the
// device buffers the gate uploaded.
func readRecords(mem func(gpu.Ptr, int) []byte, idx, cs, chs gpu.Ptr, P, K int) *refimpl.RotRecords {
	n := P * refimpl.DefaultKrot * (K / refimpl.GroupSize) * 32
	return &refimpl.RotRecords{P: P, K: K, Krot: refimpl.DefaultKrot,
		Idx: gates.U32s(mem(idx, 4*n)), CS: gates.F32s(mem(cs, 16*n)), ChS: gates.F32s(mem(chs, 4*P*K))}
}

// emulatedCases are small cases that still cover the gate's paths: P = 1..3,
// M below, at and past one 16-row tile and past the decode band (so
// both the group kernel and the prefill kernels run), every distribution.
var emulatedCases = []producerCase{
	{K: 256, P: 2, M: 1, dist: "normal"},
	{K: 384, P: 3, M: 17, dist: "subnormal"},
	{K: 256, P: 1, M: 33, dist: "outlier"},
	{K: 384, P: 2, M: 200, dist: "subnormal"},
	{K: 256, P: 3, M: 131, dist: "normal"},
}

func runEmulated(t *testing.T, info gpu.Info, e *emulator) gates.Result {
	env, dev := faketest.Env(t, info)
	dev.Exec = e.exec
	return gates.RunGate(env, gates.Gate{Name: "producers-emulated", Device: true, Run: func(t *gates.T) { runProducerCases(t, emulatedCases) }})
}

func TestGatePassesOnAnEmulatedDevice(t *testing.T) {
	for _, info := range fakeTargets {
		e := &emulator{}
		r := runEmulated(t, info, e)
		if r.Status != gates.Pass {
			t.Errorf("%s: %s: %s\n%s", info.Arch, r.Status, r.Reason, strings.Join(r.Failures, "\n"))
		}
		if e.n == 0 || r.Metrics["variant_runs"] != float64(e.n) {
			t.Errorf("%s: %d launches emulated, the gate counted %v", info.Arch, e.n, r.Metrics["variant_runs"])
		}
	}
}

// Each kernel in turn writes nothing, or one wrong byte, in one case only,
// in the decode band and in prefill (after correct runs of every kernel on earlier cases, and of
// the kernels before it in the same case, whose downloads a stale host
// slice would still hold): the gate must fail naming that kernel, and
// only that one.
func TestGateFailsOneWrongKernel(t *testing.T) {
	info := fakeTargets[0]
	for _, bad := range []producerCase{emulatedCases[2], emulatedCases[3]} { // decode band, prefill
		ks := caseKernelsFor(info, bad.M)
		if len(ks) == 0 {
			t.Fatalf("no kernels at M=%d", bad.M)
		}
		oneWrongKernel(t, info, bad, ks)
	}
}

func oneWrongKernel(t *testing.T, info gpu.Info, bad producerCase, ks []kernels.Kernel) {
	for _, kc := range ks {
		for _, how := range []string{"nothing", "one byte"} {
			t.Run(fmt.Sprintf("M=%d/%s/%s", bad.M, kc.Name, how), func(t *testing.T) {
				e := &emulator{spoil: func(kernel string, M int, out *emulated) {
					if kernel != kc.Name || M != bad.M {
						return
					}
					if how == "nothing" {
						*out = emulated{}
						return
					}
					b := &out.codes
					if out.xr != nil {
						b = &out.xr
					}
					*b = append([]byte{}, *b...)
					(*b)[len(*b)/2] ^= 0x01
				}}
				r := runEmulated(t, info, e)
				if r.Status != gates.Fail {
					t.Fatalf("status %s with %s spoiled (%s)", r.Status, kc.Name, how)
				}
				all := strings.Join(append([]string{r.Reason}, r.Failures...), "\n")
				if !strings.Contains(all, kc.Name+" ") || !strings.Contains(all, fmt.Sprintf("M=%d", bad.M)) {
					t.Errorf("failures do not name %s at M=%d:\n%s", kc.Name, bad.M, all)
				}
				for _, other := range ks {
					if other.Name != kc.Name && strings.Contains(all, other.Name+" ") {
						t.Errorf("a correct kernel %s failed:\n%s", other.Name, all)
					}
				}
			})
		}
	}
}

// caseKernelsFor is caseKernels outside a gate: the kernels a case at M
// runs on info's arch (the full suite).
func caseKernelsFor(info gpu.Info, M int) []kernels.Kernel {
	var out []kernels.Kernel
	gates.RunGate(&gates.Env{Dev: fakegpu.New(info), Full: true}, gates.Gate{Name: "list", Run: func(t *gates.T) { out = caseKernels(t, M) }})
	return out
}

// A case whose inputs cannot be built stops the gate with the case named
// (the prefetching goroutine's error reaches the gate), after the cases
// before it ran.
func TestGateStopsOnAnInputError(t *testing.T) {
	e := &emulator{}
	env, dev := faketest.Env(t, fakeTargets[0])
	dev.Exec = e.exec
	cases := []producerCase{emulatedCases[0], {K: 200, P: 1, M: 8, dist: "normal"}, emulatedCases[1]}
	r := gates.RunGate(env, gates.Gate{Name: "producers-bad-input", Device: true, Run: func(t *gates.T) { runProducerCases(t, cases) }})
	if r.Status != gates.Fail || !strings.Contains(r.Reason, "case 1 (K=200 P=1 M=8): inputs and mirror") || !strings.Contains(r.Reason, "multiple of 128") {
		t.Fatalf("%s: %s", r.Status, r.Reason)
	}
	if e.n == 0 {
		t.Error("the case before the bad one did not run")
	}
}
