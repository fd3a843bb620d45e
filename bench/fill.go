package bench

import (
	"math/rand/v2"

	"github.com/parharness/parharness/gpu"
)

// fillSmallRandom fills n bytes with a repeated 1 MiB block of random
// values of modest magnitude in the element type (bf16 in [-1, 1); e4m3
// codes with magnitude below 1), so timing runs see realistic bit activity
// and never NaN or Inf.
func fillSmallRandom(c *Ctx, p gpu.Ptr, n int64, typ gpu.GemmType) error {
	const block = 1 << 20
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	buf := make([]byte, block)
	if typ == gpu.GemmBF16 {
		for i := 0; i+1 < block; i += 2 {
			// bf16: sign, exponent 0x70..0x7E (2^-15 .. 2^-1), random mantissa
			e := uint16(0x70 + rng.IntN(15))
			v := uint16(rng.IntN(2))<<15 | e<<7 | uint16(rng.IntN(128))
			buf[i], buf[i+1] = byte(v), byte(v>>8)
		}
	} else {
		for i := range buf {
			// e4m3: exponent field 1..6 (2^-6 .. 2^-1), random mantissa and sign
			buf[i] = byte(rng.IntN(2))<<7 | byte(1+rng.IntN(6))<<3 | byte(rng.IntN(8))
		}
	}
	for off := int64(0); off < n; off += block {
		m := min(block, n-off)
		if err := c.Dev.HtoD(p.Add(int(off)), buf[:m]); err != nil {
			return err
		}
	}
	return nil
}
