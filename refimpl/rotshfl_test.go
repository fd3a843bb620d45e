package refimpl

import (
	"math"
	"math/rand/v2"
	"testing"
)

// shuffleInputs draws bf16 rows with the values that catch op-order slips:
// signed zeros, subnormals, large magnitudes and ordinary values.
func shuffleInputs(rng *rand.Rand, M, K int) []uint16 {
	x := make([]uint16, M*K)
	for i := range x {
		switch rng.IntN(10) {
		case 0:
			x[i] = 0x8000 // -0
		case 1:
			x[i] = 0
		case 2:
			x[i] = F64ToBF16(rng.NormFloat64() * 1e-39) // bf16 subnormal
		case 3:
			x[i] = F64ToBF16(rng.NormFloat64() * 1e30)
		default:
			x[i] = F64ToBF16(rng.NormFloat64())
		}
	}
	return x
}

// structuredRotation builds a rotation whose every layer uses one pairing
// pattern (the adversarial cases of the routing: pairs already inside one
// lane, pairs across the warp, pairs within one slot class, a shift), with
// random angles including zero (padding pairs) and quarter turns.
func structuredRotation(rng *rand.Rand, K int, pattern func(l, t int) (int, int)) *Rotation {
	r := RandomRotation(rng, K)
	for l := 0; l < r.Krot; l++ {
		for g := 0; g < K/GroupSize; g++ {
			for t := 0; t < PairsPerGroup; t++ {
				i, j := pattern(l, t)
				r.Pairs[l*K+g*GroupSize+2*t] = int16(i)
				r.Pairs[l*K+g*GroupSize+2*t+1] = int16(j)
			}
		}
	}
	for i := range r.Theta {
		switch rng.IntN(8) {
		case 0:
			r.Theta[i] = 0
		case 1:
			r.Theta[i] = RoundF16(math.Pi / 2)
		}
	}
	return r
}

// The shuffle-routed schedule reproduces the float32 mirror bit for bit on
// random and adversarial pairings, for 1..3 partitions.
func TestRotateWarpEqualsRotateF32(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	K := 384
	patterns := map[string]func(l, t int) (int, int){
		"in-lane (2t, 2t+1)":    func(l, t int) (int, int) { return 2 * t, 2*t + 1 },
		"in-lane reversed":      func(l, t int) (int, int) { return 2*t + 1, 2 * t },
		"across (t, t+64)":      func(l, t int) (int, int) { return t, t + 64 },
		"same slot (c, c+4)":    func(l, t int) (int, int) { c := (t/4)*8 + t%4; return c, c + 4 },
		"layer-dependent shift": func(l, t int) (int, int) { return (2*t + l) % 128, (2*t + 1 + l) % 128 },
		"lane-mates then far apart": func(l, t int) (int, int) {
			if l%2 == 0 {
				return 2 * t, 2*t + 1
			}
			return t, 127 - t
		},
	}
	var cases [][]*Rotation
	for P := 1; P <= MaxRotationsPerLaunch; P++ {
		var rots []*Rotation
		for p := 0; p < P; p++ {
			rots = append(rots, RandomRotation(rng, K))
		}
		cases = append(cases, rots)
	}
	for _, pat := range patterns {
		cases = append(cases, []*Rotation{structuredRotation(rng, K, pat)})
	}
	for ci, rots := range cases {
		rr, err := BuildRotRecords(rots)
		if err != nil {
			t.Fatal(err)
		}
		sr, err := BuildShuffleRecords(rots)
		if err != nil {
			t.Fatalf("case %d: %v", ci, err)
		}
		M := 5
		x := shuffleInputs(rng, M, K)
		for p := range rots {
			want, got := rr.RotateF32(x, M, p), sr.RotateWarp(x, M, p)
			bad := 0
			for i := range want {
				if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
					if bad < 3 {
						t.Errorf("case %d p=%d element %d: warp %g (%#x), mirror %g (%#x)", ci, p, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
					}
					bad++
				}
			}
			if bad > 0 {
				t.Errorf("case %d p=%d: %d of %d elements differ", ci, p, bad, len(want))
			}
		}
	}
}

// Every round of every layer is a perfect matching: each lane names one
// source lane per round, each source lane offers exactly one of its values
// per round, and over the four rounds each value leaves its lane once.
func TestShuffleScheduleRoundsAreMatchings(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	rot := RandomRotation(rng, 256)
	sr, err := BuildShuffleRecords([]*Rotation{rot})
	if err != nil {
		t.Fatal(err)
	}
	G := 2
	for g := 0; g < G; g++ {
		for l := 0; l < DefaultKrot; l++ {
			o := (g*DefaultKrot + l) * 32
			// Tag each lane's slots with distinct values; each lane's four
			// offers must be its four slots, each once.
			for lane := 0; lane < 32; lane++ {
				s := ShuffleSends(sr.Ctrl[o+lane], [4]float32{0, 1, 2, 3})
				seen := [4]bool{}
				for _, v := range s {
					seen[int(v)] = true
				}
				if seen != [4]bool{true, true, true, true} {
					t.Fatalf("g=%d l=%d lane %d offers %v, not each slot once", g, l, lane, s)
				}
			}
			// Delivered (source lane, round) pairs: each exactly once.
			var used [32][4]int
			for lane := 0; lane < 32; lane++ {
				w := sr.Ctrl[o+lane]
				for r := 0; r < 4; r++ {
					used[(w>>(ShflSrcBits*r))&31][r]++
				}
			}
			for src := range used {
				for r, n := range used[src] {
					if n != 1 {
						t.Fatalf("g=%d l=%d: lane %d's round-%d value delivered %d times", g, l, src, r, n)
					}
				}
			}
		}
	}
	// The final words name each channel of a group once.
	for g := 0; g < G; g++ {
		seen := map[uint32]bool{}
		for lane := 0; lane < 32; lane++ {
			for q := 0; q < 4; q++ {
				c := (sr.Final[g*32+lane] >> (8 * q)) & 0xFF
				if c >= 128 || seen[c] {
					t.Fatalf("group %d: final channel %d out of range or repeated", g, c)
				}
				seen[c] = true
			}
		}
	}
}

func TestBuildShuffleRecordsRejects(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	if _, err := BuildShuffleRecords(nil); err == nil {
		t.Error("no rotations accepted")
	}
	a, b := RandomRotation(rng, 256), RandomRotation(rng, 384)
	if _, err := BuildShuffleRecords([]*Rotation{a, b}); err == nil {
		t.Error("mixed K accepted")
	}
	bad := RandomRotation(rng, 128)
	bad.Pairs[5] = bad.Pairs[6]
	if _, err := BuildShuffleRecords([]*Rotation{bad}); err == nil {
		t.Error("a layer that is not a permutation accepted")
	}
}
