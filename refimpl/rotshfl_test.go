package refimpl

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
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

// The kernel decodes the control words with its own #defines; they must be
// the bits BuildShuffleRecords writes.
func TestShuffleCtrlBitsMatchKernel(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "hipsrc", "producers.hip"))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]uint32{"SH_B1": ShflB1, "SH_B2": ShflB2, "SH_B3": ShflB3, "SH_B4": ShflB4, "SH_SWAP": ShflSwap} {
		m := regexp.MustCompile(`(?m)^#define ` + name + ` \(1u << (\d+)\)`).FindSubmatch(src)
		if m == nil {
			t.Fatalf("hipsrc/producers.hip: no #define %s (1u << n)", name)
		}
		if n, _ := strconv.Atoi(string(m[1])); uint32(1)<<n != want {
			t.Errorf("%s is 1<<%d in the kernel, %#x in refimpl", name, n, want)
		}
	}
	// The select network, the shuffle sources and the swap, statement by
	// statement: the ones ShuffleSends and RotateWarp model (an edit to the
	// kernel's network must change the emulator, and this list, with it).
	norm := strings.Join(strings.Fields(string(src)), " ")
	for _, stmt := range []string{
		"float u = (w & SH_B1) ? X1 : X0, v = (w & SH_B2) ? X3 : X2;",
		"float u2 = (w & SH_B1) ? X0 : X1, v2 = (w & SH_B2) ? X2 : X3;",
		"float Y0 = shfl_idx_f32((w & SH_B3) ? v : u, w & 31u);",
		"float Y1 = shfl_idx_f32((w & SH_B3) ? u : v, (w >> 5) & 31u);",
		"float Y2 = shfl_idx_f32((w & SH_B4) ? v2 : u2, (w >> 10) & 31u);",
		"float Y3 = shfl_idx_f32((w & SH_B4) ? u2 : v2, (w >> 15) & 31u);",
		"float Z2 = (w & SH_SWAP) ? Y3 : Y2, Z3 = (w & SH_SWAP) ? Y2 : Y3;",
		"X0 = __builtin_fmaf(q.x, Y0, pA);", "X2 = __builtin_fmaf(q.x, Z2, -qA);",
		"X1 = __builtin_fmaf(q.z, Y1, pB);", "X3 = __builtin_fmaf(q.z, Z3, -qB);",
		"float pA = q.y * Z2, qA = q.y * Y0, pB = q.w * Z3, qB = q.w * Y1;",
	} {
		if !strings.Contains(norm, stmt) {
			t.Errorf("hipsrc/producers.hip no longer has %q (the network RotateWarp emulates)", stmt)
		}
	}
	if ShflSrcBits != 5 {
		t.Errorf("ShflSrcBits = %d; the kernel reads 5-bit source lanes at bits 0, 5, 10, 15", ShflSrcBits)
	}
}
