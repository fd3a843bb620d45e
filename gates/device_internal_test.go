package gates

import "testing"

// TestAllBytes: every length around the 4 KiB piece, every fill (0 is the
// zero-value piece), and one wrong byte at the first, a piece edge and the
// last position is seen.
func TestAllBytes(t *testing.T) {
	for _, fill := range []byte{0, 0xFF, 0x5A} {
		for _, n := range []int{0, 1, 4095, 4096, 4097, 3*4096 + 17} {
			b := make([]byte, n)
			for i := range b {
				b[i] = fill
			}
			if !allBytes(b, fill) {
				t.Fatalf("fill %#x n=%d: all filled, reported not", fill, n)
			}
			for _, at := range []int{0, 4095, 4096, n - 1} {
				if at < 0 || at >= n {
					continue
				}
				b[at] ^= 1
				if allBytes(b, fill) {
					t.Fatalf("fill %#x n=%d: byte %d changed, reported all filled", fill, n, at)
				}
				b[at] ^= 1
			}
		}
	}
}
