package i8

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/parharness/parharness/families/internal/classes"
	"github.com/parharness/parharness/families/producers"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/internal/coverage"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/refimpl"
	"github.com/parharness/parharness/shapes"
)

// The i8 gate, producer half: every registered I8 producer kernel byte for
// byte against the Go int8 mirror (buildI8Mirror) on the deployed (K, P)
// of the shapes sets, decode and prefill M with odd M, every launch class
// (ProducerClasses) covered, the per-token kernels in both code layouts;
// outputs poisoned (0xFF) before every launch, rows past M untouched, tiled
// pad rows zero, canaries. Fused equals two-pass: the pass-A baseline of
// the e4m3 family (pq_rot_bf16, launched through producers.ProducerLaunch)
// runs on the device, its output goes straight into pq_i8_tokq, and the
// result must equal both the mirror and the fused kernel's, byte for byte.
// A "ties" case (tieRotation) puts exact rounding ties and codes past ±127
// into every group-kind output.

type prodCase struct {
	K, P, M int
	dist    string
}

// handProdCases are the hand-chosen cases: the deployed (K, P) pairs of
// the TP=2 set (and TP=1 when full) times part of the M ladders (both
// whole ladders when full), distributions turning with M and shape, plus
// the ties cases.
func handProdCases(full bool) []prodCase {
	sets := []string{"qwen38-27b-tp2"}
	Ms := []int{1, 5, 8, 64, 200, 513}
	if full {
		sets = append(sets, "qwen38-27b-tp1")
		tp2 := shapes.MustBuiltin("qwen38-27b-tp2")
		Ms = append(append(append([]int{}, tp2.Ladder("decode")...), tp2.Ladder("prefill")...), 1023)
	}
	var out []prodCase
	i := 0
	for _, kp := range shapes.BuiltinProducerShapes(sets...) {
		for _, M := range Ms {
			out = append(out, prodCase{K: kp.K, P: kp.P, M: M, dist: producerDists[(i+i/len(Ms))%len(producerDists)]})
			i++
		}
	}
	return append(out, prodCase{K: 5120, P: 2, M: 7, dist: "ties"}, prodCase{K: 640, P: 1, M: 17, dist: "ties"})
}

// prodClassMaxM is the largest M of the class domain.
const prodClassMaxM = 2048

// prodClassDomain is every (K, P, M) a producer may be launched with: the
// producers' class shapes (producers.ClassShapes) times M = 1..prodClassMaxM.
func prodClassDomain() []prodCase {
	var out []prodCase
	for _, kp := range producers.ClassShapes() {
		for M := 1; M <= prodClassMaxM; M++ {
			out = append(out, prodCase{K: kp.K, P: kp.P, M: M})
		}
	}
	return out
}

// prodKernels are the registered I8 producers serving M on arch ("": any).
func prodKernels(M int, arch string, full bool) []kernels.Kernel {
	var out []kernels.Kernel
	for _, k := range kernels.Select(kernels.Query{Family: Family, M: M, Arch: arch, Full: full, Roles: []kernels.Role{kernels.Baseline, kernels.Variant}}) {
		if k.Op == OpGroup || k.Op == OpPassC || k.Op == OpToken {
			out = append(out, k)
		}
	}
	return out
}

// prodCaseClasses are the launch classes one case exercises on either target.
func prodCaseClasses(c prodCase, full bool) []string {
	return classes.Union(func(arch string) []kernels.Kernel { return prodKernels(c.M, arch, full) }, func(k kernels.Kernel) []string {
		if k.Op == OpToken && c.K > MaxK {
			return nil
		}
		cls, err := ProducerClasses(k.Name, c.M, c.K, c.P)
		if err != nil {
			panic(err) // a registered producer without classes is a programming error
		}
		return cls
	})
}

var (
	prodCoverOnce [2]sync.Once
	prodCoverAdds [2][]prodCase
)

// prodCases are the hand cases plus the cheapest domain cases that reach
// every launch class the domain reaches.
func prodCases(full bool) []prodCase {
	base := handProdCases(full)
	fi := map[bool]int{false: 0, true: 1}[full]
	prodCoverOnce[fi].Do(func() {
		prodCoverAdds[fi] = coverage.Extend(base, prodClassDomain(), func(c prodCase) []string { return prodCaseClasses(c, full) },
			func(c prodCase) float64 { return float64((c.M + 32) * c.K * c.P) },
			func(j int, c prodCase) prodCase { c.dist = producerDists[j%len(producerDists)]; return c })
	})
	return append(base, prodCoverAdds[fi]...)
}

// prodInputs are one case's host data: rotations and their records, the
// activations, and the mirror.
type prodInputs struct {
	rots []*refimpl.Rotation
	rr   *refimpl.RotRecords
	x    []uint16
	want *i8Want
}

// newProdInputs draws a case's rotations (tieRotation for "ties") and
// activations from its seed and builds the records and the mirror.
func newProdInputs(c prodCase, seed uint64) (*prodInputs, error) {
	rng := rand.New(rand.NewPCG(seed, 0x18))
	rots := make([]*refimpl.Rotation, c.P)
	for p := range rots {
		if c.dist == "ties" {
			rots[p] = tieRotation(c.K)
		} else {
			rots[p] = refimpl.RandomRotation(rng, c.K)
		}
	}
	rr, err := refimpl.BuildRotRecords(rots)
	if err != nil {
		return nil, err
	}
	x := randomActivations(rng, c.M, c.K, c.dist)
	return &prodInputs{rots: rots, rr: rr, x: x, want: buildI8Mirror(rr, x, c.M)}, nil
}

// prodOutputs are the downloads of one launch's outputs.
type prodOutputs struct{ codes, scale, rsum, xr, gamax []byte }

// checkProdOp compares what a kernel of op wrote with the mirror; pass
// A's buffers (pass C's inputs, nobody's output for the fused kernel)
// must be as uploaded.
func checkProdOp(r gates.Reporter, label, op string, tiled bool, M, K, P int, w *i8Want, got prodOutputs) {
	G, Mpad := K/refimpl.GroupSize, refimpl.PadRows(M)
	at := func(perRow int) func(int) string {
		return func(i int) string { row := i / perRow; return fmt.Sprintf("p=%d m=%d i=%d", row/M, row%M, i%perRow) }
	}
	switch op {
	case OpGroup:
		gates.CompareBytes(r, label+" codes", got.codes, w.groupCodes, 1, at(K))
		gates.CompareBytes(r, label+" group scales", got.scale, w.groupScales, 4, at(G))
		gates.CompareBytes(r, label+" row sums", got.rsum, w.groupRSums, 4, at(G))
	case OpPassC, OpToken:
		if tiled {
			gates.CompareBytes(r, label+" codes", got.codes, w.tokTiled, 1, func(i int) string { return fmt.Sprintf("p=%d tiled byte %d", i/(Mpad*K), i%(Mpad*K)) })
		} else {
			gates.CompareBytes(r, label+" codes", got.codes, w.tokRow, 1, at(K))
		}
		gates.CompareBytes(r, label+" token scales", got.scale, w.tokScales, 4, func(i int) string { return fmt.Sprintf("p=%d m=%d", i/M, i%M) })
		gates.CompareBytes(r, label+" row sums", got.rsum, w.tokRSums, 4, at(G))
	default:
		r.Failf("%s: op %q has no check (families/i8/gate_prod.go)", label, op)
		return
	}
	gates.CompareBytes(r, label+" (pass A rows left as they were)", got.xr, w.xrBuf, 2, at(K))
	gates.CompareBytes(r, label+" (pass A amax left as they were)", got.gamax, w.gamaxBuf, 4, at(G))
}

func layouts(op string) []bool {
	if op == OpPassC || op == OpToken {
		return []bool{false, true}
	}
	return []bool{false}
}

// runProducerCases runs the producer half of the gate; it returns the
// number of checked launches.
func runProducerCases(t *gates.T, cases []prodCase, seed uint64) int {
	ran := 0
	for ci, c := range cases {
		in, err := newProdInputs(c, seed+uint64(ci))
		t.Check(err, fmt.Sprintf("producer case %d (K=%d P=%d M=%d %s): inputs and mirror", ci, c.K, c.P, c.M, c.dist))
		ran += runProdCase(t, c, seed+uint64(ci), in)
		t.Release()
	}
	return ran
}

func runProdCase(t *gates.T, c prodCase, seed uint64, in *prodInputs) (ran int) {
	K, P, M, G := c.K, c.P, c.M, c.K/refimpl.GroupSize
	Mpad := refimpl.PadRows(M)
	name := fmt.Sprintf("K=%d P=%d M=%d %s seed=%d", K, P, M, c.dist, seed)
	bx := t.Buffer("x", 2*M*K)
	bidx := t.Buffer("rot_idx", 4*len(in.rr.Idx))
	bcs := t.Buffer("rot_cs", 4*len(in.rr.CS))
	bchs := t.Buffer("chs", 4*len(in.rr.ChS))
	t.Upload(bx, gates.U16Bytes(in.x))
	idx, cs, chs := in.rr.Bytes()
	t.Upload(bidx, idx)
	t.Upload(bcs, cs)
	t.Upload(bchs, chs)
	codes := t.Buffer("codes", P*Mpad*K+rowsPastM*K)
	scale := t.Buffer("scale", 4*(P*M*G+rowsPastM*G))
	rsum := t.Buffer("rsum", 4*(P*M*G+rowsPastM*G))
	xr := t.Buffer("xr", 2*(P*M*K+rowsPastM*K))
	gamax := t.Buffer("gamax", 4*(P*M*G+rowsPastM*G))
	bufs := ProducerBufs{X: bx.Ptr(), Idx: bidx.Ptr(), CS: bcs.Ptr(), ChS: bchs.Ptr(), XR: xr.Ptr(), GAmax: gamax.Ptr(),
		Codes: codes.Ptr(), Scale: scale.Ptr(), RSum: rsum.Ptr()}
	w := in.want
	outputs := func() prodOutputs {
		return prodOutputs{codes: t.Download(codes), scale: t.Download(scale), rsum: t.Download(rsum), xr: t.Download(xr), gamax: t.Download(gamax)}
	}
	ks := prodKernels(M, t.Device().Info().CodeArch(), t.Full())
	slices.SortStableFunc(ks, func(a, b kernels.Kernel) int { return int(a.Status) - int(b.Status) }) // experimental last
	fused := map[bool][]byte{}                                                                        // the fused kernel's codes by layout
	for _, k := range ks {
		if k.Op == OpToken && K > MaxK {
			continue
		}
		for _, tiled := range layouts(k.Op) {
			for _, b := range []*gates.Buffer{codes, scale, rsum} {
				t.Poison(b, 0xFF)
			}
			t.Upload(xr, w.xrBuf) // pass C's input; untouched by the others
			t.Upload(gamax, w.gamaxBuf)
			grid, block, args, err := ProducerLaunch(k.Name, M, K, P, 0, tiled, bufs)
			t.Check(err, name)
			t.Launch(k.Name, grid, block, 0, args...)
			label := fmt.Sprintf("%s %s %s", k.Name, map[bool]string{false: "row", true: "tiled"}[tiled], name)
			got := outputs()
			checkProdOp(t, label, k.Op, tiled, M, K, P, w, got)
			if k.Op == OpToken {
				fused[tiled] = got.codes
			}
			ran++
		}
	}
	// Two-pass on the device: the e4m3 family's pass-A baseline, then the
	// int8 pass C on its output; equal to the fused kernel byte for byte.
	for _, tiled := range []bool{false, true} {
		fc, ok := fused[tiled]
		if !ok {
			continue
		}
		passC, err := kernels.BaselineFor(Family, OpPassC, M, t.Device().Info().CodeArch())
		t.Check(err, name)
		passA, err := kernels.BaselineFor(producers.Family, producers.OpPassA, M, t.Device().Info().CodeArch())
		t.Check(err, name)
		for _, b := range []*gates.Buffer{codes, scale, rsum, xr, gamax} {
			t.Poison(b, 0xFF)
		}
		grid, block, args, err := producers.ProducerLaunch(passA.Name, M, K, P, 0, false, producers.ProducerBufs{X: bx.Ptr(), Idx: bidx.Ptr(), CS: bcs.Ptr(), ChS: bchs.Ptr(), XR: xr.Ptr(), GAmax: gamax.Ptr()})
		t.Check(err, name)
		t.Launch(passA.Name, grid, block, 0, args...)
		grid, block, args, err = ProducerLaunch(passC.Name, M, K, P, 0, tiled, bufs)
		t.Check(err, name)
		t.Launch(passC.Name, grid, block, 0, args...)
		label := fmt.Sprintf("two-pass %s+%s %s %s", passA.Name, passC.Name, map[bool]string{false: "row", true: "tiled"}[tiled], name)
		got := outputs()
		checkProdOp(t, label, OpPassC, tiled, M, K, P, w, got)
		gates.CompareBytes(t, label+" codes vs the fused kernel's", got.codes, fc, 1, func(i int) string { return fmt.Sprintf("byte %d", i) })
		ran++
	}
	return ran
}
