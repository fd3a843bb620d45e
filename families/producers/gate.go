package producers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/parharness/parharness/families/internal/classes"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/internal/coverage"
	"github.com/parharness/parharness/internal/par"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/refimpl"
	"github.com/parharness/parharness/shapes"
)

// The rotate-and-quantize producer gates (producers.hip).
//
// producers: every registered producer kernel (caseKernels), byte for byte
// against the Go mirror (refimpl.RotRecords.RotateF32 +
// refimpl.QuantizeAct*; the shuffle-routed form reads
// refimpl.ShuffleRecords), on the deployed K values, P = 1..3 partitions,
// both M ladders with odd M, row-major and fragment-tiled outputs;
// experimental kernels in the full suite only, last in each case. Every
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
	gates.Register(gates.Gate{Family: Family, Name: "producers", Headline: []string{"variant_runs", "cases"}, Suites: gates.Quick | gates.Full, Device: true, Run: gateProducers,
		Proves: "every registered producer kernel (decode band; pass A plain, lanes = rows, shuffle-routed; pass C and fused, row-major and tiled; experimental ones in the full suite only) equals the Go mirror byte for byte on deployed K, P=1..3, decode and prefill M (odd M included), with poisoned outputs, untouched rows past M, untouched outputs that are not its own, and canaries"})
	gates.Register(gates.Gate{Family: Family, Name: "producers-semantics", Suites: gates.Quick | gates.Full, Run: gateProducerSemantics,
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

// producerCases are the gate's cases: hand-chosen ones (the deployed
// (K, P) pairs of the TP=2 shapes set, or TP=2 and TP=1 when full, times
// part of the M ladders, or both whole ladders and odd M when full), plus
// what classCover derives so every launch-geometry class any deployed
// shape, odd-G shape and M reaches is run.
func producerCases(full bool) []producerCase {
	base := handCases(full)
	return append(base, classCover(base, full)...)
}

func handCases(full bool) []producerCase {
	sets := []string{"qwen38-27b-tp2"}
	Ms := []int{1, 5, 8, 64, 200, 513}
	if full {
		sets = append(sets, "qwen38-27b-tp1")
		tp2 := shapes.MustBuiltin("qwen38-27b-tp2")
		Ms = append(append(append([]int{}, tp2.Ladder("decode")...), tp2.Ladder("prefill")...), 1023, 8191)
	}
	var out []producerCase
	i := 0
	for _, kp := range shapes.BuiltinProducerShapes(sets...) {
		for _, M := range Ms {
			// The distribution turns with both M and shape, so no M is
			// always paired with the same one.
			out = append(out, producerCase{K: kp.K, P: kp.P, M: M, dist: producerDists[(i+i/len(Ms))%len(producerDists)]})
			i++
		}
	}
	return out
}

// OddGShapes are the synthetic (K, P) pairs with an odd group count (no
// deployed shape has one) that the class domain includes.
var OddGShapes = []shapes.KP{{K: 384, P: 3}, {K: 640, P: 1}}

// ClassShapes are the (K, P) of the class domain: the deployed pairs of
// every built-in shapes set, then OddGShapes.
func ClassShapes() []shapes.KP {
	return append(shapes.BuiltinProducerShapes(shapes.Builtins()...), OddGShapes...)
}

// ClassMaxM is the largest M of the class domain (the prefill ladder's top).
const ClassMaxM = 8192

// ClassDomain is every (K, P, M) a producer may be launched with: the
// deployed (K, P) pairs of every built-in shapes set and OddGShapes, times
// M = 1..ClassMaxM.
func ClassDomain() []producerCase {
	var out []producerCase
	for _, kp := range ClassShapes() {
		for M := 1; M <= ClassMaxM; M++ {
			out = append(out, producerCase{K: kp.K, P: kp.P, M: M})
		}
	}
	return out
}

// CaseClasses are the launch-geometry classes one case exercises: those
// of every kernel the gate runs at its M on either target.
func CaseClasses(c producerCase, full bool) []string {
	return classes.Union(func(arch string) []kernels.Kernel {
		return kernels.Select(kernels.Query{Family: Family, M: c.M, Arch: arch, Full: full, Roles: []kernels.Role{kernels.Baseline, kernels.Variant}})
	}, func(k kernels.Kernel) []string {
		if k.Op == OpToken && FusedTokenCheck(c.K) != nil {
			return nil
		}
		cls, err := LaunchClasses(k.Name, c.M, c.K, c.P)
		if err != nil {
			panic(err) // a registered producer without classes is a programming error
		}
		return cls
	})
}

var (
	coverOnce [2]sync.Once
	coverAdds [2][]producerCase
)

// classCover is the cheapest set of domain cases (cost: the mirror's rows
// times K times P, plus a per-case overhead) that, added to base, reaches
// every class of the domain.
func classCover(base []producerCase, full bool) []producerCase {
	fi := map[bool]int{false: 0, true: 1}[full]
	coverOnce[fi].Do(func() {
		coverAdds[fi] = coverage.Extend(base, ClassDomain(), func(c producerCase) []string { return CaseClasses(c, full) },
			func(c producerCase) float64 { return float64((c.M + 32) * c.K * c.P) },
			func(j int, c producerCase) producerCase { c.dist = producerDists[j%len(producerDists)]; return c })
	})
	return coverAdds[fi]
}

const rowsPastM = 3

// casePlan is what a case's kernels need built: the per-group outputs
// (a group kernel runs) and the shuffle-routed records.
type casePlan struct{ withGroup, withShuffle bool }

func gateProducers(t *gates.T) { runProducerCases(t, producerCases(t.Full())) }

// runProducerCases runs the gate over cases: each case's inputs and mirror
// are built one case ahead (prefetchCases) while the device runs the
// previous one, and the progress meter counts the cases.
func runProducerCases(t *gates.T, cases []producerCase) {
	plans := make([]casePlan, len(cases))
	var work float64
	for ci, c := range cases {
		for _, k := range caseKernels(t, c.M) {
			plans[ci].withGroup = plans[ci].withGroup || k.Op == OpGroup
			plans[ci].withShuffle = plans[ci].withShuffle || k.Form == FormShuffle
		}
		work += caseWork(c)
	}
	meter := t.Progress("cases", len(cases))
	meter.SetWork(work)
	next, stop := prefetchCases(t.Seed(), cases, plans)
	defer stop()
	var host hostBuffers
	launches := 0
	for ci, c := range cases {
		pc := <-next
		t.Check(pc.err, fmt.Sprintf("case %d (K=%d P=%d M=%d): inputs and mirror", ci, c.K, c.P, c.M))
		launches += runProducerCase(t, c, t.Seed()+uint64(ci), pc.in, &host)
		t.Release()
		meter.Step(1, caseWork(c))
	}
	t.Metric("cases", float64(len(cases)))
	t.Metric("variant_runs", float64(launches))
	t.Logf("%d cases (K x P x M x distribution), %d variant runs checked (experimental kernels in the full suite only)", len(cases), launches)
}

// caseWork is a case's share of the gate's time, for the progress
// estimate: its mirror and its downloads grow with the rows it rotates,
// plus a few rows' worth of fixed cost.
func caseWork(c producerCase) float64 { return float64((c.M + 16) * c.K * c.P) }

// preparedCase is one case's inputs and mirror, or why they could not be
// built.
type preparedCase struct {
	in  *producerInputs
	err error
}

// prefetchCases builds the cases' inputs and mirrors in order on a
// goroutine of its own, one case ahead of the device: case i+1's mirror
// is computed (on every CPU) while case i runs and is checked. Each case
// draws from its own seed (seed + its index), so the inputs are those of
// a serial loop. stop ends the goroutine early (a gate that stopped).
func prefetchCases(seed uint64, cases []producerCase, plans []casePlan) (next <-chan preparedCase, stop func()) {
	out := make(chan preparedCase)
	done := make(chan struct{})
	go func() {
		defer close(out)
		for ci, c := range cases {
			pc := prepareCase(seed+uint64(ci), c, plans[ci])
			select {
			case out <- pc:
			case <-done:
				return
			}
		}
	}()
	return out, sync.OnceFunc(func() { close(done) })
}

// prepareCase draws one case's rotations and activations from its seed
// and builds its records and mirror; a panic becomes the case's error
// (the gate's recover cannot see this goroutine).
func prepareCase(seed uint64, c producerCase, pl casePlan) (pc preparedCase) {
	defer func() {
		if r := recover(); r != nil {
			pc = preparedCase{err: fmt.Errorf("panic: %v", r)}
		}
	}()
	rng := rand.New(rand.NewPCG(seed, 0x9e))
	rots := make([]*refimpl.Rotation, c.P)
	for p := range rots {
		rots[p] = refimpl.RandomRotation(rng, c.K)
	}
	x := randomActivations(rng, c.M, c.K, c.dist)
	pc.in, pc.err = newProducerInputs(rots, x, c, pl.withGroup, pl.withShuffle)
	return pc
}

// hostBuffers are the host slices the gate downloads into, kept from
// case to case (grown to the largest) so that no download allocates.
type hostBuffers struct{ bufs map[string][]byte }

// take is the host slice for buffer name, n bytes long.
func (h *hostBuffers) take(name string, n int) []byte {
	if h.bufs == nil {
		h.bufs = map[string][]byte{}
	}
	if cap(h.bufs[name]) < n {
		h.bufs[name] = make([]byte, n)
	}
	return h.bufs[name][:n]
}

// caseKernels are the registered producer kernels a gate case at M runs on
// this device, in run order: the stable kernels by Op (group, pass A,
// pass C, token), then the experimental ones in the same order, so a fault
// in a kernel that has not yet passed on a device (a sticky device error)
// cannot cost the verified kernels their results.
func caseKernels(t *gates.T, M int) []kernels.Kernel {
	ks := kernels.Select(kernels.Query{Family: Family, M: M, Arch: t.Device().Info().CodeArch(), Full: t.Full(),
		Roles: []kernels.Role{kernels.Baseline, kernels.Variant}})
	opOrder := map[string]int{OpGroup: 0, OpPassA: 1, OpPassC: 2, OpToken: 3}
	slices.SortStableFunc(ks, func(a, b kernels.Kernel) int {
		if a.Status != b.Status {
			return int(a.Status) - int(b.Status)
		}
		return opOrder[a.Op] - opOrder[b.Op]
	})
	return ks
}

// producerOutputs are the downloads of one launch's output buffers (each
// with its poisoned tail), as the gate and the benches read them.
type producerOutputs struct {
	codes, scale, rsum, xr, gamax []byte
}

// checkProducerOp compares what a kernel of Op op wrote (tiled: the
// fragment-tiled code layout) with the mirror. Outputs that are not the
// Op's must still hold the poison; for OpPassC and OpToken pass A's rows
// and amaxes must be as they were (inputs of one, nobody's output in the
// other), which passAInPlace says the caller arranged.
func checkProducerOp(r gates.Reporter, label string, op string, tiled bool, M, K, P int, w producerWant, got producerOutputs) {
	G, Mpad := K/refimpl.GroupSize, refimpl.PadRows(M)
	at := func(elemPerRow int) func(int) string {
		return func(i int) string {
			row := i / elemPerRow
			return fmt.Sprintf("p=%d m=%d i=%d", row/M, row%M, i%elemPerRow)
		}
	}
	poisoned := func(what string, b []byte) {
		if i := par.IndexNot(b, 0xFF); i >= 0 {
			r.Failf("%s: %s was written at byte %d (%#02x): not this kernel's output, every byte must still be the poison", label, what, i, b[i])
		}
	}
	switch op {
	case OpGroup:
		gates.CompareBytes(r, label+" codes", got.codes, w.GroupCodes, 1, at(K))
		gates.CompareBytes(r, label+" scales", got.scale, w.GroupScales, 4, at(G))
		gates.CompareBytes(r, label+" row sums", got.rsum, w.GroupRSums, 4, at(G))
		poisoned("xr", got.xr)
		poisoned("gamax", got.gamax)
	case OpPassA:
		gates.CompareBytes(r, label+" rows", got.xr, w.xr, 2, at(K))
		gates.CompareBytes(r, label+" group amax", got.gamax, w.gamax, 4, at(G))
		poisoned("codes", got.codes)
		poisoned("scale", got.scale)
		poisoned("rsum", got.rsum)
	case OpPassC, OpToken:
		if tiled {
			gates.CompareBytes(r, label+" codes", got.codes, w.TokCodesTiled, 1, func(i int) string {
				return fmt.Sprintf("p=%d tiled byte %d", i/(Mpad*K), i%(Mpad*K))
			})
		} else {
			gates.CompareBytes(r, label+" codes", got.codes, w.TokCodesRow, 1, at(K))
		}
		gates.CompareBytes(r, label+" token scales", got.scale, w.TokScales, 4, func(i int) string { return fmt.Sprintf("p=%d m=%d", i/M, i%M) })
		gates.CompareBytes(r, label+" row sums", got.rsum, w.TokRSums, 4, at(G))
		gates.CompareBytes(r, label+" (pass A rows left as they were)", got.xr, w.xr, 2, at(K))
		gates.CompareBytes(r, label+" (pass A amax left as they were)", got.gamax, w.gamax, 4, at(G))
	default:
		r.Failf("%s: op %q has no check (families/producers/gate.go checkProducerOp)", label, op)
	}
}

// layouts are the code layouts a kernel of op writes: the per-token Ops
// write row-major or fragment-tiled codes (a launch argument).
func layouts(op string) []bool {
	if op == OpPassC || op == OpToken {
		return []bool{false, true}
	}
	return []bool{false}
}

func layoutName(t bool) string {
	if t {
		return "tiled"
	}
	return "row"
}

// runProducerCase runs and checks every registered producer kernel of one
// case (caseKernels) and returns how many runs it checked; the downloads
// go into host's slices.
func runProducerCase(t *gates.T, c producerCase, seed uint64, in *producerInputs, host *hostBuffers) (ran int) {
	K, P, M, G := c.K, c.P, c.M, c.K/refimpl.GroupSize
	Mpad := refimpl.PadRows(M)
	name := fmt.Sprintf("K=%d P=%d M=%d %s seed=%d", K, P, M, c.dist, seed)
	rr := in.rr
	bx := t.Buffer("x", 2*M*K)
	bidx := t.Buffer("rot_idx", 4*len(rr.Idx))
	bcs := t.Buffer("rot_cs", 4*len(rr.CS))
	bchs := t.Buffer("chs", 4*len(rr.ChS))
	t.Upload(bx, in.xBytes)
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
	bufs := ProducerBufs{X: bx.Ptr(), Idx: bidx.Ptr(), CS: bcs.Ptr(), ChS: bchs.Ptr(),
		Codes: codes.Ptr(), Scale: scale.Ptr(), RSum: rsum.Ptr(), XR: xr.Ptr(), GAmax: gamax.Ptr()}
	if in.sr != nil {
		ctrl, scs, fin, _ := in.sr.Bytes()
		bctrl, bscs, bfin := t.Buffer("sh_ctrl", len(ctrl)), t.Buffer("sh_cs", len(scs)), t.Buffer("sh_final", len(fin))
		t.Upload(bctrl, ctrl)
		t.Upload(bscs, scs)
		t.Upload(bfin, fin)
		bufs.ShCtrl, bufs.ShCS, bufs.ShFin = bctrl.Ptr(), bscs.Ptr(), bfin.Ptr()
	}
	w := in.want
	download := func(b *gates.Buffer) []byte {
		h := host.take(b.Name, b.N)
		t.DownloadInto(b, h)
		return h
	}
	for _, k := range caseKernels(t, M) {
		for _, tiled := range layouts(k.Op) {
			for _, b := range []*gates.Buffer{codes, scale, rsum, xr, gamax} {
				t.Poison(b, 0xFF)
			}
			if k.Op == OpPassC || k.Op == OpToken {
				// Pass A's outputs as the mirror has them, then the poison:
				// pass C's input (checked unchanged after the launch), and
				// bytes the fused producer must not touch.
				t.Upload(xr, w.xrBuf)
				t.Upload(gamax, w.gamaxBuf)
			}
			grid, block, args, err := ProducerLaunch(k.Name, M, K, P, 0, tiled, bufs)
			t.Check(err, name)
			t.Launch(k.Name, grid, block, 0, args...)
			label := k.Name + " " + name
			if len(layouts(k.Op)) > 1 {
				label = fmt.Sprintf("%s %s %s", k.Name, layoutName(tiled), name)
			}
			checkProducerOp(t, label, k.Op, tiled, M, K, P, w, producerOutputs{
				codes: download(codes), scale: download(scale), rsum: download(rsum), xr: download(xr), gamax: download(gamax)})
			ran++
		}
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
		pm := buildSerialMirror(rr, x, c, true)
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
		t.Metric(gates.NewCase("K", c.K).Key("worst_err_over_tol"), worst)
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
