package bench

import (
	"math/rand/v2"

	"github.com/parharness/parharness/gpu"
)

// FillSmallRandom fills n bytes with a repeated 1 MiB block of random
// values of modest magnitude in the element type (bf16 in [-1, 1); e4m3
// codes with magnitude below 1), so timing runs see realistic bit activity
// and never NaN or Inf.
func FillSmallRandom(c *Ctx, p gpu.Ptr, n int64, typ gpu.GemmType) error {
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
	return UploadRepeated(c, p, n, buf)
}

// UploadRepeated fills n bytes at p with buf repeated (the last copy cut
// short): one pattern block uploaded over and over instead of n bytes of
// host memory.
func UploadRepeated(c *Ctx, p gpu.Ptr, n int64, buf []byte) error {
	block := int64(len(buf))
	for off := int64(0); off < n; off += block {
		if err := c.Dev.HtoD(p.Add(int(off)), buf[:min(block, n-off)]); err != nil {
			return err
		}
	}
	return nil
}

// CopySet is one buffer of a cold rotation: its copies laid end to end,
// copy k at p + k·stride (stride: the buffer's size rounded up to 256
// bytes, so every copy stays aligned for vector loads).
type CopySet struct {
	Base   gpu.Ptr
	Stride int
	Size   int // bytes of one copy
}

// At is copy k of the buffer.
func (s CopySet) At(k int) gpu.Ptr { return s.Base.Add(k * s.Stride) }

// CopyStride is the stride of a buffer of size bytes.
func CopyStride(size int) int { return (size + 255) &^ 255 }

// AllocCopies allocates copies copies of a size-byte buffer.
func AllocCopies(c *Ctx, size, copies int) (CopySet, error) {
	s := CopySet{Stride: CopyStride(size), Size: size}
	var err error
	s.Base, err = c.Alloc(int64(s.Stride) * int64(copies))
	return s, err
}

// CopyUpload is host data for one buffer of a rotated set.
type CopyUpload struct {
	Set  CopySet
	Data []byte
}

// UploadLastCopy overwrites the last copy of each buffer with its data:
// the copies before it hold one input set and the last another, so a
// launch that reads a fixed copy instead of its own writes the other
// set's output where the check looks.
func UploadLastCopy(c *Ctx, copies int, ups ...CopyUpload) error {
	for _, u := range ups {
		if err := c.Dev.HtoD(u.Set.At(copies-1), u.Data); err != nil {
			return err
		}
	}
	return nil
}

// UploadEachCopy uploads every buffer's data into each of the copies of the
// cold rotation (the same contents in every copy).
func UploadEachCopy(c *Ctx, copies int, ups ...CopyUpload) error {
	for k := 0; k < copies; k++ {
		for _, u := range ups {
			if err := c.Dev.HtoD(u.Set.At(k), u.Data); err != nil {
				return err
			}
		}
	}
	return nil
}

// Download reads copy k of the buffer.
func (s CopySet) Download(dev gpu.Device, k int) ([]byte, error) {
	b := make([]byte, s.Size)
	return b, dev.DtoH(b, s.At(k))
}

// Poison fills copy k of the buffer with v.
func (s CopySet) Poison(dev gpu.Device, k int, v byte) error {
	return dev.Memset(s.At(k), v, s.Size)
}

// PoisonedOutputCheck is the Check of a variant that writes out (one
// buffer per copy): Prepare fills copy k of out with 0xFF (a NaN pattern
// no kernel writes) and, when scratchBytes > 0, the whole of scratch (a
// split-K workspace: a reduce that reads a partial no block wrote reads
// NaN); Verify downloads copy k and hands it to verify.
func PoisonedOutputCheck(dev gpu.Device, out CopySet, scratch gpu.Ptr, scratchBytes int, verify func(k int, got []byte) error) *Check {
	return &Check{
		Prepare: func(k int) error {
			if scratchBytes > 0 {
				if err := dev.Memset(scratch, 0xFF, scratchBytes); err != nil {
					return err
				}
			}
			return out.Poison(dev, k, 0xFF)
		},
		Verify: func(k int) error {
			got, err := out.Download(dev, k)
			if err != nil {
				return err
			}
			return verify(k, got)
		},
	}
}
