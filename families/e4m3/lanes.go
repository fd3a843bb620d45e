package e4m3

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/parharness/parharness/families/internal/grid1d"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/refimpl"
)

// The packed converts (two or four values per instruction) are where a
// lane-swap or a high-lane bug hides from a gate that feeds one lane: the
// pack_lanes kernel runs every packed convert the producers and GEMMs use
// with every lane fed, and e4m3-device-lanes compares each output lane with
// the Go value it must equal.

// laneWords is pack_lanes's output for input word w with partner p (see
// e4m3.hip for the layout). nanMask marks the 16-bit halves (bit 2i, 2i+1
// for word i) where any NaN of that format is right: NaN payloads are the
// hardware's.
const laneWords = 12

type laneKind uint8

const (
	laneExact laneKind = iota // every bit
	laneBF16                  // two bf16 halves; a NaN half may be any NaN
	laneF16                   // two f16 halves; a NaN half may be any NaN
	laneF32                   // one f32; a NaN may be any NaN
)

// laneSlot names one output word: what it holds and how it compares.
type laneSlot struct {
	what string
	kind laneKind
}

func laneSlots(codeArch string) [laneWords]laneSlot {
	s := [laneWords]laneSlot{
		{"e4m3_encode2_hw(p, w)", laneExact},
		{"pack_bf16x2(w, p)", laneBF16},
	}
	if codeArch == "gfx1201" {
		s[2], s[3] = laneSlot{"w4_lut_e4m3(w)", laneExact}, laneSlot{"w4_lut_e4m3(w >> 4)", laneExact}
		for j := 0; j < 4; j++ {
			s[4+j] = laneSlot{fmt.Sprintf("w4_wmma_step(w, p) word %d", j), laneExact}
			s[8+j] = laneSlot{fmt.Sprintf("hw_e4m3_to_f32(byte %d)", j), laneF32}
		}
		return s
	}
	s[2], s[3] = laneSlot{"cvt.rn.f16x2.e4m3x2(bytes 0,1)", laneF16}, laneSlot{"cvt.rn.f16x2.e4m3x2(bytes 2,3)", laneF16}
	for j := 0; j < 4; j++ {
		s[4+j] = laneSlot{fmt.Sprintf("w4_word_f16x2 pair %d", j), laneExact}
		s[8+j] = laneSlot{fmt.Sprintf("w4_pair_f16x2(w, %d)", j), laneExact}
	}
	return s
}

// f16OfE4M3 is the f16 bits of an e4m3 code's value (exact: every e4m3
// value is an f16 value).
func f16OfE4M3(c uint8) uint16 { return refimpl.F32ToF16(refimpl.DecodeE4M3(c)) }

// w4Code is the code at local index l (0..7) of a weight word: nibble
// (l >> 1) + 4(l & 1) (mma.h's weight-word layout).
func w4Code(w uint32, l int) uint32 { return (w >> (4 * uint(l>>1+4*(l&1)))) & 0xF }

// e4m3Int is the e4m3 code of the integer c - 8 (exact for c in 0..15).
func e4m3Int(c uint32) uint32 { return uint32(refimpl.EncodeE4M3(float32(int(c) - 8))) }

func f16Int(c uint32) uint32 { return uint32(refimpl.F32ToF16(float32(int(c) - 8))) }

// LaneExpect is the Go value of every pack_lanes output word for input w
// with partner p on a code arch.
func LaneExpect(codeArch string, w, p uint32) [laneWords]uint32 {
	var o [laneWords]uint32
	o[0] = uint32(refimpl.EncodeE4M3Bits(p)) | uint32(refimpl.EncodeE4M3Bits(w))<<8
	o[1] = uint32(refimpl.F32ToBF16(math.Float32frombits(w))) | uint32(refimpl.F32ToBF16(math.Float32frombits(p)))<<16
	if codeArch == "gfx1201" {
		lut := func(x uint32) uint32 {
			var r uint32
			for b := 0; b < 4; b++ {
				r |= e4m3Int((x>>(8*b))&0xF) << (8 * b)
			}
			return r
		}
		o[2], o[3] = lut(w), lut(w>>4)
		// k0: local indices 0..3 of w, then of p; k16: 4..7.
		step := func(x uint32, l0 int) uint32 {
			var r uint32
			for j := 0; j < 4; j++ {
				r |= e4m3Int(w4Code(x, l0+j)) << (8 * j)
			}
			return r
		}
		o[4], o[5], o[6], o[7] = step(w, 0), step(p, 0), step(w, 4), step(p, 4)
		for j := 0; j < 4; j++ {
			o[8+j] = refimpl.DecodeE4M3Bits(uint8(w >> (8 * j)))
		}
		return o
	}
	o[2] = uint32(f16OfE4M3(uint8(w))) | uint32(f16OfE4M3(uint8(w>>8)))<<16
	o[3] = uint32(f16OfE4M3(uint8(w>>16))) | uint32(f16OfE4M3(uint8(w>>24)))<<16
	for j := 0; j < 4; j++ {
		// pair j: nibble j in the low half, nibble j + 4 in the high half.
		pair := f16Int((w>>(4*j))&0xF) | f16Int((w>>(4*j+16))&0xF)<<16
		o[4+j], o[8+j] = pair, pair
	}
	return o
}

// laneMatch reports whether a device word equals the expected one under
// the slot's comparison.
func laneMatch(k laneKind, got, want uint32) bool {
	if got == want {
		return true
	}
	half := func(g, w uint16, expMask, manMask uint16) bool {
		isNaN := func(h uint16) bool { return h&expMask == expMask && h&manMask != 0 }
		return g == w || (isNaN(w) && isNaN(g))
	}
	switch k {
	case laneBF16:
		return half(uint16(got), uint16(want), 0x7F80, 0x007F) && half(uint16(got>>16), uint16(want>>16), 0x7F80, 0x007F)
	case laneF16:
		return half(uint16(got), uint16(want), 0x7C00, 0x03FF) && half(uint16(got>>16), uint16(want>>16), 0x7C00, 0x03FF)
	case laneF32:
		return math.IsNaN(float64(math.Float32frombits(want))) && math.IsNaN(float64(math.Float32frombits(got))) && got != 0xFFFFFFFF
	}
	return false
}

// laneInputs: every 16-bit pattern in both halves (i | bitrev16(i) << 16,
// so every e4m3 byte pair and every nibble in every position), the e4m3
// boundary values, then seeded random words.
func laneInputs(seed uint64, random int) []uint32 {
	in := make([]uint32, 0, 1<<16+random+4096)
	for i := uint32(0); i < 1<<16; i++ {
		in = append(in, i|uint32(bits.Reverse16(uint16(i)))<<16)
	}
	in = append(in, e4m3Boundaries()...)
	rng := rand.New(rand.NewPCG(seed, 0x1a7e))
	for i := 0; i < random; i++ {
		in = append(in, rng.Uint32())
	}
	return in
}

// laneRandom is the number of seeded random words after the structured
// inputs (tests lower it).
var laneRandom = 1 << 20

func gateE4M3DeviceLanes(t *gates.T) {
	random := laneRandom
	inputs := laneInputs(t.Seed(), random)
	n := len(inputs)
	bad := laneRun(t, inputs)
	// The guard's launch classes the main list does not reach (one block,
	// the last block full or partial): prefixes of the list.
	for _, m := range grid1d.Cover("pack_lanes", n) {
		pre := laneRun(t, inputs[:m])
		for s := range bad {
			bad[s] += pre[s]
		}
	}
	slots := laneSlots(t.Device().Info().CodeArch())
	total := 0
	for s, b := range bad {
		if b > 0 {
			t.Failf("%s: %d of %d inputs differ from Go", slots[s].what, b, n)
		}
		total += b
	}
	t.Metric("inputs", float64(n))
	t.Metric("mismatches", float64(total))
	t.Logf("%d inputs (all 2^16 patterns in both halves, the e4m3 boundaries, %d seeded random words, seed %d), %d output words each, every lane compared", n, random, t.Seed(), laneWords)
}

// laneRun launches pack_lanes on inputs (grid1d's geometry; each word's
// partner is the word at the mirrored index) and compares every output
// lane with Go; it returns the mismatches per output word.
func laneRun(t *gates.T, inputs []uint32) [laneWords]int {
	n := len(inputs)
	const tail = 64 // words past the output that must stay poisoned
	in := t.Buffer("in", 4*n)
	out := t.Buffer("out", 4*(laneWords*n+tail))
	raw := make([]byte, 4*n)
	for i, u := range inputs {
		binary.LittleEndian.PutUint32(raw[4*i:], u)
	}
	t.Upload(in, raw)
	t.Poison(out, 0xFF)
	t.Launch("pack_lanes", gpu.D1(grid1d.Grid(n)), gpu.D1(grid1d.Block), 0, in.Ptr(), out.Ptr(), uint32(n))
	got := t.Download(out)
	for i := laneWords * n; i < laneWords*n+tail; i++ {
		if binary.LittleEndian.Uint32(got[4*i:]) != 0xFFFFFFFF {
			t.Fatalf("pack_lanes (n=%d) wrote word %d past its %d outputs", n, i, laneWords*n)
		}
	}
	arch := t.Device().Info().CodeArch()
	slots := laneSlots(arch)
	var bad [laneWords]int
	for i, w := range inputs {
		want := LaneExpect(arch, w, inputs[n-1-i])
		for s := 0; s < laneWords; s++ {
			g := binary.LittleEndian.Uint32(got[4*(laneWords*i+s):])
			if laneMatch(slots[s].kind, g, want[s]) {
				continue
			}
			if bad[s]++; bad[s] <= 3 {
				t.Failf("%s: input w=%#08x p=%#08x (index %d): device %#08x, Go %#08x (seed %d)", slots[s].what, w, inputs[n-1-i], i, g, want[s], t.Seed())
			}
		}
	}
	return bad
}
