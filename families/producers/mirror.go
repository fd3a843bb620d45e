package producers

import (
	"math"
	"math/rand/v2"

	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/internal/par"
	"github.com/parharness/parharness/refimpl"
)

// The Go mirror of one gate case: what every producer kernel must write,
// as the bytes the device buffers hold.
//
// Every kernel of one Op is checked against the same bytes, so a case's
// mirror is computed once, before its first launch, and shared by every
// variant and layout. buildMirror computes it on every CPU: each task is
// one partition's block of up to 16 rows (one fragment tile), which it
// rotates, rounds and quantizes with refimpl's functions and writes to
// its own rows of the outputs, so the bytes do not depend on how many
// tasks run or in what order. serialMirror is the same mirror composed of
// refimpl's whole-matrix functions, one partition at a time: the
// definition buildMirror must equal byte for byte (mirror_test.go), and
// what the semantics gate reads (it needs the float32 rows).

// rowBlock is the rows of one mirror task: one tile of the tiled layout.
const rowBlock = 16

// randomActivations draws bf16 rows [M, K] of a distribution. One value
// of rng seeds the rows; row m draws from its own stream (PCG(seed, m)),
// so the rows are drawn in parallel and the values do not depend on the
// CPU count.
func randomActivations(rng *rand.Rand, M, K int, dist string) []uint16 {
	seed := rng.Uint64()
	x := make([]uint16, M*K)
	par.For(M, func(m int) {
		r := rand.New(rand.NewPCG(seed, uint64(m)))
		rowScale := math.Exp(r.NormFloat64())
		for k := 0; k < K; k++ {
			v := r.NormFloat64() * rowScale
			switch dist {
			case "subnormal":
				// Whole rows and whole groups in the bf16/float32 subnormal
				// range, so group amaxes and scales are subnormal too and a
				// kernel that flushes denormals (FTZ/DAZ) changes the bytes;
				// other groups mix tiny and normal values.
				g := k / refimpl.GroupSize
				switch {
				case m%2 == 0 || g%3 == 0:
					v *= 1e-39
				case r.IntN(4) != 0:
					v *= 1e-39
				}
			case "outlier":
				if r.IntN(100) == 0 {
					v *= 1000
				}
			}
			x[m*K+k] = refimpl.F64ToBF16(v)
		}
	})
	return x
}

// producerWant is what a producer Op must write, as bytes, partition
// major, from the mirror: the chain's outputs (OpGroup, OpPassC, OpToken)
// and pass A's.
type producerWant struct {
	ChainWant
	xr, gamax []byte // OpPassA (and OpPassC's inputs)
	// xrBuf and gamaxBuf are the whole pass-A buffers as the gate uploads
	// them for pass C and the fused producer: xr and gamax, then rowsPastM
	// rows of the 0xFF poison (xr and gamax are their starts).
	xrBuf, gamaxBuf []byte
}

// newWant allocates a case's output bytes; the pass-A buffers' tails hold
// the poison.
func newWant(c producerCase, withGroup bool) producerWant {
	K, P, M, G := c.K, c.P, c.M, c.K/refimpl.GroupSize
	w := producerWant{ChainWant: NewChainWant(M, K, P, withGroup),
		xrBuf: make([]byte, 2*(P*M*K+rowsPastM*K)), gamaxBuf: make([]byte, 4*(P*M*G+rowsPastM*G))}
	w.xr, w.gamax = w.xrBuf[:2*P*M*K], w.gamaxBuf[:4*P*M*G]
	for _, tail := range [][]byte{w.xrBuf[len(w.xr):], w.gamaxBuf[len(w.gamax):]} {
		for i := range tail {
			tail[i] = 0xFF
		}
	}
	return w
}

// putRows writes rows m0..m0+n-1 of partition p (n*K values, quantized
// from the float32 rotated rows v) into w: the chain's outputs and pass
// A's rows and amaxes.
func (w *producerWant) putRows(c producerCase, p, m0, n int, v []float32, withGroup bool) {
	K, M, G := c.K, c.M, c.K/refimpl.GroupSize
	row := p*M + m0 // partition-major row index
	h, f := w.PutRows(M, K, p, m0, n, v, withGroup)
	gates.PutU16(w.xr[2*row*K:], h)
	gates.PutF32(w.gamax[4*row*G:], refimpl.GroupAmax(f, n, K))
}

// buildMirror computes what the producers must write for one case (the
// per-group outputs only when withGroup), on every CPU.
func buildMirror(rr *refimpl.RotRecords, x []uint16, c producerCase, withGroup bool) producerWant {
	w := newWant(c, withGroup)
	forRowBlocks(c.M, c.P, func(p, m0, n int) {
		v := make([]float32, n*c.K)
		rr.RotateF32Into(v, x[m0*c.K:(m0+n)*c.K], n, p)
		w.putRows(c, p, m0, n, v, withGroup)
	})
	return w
}

// serialMirror is the mirror as refimpl's whole-matrix functions compose
// it, per partition p: the float32 rotated rows, their per-group
// quantization, pass A's bf16 rows and group amaxes, and the per-token
// quantization of those rows.
type serialMirror struct {
	c           producerCase
	rows        [][]float32
	groupQ      []*refimpl.QuantAct // nil entries unless withGroup
	xr          [][]uint16
	gamax       [][]float32
	tokQ        []*refimpl.QuantAct
	tiled       [][]byte
	withGroupOp bool
}

func buildSerialMirror(rr *refimpl.RotRecords, x []uint16, c producerCase, withGroup bool) *serialMirror {
	sm := &serialMirror{c: c, withGroupOp: withGroup}
	for p := 0; p < c.P; p++ {
		v := rr.RotateF32(x, c.M, p)
		sm.rows = append(sm.rows, v)
		var gq *refimpl.QuantAct
		if withGroup {
			gq = refimpl.QuantizeActGroup(v, c.M, c.K)
		}
		sm.groupQ = append(sm.groupQ, gq)
		h, f := refimpl.RoundRowsBF16(v)
		sm.xr = append(sm.xr, h)
		sm.gamax = append(sm.gamax, refimpl.GroupAmax(f, c.M, c.K))
		tq := refimpl.QuantizeActToken(f, c.M, c.K)
		sm.tokQ = append(sm.tokQ, tq)
		sm.tiled = append(sm.tiled, refimpl.TileRows(tq.Codes, c.M, c.K))
	}
	return sm
}

// want is the serial mirror's bytes, concatenated partition by partition.
func (sm *serialMirror) want() producerWant {
	w := newWant(sm.c, sm.withGroupOp)
	var codes, xr, gamax, tokCodes, tiled []byte
	var gs, gr, ts, tr []float32
	for p := 0; p < sm.c.P; p++ {
		if q := sm.groupQ[p]; q != nil {
			codes = append(codes, q.Codes...)
			gs, gr = append(gs, q.GroupScale...), append(gr, q.RowSums...)
		}
		xr = append(xr, gates.U16Bytes(sm.xr[p])...)
		gamax = append(gamax, gates.F32Bytes(sm.gamax[p])...)
		tokCodes, tiled = append(tokCodes, sm.tokQ[p].Codes...), append(tiled, sm.tiled[p]...)
		ts, tr = append(ts, sm.tokQ[p].TokenScale...), append(tr, sm.tokQ[p].RowSums...)
	}
	if sm.withGroupOp {
		copy(w.GroupCodes, codes)
		copy(w.GroupScales, gates.F32Bytes(gs))
		copy(w.GroupRSums, gates.F32Bytes(gr))
	}
	copy(w.xr, xr)
	copy(w.gamax, gamax)
	copy(w.TokCodesRow, tokCodes)
	copy(w.TokCodesTiled, tiled)
	copy(w.TokScales, gates.F32Bytes(ts))
	copy(w.TokRSums, gates.F32Bytes(tr))
	return w
}

// parallelU16Bytes is gates.U16Bytes on every CPU (a case's activations).
func parallelU16Bytes(v []uint16) []byte {
	b := make([]byte, 2*len(v))
	const span = 1 << 20
	par.For((len(v)+span-1)/span, func(i int) {
		lo, hi := i*span, min((i+1)*span, len(v))
		gates.PutU16(b[2*lo:2*hi], v[lo:hi])
	})
	return b
}

// producerInputs is one case's host data: the activations (and their
// bytes), the records of every launch form the case's kernels read, and
// the mirror's outputs.
type producerInputs struct {
	x      []uint16
	xBytes []byte
	rr     *refimpl.RotRecords
	sr     *refimpl.ShuffleRecords // nil unless a shuffle-form kernel runs
	want   producerWant
}

// newProducerInputs builds the rotation records, the shuffle-routed ones
// when a shuffle-form kernel will read them, and the mirror (with the
// per-group outputs when a group kernel will be checked).
func newProducerInputs(rots []*refimpl.Rotation, x []uint16, c producerCase, withGroup, withShuffle bool) (*producerInputs, error) {
	rr, err := refimpl.BuildRotRecords(rots)
	if err != nil {
		return nil, err
	}
	in := &producerInputs{x: x, xBytes: parallelU16Bytes(x), rr: rr}
	if withShuffle {
		if in.sr, err = refimpl.BuildShuffleRecords(rots); err != nil {
			return nil, err
		}
	}
	in.want = buildMirror(rr, x, c, withGroup)
	return in, nil
}
