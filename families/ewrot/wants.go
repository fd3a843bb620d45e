package ewrot

import (
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/internal/par"
	"github.com/parharness/parharness/refimpl"
)

// Want is what every ewrot kernel must write for one input set, as the
// device buffers' bytes, partition major: the op's bf16 rows (ew_op_bf16),
// the decode-band outputs (ew_rotq_group; empty unless built with them)
// and the per-token outputs in both layouts (ew_rotq_token). The producer
// half is refimpl's mirror of rotq.h on the op's rows, so these are also
// the bytes the producers' own kernels write on ew_op_bf16's output.
type Want struct {
	Rows                               []byte // [M, K] bf16
	GroupCodes, GroupScales, GroupRSum []byte
	TokCodesRow, TokCodesTiled         []byte
	TokScales, TokRSum                 []byte
}

// rowBlock is one mirror task's rows: one tile of the tiled layout.
const rowBlock = 16

// BuildWant computes a Want from the op's bf16 rows y [M, K] and the
// rotation records, on every CPU (a task per partition and 16-row block,
// each writing only its own rows, so the bytes do not depend on the
// schedule).
func BuildWant(rr *refimpl.RotRecords, y []uint16, M, K, P int, withGroup bool) Want {
	G, Mpad := K/refimpl.GroupSize, refimpl.PadRows(M)
	w := Want{Rows: gates.U16Bytes(y), TokCodesRow: make([]byte, P*M*K), TokCodesTiled: make([]byte, P*Mpad*K),
		TokScales: make([]byte, 4*P*M), TokRSum: make([]byte, 4*P*M*G), GroupCodes: []byte{}, GroupScales: []byte{}, GroupRSum: []byte{}}
	if withGroup {
		w.GroupCodes, w.GroupScales, w.GroupRSum = make([]byte, P*M*K), make([]byte, 4*P*M*G), make([]byte, 4*P*M*G)
	}
	blocks := (M + rowBlock - 1) / rowBlock
	par.For(P*blocks, func(t int) {
		p, m0 := t/blocks, (t%blocks)*rowBlock
		n := min(rowBlock, M-m0)
		v := make([]float32, n*K)
		rr.RotateF32Into(v, y[m0*K:(m0+n)*K], n, p)
		row := p*M + m0
		if withGroup {
			q := refimpl.QuantizeActGroup(v, n, K)
			copy(w.GroupCodes[row*K:], q.Codes)
			copy(w.GroupScales[4*row*G:], gates.F32Bytes(q.GroupScale))
			copy(w.GroupRSum[4*row*G:], gates.F32Bytes(q.RowSums))
		}
		_, f := refimpl.RoundRowsBF16(v)
		q := refimpl.QuantizeActToken(f, n, K)
		copy(w.TokCodesRow[row*K:], q.Codes)
		copy(w.TokScales[4*row:], gates.F32Bytes(q.TokenScale))
		copy(w.TokRSum[4*row*G:], gates.F32Bytes(q.RowSums))
		tiled := w.TokCodesTiled[p*Mpad*K : (p+1)*Mpad*K]
		for i := 0; i < n; i++ {
			for k, code := range q.Codes[i*K : (i+1)*K] {
				tiled[refimpl.TiledOffset(m0+i, k, K)] = code
			}
		}
	})
	return w
}
