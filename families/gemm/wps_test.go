package gemm

import (
	"fmt"
	"slices"
	"testing"

	"github.com/parharness/parharness/refimpl"
)

// wpsRound is one round of a stream-K warp-specialized block as
// gemm_dec_wp<..., SK = true> numbers it: global round r of the block,
// tile t, groups [g0, g0+n).
type wpsRound struct{ r, t, g0, n uint32 }

// wpsSegments lists a block's segments (tile, ga, gb) in the order the
// kernel walks them (gemm.hip wp_seg): tile t0 = u0/G, then t1 =
// (u1-1)/G, then t0+1 .. t1-1; tile t's groups [max(u0, tG) - tG,
// min(u1, (t+1)G) - tG).
func wpsSegments(u0, u1, G uint32) [][3]uint32 {
	t0, t1 := u0/G, (u1-1)/G
	var out [][3]uint32
	for i := uint32(0); i < t1-t0+1; i++ {
		t := t0 + i - 1
		switch i {
		case 0:
			t = t0
		case 1:
			t = t1
		}
		ga, gb := uint32(0), G
		if u0 > t*G {
			ga = u0 - t*G
		}
		if u1 < (t+1)*G {
			gb = u1 - t*G
		}
		out = append(out, [3]uint32{t, ga, gb})
	}
	return out
}

// wpsProducerRounds is the producer's walk (the bulk issuer's and the
// copiers' loops): every segment's groups in steps of U, rounds numbered on.
func wpsProducerRounds(segs [][3]uint32, U uint32) []wpsRound {
	var out []wpsRound
	r := uint32(0)
	for _, s := range segs {
		for g0 := s[1]; g0 < s[2]; g0 += U {
			out = append(out, wpsRound{r, s[0], g0, min(U, s[2]-g0)})
			r++
		}
	}
	return out
}

// wpsConsumerRounds is consumer wg's walk: per segment its rounds r ≡ wg
// (mod C) from the segment's first round rbeg, group g0s + (r − rbeg)·U.
func wpsConsumerRounds(segs [][3]uint32, U, C, wg uint32) []wpsRound {
	var out []wpsRound
	rbeg := uint32(0)
	for _, s := range segs {
		nrs := (s[2] - s[1] + U - 1) / U
		for r := rbeg + (wg+C-rbeg%C)%C; r < rbeg+nrs; r += C {
			g0 := s[1] + (r-rbeg)*U
			out = append(out, wpsRound{r, s[0], g0, min(U, s[2]-g0)})
		}
		rbeg += nrs
	}
	return out
}

// TestDecWPSSplitModel models, in Go, the stream-K split of the
// warp-specialized decode kernels (pq_gemm_dec_wps_m*: gemm.hip
// gemm_dec_wp with SK = true and dec_sk_publish) on every geometry of
// the wks model (shapes, SM counts): each unit read once, by its own
// block; the consumers take exactly the producer's rounds with the same
// tile and groups, each round's consumer r mod C (the stage ring's
// invariant); the counter targets, shared-tile flags and ws slots the
// kernel derives; and DecSKBlocks, DecSKSharedTiles, DecSumTerms and
// DecSKWorkspaceBytes against the model.
func TestDecWPSSplitModel(t *testing.T) {
	names := streamKNames(decWPGeom, func(g wpGeom) bool { return g.SK })
	if len(names) == 0 {
		t.Fatal("no stream-K kernel in decWPGeom")
	}
	for _, name := range names {
		if !DecStreamK(name) {
			t.Fatalf("%s: decWPGeom SK but not %s", name, FormDecSK)
		}
		g := decWPGeom[name]
		t.Run(name, func(t *testing.T) {
			for _, sh := range skShapes {
				N, K := sh[0], sh[1]
				if K/refimpl.GroupSize < 1 || N/DecBN < 1 {
					continue
				}
				for _, sms := range skSMs {
					t.Run(fmt.Sprintf("N=%d,K=%d,sms=%d", N, K, sms), func(t *testing.T) {
						checkDecWPSSplit(t, name, g, N, K, sms)
					})
				}
			}
		})
	}
}

func checkDecWPSSplit(t *testing.T, kernel string, g wpGeom, N, K, sms int) {
	t.Helper()
	S, M := g.C, g.NB
	G, tiles := uint32(K/refimpl.GroupSize), uint32(N/DecBN)
	T := tiles * G
	slots := DecSKSlots(kernel, M, S, sms, 1)
	Bi := DecSKBlocks(kernel, M, N, K, S, slots)
	if Bi < 1 || uint64(Bi) > uint64(T) || Bi > max(slots, 1) {
		t.Fatalf("DecSKBlocks = %d, want 1..min(T = %d, slots = %d)", Bi, T, slots)
	}
	m := newSKModel(G, tiles, uint32(Bi), 1) // the blocks' units, blk() and slot()
	U, C := uint32(g.U), uint32(g.C)
	owner := make([]int32, T)
	for i := range owner {
		owner[i] = -1
	}
	segsOf := make([][][3]uint32, m.B)
	for b := uint32(0); b < m.B; b++ {
		bk := m.blocks[b]
		if bk.u1 <= bk.u0 {
			t.Fatalf("block %d owns no units ([%d, %d))", b, bk.u0, bk.u1)
		}
		segs := wpsSegments(bk.u0, bk.u1, G)
		segsOf[b] = segs
		// A block of three or more tiles ends on a whole one (no hand-off
		// after its last round).
		if last := segs[len(segs)-1]; len(segs) >= 3 && (last[1] != 0 || last[2] != G) {
			t.Fatalf("block %d: %d segments, the last (tile %d groups [%d, %d)) is not whole", b, len(segs), last[0], last[1], last[2])
		}
		prod := wpsProducerRounds(segs, U)
		for _, r := range prod {
			if r.n == 0 || r.g0+r.n > G {
				t.Fatalf("block %d round %d: tile %d groups [%d, %d) outside 1..G=%d", b, r.r, r.t, r.g0, r.g0+r.n, G)
			}
			for gg := r.g0; gg < r.g0+r.n; gg++ {
				u := r.t*G + gg
				if u < bk.u0 || u >= bk.u1 {
					t.Fatalf("block %d round %d reads unit %d outside [%d, %d)", b, r.r, u, bk.u0, bk.u1)
				}
				if owner[u] >= 0 {
					t.Fatalf("unit %d read by blocks %d and %d", u, owner[u], b)
				}
				owner[u] = int32(b)
			}
		}
		// The consumers' rounds, merged, are the producer's, each at its r mod C.
		var cons []wpsRound
		for wg := uint32(0); wg < C; wg++ {
			for _, r := range wpsConsumerRounds(segs, U, C, wg) {
				if r.r%C != wg {
					t.Fatalf("block %d: consumer %d takes round %d (the ring gives it to consumer %d)", b, wg, r.r, r.r%C)
				}
				cons = append(cons, r)
			}
		}
		slices.SortFunc(cons, func(a, b wpsRound) int { return int(a.r) - int(b.r) })
		if !slices.Equal(cons, prod) {
			t.Fatalf("block %d: the consumers' rounds %v differ from the producer's %v", b, cons, prod)
		}
	}
	for u, o := range owner {
		if o < 0 {
			t.Fatalf("unit %d (tile %d group %d) read by no block", u, uint32(u)/G, uint32(u)%G)
		}
	}
	shared, maxSlot, maxTerms := 0, -1, 0
	slotOf := map[uint32]uint32{}
	for tile := uint32(0); tile < tiles; tile++ {
		bf, bl := m.blk(tile*G), m.blk((tile+1)*G-1)
		var touching, want []uint32
		for u := tile * G; u < (tile+1)*G; u++ {
			if b := uint32(owner[u]); !slices.Contains(touching, b) {
				touching = append(touching, b)
			}
		}
		for c := bf; c <= bl; c++ {
			want = append(want, c)
		}
		if !slices.Equal(touching, want) {
			t.Fatalf("tile %d read by blocks %v, its counter expects blk %d..%d", tile, touching, bf, bl)
		}
		isShared := bl > bf
		if isShared {
			shared++
		}
		maxTerms = max(maxTerms, int(C)*len(touching))
		for _, c := range touching {
			seg := -1
			for i, s := range segsOf[c] {
				if s[0] == tile {
					seg = i
				}
			}
			if seg < 0 {
				t.Fatalf("tile %d: block %d reads it but has no segment on it (never arrives)", tile, c)
			}
			s := segsOf[c][seg]
			if kernelShared := !(s[1] == 0 && s[2] == G); kernelShared != isShared {
				t.Fatalf("tile %d: block %d's segment [%d, %d) takes it as shared=%v, the counter range says %v", tile, c, s[1], s[2], kernelShared, isShared)
			}
			if !isShared {
				continue
			}
			ws := 2 * c // the writer: 2b for the block's first tile, else 2b + 1
			if tile != m.blocks[c].u0/G {
				ws++
			}
			if ws != m.slot(c, tile) {
				t.Fatalf("tile %d block %d writes ws slot %d, the completing block reads %d", tile, c, ws, m.slot(c, tile))
			}
			if prev, dup := slotOf[ws]; dup {
				t.Fatalf("ws slot %d written for tiles %d and %d", ws, prev, tile)
			}
			slotOf[ws] = tile
			maxSlot = max(maxSlot, int(ws))
		}
	}
	if got := DecSKSharedTiles(kernel, M, N, K, S, slots); got != shared {
		t.Errorf("DecSKSharedTiles = %d, the model has %d", got, shared)
	}
	if got := DecSumTerms(kernel, M, N, K, S, slots); got < maxTerms {
		t.Errorf("DecSumTerms = %d, a tile sums %d partials", got, maxTerms)
	}
	if got, need := DecSKWorkspaceBytes(kernel, M, N, K, S, slots), (maxSlot+1)*4*g.NB*DecBN; got < need {
		t.Errorf("DecSKWorkspaceBytes = %d, the highest ws slot %d needs %d", got, maxSlot, need)
	}
}
