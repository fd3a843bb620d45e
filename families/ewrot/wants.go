package ewrot

import (
	"github.com/parharness/parharness/families/producers"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/refimpl"
)

// Want is what every ewrot kernel must write for one input set, as the
// device buffers' bytes, partition major: the op's bf16 rows (ew_op_bf16),
// the decode-band outputs (ew_rotq_group; empty unless built with them)
// and the per-token outputs in both layouts (ew_rotq_token). The producer
// half is refimpl's mirror of rotq.h on the op's rows, so these are also
// the bytes the producers' own kernels write on ew_op_bf16's output.
type Want struct {
	Rows []byte // [M, K] bf16
	producers.ChainWant
}

// BuildWant computes a Want from the op's bf16 rows y [M, K] and the
// rotation records, on every CPU (producers.BuildChainWant).
func BuildWant(rr *refimpl.RotRecords, y []uint16, M, K, P int, withGroup bool) Want {
	return Want{Rows: gates.U16Bytes(y), ChainWant: producers.BuildChainWant(rr, y, M, K, P, withGroup)}
}
