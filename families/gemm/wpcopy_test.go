package gemm

import (
	"fmt"
	"testing"
)

// wpCopiers is gemm.hip's DWP_COPIERS: the producer's cp.async threads.
const wpCopiers = 96

// A model of gemm_dec_wp's copiers (the fixed-piece loop): copier pt
// stages the 16-byte piece column pt % 8 of rows pt/8 + 12j and the asg/rs
// items pt and pt + 96 of a round. For every geometry the kernel builds,
// every M up to its NB and every count n ≤ U of live groups in a round,
// each (row < M, group < n, piece) must be copied exactly once, from row
// m's piece c of that group to piece c ^ (m % 8) of row m of the group's
// tile (the 128B swizzle the op's descriptor reads), and each (row, asg
// or rs, group) item exactly once; no copy may touch a row ≥ M or a group
// ≥ n (the stage keeps its zeros and stale groups the fold skips).
func TestWPCopierPieces(t *testing.T) {
	const rstep = wpCopiers / 8
	if rstep%8 != 4 {
		t.Fatalf("DWP_COPIERS/8 = %d: the kernel's two swizzle phases need it ≡ 4 (mod 8)", rstep)
	}
	for name, g := range decWPGeom {
		if 2*g.U*g.NB > 2*wpCopiers {
			t.Errorf("%s: %d asg/rs items a round, more than two a copier", name, 2*g.U*g.NB)
		}
		tile := g.NB * 128
		nj := (g.NB + rstep - 1) / rstep
		for M := 1; M <= g.NB; M++ {
			for n := 1; n <= g.U; n++ {
				t.Run(fmt.Sprintf("%s/M=%d/n=%d", name, M, n), func(t *testing.T) {
					type piece struct{ m, u, c int }
					pieces := map[int]piece{} // destination byte -> source piece
					items := map[[3]int]int{} // (row, which, group) -> copies
					for pt := range wpCopiers {
						pc, pm := pt&7, pt>>3
						dp := [2]int{pm*128 + (pc^(pm&7))<<4, pm*128 + (pc^((pm+4)&7))<<4}
						for u := range n {
							for j := range nj {
								m := pm + rstep*j
								if m >= M {
									continue
								}
								dst := u*tile + rstep*128*j + dp[j&1]
								if _, dup := pieces[dst]; dup {
									t.Fatalf("copier %d: byte %d of the stage written twice", pt, dst)
								}
								pieces[dst] = piece{m, u, pc}
							}
						}
						for _, i := range []int{pt, pt + wpCopiers} {
							if i >= 2*g.U*M {
								continue
							}
							m, which, u := i/(2*g.U), i&1, (i>>1)%g.U
							if u < n {
								items[[3]int{m, which, u}]++
							}
						}
					}
					for u := range n {
						for m := range M {
							for c := range 8 {
								want := u*tile + m*128 + (c^(m&7))<<4
								if got, ok := pieces[want]; !ok || got != (piece{m, u, c}) {
									t.Fatalf("row %d group %d piece %d: stage byte %d holds %+v (present %t)", m, u, c, want, got, ok)
								}
								delete(pieces, want)
							}
							for which := range 2 {
								if k := items[[3]int{m, which, u}]; k != 1 {
									t.Fatalf("row %d group %d %s copied %d times", m, u, [2]string{"asg", "rs"}[which], k)
								}
								delete(items, [3]int{m, which, u})
							}
						}
					}
					if len(pieces) != 0 || len(items) != 0 {
						t.Fatalf("copies outside rows < %d, groups < %d: %d pieces, %d items", M, n, len(pieces), len(items))
					}
				})
			}
		}
	}
}
