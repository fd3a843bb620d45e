package producers

import (
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/internal/par"
	"github.com/parharness/parharness/refimpl"
)

// ChainWant is what the rotate-and-quantize chain (rot/rotq.h) writes for
// bf16 rows, as device bytes, partition major: the per-group outputs
// (decode band; empty unless asked for) and the per-token outputs in both
// code layouts. Every family whose kernels end in the chain (the producers,
// the norm-fed and elementwise-fed stream producers) checks against it, so
// the chain's mirror is written once.
type ChainWant struct {
	GroupCodes, GroupScales, GroupRSums []byte // [P,M,K], [P,M,G], [P,M,G]
	TokCodesRow, TokCodesTiled          []byte // [P,M,K], [P,Mpad,K]
	TokScales, TokRSums                 []byte // [P,M], [P,M,G]
}

// NewChainWant allocates the outputs of M rows of K in P partitions.
func NewChainWant(M, K, P int, withGroup bool) ChainWant {
	G := K / refimpl.GroupSize
	w := ChainWant{TokCodesRow: make([]byte, P*M*K), TokCodesTiled: make([]byte, P*refimpl.PadRows(M)*K),
		TokScales: make([]byte, 4*P*M), TokRSums: make([]byte, 4*P*M*G),
		GroupCodes: []byte{}, GroupScales: []byte{}, GroupRSums: []byte{}}
	if withGroup {
		w.GroupCodes, w.GroupScales, w.GroupRSums = make([]byte, P*M*K), make([]byte, 4*P*M*G), make([]byte, 4*P*M*G)
	}
	return w
}

// PutRows writes rows m0..m0+n-1 of partition p of an M-row case from
// their float32 rotated values v (n*K): the per-group outputs when
// withGroup, then the per-token outputs of the bf16-rounded rows, which it
// returns (bits h, values f) for callers that also write pass A's rows.
func (w *ChainWant) PutRows(M, K, p, m0, n int, v []float32, withGroup bool) (h []uint16, f []float32) {
	G := K / refimpl.GroupSize
	row := p*M + m0 // partition-major row index
	if withGroup {
		q := refimpl.QuantizeActGroup(v, n, K)
		copy(w.GroupCodes[row*K:], q.Codes)
		gates.PutF32(w.GroupScales[4*row*G:], q.GroupScale)
		gates.PutF32(w.GroupRSums[4*row*G:], q.RowSums)
	}
	h, f = refimpl.RoundRowsBF16(v)
	q := refimpl.QuantizeActToken(f, n, K)
	copy(w.TokCodesRow[row*K:], q.Codes)
	gates.PutF32(w.TokScales[4*row:], q.TokenScale)
	gates.PutF32(w.TokRSums[4*row*G:], q.RowSums)
	Mpad := refimpl.PadRows(M)
	tiled := w.TokCodesTiled[p*Mpad*K : (p+1)*Mpad*K]
	for i := 0; i < n; i++ {
		for k, code := range q.Codes[i*K : (i+1)*K] {
			tiled[refimpl.TiledOffset(m0+i, k, K)] = code
		}
	}
	return h, f
}

// BuildChainWant is the chain's outputs for bf16 rows [M, K] (the same
// rows for every partition), on every CPU: a task per partition and
// rowBlock rows, each writing only its own rows, so the bytes do not
// depend on the schedule.
func BuildChainWant(rr *refimpl.RotRecords, rows []uint16, M, K, P int, withGroup bool) ChainWant {
	w := NewChainWant(M, K, P, withGroup)
	forRowBlocks(M, P, func(p, m0, n int) {
		v := make([]float32, n*K)
		rr.RotateF32Into(v, rows[m0*K:(m0+n)*K], n, p)
		w.PutRows(M, K, p, m0, n, v, withGroup)
	})
	return w
}

// forRowBlocks runs f(p, m0, n) for every partition and block of rowBlock
// rows (n of them, the last block shorter) over every CPU.
func forRowBlocks(M, P int, f func(p, m0, n int)) {
	blocks := (M + rowBlock - 1) / rowBlock
	par.For(P*blocks, func(t int) {
		p, m0 := t/blocks, (t%blocks)*rowBlock
		f(p, m0, min(rowBlock, M-m0))
	})
}
