package producers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/refimpl"
	"github.com/parharness/parharness/shapes"
)

// The rotate-and-quantize producer gates (hipsrc/producers.hip).
//
// producers: every producer variant, byte for byte against the Go mirror
// (refimpl.RotRecords.RotateF32 + refimpl.QuantizeAct*), on the deployed K
// values, P = 1..3 partitions, both M ladders with odd M, row-major and
// fragment-tiled outputs; in the full suite also the shuffle-routed pass A
// (pq_rot_bf16_sh, refimpl.ShuffleRecords), which has not yet run on a
// device and moves to the quick suite once it has passed there. Every
// output is poisoned before every variant
// (0xFF: a NaN code and a NaN float pattern, neither of which a producer
// writes), rows past M are checked untouched, tiled pad rows must be zero,
// and every buffer carries canaries. Fused == two-pass follows from both
// equalling the mirror byte for byte (whole downloads, poison tails
// included).
//
// producers-semantics (CPU): the mirror's codes times scales are within the
// e4m3 rounding bound of the exactly (fp64) rotated activations, and the row
// sums equal the sums of the decoded codes.

func init() {
	gates.Register(gates.Gate{Name: "producers", Suites: gates.Quick | gates.Full, Device: true, Run: gateProducers,
		Proves: "every rotate-and-quantize producer (decode band, pass A (plain, lanes = rows, and in the full suite shuffle-routed), pass C row/tiled, fused row/tiled) equals the Go mirror byte for byte on deployed K, P=1..3, decode and prefill M (odd M included), with poisoned outputs, untouched rows past M and canaries"})
	gates.Register(gates.Gate{Name: "producers-semantics", Suites: gates.Quick | gates.Full, Run: gateProducerSemantics,
		Proves: "the producer mirror's codes x scales are within the e4m3 rounding bound of the fp64-rotated activations, and row sums equal the sums of the decoded codes"})
}

type producerCase struct {
	K, P, M int
	dist    string
}

// Input distributions: realistic, subnormal-heavy (values near the bottom
// of the bf16 range, and groups dominated by tiny values), outlier-heavy
// (1% of values x1000, pushing most codes into the e4m3 subnormal range).
var producerDists = []string{"normal", "subnormal", "outlier"}

// producerCases are the deployed (K, P) pairs of the shapes files (quick:
// TP=2; full: TP=2 and TP=1) times the M values: quick takes part of each
// ladder plus an odd prefill M, full takes both whole ladders plus odd M.
func producerCases(full bool) []producerCase {
	sets := []string{"qwen38-27b-tp2"}
	Ms := []int{1, 5, 8, 64, 200, 513}
	if full {
		sets = append(sets, "qwen38-27b-tp1")
		tp2 := shapes.MustBuiltin("qwen38-27b-tp2")
		Ms = append(append(append([]int{}, tp2.Ladder("decode")...), tp2.Ladder("prefill")...), 1023, 8191)
	}
	seen := map[shapes.KP]bool{}
	var out []producerCase
	i := 0
	for _, name := range sets {
		for _, kp := range shapes.MustBuiltin(name).ProducerShapes() {
			if seen[kp] {
				continue
			}
			seen[kp] = true
			for _, M := range Ms {
				// The distribution turns with both M and shape, so no M is
				// always paired with the same one.
				out = append(out, producerCase{K: kp.K, P: kp.P, M: M, dist: producerDists[(i+i/len(Ms))%len(producerDists)]})
				i++
			}
		}
	}
	return out
}

// randomActivations draws bf16 rows [M, K] of a distribution.
func randomActivations(rng *rand.Rand, M, K int, dist string) []uint16 {
	x := make([]uint16, M*K)
	for m := 0; m < M; m++ {
		rowScale := math.Exp(rng.NormFloat64())
		for k := 0; k < K; k++ {
			v := rng.NormFloat64() * rowScale
			switch dist {
			case "subnormal":
				// Whole rows and whole groups in the bf16/float32 subnormal
				// range, so group amaxes and scales are subnormal too and a
				// kernel that flushes denormals (FTZ/DAZ) changes the bytes;
				// other groups mix tiny and normal values.
				g := k / refimpl.GroupSize
				switch {
				case m%2 == 0 || g%3 == 0:
					v *= 1e-39
				case rng.IntN(4) != 0:
					v *= 1e-39
				}
			case "outlier":
				if rng.IntN(100) == 0 {
					v *= 1000
				}
			}
			x[m*K+k] = refimpl.F64ToBF16(v)
		}
	}
	return x
}

// producerMirror is everything the producers must write for one case.
type producerMirror struct {
	groupQ             []*refimpl.QuantAct // per partition, per-group scales (decode band)
	xrBits             []uint16            // [P,M,K] pass-A rows
	gamax              []float32           // [P,M,G]
	tokQ               []*refimpl.QuantAct // per partition, per-token
	codesRow, codesTil []byte              // [P,M,K] and [P,Mpad,K] tiled
	rows               [][]float32         // per partition, the float32 rotated rows (kept only when asked)
}

// buildMirror computes what the producers must write for one case; keepRows
// also keeps the float32 rotated rows (the semantics gate checks them; the
// big device cases do not need them).
func buildMirror(rr *refimpl.RotRecords, x []uint16, c producerCase, withGroup, keepRows bool) *producerMirror {
	pm := &producerMirror{groupQ: make([]*refimpl.QuantAct, c.P), tokQ: make([]*refimpl.QuantAct, c.P), rows: make([][]float32, c.P)}
	xr := make([][]uint16, c.P)
	gam := make([][]float32, c.P)
	var wg sync.WaitGroup
	for p := 0; p < c.P; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := rotateParallel(rr, x, c.M, p)
			if keepRows {
				pm.rows[p] = v
			}
			if withGroup {
				pm.groupQ[p] = refimpl.QuantizeActGroup(v, c.M, c.K)
			}
			h, f := refimpl.RoundRowsBF16(v)
			xr[p], gam[p] = h, refimpl.GroupAmax(f, c.M, c.K)
			pm.tokQ[p] = refimpl.QuantizeActToken(f, c.M, c.K)
		}()
	}
	wg.Wait()
	for p := 0; p < c.P; p++ {
		pm.xrBits = append(pm.xrBits, xr[p]...)
		pm.gamax = append(pm.gamax, gam[p]...)
		pm.codesRow = append(pm.codesRow, pm.tokQ[p].Codes...)
		pm.codesTil = append(pm.codesTil, refimpl.TileRows(pm.tokQ[p].Codes, c.M, c.K)...)
	}
	return pm
}

// rotateParallel runs the mirror rotation over row blocks on every CPU.
func rotateParallel(rr *refimpl.RotRecords, x []uint16, M, p int) []float32 {
	K := rr.K
	out := make([]float32, M*K)
	workers := runtime.NumCPU()
	rows := (M + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < M; lo += rows {
		hi := min(lo+rows, M)
		wg.Add(1)
		go func() {
			defer wg.Done()
			copy(out[lo*K:hi*K], rr.RotateF32(x[lo*K:hi*K], hi-lo, p))
		}()
	}
	wg.Wait()
	return out
}

// compareOut compares a downloaded output (want, then untouched poison past
// it) element by element; elem is the element size and where names an index.
func compareOut(t *gates.T, what string, got, want []byte, elem int, where func(i int) string) {
	bad, first := 0, ""
	for i := 0; i < len(want); i += elem {
		if string(got[i:i+elem]) != string(want[i:i+elem]) {
			if bad < 3 {
				first += fmt.Sprintf(" [%s: got %x want %x]", where(i/elem), got[i:i+elem], want[i:i+elem])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Failf("%s: %d of %d elements differ;%s", what, bad, len(want)/elem, first)
	}
	if i := gates.FirstWritten(got, len(want)); i >= 0 {
		t.Failf("%s: byte %d past the end of the output (rows past M) was written (%#02x)", what, i, got[i])
	}
}

const rowsPastM = 3

func gateProducers(t *gates.T) {
	cases := producerCases(t.Full())
	launches := 0
	for ci, c := range cases {
		seed := t.Seed() + uint64(ci)
		rng := rand.New(rand.NewPCG(seed, 0x9e))
		rots := make([]*refimpl.Rotation, c.P)
		for p := range rots {
			rots[p] = refimpl.RandomRotation(rng, c.K)
		}
		rr, err := refimpl.BuildRotRecords(rots)
		t.Check(err, "build rotation records")
		var sr *refimpl.ShuffleRecords
		if t.Full() {
			sr, err = refimpl.BuildShuffleRecords(rots)
			t.Check(err, "build shuffle-routed records")
		}
		x := randomActivations(rng, c.M, c.K, c.dist)
		withGroup := c.M <= 128
		pm := buildMirror(rr, x, c, withGroup, false)
		launches += runProducerCase(t, c, seed, rr, sr, x, pm, withGroup)
		t.Release()
	}
	t.Metric("cases", float64(len(cases)))
	t.Metric("variant_runs", float64(launches))
	t.Logf("%d cases (K x P x M x distribution), %d variant runs checked (the decode band only for M <= 128; pq_rot_bf16_sh in the full suite only until a device run has passed it)", len(cases), launches)
}

// runProducerCase runs and checks every variant of one case and returns
// how many ran; sr (nil: skipped) are the shuffle-routed pass A's records.
func runProducerCase(t *gates.T, c producerCase, seed uint64, rr *refimpl.RotRecords, sr *refimpl.ShuffleRecords, x []uint16, pm *producerMirror, withGroup bool) (ran int) {
	K, P, M, G := c.K, c.P, c.M, c.K/refimpl.GroupSize
	Mpad := refimpl.PadRows(M)
	name := fmt.Sprintf("K=%d P=%d M=%d %s seed=%d", K, P, M, c.dist, seed)
	bx := t.Buffer("x", 2*M*K)
	bidx := t.Buffer("rot_idx", 4*len(rr.Idx))
	bcs := t.Buffer("rot_cs", 4*len(rr.CS))
	bchs := t.Buffer("chs", 4*len(rr.ChS))
	t.Upload(bx, gates.U16Bytes(x))
	idx, cs, chs := rr.Bytes()
	t.Upload(bidx, idx)
	t.Upload(bcs, cs)
	t.Upload(bchs, chs)
	// Outputs, each with room for rows past M that must stay poisoned.
	codes := t.Buffer("codes", P*Mpad*K+rowsPastM*K)
	scale := t.Buffer("scale", 4*(P*M*G+rowsPastM*G))
	rsum := t.Buffer("rsum", 4*(P*M*G+rowsPastM*G))
	xr := t.Buffer("xr", 2*(P*M*K+rowsPastM*K))
	gamax := t.Buffer("gamax", 4*(P*M*G+rowsPastM*G))
	outs := []*gates.Buffer{codes, scale, rsum, xr, gamax}
	poisonOutputs := func() {
		for _, b := range outs {
			t.Poison(b, 0xFF)
		}
	}
	at := func(elemPerRow int) func(int) string {
		return func(i int) string {
			row := i / elemPerRow
			return fmt.Sprintf("p=%d m=%d i=%d", row/M, row%M, i%elemPerRow)
		}
	}
	// untouched fails if a kernel wrote into an output that is not its own
	// (every byte must still be the poison).
	untouched := func(kernel string, bs ...*gates.Buffer) {
		for _, b := range bs {
			t.RequireFilled(kernel+" "+name, b, 0xFF, "not this kernel's output: every byte must still be the poison")
		}
	}
	bufs := ProducerBufs{X: bx.Ptr(), Idx: bidx.Ptr(), CS: bcs.Ptr(), ChS: bchs.Ptr(),
		Codes: codes.Ptr(), Scale: scale.Ptr(), RSum: rsum.Ptr(), XR: xr.Ptr(), GAmax: gamax.Ptr()}
	launch := func(kernel string, tiled bool) {
		grid, block, args, err := ProducerLaunch(kernel, M, K, P, 0, tiled, bufs)
		t.Check(err, name)
		t.Launch(kernel, grid, block, 0, args...)
		ran++
	}
	if withGroup {
		poisonOutputs()
		launch("pq_rotq_group", false)
		var wc []byte
		var ws, wr []float32
		for p := 0; p < P; p++ {
			wc = append(wc, pm.groupQ[p].Codes...)
			ws = append(ws, pm.groupQ[p].GroupScale...)
			wr = append(wr, pm.groupQ[p].RowSums...)
		}
		compareOut(t, "pq_rotq_group codes "+name, t.Download(codes), wc, 1, at(K))
		compareOut(t, "pq_rotq_group scales "+name, t.Download(scale), gates.F32Bytes(ws), 4, at(G))
		compareOut(t, "pq_rotq_group row sums "+name, t.Download(rsum), gates.F32Bytes(wr), 4, at(G))
		untouched("pq_rotq_group", xr, gamax)
	}
	// passA checks one pass-A kernel: bf16 rows and group amaxes, nothing else.
	passA := func(kernel string) {
		poisonOutputs()
		launch(kernel, false)
		compareOut(t, kernel+" rows "+name, t.Download(xr), gates.U16Bytes(pm.xrBits), 2, at(K))
		compareOut(t, kernel+" group amax "+name, t.Download(gamax), gates.F32Bytes(pm.gamax), 4, at(G))
		untouched(kernel, codes, scale, rsum)
	}
	// Pass A, plain and lanes = rows: the same outputs.
	passA("pq_rot_bf16")
	passA("pq_rot_bf16_lr")
	var wts, wrs []float32
	for p := 0; p < P; p++ {
		wts = append(wts, pm.tokQ[p].TokenScale...)
		wrs = append(wrs, pm.tokQ[p].RowSums...)
	}
	// Pass C and the fused producer, row-major and tiled. Pass C reads the
	// pass-A outputs just checked; those buffers are not cleared for it.
	for _, v := range []struct {
		kernel string
		tiled  bool
	}{{"pq_tokq", false}, {"pq_tokq", true}, {"pq_rotq_token", false}, {"pq_rotq_token", true}} {
		for _, b := range []*gates.Buffer{codes, scale, rsum} {
			t.Poison(b, 0xFF)
		}
		launch(v.kernel, v.tiled)
		label := fmt.Sprintf("%s %s %s", v.kernel, map[bool]string{false: "row-major", true: "tiled"}[v.tiled], name)
		got := t.Download(codes)
		// Whole downloads: every byte past the expected output must still be poison.
		if v.tiled {
			compareOut(t, label+" codes", got, pm.codesTil, 1, func(i int) string {
				return fmt.Sprintf("p=%d tiled byte %d", i/(Mpad*K), i%(Mpad*K))
			})
		} else {
			compareOut(t, label+" codes", got, pm.codesRow, 1, at(K))
		}
		ts, rs := t.Download(scale), t.Download(rsum)
		compareOut(t, label+" token scales", ts, gates.F32Bytes(wts), 4, func(i int) string { return fmt.Sprintf("p=%d m=%d", i/M, i%M) })
		compareOut(t, label+" row sums", rs, gates.F32Bytes(wrs), 4, at(G))
		// Pass A's rows are pass C's input and nobody's output here.
		compareOut(t, label+" (pass A rows left as they were)", t.Download(xr), gates.U16Bytes(pm.xrBits), 2, at(K))
		compareOut(t, label+" (pass A amax left as they were)", t.Download(gamax), gates.F32Bytes(pm.gamax), 4, at(G))
	}
	if sr != nil {
		// Pass A shuffle-routed: the same outputs as pass A. It runs last in
		// the case, after the verified kernels' checks, and only in the full
		// suite: until it has passed on a device, a fault in it (a sticky
		// device error) must not cost the quick suite its results.
		ctrl, scs, fin, _ := sr.Bytes()
		bctrl, bscs, bfin := t.Buffer("sh_ctrl", len(ctrl)), t.Buffer("sh_cs", len(scs)), t.Buffer("sh_final", len(fin))
		t.Upload(bctrl, ctrl)
		t.Upload(bscs, scs)
		t.Upload(bfin, fin)
		bufs.ShCtrl, bufs.ShCS, bufs.ShFin = bctrl.Ptr(), bscs.Ptr(), bfin.Ptr()
		passA("pq_rot_bf16_sh")
	}
	return ran
}

// gateProducerSemantics checks the mirror (which the device equals byte for
// byte) against fp64: each decoded code x scale within the e4m3 rounding
// bound of the exact rotated activation. The bound (semanticsTol) adds the
// rounding steps the producers take, each bounded on the value it rounds:
// the float32 rotation (the per-group vector bound checked first), the
// bf16 rounding of pass A on the per-token path (2^-8 relative, half the
// bf16 subnormal step 2^-134 absolute), and e4m3 (2^-4 relative on
// normals, half the subnormal step 2^-9 times the scale below).
func gateProducerSemantics(t *gates.T) {
	rng := rand.New(rand.NewPCG(t.Seed(), 0x5e))
	for _, c := range []producerCase{{K: 5120, P: 1, M: 4, dist: "normal"}, {K: 3072, P: 2, M: 3, dist: "outlier"}, {K: 8704, P: 1, M: 2, dist: "subnormal"}} {
		rots := []*refimpl.Rotation{}
		for p := 0; p < c.P; p++ {
			rots = append(rots, refimpl.RandomRotation(rng, c.K))
		}
		rr, err := refimpl.BuildRotRecords(rots)
		t.Check(err, "records")
		x := randomActivations(rng, c.M, c.K, c.dist)
		pm := buildMirror(rr, x, c, true, true)
		G := c.K / refimpl.GroupSize
		var worst float64
		for p := 0; p < c.P; p++ {
			v := pm.rows[p]
			// Scales, codes and row sums against the contract, independently of
			// the mirror's code (refimpl.CheckActQuant: scale == float32(amax/448),
			// nearest codes, exact row sums).
			if err := refimpl.CheckActQuant(v, pm.groupQ[p]); err != nil {
				t.Failf("K=%d p=%d (%s) per-group: %v", c.K, p, c.dist, err)
			}
			_, xr := refimpl.RoundRowsBF16(v)
			if err := refimpl.CheckActQuant(xr, pm.tokQ[p]); err != nil {
				t.Failf("K=%d p=%d (%s) per-token: %v", c.K, p, c.dist, err)
			}
			for m := 0; m < c.M; m++ {
				exact := make([]float64, c.K)
				for k := range exact {
					exact[k] = refimpl.BF16ToF64(x[m*c.K+k])
				}
				rots[p].Forward(exact)
				for g := 0; g < G; g++ {
					var norm, diff float64
					for k := g * 128; k < (g+1)*128; k++ {
						norm += exact[k] * exact[k]
						d := float64(v[m*c.K+k]) - exact[k]
						diff += d * d
					}
					// The records both the kernels and the mirror read: the
					// mirror's float32 rotation must match the fp64 Forward
					// rotation (built from the checkpoint tensors, not the
					// records) to float32 accuracy, relative to each group's
					// size. A wrong record (a swapped index, a rounded angle, a
					// scaled channel) shows here and nowhere else.
					// 2e-6 relative (u = 2^-24): per layer, the rounded product
					// and the rounded fma cost at most 2u·|v| over the group
					// (vector norm), and cos/sin rounded to float32 perturb the
					// rotation by at most u·|v|; the layers are orthogonal, so 8
					// layers add up to <= 24u = 1.43e-6. The channel-scale
					// product is exact (a bf16 times an fp16 significand fits
					// float32's 24 bits). 2e-43 absolute: the float32 subnormal
					// grid (2^-149 per op, ~20 ops per value, 128 values) for
					// tiny groups.
					rot := 2e-6*math.Sqrt(norm) + 2e-43
					if math.Sqrt(diff) > rot {
						t.Failf("K=%d p=%d m=%d g=%d (%s): float32 mirror rotation vs fp64: |diff| %.3g > 2e-6 |exact| %.3g + 2e-43 (records wrong?)", c.K, p, m, g, c.dist, math.Sqrt(diff), math.Sqrt(norm))
					}
					// Codes x scales within the rounding chain's bound of the
					// exact values; rot bounds |mirror v_k - exact y_k| for every
					// k of the group (an element is at most the vector's norm).
					for mode, q := range []*refimpl.QuantAct{pm.groupQ[p], pm.tokQ[p]} {
						for k := g * 128; k < (g+1)*128; k++ {
							y := exact[k]
							s := q.Scale(m, k)
							got := q.CodeValue(m, k) * s
							tol := semanticsTol(math.Abs(y), s, rot, mode == 1)
							if d := math.Abs(got - y); d > tol || math.IsNaN(got) {
								t.Failf("K=%d P=%d m=%d k=%d mode=%d (%s): code x scale %g vs exact %g, |diff| %g > tol %g", c.K, p, m, k, mode, c.dist, got, y, d, tol)
							} else if tol > 0 {
								worst = math.Max(worst, d/tol)
							}
						}
					}
				}
			}
		}
		t.Metric(fmt.Sprintf("worst_err_over_tol.K%d", c.K), worst)
	}
}

// semanticsTol bounds |code x scale - y| for an exact activation of size ay
// whose float32 rotation is off by at most rot, quantized with scale s, after
// a bf16 rounding (pass A, per-token codes) when viaBF16. The error splits
// into the steps the producers take, each bounded on the value it rounds:
//   - rotation: |v - y| <= rot, so |v| <= ay + rot;
//   - bf16 (viaBF16): half an ulp, <= 2^-8 |v| on normals (7 stored bits),
//     half the subnormal step 2^-133 below;
//   - e4m3: half an ulp, <= 2^-4 of the value it rounds (3 stored bits), or
//     half the subnormal step 2^-9 in scale units; the factor 1+2^-20 covers
//     the float32 rounding of v/s before the code is picked.
//
// Each rounding's bound uses the value it rounds, not y: the bf16-rounded
// value of a tiny y can be twice y (y = 0.51 bf16 subnormal steps rounds to
// one step), and the e4m3 step of that value is what the code sees.
func semanticsTol(ay, s, rot float64, viaBF16 bool) float64 {
	a := ay + rot
	var bf float64
	if viaBF16 {
		bf = math.Ldexp(a, -8) + math.Ldexp(1, -134)
		a += bf
	}
	return (1+math.Ldexp(1, -20))*math.Max(math.Ldexp(a, -4), math.Ldexp(s, -10)) + bf + rot
}
