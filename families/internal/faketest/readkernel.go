package faketest

import "encoding/binary"

// ReadKernel is scrub_read_v4 and read_v4x4 (families/basics/copy.hip)
// as their threads run them (the two read the same vectors a thread), for
// a fake device to execute: thread t of block b XORs the
// 32-bit words of vectors b·256 + t, + 256·blocks, ... below n; block b
// stores the XOR of its threads' values. skip drops one block's store (a
// grid that misses work); -1 drops none.
func ReadKernel(src []byte, n, blocks, skip int) []byte {
	out := make([]byte, 4*blocks)
	for b := 0; b < blocks; b++ {
		var blk uint32
		for t := 0; t < 256; t++ {
			var acc uint32
			for i := b*256 + t; i < n; i += 256 * blocks {
				for w := 0; w < 4; w++ {
					acc ^= binary.LittleEndian.Uint32(src[16*i+4*w:])
				}
			}
			blk ^= acc
		}
		if b != skip {
			binary.LittleEndian.PutUint32(out[4*b:], blk)
		}
	}
	return out
}
