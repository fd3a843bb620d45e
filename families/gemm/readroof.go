package gemm

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/parharness/parharness/bench"
	"github.com/parharness/parharness/families/basics"
	"github.com/parharness/parharness/gpu"
)

// DecReadVariant names the decode suite's weight-read roof (timed only
// when --variants names it): basics.RoofKernel reading buffer set k's
// weight words and nothing else. Its record's bytes are the words' alone,
// so its GB/s is what a plain launch that did nothing but stream those
// bytes reaches at this size and in this regime, launch, first-byte
// latency and tail included. The 1 GiB copy ceiling amortizes those; a
// decode call of a few microseconds cannot. In the isolated regime the
// roof is the figure a lone decode launch is measured against; in the
// stream regime a PDL launch overlaps its start with the previous call
// and can pass it.
const DecReadVariant = "read"

// decReadVariant is the weight-read roof of b's point over words (the
// weight words, the same in every buffer set), checked per set: each
// block's word against the host's XOR of the words the block should read.
func (b *gemmBufs) decReadVariant(words []byte) (bench.Variant, error) {
	n := int64(len(words) / 16)
	grid, err := basics.RoofGrid(b.c, n)
	if err != nil {
		return bench.Variant{}, err
	}
	blocks := int(grid.X)
	want, err := basics.ReadSink(words, blocks)
	if err != nil {
		return bench.Variant{}, fmt.Errorf("read roof: %w", err)
	}
	sinks, err := bench.AllocCopies(b.c, 4*blocks, b.copies)
	if err != nil {
		return bench.Variant{}, err
	}
	f, err := b.c.Launcher(basics.RoofKernel, grid, gpu.D1(256), 0, func(k int) []any {
		return []any{b.w.At(k), sinks.At(k), uint64(n)}
	})
	if err != nil {
		return bench.Variant{}, err
	}
	check := bench.PoisonedOutputCheck(b.c.Dev, sinks, 0, 0, func(k int, got []byte) error {
		for i := 0; i < blocks; i++ {
			if g, w := got[4*i:4*i+4], want[4*i:4*i+4]; !bytes.Equal(g, w) {
				return fmt.Errorf("read roof, buffer set %d: block %d of %d stored %#08x, the XOR of its share of the weights is %#08x",
					k, i, blocks, binary.LittleEndian.Uint32(g), binary.LittleEndian.Uint32(w))
			}
		}
		return nil
	})
	return bench.Variant{Name: DecReadVariant, Enqueue: f, Check: check, Roof: true, Bytes: int64(len(words))}, nil
}
