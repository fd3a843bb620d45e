package gemm

import (
	"math/bits"
	"math/rand"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/parharness/parharness/refimpl"
)

// The Go mirror of the sm_90 5-bit f16 operand in gemm.hip's "5-bit weight
// operands" section (w5_word_f16x2), operation for operation, and the
// tests that prove it equals the operand it replaced (w5_pair_f16x2: f16
// c − 16 for every code) on every input.

// The constants of the device code; TestW5OpConstantsInKernelSource finds
// them in gemm.hip.
const (
	w5EvenMul   = 0x00410410 // bits 0, 2, 4, 6 to 4, 12, 20, 28 (refimpl.Int5SpreadMul)
	w5OddMul    = 0x02082080 // bits 1, 3, 5, 7 to 8, 16, 24, 32
	w5EvenMask  = 0x0F0F0F0F // X takes w here (nibbles 0, 2, 4, 6), e elsewhere
	w5OddMask   = 0xF0F0F0F0 // Y takes w here (nibbles 1, 3, 5, 7), o elsewhere
	w5LowField  = 0x001F001F // pairs 0, 2: codes at bits 0..4, 16..20
	w5HighField = 0x01F001F0 // pairs 1, 3: codes at bits 4..8, 20..24
	w5Magic     = 0x64006400 // f16 1024 in each half
)

// w5Spread is w5_word_f16x2's two multiplies: e (low word of the even
// bits' product), o:oh (the odd bits' 64-bit product).
func w5Spread(q uint32) (e, o, oh uint32) {
	oh, o = bits.Mul32(q&0xAA, w5OddMul)
	return (q & 0x55) * w5EvenMul, o, oh
}

func lop3Select(a, b, mask uint32) uint32 { return a&mask | b&^mask }

// w5Fields is w5_word_f16x2 up to the f16 step: x[j] is pair j's word,
// 0x6400 | c (j = 0, 2) or 0x6400 | 16c (j = 1, 3) in each half.
func w5Fields(w, q uint32) (x [4]uint32) {
	e, o, oh := w5Spread(q)
	ex, y := lop3Select(w, e, w5EvenMask), lop3Select(w, o, w5OddMask)
	y3 := uint32((uint64(oh)<<32 | uint64(y)) >> 8) // shf.r {oh:y} by 8
	x[0], x[2] = ex&w5LowField|w5Magic, (ex>>8)&w5LowField|w5Magic
	x[1], x[3] = y&w5HighField|w5Magic, y3&w5HighField|w5Magic
	return x
}

// w5F16Step is the f16 step of w5_word_f16x2 on one half h of pair j's
// word: h − 1040 (j even) or h × 1/16 − 80 in one fma (j odd). Both are
// exact in float64, so the f16 rounding of the float64 result is the
// device's single rounding.
func w5F16Step(h uint16, j int) uint16 {
	x := refimpl.F16ToF64(h)
	if j%2 == 0 {
		return refimpl.F64ToF16(x - 1040)
	}
	return refimpl.F64ToF16(x*0.0625 - 80)
}

// w5Word is w5_word_f16x2: pair j's f16x2 (low half: nibble j, high half:
// nibble j+4).
func w5Word(w, q uint32) (h [4]uint32) {
	x := w5Fields(w, q)
	for j := range x {
		h[j] = uint32(w5F16Step(uint16(x[j]), j)) | uint32(w5F16Step(uint16(x[j]>>16), j))<<16
	}
	return h
}

// w5Code is the 5-bit code of nibble l of w with plane byte q.
func w5Code(w, q uint32, l int) uint32 { return w>>(4*l)&0xF | (q>>l&1)<<4 }

// w5WantFields is the layout w5Fields must produce, from the definition.
func w5WantFields(w, q uint32) (x [4]uint32) {
	for j := 0; j < 4; j++ {
		lo, hi := w5Code(w, q, j), w5Code(w, q, j+4)
		if j%2 == 1 {
			lo, hi = lo<<4, hi<<4
		}
		x[j] = w5Magic | lo | hi<<16
	}
	return x
}

// w5WantWord is the operand w5_pair_f16x2 gives: f16 c − 16 per half.
func w5WantWord(w, q uint32) (h [4]uint32) {
	for j := 0; j < 4; j++ {
		lo := refimpl.F64ToF16(float64(w5Code(w, q, j)) - 16)
		hi := refimpl.F64ToF16(float64(w5Code(w, q, j+4)) - 16)
		h[j] = uint32(lo) | uint32(hi)<<16
	}
	return h
}

// The spread's claim: for every plane byte q, with any bits above 7, e
// bit 8b + 4 = q_2b, o bit 8b + 8 = q_2b+1 (b = 0..2) and oh bit 0 = q7.
// A multiply whose partial products carry into a read bit fails here (one
// multiply of the nibble split q0..3 | q4..7 << 16 by 0x2490 did: bits 0
// and 3 meet on bit 7 and carry into bit 8).
func TestW5SpreadPlacesEveryFifthBit(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for q := uint32(0); q < 256; q++ {
		for _, above := range []uint32{0, 0xFFFFFF00, rng.Uint32() &^ 0xFF, rng.Uint32() &^ 0xFF} {
			e, o, oh := w5Spread(q | above)
			for b := 0; b < 4; b++ {
				if got := e >> (8*b + 4) & 1; got != q>>(2*b)&1 {
					t.Fatalf("q %#08x: e bit %d = %d, want q bit %d (e %#08x)", q|above, 8*b+4, got, 2*b, e)
				}
			}
			for b := 0; b < 3; b++ {
				if got := o >> (8*b + 8) & 1; got != q>>(2*b+1)&1 {
					t.Fatalf("q %#08x: o bit %d = %d, want q bit %d (o %#08x)", q|above, 8*b+8, got, 2*b+1, o)
				}
			}
			if oh&1 != q>>7&1 {
				t.Fatalf("q %#08x: oh bit 0 = %d, want q bit 7", q|above, oh&1)
			}
		}
	}
}

// Exhaustive over every (w, q). Every operation from (w, e, o, oh) to the
// pre-f16 words is a bitwise and/or/select with constants or a fixed
// shift or funnel, so for a fixed q each pre-f16 bit is a constant, a bit
// of e, o, oh (functions of q), or one fixed bit of w: w5Fields(w_lo | w_hi)
// = w5Fields(w_lo) | w5Fields(w_hi) for disjoint w_lo (bits 0..15) and
// w_hi (bits 16..31), and the wanted layout splits the same way. So all
// 2^8 q x (2^16 low halves, high half 0) and x (2^16 high halves, low half
// 0) cover all 2^40 inputs; the OR split itself is checked on random words
// (it fails if a step reads w other than bitwise). The f16 step then sees
// only the 32 values 0x6400 | c or 0x6400 | 16c per half and form, all
// checked.
func TestW5OperandEqualsDefinitionOnEveryInput(t *testing.T) {
	t.Run("fields", func(t *testing.T) {
		for q := uint32(0); q < 256; q++ {
			for u := uint32(0); u < 1<<16; u++ {
				for _, w := range [2]uint32{u, u << 16} {
					if got, want := w5Fields(w, q), w5WantFields(w, q); got != want {
						t.Fatalf("w %#08x q %#02x: fields %#08x, want %#08x", w, q, got, want)
					}
				}
			}
		}
	})
	t.Run("or_split", func(t *testing.T) {
		rng := rand.New(rand.NewSource(16))
		for i := 0; i < 1<<16; i++ {
			w, q := rng.Uint32(), rng.Uint32()&0xFF
			a, b, whole := w5Fields(w&0xFFFF, q), w5Fields(w&0xFFFF0000, q), w5Fields(w, q)
			for j := range whole {
				if whole[j] != a[j]|b[j] {
					t.Fatalf("w %#08x q %#02x pair %d: fields %#08x, halves OR to %#08x", w, q, j, whole[j], a[j]|b[j])
				}
			}
		}
	})
	t.Run("f16_step", func(t *testing.T) {
		for c := uint32(0); c < 32; c++ {
			want := refimpl.F64ToF16(float64(c) - 16)
			for j := 0; j < 4; j++ {
				h := uint16(0x6400 | c)
				if j%2 == 1 {
					h = uint16(0x6400 | c<<4)
				}
				if got := w5F16Step(h, j); got != want {
					t.Fatalf("code %d pair %d: f16 %#04x, want %#04x (c − 16)", c, j, got, want)
				}
			}
		}
	})
	t.Run("random_words", func(t *testing.T) {
		rng := rand.New(rand.NewSource(32))
		for i := 0; i < 1<<16; i++ {
			w, p, s := rng.Uint32(), rng.Uint32(), rng.Uint32()&3
			q := p >> (8 * s) // as the decode and prefill bodies pass it
			if got, want := w5Word(w, q), w5WantWord(w, q); got != want {
				t.Fatalf("w %#08x q %#08x: operand %#08x, want %#08x", w, q, got, want)
			}
		}
	})
}

// The mirror's constants and instruction forms are the kernel's: each
// must appear in gemm.hip's 5-bit section, so a change on one side only
// fails here.
func TestW5OpConstantsInKernelSource(t *testing.T) {
	src, err := os.ReadFile("gemm.hip")
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	beg, end := strings.Index(text, "// --- 5-bit weight operands"), strings.Index(text, "// ==== decode")
	if beg < 0 || end < beg {
		beg, end = strings.Index(text, "5-bit weight operands"), strings.Index(text, "================================================================= decode")
	}
	if beg < 0 || end < beg {
		t.Fatal("gemm.hip: no 5-bit weight operands section before the decode section")
	}
	section := text[beg:end]
	for _, want := range []string{
		"(q & 0x55u) * 0x00410410u", "mul.wide.u32 t, %2, 0x2082080;", `"r"(q & 0xAAu)`,
		"lop3_select(w, e, 0x0F0F0F0Fu)", "lop3_select(w, o, 0xF0F0F0F0u)",
		"shf.r.clamp.b32 %0, %1, %2, 8;",
		"lop3_and_or(x, 0x001F001Fu, 0x64006400u)", "lop3_and_or(x >> 8, 0x001F001Fu, 0x64006400u)",
		"lop3_and_or(y, 0x01F001F0u, 0x64006400u)", "lop3_and_or(y3, 0x01F001F0u, 0x64006400u)",
		`"r"(x0), "r"(0x64106410u)`, `"r"(x2), "r"(0x64106410u)`,
		`"r"(x1), "r"(0x2C002C00u), "r"(0xD500D500u)`, `"r"(x3), "r"(0x2C002C00u), "r"(0xD500D500u)`,
		"lop3.b32 %0, %1, %2, %3, 0xE4;",
	} {
		if !strings.Contains(section, want) {
			t.Errorf("gemm.hip's 5-bit section lacks %q, which the Go mirror (w5op_test.go) assumes: update both together", want)
		}
	}
	// lop3 LUT 0xE4 is (a & c) | (b & ~c) for a = 0xF0, b = 0xCC, c = 0xAA.
	if lut := 0xF0&0xAA | 0xCC&^0xAA; lut != 0xE4 {
		t.Errorf("select LUT %#x, want 0xe4", lut)
	}
	if regexp.MustCompile(`w5_pair_f16x2\(`).MatchString(section) {
		t.Errorf("gemm.hip's 5-bit section still calls w5_pair_f16x2: the sm_90 operand is w5_word_f16x2")
	}
}
