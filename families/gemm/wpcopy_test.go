package gemm

import (
	"fmt"
	"testing"
)

// wpCopiers is gemm.hip's DWP_COPIERS: the producer's cp.async threads.
const wpCopiers = 96

// A model of gemm_dec_wp's copiers (the fixed-piece loop), with the
// kernel's own address arithmetic: copier pt stages the 16-byte piece
// column pt % 8 of rows pt/8 + 12j (source: a base set once, plus the
// round's group offset, plus one 32-bit row step a piece) and the asg/rs
// items pt and pt + 96 of a round. For every geometry the kernel builds,
// every M up to its NB, K with an even and an odd group count and every
// round (the last one with n < U live groups where G is odd), each
// (row < M, group < n, piece) must be copied exactly once, from byte
// m·K + (g0+u)·128 + 16c of the partition's codes to piece c ^ (m % 8) of
// row m of the group's tile (the 128B swizzle the op's descriptor reads),
// and each row's asg and rs of each live group exactly once, from float
// m·G + g0 + u to the float the consumer's fold reads for that row (its
// row pair's 16-byte load: asg even, asg odd, rs even, rs odd); no copy
// may touch a row ≥ M or a group ≥ n (the stage keeps its zeros, and the
// fold skips stale groups).
func TestWPCopierPieces(t *testing.T) {
	const rstep = wpCopiers / 8
	if rstep%8 != 4 {
		t.Fatalf("DWP_COPIERS/8 = %d: the kernel's two swizzle phases need it ≡ 4 (mod 8)", rstep)
	}
	for name, g := range decWPGeom {
		if 2*g.U*g.NB > 2*wpCopiers {
			t.Errorf("%s: %d asg/rs items a round, more than two a copier", name, 2*g.U*g.NB)
		}
		tile, ars := g.NB*128, 2*g.NB+64
		nj := (g.NB + rstep - 1) / rstep
		for _, K := range []int{2 * 128 * g.U, 3*128*g.U - 128, 5120} {
			G := K / 128
			for M := 1; M <= g.NB; M++ {
				for r := 0; r*g.U < G; r++ {
					g0 := r * g.U
					n := min(g.U, G-g0)
					t.Run(fmt.Sprintf("%s/K=%d/M=%d/round=%d", name, K, M, r), func(t *testing.T) {
						type piece struct{ src, dst int }
						type item struct{ src, dst, asgOrRs int }
						var pieces []piece
						var items []item
						for pt := range wpCopiers {
							pc, pm := pt&7, pt>>3
							dp := [2]int{pm*128 + (pc^(pm&7))<<4, pm*128 + (pc^((pm+4)&7))<<4}
							asrc := pm*K + 16*pc // row pm, piece pc, group 0
							kstep := uint32(rstep * K)
							for u := range n {
								src := asrc + int(uint32((g0+u)*128))
								for j := range nj {
									if pm+rstep*j < M {
										pieces = append(pieces, piece{src, u*tile + rstep*128*j + dp[j&1]})
									}
									src += int(kstep)
								}
							}
							la, lb := pt < 2*g.U*M, pt+wpCopiers < 2*g.U*M
							ia, ib := 0, 0
							if la {
								ia = pt
							}
							if lb {
								ib = pt + wpCopiers
							}
							for _, c := range []struct {
								live bool
								i    int
							}{{la, ia}, {lb, ib}} {
								u := (c.i >> 1) % g.U
								if !c.live || u >= n {
									continue
								}
								m, which := c.i/(2*g.U), c.i&1
								src := m*G + u + g0 // float index into asg (which 0) or rs (which 1)
								dst := u*ars + (m>>1)*4 + which*2 + (m & 1)
								items = append(items, item{src, dst, which})
							}
						}
						want := map[piece]bool{}
						wantItems := map[item]bool{}
						for u := range n {
							for m := range M {
								for c := range 8 {
									want[piece{m*K + (g0+u)*128 + 16*c, u*tile + m*128 + (c^(m&7))<<4}] = true
								}
								// The fold's 16-byte load for row pair m/2 reads
								// asg even, asg odd, rs even, rs odd.
								pair := u*ars + (m/2)*4
								wantItems[item{m*G + g0 + u, pair + m%2, 0}] = true
								wantItems[item{m*G + g0 + u, pair + 2 + m%2, 1}] = true
							}
						}
						seen := map[piece]bool{}
						for _, p := range pieces {
							if !want[p] || seen[p] {
								t.Fatalf("piece from byte %d to stage byte %d: not one of the round's pieces, or copied twice", p.src, p.dst)
							}
							seen[p] = true
						}
						if len(seen) != len(want) {
							t.Fatalf("%d of %d pieces copied", len(seen), len(want))
						}
						seenItems := map[item]bool{}
						for _, it := range items {
							if !wantItems[it] || seenItems[it] {
								t.Fatalf("%s float %d to stage float %d: not one of the round's items, or copied twice", [2]string{"asg", "rs"}[it.asgOrRs], it.src, it.dst)
							}
							seenItems[it] = true
						}
						if len(seenItems) != len(wantItems) {
							t.Fatalf("%d of %d asg/rs items copied", len(seenItems), len(wantItems))
						}
					})
				}
			}
		}
	}
}
