package refimpl

import (
	"math/rand/v2"
	"testing"
)

// The plane order worked by hand from its definition: bit 8q + i of plane
// word c is nibble i of AWQ word 4c+q, column 32c + 8q + AWQOrder[i].
func TestInt5HandCase(t *testing.T) {
	codes := make([]uint8, 64)
	// column 0: word 0, byte 0, nibble 0 -> bit 0 of plane word 0
	// column 5: low nibble only (15), no fifth bit
	// column 25 = 24 + AWQOrder[4]: byte 3, nibble 4 -> bit 28 of word 0
	// column 33 = 32 + 1: word 1, byte 0, nibble awqSlot[1] = 4 -> bit 4
	// column 42 = 32 + 8 + 2: word 1, byte 1, nibble awqSlot[2] = 1 -> bit 9
	// column 63 = 32 + 24 + 7: word 1, byte 3, nibble 7 -> bit 31
	codes[0], codes[5], codes[25], codes[33], codes[42], codes[63] = 16, 15, 20, 31, 18, 17
	low, high := PackInt5(codes, 1, 64)
	if len(high) != 2 || uint32(high[0]) != 1|1<<28 || uint32(high[1]) != 1<<4|1<<9|1<<31 {
		t.Fatalf("plane = %#x %#x, want 0x10000001 0x80000210", uint32(high[0]), uint32(high[1]))
	}
	for _, c := range []struct{ col, low int }{{0, 0}, {5, 15}, {25, 4}, {33, 15}, {42, 2}, {63, 1}} {
		if got := AWQNibble(low, c.col); int(got) != c.low {
			t.Errorf("low nibble of column %d = %d, want %d", c.col, got, c.low)
		}
	}
	if got := UnpackInt5(low, high, 1, 64); string(got) != string(codes) {
		t.Fatalf("UnpackInt5 = %v", got)
	}
}

func TestInt5RoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	rows, n := 3, 96
	codes := make([]uint8, rows*n)
	for i := range codes {
		codes[i] = uint8(rng.IntN(32))
	}
	lo, hi := PackInt5(codes, rows, n)
	if got := UnpackInt5(lo, hi, rows, n); string(got) != string(codes) {
		t.Fatal("UnpackInt5(PackInt5(c)) != c")
	}
	// Every plane bit is used: 32 columns of code 16 set every bit of a word.
	all := make([]uint8, 32)
	for i := range all {
		all[i] = 16
	}
	if _, h := PackInt5(all, 1, 32); uint32(h[0]) != 0xFFFFFFFF {
		t.Fatalf("all fifth bits set: plane %#x", uint32(h[0]))
	}
}

// The checkpoint order and the unpack fit: spreading a plane word next to
// its four AWQ words gives every column's 5-bit code, byte b of the even
// word being nibble 2b and of the odd word nibble 2b+1.
func TestInt5SpreadReadsCheckpointOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n = 32
	for it := 0; it < 200; it++ {
		codes := make([]uint8, n)
		for i := range codes {
			codes[i] = uint8(rng.IntN(32))
		}
		low, high := PackInt5(codes, 1, n)
		even, odd := Int5Spread(uint32(high[0]))
		for q := 0; q < 4; q++ {
			w := uint32(low[q])
			ce := w&0x0F0F0F0F | even[q]
			co := w>>4&0x0F0F0F0F | odd[q]
			for b := 0; b < 4; b++ {
				if got, want := uint8(ce>>(8*b)), codes[8*q+AWQOrder[2*b]]; got != want {
					t.Fatalf("word %d byte %d (nibble %d): %d, want %d", q, b, 2*b, got, want)
				}
				if got, want := uint8(co>>(8*b)), codes[8*q+AWQOrder[2*b+1]]; got != want {
					t.Fatalf("word %d byte %d (nibble %d): %d, want %d", q, b, 2*b+1, got, want)
				}
			}
		}
	}
}

func TestInt5SpreadHandValues(t *testing.T) {
	cases := []struct {
		p         uint32
		even, odd [4]uint32
	}{
		{0, [4]uint32{}, [4]uint32{}},
		{0xFFFFFFFF, [4]uint32{0x10101010, 0x10101010, 0x10101010, 0x10101010}, [4]uint32{0x10101010, 0x10101010, 0x10101010, 0x10101010}},
		// bit 28 = byte 3, bit 4 (even, b = 2) -> bit 20 of even[3]
		{1 << 28, [4]uint32{0, 0, 0, 0x00100000}, [4]uint32{}},
		// bit 15 = byte 1, bit 7 (odd, b = 3) -> bit 28 of odd[1]
		{1 << 15, [4]uint32{}, [4]uint32{0, 0x10000000, 0, 0}},
		// 0x41 in byte 0 (bits 0 and 6: the two partial products that meet
		// on bit 10 and carry into 11)
		{0x41, [4]uint32{0x10000010, 0, 0, 0}, [4]uint32{}},
		// 0x43 adds bit 1, whose product lands on bit 11 beside that carry:
		// a spread masking with 0x57 instead of 0x55 carries into bit 12
		{0x43, [4]uint32{0x10000010, 0, 0, 0}, [4]uint32{0x10, 0, 0, 0}},
		{0x55AA0F00, [4]uint32{0, 0x00001010, 0, 0x10101010}, [4]uint32{0, 0x00001010, 0x10101010, 0}},
	}
	for _, c := range cases {
		e, o := Int5Spread(c.p)
		re, ro := Int5SpreadRef(c.p)
		if e != c.even || o != c.odd || re != c.even || ro != c.odd {
			t.Errorf("spread(%#08x) = %#x %#x, ref %#x %#x, want %#x %#x", c.p, e, o, re, ro, c.even, c.odd)
		}
	}
}

// A sample here; the int5-go-unpack gate compares all 2^32 words.
func TestInt5SpreadEqualsRefSample(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for i := 0; i < 1<<16; i++ {
		p := rng.Uint32()
		e, o := Int5Spread(p)
		re, ro := Int5SpreadRef(p)
		if e != re || o != ro {
			t.Fatalf("spread(%#08x) = %#x %#x, ref %#x %#x", p, e, o, re, ro)
		}
	}
}

func TestInt5Signed(t *testing.T) {
	for c := uint32(0); c < 32; c++ {
		if got := Int5Signed(c); got != int32(c)-16 {
			t.Errorf("Int5Signed(%d) = %d, want %d", c, got, int32(c)-16)
		}
		if got := Int5Signed(c | 0xFFFFFFE0); got != int32(c)-16 {
			t.Errorf("Int5Signed(%#x): bits above 4 not ignored: %d", c|0xFFFFFFE0, got)
		}
	}
}
