package gemm

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/parharness/parharness/bench"
	"github.com/parharness/parharness/families/internal/faketest"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/internal/fakegpu"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/refimpl"
)

// Go mirrors of hipsrc/gemm/rowlayout.h, op for op: the lanes' loads from
// the row layout, the shuffles between the lanes that share a column, and
// the nibble unshuffle, checked against the fragment words RepackW4
// stores (what the fragment-order kernels load), for every column, group,
// step and lane of both targets' geometry.

func rlUnshuffle(x uint32) uint32 {
	t := (x ^ (x >> 4)) & 0x00F000F0
	x ^= t ^ (t << 4)
	t = (x ^ (x >> 8)) & 0x0000FF00
	return x ^ t ^ (t << 8)
}

type u32x4 struct{ x, y, z, w uint32 }

func ld16(b []byte, off int) u32x4 {
	le := binary.LittleEndian
	return u32x4{le.Uint32(b[off:]), le.Uint32(b[off+4:]), le.Uint32(b[off+8:]), le.Uint32(b[off+12:])}
}

func sel(c bool, a, b uint32) uint32 {
	if c {
		return a
	}
	return b
}

func rlRowWord(x u32x4, t uint32) uint32 {
	a, b, sh := sel(t&2 != 0, x.y, x.x), sel(t&2 != 0, x.w, x.z), 16*(t&1)
	return ((a >> sh) & 0xFFFF) | ((b >> sh) << 16)
}

// rlQuadFrag runs rl_quad_frag on the four lanes (tig 0..3) of one column:
// x[tig] is lane tig's load; shfl_xor(v, r) gives lane t lane t^r's v.
func rlQuadFrag(x [4]u32x4) [4][4]uint32 {
	var sent [4][4]uint32 // [round][lane]
	for r := uint32(0); r < 4; r++ {
		for tig := uint32(0); tig < 4; tig++ {
			sent[r][tig] = rlRowWord(x[tig], tig^r)
		}
	}
	var out [4][4]uint32 // [lane][step]
	for tig := uint32(0); tig < 4; tig++ {
		var rcv [4]uint32
		for r := uint32(0); r < 4; r++ {
			rcv[r] = sent[r][tig^r]
		}
		for s := uint32(0); s < 4; s++ {
			q := s ^ tig
			v := sel(q&2 != 0, sel(q&1 != 0, rcv[3], rcv[2]), sel(q&1 != 0, rcv[1], rcv[0]))
			out[tig][s] = rlUnshuffle(v)
		}
	}
	return out
}

// rlPairFrag runs rl_pair_frag on lanes h = 0, 1 of one column: x[h] are
// lane h's two loads (steps 2h, 2h+1); it returns [h] = (a, c).
func rlPairFrag(x [2][2]u32x4) [2][2][4]uint32 {
	type msg struct{ sp0, sq0, sp1, sq1 uint32 }
	var own [2][4]uint32
	var sent [2]msg
	for h := 0; h < 2; h++ {
		x0, x1, hh := x[h][0], x[h][1], h == 1
		own[h] = [4]uint32{sel(hh, x0.y, x0.x), sel(hh, x0.w, x0.z), sel(hh, x1.y, x1.x), sel(hh, x1.w, x1.z)}
		sent[h] = msg{sel(hh, x0.x, x0.y), sel(hh, x0.z, x0.w), sel(hh, x1.x, x1.y), sel(hh, x1.z, x1.w)}
	}
	var out [2][2][4]uint32
	for h := 0; h < 2; h++ {
		hh := h == 1
		op0, oq0, op1, oq1 := own[h][0], own[h][1], own[h][2], own[h][3]
		rv := sent[1-h]
		P := [4]uint32{sel(hh, rv.sp0, op0), sel(hh, rv.sp1, op1), sel(hh, op0, rv.sp0), sel(hh, op1, rv.sp1)}
		Q := [4]uint32{sel(hh, rv.sq0, oq0), sel(hh, rv.sq1, oq1), sel(hh, oq0, rv.sq0), sel(hh, oq1, rv.sq1)}
		for s := 0; s < 4; s++ {
			out[h][0][s] = rlUnshuffle((P[s] & 0xFFFF) | (Q[s] << 16))
			out[h][1][s] = rlUnshuffle((P[s] >> 16) | (Q[s] & 0xFFFF0000))
		}
	}
	return out
}

func TestRowLayoutRebuildsFragmentWords(t *testing.T) {
	for _, sh := range [][2]int{{128, 16}, {384, 64}} {
		K, N := sh[0], sh[1]
		t.Run(fmt.Sprintf("K=%d/N=%d", K, N), func(t *testing.T) {
			w := GateWeights(rand.New(rand.NewPCG(uint64(K), 9)), K, N)
			p, err := refimpl.RepackW4(w)
			if err != nil {
				t.Fatal(err)
			}
			r, err := refimpl.RepackRow(w)
			if err != nil {
				t.Fatal(err)
			}
			G := K / refimpl.GroupSize
			// frag(n, g, tig, s) is the fragment word of memory lane (column
			// n%8 of its half, tig) at step s: what the fragment-order kernels load.
			frag := func(n, g, tig, s int) uint32 {
				j16, h, col := n/16, (n/8)%2, n%8
				return p.Words[(((j16*G+g)*2+h)*512+(col*4+tig)*16)/4+s]
			}
			for n := 0; n < N; n++ {
				for g := 0; g < G; g++ {
					slice := n*K/2 + 64*g
					// sm_90: lane tig loads 16 B at 16·tig of the slice.
					var x [4]u32x4
					for tig := range x {
						x[tig] = ld16(r.Codes, slice+16*tig)
					}
					got := rlQuadFrag(x)
					for tig := 0; tig < 4; tig++ {
						for s := 0; s < 4; s++ {
							if want := frag(n, g, tig, s); got[tig][s] != want {
								t.Fatalf("sm_90 n=%d g=%d tig=%d s=%d: rebuilt %#08x, fragment word %#08x", n, g, tig, s, got[tig][s], want)
							}
						}
					}
					// gfx1201: lane h loads 32 B at 32h; a = tig 2h, c = tig 2h+1.
					var y [2][2]u32x4
					for h := range y {
						y[h] = [2]u32x4{ld16(r.Codes, slice+32*h), ld16(r.Codes, slice+32*h+16)}
					}
					gp := rlPairFrag(y)
					for h := 0; h < 2; h++ {
						for e := 0; e < 2; e++ {
							for s := 0; s < 4; s++ {
								if want := frag(n, g, 2*h+e, s); gp[h][e][s] != want {
									t.Fatalf("gfx1201 n=%d g=%d h=%d tig=%d s=%d: rebuilt %#08x, fragment word %#08x", n, g, h, 2*h+e, s, gp[h][e][s], want)
								}
							}
						}
					}
				}
			}
		})
	}
}

// The gate compares every row-layout launch with the baseline's bits: a
// device whose rl kernels write one element differently fails with that
// message at every launch, one whose kernels all agree does not (both fail
// the reference check: the fake computes zeros).
func TestGateRowLayoutBitIdentity(t *testing.T) {
	sh := GemmShape{K: 384, Parts: []int{256, 128}}
	for _, plant := range []bool{false, true} {
		t.Run(fmt.Sprintf("planted=%v", plant), func(t *testing.T) {
			env, dev := faketest.Env(t, fakeTargets[0])
			dev.Exec = func(d *fakegpu.Device, l fakegpu.Launch) error {
				if err := zeroGEMM(d, l); err != nil {
					return err
				}
				if k, _ := kernels.Lookup(l.Kernel); plant && DecWeightLayout(k) == LayoutRow {
					mem, err := d.Mem(l.Args[5].(gpu.Ptr), 2)
					if err != nil {
						return err
					}
					mem[0] = 1
				}
				return nil
			}
			// One gate run per M: a gate keeps its first failure lines only,
			// and every kernel of the fake fails its reference check.
			diffs, checks := 0, 0.0
			var all []string
			for _, M := range []int{1, 9, 24, 33} {
				res := gates.RunGate(env, gates.Gate{Name: "gemm-wp", Device: true, Run: func(t *gates.T) {
					w := GateWeights(rand.New(rand.NewPCG(3, 4)), sh.K, sh.N())
					p, err := packGEMM(w)
					t.Check(err, "repack")
					runGEMMCase(t, gemmCase{"fake/dec", sh, M, "normal", false}, 5, w, p)
					t.Release()
				}})
				diffs += failuresWith(res, "elements differ from pq_gemm_dec_m")
				checks += metricSum(res, "row_layout_bit_checks")
				all = append(all, res.Failures...)
			}
			if plant && diffs == 0 {
				t.Errorf("a row-layout kernel with one wrong element passed the bit-identity check: %v", all)
			}
			if !plant && diffs != 0 {
				t.Errorf("identical outputs reported as different: %v", all)
			}
			// Per M: every split the baseline runs at this small G (the
			// law's S and 1 at least).
			if checks < 4*2 {
				t.Errorf("%v row-layout launches compared, want every split of 4 M values", checks)
			}
		})
	}
}

// The wp bench's check of the row variant passes the fragment variant's
// bytes and fails one flipped bit, an output never prepared, and a
// failure of the reference check it wraps.
func TestWPSameBitsCheck(t *testing.T) {
	c, dev := faketest.Ctx(t, fakeTargets[0], tinyShapes(t), nil)
	s := GemmShape{K: 384, Parts: []int{256, 128}}
	bw, err := newBenchWeights(s)
	if err != nil {
		t.Fatal(err)
	}
	const M = 9
	b, err := newGemmBufs(c, "tiny", s, M, false, false, 2, bw)
	if err != nil {
		t.Fatal(err)
	}
	n := 2 * M * s.N()
	pattern := func(k int) []byte {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(i*7 + k)
		}
		return p
	}
	write := func(k int, data []byte) {
		mem, err := dev.Mem(b.out.At(k), n)
		if err != nil {
			t.Fatal(err)
		}
		copy(mem, data)
	}
	poison := &bench.Check{Prepare: func(k int) error { return b.out.Poison(dev, k, 0xFF) }}
	frag := bench.Variant{Name: WPFragment, Check: poison, Enqueue: func(_ gpu.Stream, k int) error { write(k, pattern(k)); return nil }}
	var refErr error
	chk := &bench.Check{Prepare: poison.Prepare, Verify: func(int) error { return refErr }}
	sc := sameBitsCheck(dev, b, chk, frag, "pq_gemm_dec_m16")
	k := b.copies - 1
	for _, tc := range []struct {
		what  string
		out   func() []byte
		ref   error
		ok    bool
		unset bool
	}{
		{"same bits", func() []byte { return pattern(k) }, nil, true, false},
		{"one bit flipped", func() []byte { p := pattern(k); p[n-1] ^= 1; return p }, nil, false, false},
		{"reference check fails", func() []byte { return pattern(k) }, fmt.Errorf("rel too large"), false, false},
		{"verified before prepared", func() []byte { return pattern(k) }, nil, false, true},
	} {
		t.Run(tc.what, func(t *testing.T) {
			kk := k
			if tc.unset {
				kk = 0 // never prepared in this test
			} else if err := sc.Prepare(kk); err != nil {
				t.Fatal(err)
			}
			refErr = tc.ref
			write(kk, tc.out())
			if err := sc.Verify(kk); (err == nil) != tc.ok {
				t.Errorf("Verify = %v, want ok=%v", err, tc.ok)
			}
		})
	}
	c.FreeAll()
}
