package refimpl

import "fmt"

// The conflict-free "ownership" layout of the producers' shared-memory
// rotation (hipsrc/producers.hip, *_own kernels).
//
// A warp rotates one 128-value group. In every stage the group's values sit
// in shared memory at slot = lane + 32*reg: lane l owns the four slots
// l, l+32, l+64, l+96, all in bank l, so the four reads of a stage never
// conflict. In layer r lane l owns pairs l (registers 0, 1 = i, j) and l+32
// (registers 2, 3). Between stages every lane writes its four results to the
// slots where the next stage's owners read them; those 128 moves form a
// 4-regular bipartite multigraph from source lanes to destination lanes,
// which splits into 4 perfect matchings (Euler circuits, twice: Kőnig's
// theorem made constructive). Write q of every lane follows matching q, so
// its 32 destinations are 32 distinct lanes, hence 32 distinct banks: the
// writes never conflict either. A lane carries, per transition, which of its
// registers each write takes (2 bits x 4) and the destination slot (8 bits x 4).
//
// Transitions: 0 = channel order -> layer 0, r = layer r-1 -> layer r,
// Krot = layer Krot-1 -> channel order. Channel order is lane c/4, register
// c%4 (lane l loads and stores channels 4l..4l+3).
//
// The arithmetic is unchanged (same fma per pair), so the *_own kernels are
// byte-identical to the plain ones and to RotateF32.

// OwnershipMoves returns the move records [P][Krot+1][G][32] as (slots,
// selectors) word pairs: slot of write q in bits 8q..8q+6 of the first word,
// the source register of write q in bits 2q..2q+1 of the second.
func (rr *RotRecords) OwnershipMoves() ([]uint32, error) {
	G := rr.K / GroupSize
	T := rr.Krot + 1
	out := make([]uint32, rr.P*T*G*32*2)
	for p := 0; p < rr.P; p++ {
		for g := 0; g < G; g++ {
			// lane and register of every channel in each layout: 0 = channel order,
			// 1+r = layer r.
			lanes := make([][GroupSize]int, rr.Krot+1)
			regs := make([][GroupSize]int, rr.Krot+1)
			for c := 0; c < GroupSize; c++ {
				lanes[0][c], regs[0][c] = c/4, c%4
			}
			for r := 0; r < rr.Krot; r++ {
				for lane := 0; lane < 32; lane++ {
					w := rr.Idx[((p*rr.Krot+r)*G+g)*32+lane]
					for h := 0; h < LanePairs; h++ {
						i, j := (w>>(16*h))&0xFF, (w>>(16*h+8))&0xFF
						lanes[1+r][i], regs[1+r][i] = lane, 2*h
						lanes[1+r][j], regs[1+r][j] = lane, 2*h+1
					}
				}
			}
			for tr := 0; tr < T; tr++ {
				src, dst := tr, tr+1 // layout indices
				if tr == rr.Krot {
					dst = 0
				}
				match, err := splitMatchings(lanes[src], lanes[dst])
				if err != nil {
					return nil, fmt.Errorf("refimpl: ownership moves, partition %d group %d transition %d: %w", p, g, tr, err)
				}
				for lane := 0; lane < 32; lane++ {
					var slots, sels uint32
					for q := 0; q < 4; q++ {
						c := match[q][lane]
						slots |= uint32(lanes[dst][c]+32*regs[dst][c]) << (8 * q)
						sels |= uint32(regs[src][c]) << (2 * q)
					}
					o := 2 * (((p*T+tr)*G+g)*32 + lane)
					out[o], out[o+1] = slots, sels
				}
			}
		}
	}
	return out, nil
}

// splitMatchings splits the moves of 128 channels (channel c goes from
// source lane src[c] to destination lane dst[c]; every lane has 4 channels
// on each side) into 4 perfect matchings: match[q][l] is the channel that
// source lane l sends in write q, and the destination lanes of write q are
// all distinct.
func splitMatchings(src, dst [GroupSize]int) ([4][32]int, error) {
	var match [4][32]int
	all := make([]int, GroupSize)
	for c := range all {
		all[c] = c
	}
	a, b := eulerHalves(all, src, dst)
	var groups [][]int
	for _, half := range [][]int{a, b} {
		x, y := eulerHalves(half, src, dst)
		groups = append(groups, x, y)
	}
	for q, grp := range groups {
		if len(grp) != 32 {
			return match, fmt.Errorf("matching %d has %d edges, want 32", q, len(grp))
		}
		var seenS, seenD [32]bool
		for _, c := range grp {
			if seenS[src[c]] || seenD[dst[c]] {
				return match, fmt.Errorf("matching %d is not perfect", q)
			}
			seenS[src[c]], seenD[dst[c]] = true, true
			match[q][src[c]] = c
		}
	}
	return match, nil
}

// eulerHalves splits a regular bipartite multigraph of even degree (edges =
// channels, from source lane src[c] to destination lane dst[c]) into two
// regular halves: it walks an Euler circuit of each component and colours
// its edges alternately. Circuits of a bipartite graph have even length, so
// every visit to a vertex enters on one colour and leaves on the other.
func eulerHalves(edges []int, src, dst [GroupSize]int) (a, b []int) {
	const nv = 64 // source lanes 0..31, destination lanes 32..63
	adj := make([][]int, nv)
	for _, c := range edges {
		adj[src[c]] = append(adj[src[c]], c)
		adj[32+dst[c]] = append(adj[32+dst[c]], c)
	}
	used := make(map[int]bool, len(edges))
	ptr := make([]int, nv)
	type frame struct{ v, e int }
	for start := 0; start < nv; start++ {
		var circuit []int
		stack := []frame{{start, -1}}
		for len(stack) > 0 {
			top := stack[len(stack)-1]
			v := top.v
			for ptr[v] < len(adj[v]) && used[adj[v][ptr[v]]] {
				ptr[v]++
			}
			if ptr[v] == len(adj[v]) {
				if top.e >= 0 {
					circuit = append(circuit, top.e)
				}
				stack = stack[:len(stack)-1]
				continue
			}
			c := adj[v][ptr[v]]
			used[c] = true
			w := 32 + dst[c]
			if v >= 32 {
				w = src[c]
			}
			stack = append(stack, frame{w, c})
		}
		for i, c := range circuit {
			if i%2 == 0 {
				a = append(a, c)
			} else {
				b = append(b, c)
			}
		}
	}
	return a, b
}

// SimulateOwnership runs the ownership layout's data movement in Go with
// the kernels' arithmetic, for row v (one group, channel order, already
// channel-scaled) of partition p and group g: a test that the moves are a
// correct relayout (the result must equal RotateF32's).
func (rr *RotRecords) SimulateOwnership(moves []uint32, v []float32, p, g int) []float32 {
	G := rr.K / GroupSize
	T := rr.Krot + 1
	var sv [GroupSize]float32
	regsOf := func(lane int) [4]float32 {
		return [4]float32{sv[lane], sv[lane+32], sv[lane+64], sv[lane+96]}
	}
	write := func(tr int, vals [32][4]float32) {
		for lane := 0; lane < 32; lane++ {
			o := 2 * (((p*T+tr)*G+g)*32 + lane)
			slots, sels := moves[o], moves[o+1]
			for q := 0; q < 4; q++ {
				sv[(slots>>(8*q))&0xFF] = vals[lane][(sels>>(2*q))&3]
			}
		}
	}
	var vals [32][4]float32
	for lane := 0; lane < 32; lane++ {
		copy(vals[lane][:], v[4*lane:4*lane+4])
	}
	write(0, vals)
	for r := 0; r < rr.Krot; r++ {
		for lane := 0; lane < 32; lane++ {
			x := regsOf(lane)
			o := ((p*rr.Krot+r)*G+g)*32 + lane
			for h := 0; h < LanePairs; h++ {
				c, s := rr.CS[4*o+2*h], rr.CS[4*o+2*h+1]
				a, b := x[2*h], x[2*h+1]
				vals[lane][2*h] = FMA32(c, a, float32(s*b))
				vals[lane][2*h+1] = FMA32(c, b, -float32(s*a))
			}
		}
		write(r+1, vals)
	}
	out := make([]float32, GroupSize)
	for lane := 0; lane < 32; lane++ {
		x := regsOf(lane)
		copy(out[4*lane:], x[:])
	}
	return out
}
