package refimpl

import (
	"fmt"
	"math"
)

// Shuffle-routed rotation records: the schedule of a producer that keeps a
// row-group's 128 values in registers (4 per lane of a 32-lane warp) and
// moves them between layers with 4 warp shuffles, instead of a shared-memory
// round trip per layer (families/producers/producers.hip, pq_rot_bf16_sh).
//
// The model. Before layer r, lane L holds 4 values in slots 0..3. Layer r's
// 64 pairs are given to the lanes, two per lane (pairs 2L and 2L+1 of the
// layer to lane L). Every value must move from where it is (its sender lane
// and slot) to the lane that owns its pair (its receiver lane): a bipartite
// multigraph, sender lanes x receiver lanes, 4-regular on both sides (each
// lane sends 4 values and receives 4). A warp shuffle moves one value into
// every lane, each lane naming its source lane; every source lane offers one
// register, which it may pick. So one shuffle is a perfect matching of the
// graph, and 4 rounds are a proper 4-edge-colouring. It is built by two
// Euler splits (Kotzig's transition systems: pair up the edges at every
// vertex; the pairs chain the edges into closed trails, even in a bipartite
// graph, and colouring each trail alternately puts the two edges of every
// pair into different halves):
//
//	split 1, into halves {rounds 0,1} and {rounds 2,3}: at a sender the
//	  edges of slots 0 and 1 are paired, and those of slots 2 and 3; at a
//	  receiver the two values of each of its pairs. So each half takes one
//	  value of each of a receiver's pairs, and one of slots {0,1} and one
//	  of slots {2,3} of each sender.
//	split 2, each half into its two rounds: at every vertex its two edges
//	  in the half are paired.
//
// A lane receives round t's value into slot t. Its pair A (the pair of
// slot 0's value) then sits in slots 0 and 2 or 0 and 3; Swap exchanges
// slots 2 and 3 so that A is (0, 2) and B is (1, 3). A sender's round
// value is two selects away from its registers:
//
//	u  = b1 ? X1 : X0    w  = b2 ? X3 : X2     (the half-0 values)
//	u' = b1 ? X0 : X1    w' = b2 ? X2 : X3     (the half-1 values)
//	round 0: b3 ? w : u    round 1: b3 ? u : w
//	round 2: b4 ? w' : u'  round 3: b4 ? u' : w'
//
// The pair arithmetic is the contract of RotateF32 (rotf32.go) op for op:
// with the pair (i, j), (c, s) and slot 0 holding i, sA = s; holding j,
// sA = -s, which (since (-s)·x == -(s·x) exactly for finite x, zeros
// included; a NaN result's sign bit may differ) gives
//
//	X0 = fma(cA, Y0, sA*Y2)      X2 = fma(cA, Y2, -(sA*Y0))
//
// and the same for B on slots 1 and 3. After the last layer, Final names
// the channel in each slot; the kernel writes its bf16 values to those
// positions of a shared 128-entry row slice and reads its canonical four
// (4L..4L+3) back, the layout every output of the producers has.
//
// Per lane and layer that is 4 shuffles, 10 selects and 8 floating-point
// ops on registers, against pq_rot_bf16's 4 shared loads and 4 stores per
// lane and layer plus record reads: a count of operations, not a timing.

// ShuffleRecords are the records of the shuffle-routed producer for P
// partitions, in the order it loads them: a warp working on (p, g) reads,
// per layer r, one word of Ctrl and one quadruple of CS per lane.
type ShuffleRecords struct {
	P, K, Krot int
	// Ctrl [P][G][Krot][32]: bits 5t..5t+4 the source lane of round t
	// (t = 0..3), bit 20 b1, 21 b2, 22 b3, 23 b4 (the sender selects above),
	// bit 24 Swap.
	Ctrl []uint32
	// CS [P][G][Krot][32][4]: cA, sA, cB, sB (sines signed as above).
	CS []float32
	// Final [P][G][32]: the channels (0..127 within the group) in slots
	// 0..3 after the last layer, a byte each, slot 0 lowest.
	Final []uint32
	ChS   []float32 // [P][K]: channel scales
}

// Ctrl word fields.
const (
	ShflSrcBits = 5
	ShflB1      = 1 << 20
	ShflB2      = 1 << 21
	ShflB3      = 1 << 22
	ShflB4      = 1 << 23
	ShflSwap    = 1 << 24
)

// Bytes are the records as the kernel's buffers take them, little endian:
// control words, cos/sin quadruples, final channel words, channel scales.
func (sr *ShuffleRecords) Bytes() (ctrl, cs, final, chs []byte) {
	return u32LE(sr.Ctrl), f32LE(sr.CS), u32LE(sr.Final), f32LE(sr.ChS)
}

// BuildShuffleRecords schedules the rotations of one launch (1..3
// partitions, Krot == DefaultKrot, the same K) for the shuffle-routed
// producer.
func BuildShuffleRecords(rots []*Rotation) (*ShuffleRecords, error) {
	K, chs, err := launchRotations(rots)
	if err != nil {
		return nil, err
	}
	G := K / GroupSize
	P := len(rots)
	sr := &ShuffleRecords{P: P, K: K, Krot: DefaultKrot,
		Ctrl: make([]uint32, P*G*DefaultKrot*32), CS: make([]float32, P*G*DefaultKrot*32*4),
		Final: make([]uint32, P*G*32), ChS: chs}
	for p, r := range rots {
		for g := 0; g < G; g++ {
			var at [32][4]int // channel in (lane, slot): canonical at the start
			for c := 0; c < GroupSize; c++ {
				at[c/4][c%4] = c
			}
			for l := 0; l < DefaultKrot; l++ {
				var pairs [PairsPerGroup][2]int
				var theta [PairsPerGroup]float64
				for t := range pairs {
					pairs[t][0], pairs[t][1], theta[t] = r.Pair(l, g, t)
				}
				o := ((p*G+g)*DefaultKrot + l) * 32
				next, err := scheduleLayer(&at, &pairs, &theta, sr.Ctrl[o:o+32], sr.CS[4*o:4*o+128])
				if err != nil {
					return nil, fmt.Errorf("refimpl: partition %d layer %d group %d: %w", p, l, g, err)
				}
				at = next
			}
			for lane := 0; lane < 32; lane++ {
				var w uint32
				for q := 0; q < 4; q++ {
					w |= uint32(at[lane][q]) << (8 * q)
				}
				sr.Final[(p*G+g)*32+lane] = w
			}
		}
	}
	return sr, nil
}

// scheduleLayer colours one layer's routing (see the file comment), writes
// each lane's control word and cos/sin quadruple, and returns the layout
// after the layer.
func scheduleLayer(at *[32][4]int, pairs *[PairsPerGroup][2]int, theta *[PairsPerGroup]float64, ctrl []uint32, cs []float32) (next [32][4]int, err error) {
	// Edges are channels. sender: where the channel is; recv: the lane
	// owning its pair; sMate/rMate: the paired edge at the sender (slot^1)
	// and at the receiver (the other value of the pair).
	var sLane, sSlot, recv, sMate, rMate, pairOf [GroupSize]int
	for lane := 0; lane < 32; lane++ {
		for q := 0; q < 4; q++ {
			c := at[lane][q]
			sLane[c], sSlot[c] = lane, q
			sMate[c] = at[lane][q^1]
		}
	}
	for t, pr := range pairs { // a permutation of 0..127: Rotation.Validate (launchRotations) checked it
		i, j := pr[0], pr[1]
		recv[i], recv[j] = t/2, t/2
		rMate[i], rMate[j] = j, i
		pairOf[i], pairOf[j] = t, t
	}
	// Split 1: half[c] in {0, 1} (rounds {0,1} or {2,3}).
	half, err := eulerSplit(&sMate, &rMate)
	if err != nil {
		return next, fmt.Errorf("split 1: %w", err)
	}
	// Split 2: in each half, pair a vertex's two edges of that half.
	var sMate2, rMate2 [GroupSize]int
	for lane := 0; lane < 32; lane++ {
		var byHalfS, byHalfR [2][]int
		for c := 0; c < GroupSize; c++ {
			if sLane[c] == lane {
				byHalfS[half[c]] = append(byHalfS[half[c]], c)
			}
			if recv[c] == lane {
				byHalfR[half[c]] = append(byHalfR[half[c]], c)
			}
		}
		for h := 0; h < 2; h++ {
			if len(byHalfS[h]) != 2 || len(byHalfR[h]) != 2 {
				return next, fmt.Errorf("split 1: lane %d has %d/%d edges in half %d, want 2/2 (internal error)", lane, len(byHalfS[h]), len(byHalfR[h]), h)
			}
			a, b := byHalfS[h][0], byHalfS[h][1]
			sMate2[a], sMate2[b] = b, a
			a, b = byHalfR[h][0], byHalfR[h][1]
			rMate2[a], rMate2[b] = b, a
		}
	}
	side, err := eulerSplit(&sMate2, &rMate2)
	if err != nil {
		return next, fmt.Errorf("split 2: %w", err)
	}
	var round [GroupSize]int
	for c := range round {
		round[c] = 2*half[c] + side[c]
	}
	// Control words: receive side (sources, swap, pairs) and send side
	// (which register each round offers).
	var got [32][4]int // channel received in round t
	var sends [32][4]int
	for c := 0; c < GroupSize; c++ {
		got[recv[c]][round[c]] = c
		sends[sLane[c]][round[c]] = c
	}
	for lane := 0; lane < 32; lane++ {
		var w uint32
		for t := 0; t < 4; t++ {
			w |= uint32(sLane[got[lane][t]]) << (ShflSrcBits * t)
		}
		y := got[lane]
		if rMate[y[0]] == y[3] {
			w |= ShflSwap
			y[2], y[3] = y[3], y[2]
		}
		if rMate[y[0]] != y[2] || rMate[y[1]] != y[3] {
			return next, fmt.Errorf("lane %d: received channels %v are not two pairs in slots (0,2), (1,3) (internal error)", lane, y)
		}
		for k, c := range []int{y[0], y[1]} {
			t := pairOf[c]
			s, co := math.Sincos(theta[t])
			sv := float32(s)
			if c != pairs[t][0] { // slot k holds j
				sv = -sv
			}
			cs[4*lane+2*k], cs[4*lane+2*k+1] = float32(co), sv
		}
		next[lane] = y
		// Send side: the half-0 values and which of them goes first.
		x := at[lane]
		var b1, b2, b3, b4 bool
		b1 = half[x[1]] == 0 // u = X1 when slot 1's value is in half 0
		b2 = half[x[3]] == 0 // w = X3 likewise
		b3 = sSlot[sends[lane][0]] >= 2
		b4 = sSlot[sends[lane][2]] >= 2
		for bit, on := range map[uint32]bool{ShflB1: b1, ShflB2: b2, ShflB3: b3, ShflB4: b4} {
			if on {
				w |= bit
			}
		}
		ctrl[lane] = w
	}
	return next, nil
}

// eulerSplit colours every edge 0 or 1 so that the two edges paired at each
// sender (sMate) and at each receiver (rMate) differ: it walks each closed
// trail the pairings chain (edge, its receiver mate, that one's sender
// mate, ...), colouring alternately. Both pairings are perfect matchings
// on the edges of a bipartite graph, so every trail has even length and
// the colouring is consistent; a clash is an internal error.
func eulerSplit(sMate, rMate *[GroupSize]int) (colour [GroupSize]int, err error) {
	for c := range colour {
		colour[c] = -1
	}
	for e := 0; e < GroupSize; e++ {
		if colour[e] >= 0 {
			continue
		}
		for cur := e; ; {
			n := rMate[cur]
			if colour[cur] >= 0 || colour[n] >= 0 {
				return colour, fmt.Errorf("edge %d coloured twice (internal error)", cur)
			}
			colour[cur], colour[n] = 0, 1
			if cur = sMate[n]; cur == e {
				break
			}
		}
	}
	return colour, nil
}

// ShuffleSends are the four values a lane offers in rounds 0..3 under a
// control word: the kernel's select network, written once for the emulator.
func ShuffleSends(w uint32, x [4]float32) [4]float32 {
	pick := func(on bool, a, b float32) float32 {
		if on {
			return a
		}
		return b
	}
	u, v := pick(w&ShflB1 != 0, x[1], x[0]), pick(w&ShflB2 != 0, x[3], x[2])
	u2, v2 := pick(w&ShflB1 != 0, x[0], x[1]), pick(w&ShflB2 != 0, x[2], x[3])
	return [4]float32{pick(w&ShflB3 != 0, v, u), pick(w&ShflB3 != 0, u, v), pick(w&ShflB4 != 0, v2, u2), pick(w&ShflB4 != 0, u2, v2)}
}

// RotateWarp runs the shuffle-routed producer's rotation of bf16 rows x
// [M, K] for partition p as the kernel does, lane by lane and round by
// round in float32, and returns v [M, K] in channel order. It must equal
// RotRecords.RotateF32 of the same rotations bit for bit on finite inputs
// (with a NaN or Inf input, a NaN output's sign bit may differ).
func (sr *ShuffleRecords) RotateWarp(x []uint16, M, p int) []float32 {
	K, G := sr.K, sr.K/GroupSize
	v := make([]float32, M*K)
	for m := 0; m < M; m++ {
		for g := 0; g < G; g++ {
			var X [32][4]float32
			base := m*K + g*GroupSize
			for lane := 0; lane < 32; lane++ {
				for q := 0; q < 4; q++ {
					c := 4*lane + q
					X[lane][q] = float32(BF16ToF32(x[base+c]) * sr.ChS[p*K+g*GroupSize+c])
				}
			}
			for l := 0; l < sr.Krot; l++ {
				o := ((p*G+g)*sr.Krot + l) * 32
				var send [32][4]float32
				for lane := 0; lane < 32; lane++ {
					send[lane] = ShuffleSends(sr.Ctrl[o+lane], X[lane])
				}
				for lane := 0; lane < 32; lane++ {
					w := sr.Ctrl[o+lane]
					var Y [4]float32
					for t := 0; t < 4; t++ {
						Y[t] = send[(w>>(ShflSrcBits*t))&31][t]
					}
					if w&ShflSwap != 0 {
						Y[2], Y[3] = Y[3], Y[2]
					}
					q := sr.CS[4*(o+lane) : 4*(o+lane)+4]
					for k := 0; k < 2; k++ {
						c, s := q[2*k], q[2*k+1]
						a, b := Y[k], Y[k+2]
						X[lane][k] = FMA32(c, a, float32(s*b))
						X[lane][k+2] = FMA32(c, b, -float32(s*a))
					}
				}
			}
			for lane := 0; lane < 32; lane++ {
				f := sr.Final[(p*G+g)*32+lane]
				for q := 0; q < 4; q++ {
					v[base+int((f>>(8*q))&0xFF)] = X[lane][q]
				}
			}
		}
	}
	return v
}
