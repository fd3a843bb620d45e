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
	return uploadRepeated(c, p, n, buf)
}

// uploadRepeated fills n bytes at p with buf repeated (the last copy cut
// short): one pattern block uploaded over and over instead of n bytes of
// host memory.
func uploadRepeated(c *Ctx, p gpu.Ptr, n int64, buf []byte) error {
	block := int64(len(buf))
	for off := int64(0); off < n; off += block {
		if err := c.Dev.HtoD(p.Add(int(off)), buf[:min(block, n-off)]); err != nil {
			return err
		}
	}
	return nil
}

// copySet is one buffer of a cold rotation: its copies laid end to end,
// copy k at p + k·stride (stride: the buffer's size rounded up to 256
// bytes, so every copy stays aligned for vector loads).
type copySet struct {
	p      gpu.Ptr
	stride int
}

// at is copy k of the buffer.
func (s copySet) at(k int) gpu.Ptr { return s.p.Add(k * s.stride) }

// copyStride is the stride of a buffer of size bytes.
func copyStride(size int) int { return (size + 255) &^ 255 }

// allocCopies allocates copies copies of a size-byte buffer.
func allocCopies(c *Ctx, size, copies int) (copySet, error) {
	s := copySet{stride: copyStride(size)}
	var err error
	s.p, err = c.Alloc(int64(s.stride) * int64(copies))
	return s, err
}

// copyUpload is host data for one buffer of a rotated set.
type copyUpload struct {
	set  copySet
	data []byte
}

// uploadEachCopy uploads every buffer's data into each of the copies of the
// cold rotation (the same contents in every copy).
func uploadEachCopy(c *Ctx, copies int, ups ...copyUpload) error {
	for k := 0; k < copies; k++ {
		for _, u := range ups {
			if err := c.Dev.HtoD(u.set.at(k), u.data); err != nil {
				return err
			}
		}
	}
	return nil
}
