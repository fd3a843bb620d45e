package gemm

import (
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/parharness/parharness/bench"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/internal/fakegpu"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/refimpl"
)

// skPart is one warpgroup's part of a stream-K block, as gemm_dec_wk (SK)
// computes it: units [qa, qb); segment 0 is tile tw's groups [ga, ga+len0),
// segment 1 tile tw+1's groups [0, len1).
type skPart struct {
	qa, qb, tw, ga, len0, len1 uint32
}

// skBlock is one block's units [u0, u1) and its S warpgroups' parts.
type skBlock struct {
	u0, u1 uint32
	parts  []skPart
}

// skModel is the kernel's integer split of one launch: T = (N/64)·G units,
// B blocks, S warpgroups a block.
type skModel struct {
	G, T, B, S, tiles uint32
	blocks            []skBlock
}

// newSKModel splits the work the way gemm.hip's gemm_dec_wk<..., SK=true>
// does, in the kernel's unsigned 32-bit arithmetic (64-bit products where
// the kernel widens).
func newSKModel(G, tiles, B, S uint32) skModel {
	m := skModel{G: G, T: tiles * G, B: B, S: S, tiles: tiles}
	for b := uint32(0); b < B; b++ {
		u0 := uint32(uint64(b) * uint64(m.T) / uint64(B))
		u1 := uint32(uint64(b+1) * uint64(m.T) / uint64(B))
		blk := skBlock{u0: u0, u1: u1}
		L := u1 - u0
		for w := uint32(0); w < S; w++ {
			qa, qb := u0+w*L/S, u0+(w+1)*L/S
			tw := qa / G
			ga := qa - tw*G
			e0 := min(qb, (tw+1)*G)
			blk.parts = append(blk.parts, skPart{qa: qa, qb: qb, tw: tw, ga: ga, len0: e0 - qa, len1: qb - e0})
		}
		m.blocks = append(m.blocks, blk)
	}
	return m
}

// blk is dec_sk_reduce's claim of the block holding unit u.
func (m skModel) blk(u uint32) uint32 {
	return uint32((uint64(u+1)*uint64(m.B) - 1) / uint64(m.T))
}

// slot is the ws slot block c writes (and the completing block reads) for
// its shared tile t: 2c for the block's first tile, 2c+1 otherwise.
func (m skModel) slot(c, t uint32) uint32 {
	first := uint32(uint64(c)*uint64(m.T)/uint64(m.B)) / m.G
	if t == first {
		return 2 * c
	}
	return 2*c + 1
}

// partialsOn counts block b's warpgroup partials that dec_sk_reduce adds for
// tile t (its own selection: a non-empty part's first tile, or the tile
// after it when the part crosses).
func (m skModel) partialsOn(b, t uint32) int {
	n := 0
	for _, p := range m.blocks[b].parts {
		if p.qa == p.qb {
			continue
		}
		ta := p.qa / m.G
		cross := p.qb > (ta+1)*m.G
		if ta == t || (cross && ta+1 == t) {
			n++
		}
	}
	return n
}

// streamKNames are the sorted names of the kernels in geom whose
// geometry sk reports stream-K.
func streamKNames[G any](geom map[string]G, sk func(G) bool) []string {
	var names []string
	for name, g := range geom {
		if sk(g) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// skShapes are the (N, K) the stream-K model covers: tiny ones (one tile, one
// group; G < S), odd tile counts, and the real model linears.
var skShapes = [][2]int{
	{64, 256}, {128, 384}, {192, 128 * 5}, {7168, 5120}, {17408, 5120}, {5120, 8704}, {8192, 5120}, {320, 128 * 3}, {64, 128},
}

// skSMs are the SM counts (the grid's base) the model covers: tiny grids,
// odd ones, the H100's 132 and the H200 table's 114, and a doubled device.
var skSMs = []int{1, 2, 3, 7, 37, 114, 132, 264} // the device slots (SMs × blocks an SM) DecSKBlocks sizes the grid for

// TestDecSKSplitModel models, in Go, the integer work split of the
// stream-K decode kernels (pq_gemm_dec_wks_m*: gemm.hip gemm_dec_wk with
// SK = true and its epilogue dec_sk_reduce) and checks the launcher's
// DecSKBlocks, DecSKSharedTiles, DecSKWorkspaceBytes and DecSumTerms
// against it. The split is pure integer arithmetic (blocks own
// floor(bT/B)..floor((b+1)T/B) of the T = (N/64)·G tile-major units, S
// warpgroup parts each, the blk() inverse, the shared-tile counters and
// ws slots); a wrong grid or bound shows on a GPU only as a trap, a hang
// on a counter that never completes, a ws overrun or a wrong sum, and
// the gate can only run the geometries (SM count, shapes) of the one
// device it is on. This covers every wks kernel, M class edge, split,
// shape and SM count without a device.
func TestDecSKSplitModel(t *testing.T) {
	names := streamKNames(decWKGeom, func(g wkGeom) bool { return g.SK })
	if len(names) == 0 {
		t.Fatal("no stream-K kernel in decWKGeom")
	}
	for _, name := range names {
		k, ok := kernels.Lookup(name)
		if !ok {
			t.Fatalf("%s: in decWKGeom but not registered", name)
		}
		if !DecStreamK(name) {
			t.Fatalf("%s: decWKGeom SK but form %s, not %s", name, k.Form, FormDecSK)
		}
		t.Run(name, func(t *testing.T) {
			ms := []int{k.MaxM}
			if k.MinM != k.MaxM {
				ms = append(ms, k.MinM)
			}
			for _, sh := range skShapes {
				N, K := sh[0], sh[1]
				G := K / refimpl.GroupSize
				if G < 1 || N/DecBN < 1 {
					continue
				}
				t.Run(fmt.Sprintf("N=%d,K=%d", N, K), func(t *testing.T) {
					for _, M := range ms {
						for S := 1; S <= 4; S++ {
							// DecLaunch refuses S > G, and S must fit the block.
							if S > G || !DecKSFits(name, M, S) {
								continue
							}
							for _, sms := range skSMs {
								t.Run(fmt.Sprintf("M=%d,S=%d,sms=%d", M, S, sms), func(t *testing.T) {
									checkDecSKSplit(t, name, M, N, K, S, sms)
								})
							}
						}
					}
				})
			}
		})
	}
}

// checkDecSKSplit checks one launch geometry against the model.
func checkDecSKSplit(t *testing.T, kernel string, M, N, K, S, sms int) {
	t.Helper()
	geo := fmt.Sprintf("%s M=%d N=%d K=%d S=%d sms=%d", kernel, M, N, K, S, sms)
	G, tiles := uint32(K/refimpl.GroupSize), uint32(N/DecBN)
	T := tiles * G
	slots := DecSKSlots(kernel, M, S, sms, 1) // sms slots of one block an SM
	Bi := DecSKBlocks(kernel, M, N, K, S, slots)
	// 1. The grid: at least one block, none without units.
	if Bi < 1 || uint64(Bi) > uint64(T) {
		t.Fatalf("%s: DecSKBlocks = %d, want 1..T = %d (G=%d, tiles=%d)", geo, Bi, T, G, tiles)
	}
	m := newSKModel(G, tiles, uint32(Bi), uint32(S))
	B := m.B

	owner := make([]int32, T) // the block owning each unit, -1: none
	for i := range owner {
		owner[i] = -1
	}
	for b := uint32(0); b < B; b++ {
		bk := m.blocks[b]
		if bk.u1 <= bk.u0 {
			t.Errorf("%s: block %d owns no units ([%d, %d)); T=%d B=%d", geo, b, bk.u0, bk.u1, T, B)
			continue
		}
		t0, t1 := bk.u0/G, (bk.u1-1)/G
		for w, p := range bk.parts {
			if p.qa == p.qb {
				continue
			}
			if p.qb-p.qa > G || p.len1 > G {
				t.Errorf("%s: block %d warpgroup %d part [%d, %d) of %d units (len0=%d len1=%d) exceeds G=%d (the kernel traps at len1 > G)",
					geo, b, w, p.qa, p.qb, p.qb-p.qa, p.len0, p.len1, G)
				continue
			}
			if p.len0 == 0 || p.ga+p.len0 > G {
				t.Errorf("%s: block %d warpgroup %d segment 0 = tile %d groups [%d, %d) outside 1..G=%d groups", geo, b, w, p.tw, p.ga, p.ga+p.len0, G)
				continue
			}
			// The tiles the part's partials go to must be among the block's
			// t0..t1, which dec_sk_reduce walks.
			last := p.tw
			if p.len1 > 0 {
				last++
			}
			if p.tw < t0 || last > t1 {
				t.Errorf("%s: block %d warpgroup %d part on tiles %d..%d outside the block's tiles %d..%d", geo, b, w, p.tw, last, t0, t1)
			}
			// Mark the units by (tile, group), the way the rounds read them.
			mark := func(tile, g0, n uint32) {
				for g := g0; g < g0+n; g++ {
					u := tile*G + g
					if u >= T {
						t.Errorf("%s: block %d warpgroup %d reads unit %d (tile %d group %d) past T=%d", geo, b, w, u, tile, g, T)
						continue
					}
					if u < bk.u0 || u >= bk.u1 {
						t.Errorf("%s: block %d warpgroup %d reads unit %d outside its block's [%d, %d)", geo, b, w, u, bk.u0, bk.u1)
					}
					if owner[u] >= 0 {
						t.Errorf("%s: unit %d (tile %d group %d) owned twice (blocks %d and %d)", geo, u, tile, g, owner[u], b)
						continue
					}
					owner[u] = int32(b)
				}
			}
			mark(p.tw, p.ga, p.len0)
			mark(p.tw+1, 0, p.len1)
		}
	}
	for u, o := range owner {
		if o < 0 {
			t.Errorf("%s: unit %d (tile %d group %d) owned by no warpgroup", geo, u, uint32(u)/G, uint32(u)%G)
		}
	}
	if t.Failed() {
		return
	}

	// 2. blk(u) inverts the block split.
	for u := uint32(0); u < T; u++ {
		if got := m.blk(u); got != uint32(owner[u]) {
			t.Fatalf("%s: blk(%d) = %d, but block %d owns unit %d ([%d, %d))", geo, u, got, owner[u], u, m.blocks[owner[u]].u0, m.blocks[owner[u]].u1)
		}
	}

	// 3. Shared tiles, counters and ws slots.
	shared := 0
	maxSlot := -1
	maxTerms := 0
	slotOf := map[uint32][2]uint32{} // ws slot -> (block, tile)
	for tile := uint32(0); tile < tiles; tile++ {
		var touching []uint32
		for u := tile * G; u < (tile+1)*G; u++ {
			if b := uint32(owner[u]); !slices.Contains(touching, b) {
				touching = append(touching, b)
			}
		}
		bf, bl := m.blk(tile*G), m.blk((tile+1)*G-1)
		var want []uint32
		for c := bf; c <= bl; c++ {
			want = append(want, c)
		}
		if !slices.Equal(touching, want) {
			t.Errorf("%s: tile %d touched by blocks %v, counter range blk(%d)..blk(%d) = %d..%d (%d arrivals)", geo, tile, touching, tile*G, (tile+1)*G-1, bf, bl, bl-bf+1)
			continue
		}
		isShared := bl > bf
		if isShared {
			shared++
		}
		terms := 0
		for _, c := range touching {
			bk := m.blocks[c]
			kernelShared := tile*G < bk.u0 || (tile+1)*G > bk.u1
			if kernelShared != isShared {
				t.Errorf("%s: tile %d: block %d ([%d, %d)) takes it as shared=%v, the counter range %d..%d says %v", geo, tile, c, bk.u0, bk.u1, kernelShared, bf, bl, isShared)
			}
			if t0, t1 := bk.u0/G, (bk.u1-1)/G; tile < t0 || tile > t1 {
				t.Errorf("%s: tile %d: block %d touches it but walks only tiles %d..%d (never arrives)", geo, tile, c, t0, t1)
			}
			n := m.partialsOn(c, tile)
			if n == 0 {
				t.Errorf("%s: tile %d: block %d owns units of it but no warpgroup partial goes to it", geo, tile, c)
			}
			terms += n
			if !isShared {
				continue
			}
			s := m.slot(c, tile)
			// The writer's slot (t == t0 of the writing block) is the reader's.
			ws := 2 * c
			if tile != bk.u0/G {
				ws++
			}
			if ws != s {
				t.Errorf("%s: tile %d block %d: writes ws slot %d, the completing block reads slot %d", geo, tile, c, ws, s)
			}
			if s >= 2*B {
				t.Errorf("%s: tile %d block %d: ws slot %d outside [0, 2B=%d)", geo, tile, c, s, 2*B)
			}
			if prev, dup := slotOf[s]; dup {
				t.Errorf("%s: ws slot %d written by block %d for tile %d and by block %d for tile %d", geo, s, prev[0], prev[1], c, tile)
			}
			slotOf[s] = [2]uint32{c, tile}
			maxSlot = max(maxSlot, int(s))
		}
		maxTerms = max(maxTerms, terms)
	}
	if got := DecSKSharedTiles(kernel, M, N, K, S, slots); got != shared {
		t.Errorf("%s: DecSKSharedTiles = %d, the model has %d shared tiles (B=%d T=%d)", geo, got, shared, B, T)
	}

	// 4. The error bound's term count and the workspace.
	if got := DecSumTerms(kernel, M, N, K, S, slots); got < maxTerms {
		t.Errorf("%s: DecSumTerms = %d, but a tile sums %d partials (B=%d T=%d)", geo, got, maxTerms, B, T)
	}
	tileBytes := 4 * decWKGeom[kernel].NB * DecBN
	if got, need := DecSKWorkspaceBytes(kernel, M, N, K, S, slots), (maxSlot+1)*tileBytes; got < need {
		t.Errorf("%s: DecSKWorkspaceBytes = %d, the highest ws slot %d needs %d", geo, got, maxSlot, need)
	}
}

// TestDecSKSlotsMaxGrid checks bench2 --max-grid's cap on the stream-K
// grid: below the device's slots the launch takes exactly the cap (one
// block a slot, at most one a unit); at or above them, or on a kernel
// that does not size its grid to the device, nothing changes.
func TestDecSKSlotsMaxGrid(t *testing.T) {
	const K, N, M, S = 5120, 7168, 8, DecWP3Split // qkv: 112 tiles of 40 groups
	dev := fakegpu.New(gpu.Info{Backend: "cuda", Arch: "sm_90a", SMs: 132})
	for _, c := range []struct {
		name, kernel string
		cap, grid    int
	}{
		{"uncapped", "pq_gemm_dec_wps_m8", 0, 132},
		{"tiles", "pq_gemm_dec_wps_m8", 112, 112},
		{"one", "pq_gemm_dec_wps_m8", 1, 1},
		{"above", "pq_gemm_dec_wps_m8", 200, 132},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := &bench.Ctx{Dev: dev, MaxGrid: c.cap}
			sms, spm, err := decSKSlotsOf(ctx, c.kernel, M, S)
			if err != nil {
				t.Fatal(err)
			}
			if g := DecSKBlocks(c.kernel, M, N, K, S, DecSKSlots(c.kernel, M, S, sms, spm)); g != c.grid {
				t.Errorf("cap %d: grid %d, want %d", c.cap, g, c.grid)
			}
		})
	}
	t.Run("not-stream-K", func(t *testing.T) {
		sms, spm, err := decSKSlotsOf(&bench.Ctx{Dev: dev, MaxGrid: 7}, "pq_gemm_dec_wp3_m8", M, S)
		if err != nil || sms != 132 || spm != 0 {
			t.Errorf("wp3 under a cap: (%d, %d, %v), want the device's (132, 0, nil)", sms, spm, err)
		}
	})
}

// TestDecSKHandOffProtocol checks the counting protocol of a stream-K
// tile's hand-off (dec_sk_publish) over every interleaving of its n
// contributors' atomic steps, each contributor in one of the two forms the
// kernel has: plain (store the slot, add, finish if the old count was
// n - 1) and tail (a block's last segment: read the count and finish at
// once if it is n - 1, else as plain). In every interleaving exactly one
// contributor finishes, every other contributor's slot is stored by then,
// and no add follows the finisher's reset of the count.
func TestDecSKHandOffProtocol(t *testing.T) {
	const (
		plain = iota
		tail
	)
	names := []string{"plain", "tail"}
	type state struct {
		count, finishers int
		stored           []bool
		step             []int // each contributor's next step
		done             []bool
		reset            bool
	}
	var walk func(t *testing.T, modes []int, s state, trace []int)
	walk = func(t *testing.T, modes []int, s state, trace []int) {
		n := len(modes)
		moved := false
		for c := 0; c < n; c++ {
			if s.done[c] {
				continue
			}
			moved = true
			ns := s
			ns.stored, ns.step, ns.done = slices.Clone(s.stored), slices.Clone(s.step), slices.Clone(s.done)
			finish := func() {
				for o := 0; o < n; o++ {
					if o != c && !ns.stored[o] {
						t.Fatalf("modes %v trace %v: contributor %d finishes before %d stored its slot", modes, append(trace, c), c, o)
					}
				}
				ns.finishers++
				ns.reset, ns.count = true, 0
			}
			add := func() int {
				if ns.reset {
					t.Fatalf("modes %v trace %v: contributor %d adds after the count was reset", modes, append(trace, c), c)
				}
				ns.stored[c] = true
				old := ns.count
				ns.count++
				return old
			}
			switch {
			case modes[c] == tail && ns.step[c] == 0:
				if ns.count == n-1 {
					ns.stored[c] = true // its sum stands in for its slot
					finish()
					ns.done[c] = true
				} else {
					ns.step[c] = 1
				}
			default: // plain, or a tail that found the count short
				if add() == n-1 {
					finish()
				}
				ns.done[c] = true
			}
			walk(t, modes, ns, append(trace, c))
		}
		if !moved && s.finishers != 1 {
			t.Fatalf("modes %v trace %v: %d contributors finished, want 1", modes, trace, s.finishers)
		}
	}
	for n := 2; n <= 4; n++ {
		modes := make([]int, n)
		var each func(i int)
		each = func(i int) {
			if i == n {
				var label []string
				for _, m := range modes {
					label = append(label, names[m])
				}
				t.Run(fmt.Sprint(label), func(t *testing.T) {
					walk(t, slices.Clone(modes), state{stored: make([]bool, n), step: make([]int, n), done: make([]bool, n)}, nil)
				})
				return
			}
			for m := plain; m <= tail; m++ {
				modes[i] = m
				each(i + 1)
			}
		}
		each(0)
	}
}
