package int5

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"math/rand/v2"

	"github.com/parharness/parharness/families/internal/grid1d"
	"github.com/parharness/parharness/families/internal/sweep"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/refimpl"
)

// The list check: int5_unpack_list runs the unpack and every form a GEMM
// consumes on structured plane words and seeded random ones, and each
// output word is compared on the host with its value worked from the
// format's definition (ListExpect), not from the unpack.

// listWords is int5_unpack_list's output per input (INT5_LIST_WORDS).
const listWords = 36

// listSlot names output word s for messages.
func listSlot(codeArch string, s int) string {
	q := s % 4
	switch s / 4 {
	case 0:
		return fmt.Sprintf("int5_spread even[%d]", q)
	case 1:
		return fmt.Sprintf("int5_spread odd[%d]", q)
	case 2:
		return fmt.Sprintf("int5_codes_even(w[%d])", q)
	case 3:
		return fmt.Sprintf("int5_codes_odd(w[%d])", q)
	case 4:
		return fmt.Sprintf("int5_s8x4(codes_even w[%d])", q)
	case 5:
		return fmt.Sprintf("int5_s8x4(codes_odd w[%d])", q)
	case 6:
		return fmt.Sprintf("int5_e4m3x4(codes_even w[%d])", q)
	case 7:
		return fmt.Sprintf("int5_e4m3x4(codes_odd w[%d])", q)
	}
	if codeArch == "gfx1201" {
		return fmt.Sprintf("int5_pair_fifth pair %d of w[%d]", q, q)
	}
	return fmt.Sprintf("w5_pair_f16x2 pair %d of w[%d]", q, q)
}

// codeForms are the values a 5-bit code c becomes, from the definitions:
// int8 c - 16, the e4m3 code of c - 16, the f16 bits of c - 16.
var codeS8, codeE4M3 [32]uint32
var codeF16 [32]uint32

func init() {
	for c := 0; c < 32; c++ {
		v := c - 16
		codeS8[c] = uint32(uint8(int8(v)))
		codeE4M3[c] = uint32(refimpl.EncodeE4M3(float32(v)))
		codeF16[c] = uint32(refimpl.F32ToF16(float32(v)))
	}
}

// ListExpect is int5_unpack_list's output for plane word p and weight
// words w on a code arch, worked from the layout: nibble i of w[q] has the
// 5-bit code (w[q] >> 4i & 15) | (bit 8q+i of p) << 4.
func ListExpect(codeArch string, p uint32, w [4]uint32) [listWords]uint32 {
	code := func(q, i int) uint32 { return w[q]>>(4*i)&15 | (p>>(8*q+i)&1)<<4 }
	var o [listWords]uint32
	for q := 0; q < 4; q++ {
		for b := 0; b < 4; b++ {
			ce, co := code(q, 2*b), code(q, 2*b+1)
			sh := 8 * b
			o[q] |= (ce & 16) << sh
			o[4+q] |= (co & 16) << sh
			o[8+q] |= ce << sh
			o[12+q] |= co << sh
			o[16+q] |= codeS8[ce] << sh
			o[20+q] |= codeS8[co] << sh
			o[24+q] |= codeE4M3[ce] << sh
			o[28+q] |= codeE4M3[co] << sh
		}
	}
	for j := 0; j < 4; j++ {
		lo, hi := code(j, j), code(j, j+4) // pair j of w[j]: nibbles j and j+4
		if codeArch == "gfx1201" {
			o[32+j] = lo&16 | (hi&16)<<16
		} else {
			o[32+j] = codeF16[lo] | codeF16[hi]<<16
		}
	}
	return o
}

// structuredPlanes are the plane words where an unpack goes wrong:
//   - every byte value in every byte position, the other bytes 0x00, 0xFF
//     and a mixed background (0xA5, 0x3C, 0x5A: a bug that needs a bit of
//     another byte set shows only there);
//   - every 16-bit pattern in both halves (i | bitrev16(i) << 16);
//   - every word with one or two bits set, and their complements;
//   - alternating and counting patterns.
func structuredPlanes() []uint32 {
	var out []uint32
	for q := 0; q < 4; q++ {
		for _, bg := range []uint32{0, 0xFFFFFFFF, 0x5A3CA5A5} {
			for v := uint32(0); v < 256; v++ {
				out = append(out, bg&^(0xFF<<(8*q))|v<<(8*q))
			}
		}
	}
	for i := uint32(0); i < 1<<16; i++ {
		out = append(out, i|uint32(bits.Reverse16(uint16(i)))<<16)
	}
	for i := 0; i < 32; i++ {
		for j := i; j < 32; j++ {
			w := uint32(1)<<i | uint32(1)<<j
			out = append(out, w, ^w)
		}
	}
	out = append(out, 0x55555555, 0xAAAAAAAA, 0x33333333, 0xCCCCCCCC, 0x0F0F0F0F, 0xF0F0F0F0,
		0x00FF00FF, 0xFF00FF00, 0x0000FFFF, 0xFFFF0000, 0x01234567, 0x89ABCDEF, 0xFEDCBA98, 0x76543210)
	return out
}

// listInputs are the structured planes, then random seeded ones; every
// plane comes with four weight words from a fixed-seed generator (so each
// nibble value meets each fifth bit at every position: listInputsTest).
func listInputs(seed uint64, random int) (planes, words []uint32) {
	planes = structuredPlanes()
	rng := rand.New(rand.NewPCG(seed, 0x1a5))
	for i := 0; i < random; i++ {
		planes = append(planes, rng.Uint32())
	}
	wr := rand.New(rand.NewPCG(0x5eed, 0x3a7))
	words = make([]uint32, 4*len(planes))
	for i := range words {
		words[i] = wr.Uint32()
	}
	return planes, words
}

// listRandom is the number of seeded random planes after the structured
// ones (tests lower it).
var listRandom = 1 << 20

// checkList launches int5_unpack_list on planes and words and compares
// every output word with ListExpect, then does the same on the prefixes
// that reach the guard's launch classes the whole list does not (one
// block, the last block full or partial: grid1d.Cover); it returns the
// mismatch count.
func checkList(t *gates.T, planes, words []uint32) uint64 {
	bad := checkListOnce(t, planes, words)
	for _, m := range grid1d.Cover("int5_unpack_list", len(planes)) {
		bad += checkListOnce(t, planes[:m], words[:4*m])
	}
	return bad
}

// checkListOnce is one launch of int5_unpack_list and its comparison.
func checkListOnce(t *gates.T, planes, words []uint32) uint64 {
	n := len(planes)
	const tail = 64 // words past the outputs that must stay poisoned
	pb, wb := t.Buffer("planes", 4*n), t.Buffer("words", 16*n)
	out := t.Buffer("out", 4*(listWords*n+tail))
	t.Upload(pb, u32Bytes(planes))
	t.Upload(wb, u32Bytes(words))
	t.Poison(out, 0xFF)
	t.Launch("int5_unpack_list", gpu.D1(grid1d.Grid(n)), gpu.D1(grid1d.Block), 0, pb.Ptr(), wb.Ptr(), out.Ptr(), uint32(n))
	got := t.Download(out)
	if i := gates.FirstWritten(got, 4*listWords*n); i >= 0 {
		t.Fatalf("int5_unpack_list wrote byte offset %d, past its %d output words", i, listWords*n)
	}
	arch := t.Device().Info().CodeArch()
	return compareList(t, arch, planes, words, got, t.Seed())
}

// compareList compares int5_unpack_list's output bytes with ListExpect,
// reporting at most a few cases per output word and the count per word.
func compareList(r gates.Reporter, arch string, planes, words []uint32, got []byte, seed uint64) uint64 {
	var logs [listWords]sweep.MismatchLog
	sweep.Chunks(uint64(len(planes)), func(lo, hi uint64) {
		var bad [listWords]uint64
		for i := lo; i < hi; i++ {
			w := [4]uint32(words[4*i : 4*i+4])
			want := ListExpect(arch, planes[i], w)
			for s := 0; s < listWords; s++ {
				g := binary.LittleEndian.Uint32(got[4*(listWords*int(i)+s):])
				if g == want[s] {
					continue
				}
				if bad[s]++; bad[s] <= 2 {
					idx, p, ws := i, planes[i], want[s]
					logs[s].Add(0, func() string {
						return fmt.Sprintf("input %d: plane %#08x words %#08x: device %#08x, want %#08x", idx, p, w, g, ws)
					})
				}
			}
		}
		for s, b := range bad {
			if b > 0 {
				logs[s].Add(b, nil)
			}
		}
	})
	var total uint64
	for s := range logs {
		logs[s].Report(r, fmt.Sprintf("%s (seed %d), of %d inputs", listSlot(arch, s), seed, len(planes)))
		total += logs[s].Count()
	}
	return total
}

func u32Bytes(v []uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}
