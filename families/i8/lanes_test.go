package i8

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/parharness/parharness/families/gemm"
	"github.com/parharness/parharness/refimpl"
)

// The I8 GEMMs' operand plumbing, lane by lane, on the CPU: the weight
// words each lane reads from the repacked buffer (refimpl.RepackW4) at the
// kernel's offsets, the nibble-to-byte spread of i8/mma_i8.h (prmt on
// sm_90, v_perm on gfx1201, each emulated from its ISA definition), the
// activation bytes, and the matrix op as its fragment layout defines it
// (PTX mma.m16n8k32 8-bit; gfx12 16x16x16 iu8 WMMA). The op's output for
// every lane must be the integer Σ_k a[m,k]·q[k,n] of the (column, row)
// that lane holds. A wrong selector, a swapped half or a wrong lane map
// fails here before any device run.

// prmt is PTX prmt.b32 (default mode): byte i of the result is byte
// sel>>(4i) & 7 of {b, a} (a = bytes 0..3).
func prmt(a, b, sel uint32) uint32 {
	src := uint64(a) | uint64(b)<<32
	var r uint32
	for i := 0; i < 4; i++ {
		r |= uint32(src>>(8*((sel>>(4*i))&7))&0xFF) << (8 * i)
	}
	return r
}

// vperm is v_perm_b32 for selector bytes 0..7: byte i is byte sel.b_i of
// {s0, s1} (s1 = bytes 0..3), as __builtin_amdgcn_perm(s0, s1, sel).
func vperm(s0, s1, sel uint32) uint32 {
	src := uint64(s1) | uint64(s0)<<32
	var r uint32
	for i := 0; i < 4; i++ {
		r |= uint32(src>>(8*((sel>>(8*i))&7))&0xFF) << (8 * i)
	}
	return r
}

func w8BytesSM90(w uint32) (lo, hi uint32) {
	x, y := w&0x0F0F0F0F, (w>>4)&0x0F0F0F0F
	return prmt(x, y, 0x6420), prmt(x, y, 0x7531)
}

func w8BytesGFX(w uint32) (lo, hi uint32) {
	x, y := w&0x0F0F0F0F, (w>>4)&0x0F0F0F0F
	return vperm(y, x, 0x06040200), vperm(y, x, 0x07050301)
}

func byteOf(r uint32, i int) uint32 { return r >> (8 * i) & 0xFF }

func TestOperandPlumbingMatchesIntegerSum(t *testing.T) {
	const K, N, M = 256, 64, 16
	rng := rand.New(rand.NewPCG(5, 6))
	w := gemm.GateWeights(rng, K, N)
	pk, err := refimpl.RepackW4(w)
	if err != nil {
		t.Fatal(err)
	}
	wb := pk.WordBytes()
	word := func(off int) uint32 { return binary.LittleEndian.Uint32(wb[off:]) }
	act := make([]byte, M*K)
	for i := range act {
		act[i] = byte(int8(rng.IntN(255) - 127))
	}
	actWord := func(m, k int) uint32 { return binary.LittleEndian.Uint32(act[m*K+k:]) }
	G := K / 128
	want := func(m, n, g int) int32 {
		var s int32
		for k := g * 128; k < (g+1)*128; k++ {
			s += int32(int8(act[m*K+k])) * int32(w.Code(k, n))
		}
		return s
	}
	for j16 := 0; j16 < N/16; j16++ {
		n0 := 16 * j16
		for g := 0; g < G; g++ {
			t.Run("sm90", func(t *testing.T) {
				// Registers of every lane, then the op from the PTX fragment layout.
				var a [32][4][4]uint32 // [lane][step][a0..a3]
				var b [32][4][2]uint32 // [lane][step][b0, b1]; rows 8mt + gid, mt = 0
				for lane := 0; lane < 32; lane++ {
					gid, tig := lane/4, lane%4
					base := j16*G*1024 + lane*16 + g*1024
					for s := 0; s < 4; s++ {
						lo0, hi0 := w8BytesSM90(word(base + 4*s))
						lo1, hi1 := w8BytesSM90(word(base + 512 + 4*s))
						a[lane][s] = [4]uint32{lo0, lo1, hi0, hi1}
						b[lane][s] = [2]uint32{actWord(gid, g*128+32*s+4*tig), actWord(gid, g*128+32*s+16+4*tig)}
					}
				}
				A := func(s, row, k int) int32 { // A[row][k], unsigned
					lane := (row%8)*4 + (k%16)/4
					return int32(byteOf(a[lane][s][row/8+2*(k/16)], k%4))
				}
				B := func(s, k, col int) int32 { // B[k][col], signed
					lane := col*4 + (k%16)/4
					return int32(int8(byteOf(b[lane][s][k/16], k%4)))
				}
				for lane := 0; lane < 32; lane++ {
					gid, tig := lane/4, lane%4
					for i := 0; i < 4; i++ {
						row, col := gid+8*(i/2), 2*tig+i%2 // d_i
						var d int32
						for s := 0; s < 4; s++ {
							for k := 0; k < 32; k++ {
								d += A(s, row, k) * B(s, k, col)
							}
						}
						if wnt := want(col, n0+row, g); d != wnt {
							t.Fatalf("j16=%d g=%d lane %d d%d (n=%d m=%d): %d, want %d", j16, g, lane, i, n0+row, col, d, wnt)
						}
					}
				}
			})
			t.Run("gfx1201", func(t *testing.T) {
				var a, b [32][4][2][2]uint32 // [lane][step][k16 block w][dword]
				for lane := 0; lane < 32; lane++ {
					r, h := lane%16, lane/16
					base := j16*G*1024 + (r>>3)*512 + (4*(r&7)+2*h)*16 + g*1024
					for s := 0; s < 4; s++ {
						alo, ahi := w8BytesGFX(word(base + 4*s))
						clo, chi := w8BytesGFX(word(base + 16 + 4*s))
						a[lane][s] = [2][2]uint32{{alo, clo}, {ahi, chi}}
						for wv := 0; wv < 2; wv++ {
							k := g*128 + 32*s + 16*wv + 8*h
							b[lane][s][wv] = [2]uint32{actWord(r, k), actWord(r, k+4)}
						}
					}
				}
				// 16x16x16: A row r = lane%16, byte j of (dword 0, 1) is k 8h + j.
				for lane := 0; lane < 32; lane++ {
					r, h := lane%16, lane/16
					for i := 0; i < 8; i++ {
						mRow, nCol := 8*h+i, r // D element i: (M = 8h+i, N = r)
						var d int32
						for s := 0; s < 4; s++ {
							for wv := 0; wv < 2; wv++ {
								for k := 0; k < 16; k++ {
									la, lb := mRow+16*(k/8), nCol+16*(k/8)
									av := int32(byteOf(a[la][s][wv][(k%8)/4], k%4))
									bv := int32(int8(byteOf(b[lb][s][wv][(k%8)/4], k%4)))
									d += av * bv
								}
							}
						}
						if wnt := want(nCol, n0+mRow, g); d != wnt {
							t.Fatalf("j16=%d g=%d lane %d element %d (n=%d m=%d): %d, want %d", j16, g, lane, i, n0+mRow, nCol, d, wnt)
						}
					}
				}
			})
		}
	}
}

// The selectors and masks the emulation uses are the headers'.
func TestOperandPlumbingIsTheHeaders(t *testing.T) {
	for file, want := range map[string][]string{
		"../../hipsrc/arch/mma.h": {
			"x = w & 0x0F0F0F0Fu, y = (w >> 4) & 0x0F0F0F0Fu",
			"lo = prmt_b32(x, y, 0x6420u);", "hi = prmt_b32(x, y, 0x7531u);",
			"lo = __builtin_amdgcn_perm(y, x, 0x06040200u);", "hi = __builtin_amdgcn_perm(y, x, 0x07050301u);",
		},
		"../../hipsrc/i8/mma_i8.h": {
			"__builtin_amdgcn_wmma_i32_16x16x16_iu8_w32_gfx12(false, a, true, b, c, false)",
			"mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32",
		},
	} {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range want {
			if !strings.Contains(string(src), s) {
				t.Errorf("%s no longer contains %q: update the lane emulation with it", file, s)
			}
		}
	}
}
