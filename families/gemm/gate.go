package gemm

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/internal/coverage"
	"github.com/parharness/parharness/internal/par"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/refimpl"
)

// The W4A8 GEMM gate (gemm.hip).
//
// gemm: on the TP=2 per-rank shapes (qkv P=3, o_proj, gate_up P=2, down
// G=68, in_proj P=2) with synthetic checkpoint-like weights (random codes,
// zeros 2..14 for 90% and 0..15 for the rest, fp16 scales log-uniform in
// 1e-3..1e-2), repacked by refimpl.RepackW4, and activations quantized by
// the producers' Go mirrors (refimpl.QuantizeActGroup for the decode band,
// QuantizeActToken for prefill, tiled by TileRows for pq_gemm_pre and
// row-major for pq_gemm_pre_wg, which runs on every prefill case of an
// sm_90a device) from random float32 rows
// (distributions: normal, outlier-heavy, subnormal-heavy), the bf16 output is
// compared with refimpl.GEMMRef (fp64, the same codes and scales):
//   rel = ||out − ref||₂ / ||ref||₂ ≤ 1.15 × floor, floor = the rel error of
//   rounding ref itself to bf16 (gemmTolFactor); NaN never passes. Each
//   sampled row meets the same bound against its own floor, and each
//   element is within gemmElemBound (half a bf16 ulp + E, E =
//   (128+G+S+8)·2^-24·mag, S the launch's split-K partials), which leaves
//   no room for a second bf16 rounding. The wgmma kernels (pq_gemm_pre_wg,
//   pq_gemm_dec_wg_*: refFor) use the magnitude of the operands they sum
//   (magAbs for codes taken as q − z, magUns for unsigned codes), 2^-9 of
//   it more per element and the norm of that term in the norm checks
//   (wgmmaFP8Acc, measured by the gate wgmma-acc).
// Two synthetic prefill shapes reach the kernels' pipeline edges: K = 384
// (G = 3, fewer groups than pq_gemm_pre_wg's stages; 2 partitions,
// subnormal-heavy) and K = 640 (G = 5: an odd group after its 2-group
// unroll; M = 129).
// Large cases compare a seeded, stratified subset (every row for M ≤ 64,
// else one row in each of 64 equal strata and one in every 16-row slab,
// the first and last included; whenever M·N·K > 1e9, one column in each of
// max(1024, N/16) strata and in every 16-column slab, plus each
// partition's first and last column), so every 16x16 block of the output
// has a checked element; the subset and its seed are in the log. Every element of
// every row < M is checked written (the output is poisoned with 0xFF,
// a bf16 NaN, before every launch), 16 rows past M must stay poisoned, and
// every buffer carries canaries. Every launch starts on shared memory full
// of NaN (kernels.SharedPoison), so stage rows past M that a decode body
// never writes (the wp body copies rows < M only) are proven not to reach
// the output. The decode band runs the split-K law's S
// plus S = 1 and S = 3 (the direct-store and uneven-split paths), and the
// split-K counters must be back at zero after every launch. The row-layout
// decode kernels (DecWeightLayout LayoutRow) read refimpl.RepackRow's
// weights and run at every S the baseline runs (both reduce paths at
// S = DecClusterS), each output byte-identical to the baseline's. The rel against
// the unquantized activations is recorded as a metric (rel_exact), not gated.

func init() {
	gates.Register(gates.Gate{Family: Family, Name: "gemm5", Headline: []string{"worst_bound_use", "cases"}, Suites: gates.Quick | gates.Full, Device: true, Run: gateGEMMBits(5),
		Proves: "every registered W5A8 GEMM kernel (decode band pq_gemm_dec5_*: at its split-K law's S and fixed S, cluster and ws reduce, PDL pairs; per-token prefill pq_gemm_pre5) is within the gemm gate's bounds of the fp64 reference on 5-bit weights (codes and zeros 0..31, fifth-bit planes) at every shape and M class of the gemm gate, the subnormal-heavy case included"})
	gates.Register(gates.Gate{Family: Family, Name: "gemm", Headline: []string{"worst_bound_use", "cases"}, Suites: gates.Quick | gates.Full, Device: true, Run: gateGEMMBits(4),
		Proves: "every registered W4A8 GEMM kernel (decode band: the baseline at its split-K law's S and fixed S, its variants at the same splits, at their own law's S and at every split the dec suite times them at, the row-layout variants pq_gemm_dec_rl_* at every split and reduce path of the baseline with its output bits, every decode launch made 3 times with the first launch's bits each time; per-token prefill: tiled mma.sync and on sm_90a row-major wgmma, also at G = 3 and 5) are within the gemm gate's bounds of the fp64 reference (in norm 1.15x the bf16 rounding floor plus, for fp8 wgmma, its accumulation allowance; every sampled element within half a bf16 ulp plus the fp32 summation bound of its terms; worst_bound_use <= 1) on the TP=2 shapes (P=1..3), decode and prefill M incl. odd M, normal/outlier/subnormal-heavy activations; no NaN, every row < M written, rows past M untouched, canaries intact"})
}

const gemmRowsPast = 16

// gemmCheckTile is the side of the output blocks that each hold at least
// one checked element (gemmReference's subset).
const gemmCheckTile = 16

// gemmTolFactor is the pooled and per-row pass bound over the bf16 floor
// (the relative error of rounding ref itself to bf16). A kernel that
// rounds its fp32 result once is within E (gemmElemBound) of ref before
// that rounding, E a few 2^-20 of the magnitude against bf16's 2^-9, so
// its rel is the floor to within a few percent: 1.000-1.006 x floor over
// the 264 quick checks on the H200 (results/h200-2026-12-01/quick.json).
// A second, independent rounding adds an error of the floor's size, so
// rel grows to about √2 = 1.41 x floor (1.38-1.49 measured with one
// planted in the wgmma epilogue). 1.15 sits between the two with room on
// both sides; the per-element bound is the rigorous check.
const gemmTolFactor = 1.15

var gemmDists = []string{"normal", "outlier", "subnormal"}

// GateWeights draws a checkpoint-like int4 weight, the gate's: random
// codes, zeros 2..14 for 90% and 0..15 for the rest, fp16 scales
// log-uniform in 1e-3..1e-2. The I8 gate draws its weights here too.
func GateWeights(rng *rand.Rand, K, N int) *refimpl.QWeight {
	G := K / refimpl.GroupSize
	codes := make([]uint8, K*N)
	for i := 0; i < len(codes); i += 8 {
		r := rng.Uint64()
		for j := 0; j < 8 && i+j < len(codes); j++ {
			codes[i+j] = uint8(r >> (4 * j) & 15)
		}
	}
	zeros := make([]uint8, G*N)
	for i := range zeros {
		if rng.IntN(10) == 0 {
			zeros[i] = uint8(rng.IntN(16))
		} else {
			zeros[i] = uint8(2 + rng.IntN(13))
		}
	}
	w := &refimpl.QWeight{K: K, N: N, Bits: 4, QWeight: refimpl.PackAWQ(codes, K, N), QZeros: refimpl.PackAWQ(zeros, G, N), Scales: make([]float64, G*N)}
	for i := range w.Scales {
		w.Scales[i] = refimpl.RoundF16(1e-3 * math.Pow(10, rng.Float64()))
	}
	return w
}

// gemmWeights5 draws a checkpoint-like int5 weight: codes 0..31, zeros
// 4..28 for 90% and 0..31 for the rest (the 4-bit draw at twice the range),
// fp16 scales as gemmWeights.
func gemmWeights5(rng *rand.Rand, K, N int) *refimpl.QWeight {
	G := K / refimpl.GroupSize
	codes := make([]uint8, K*N)
	for i := range codes {
		codes[i] = uint8(rng.IntN(32))
	}
	zeros := make([]uint8, G*N)
	for i := range zeros {
		if rng.IntN(10) == 0 {
			zeros[i] = uint8(rng.IntN(32))
		} else {
			zeros[i] = uint8(4 + rng.IntN(25))
		}
	}
	ql, qh := refimpl.PackInt5(codes, K, N)
	zl, zh := refimpl.PackInt5(zeros, G, N)
	w := &refimpl.QWeight{K: K, N: N, Bits: 5, QWeight: ql, QHigh: qh, QZeros: zl, ZHigh: zh, Scales: make([]float64, G*N)}
	for i := range w.Scales {
		w.Scales[i] = refimpl.RoundF16(1e-3 * math.Pow(10, rng.Float64()))
	}
	return w
}

// gemmPacked is a repacked weight as the kernels read it (planes nil for
// 4-bit weights).
// gemmPacked is a weight as the kernels read it: the fragment-order words,
// the 5-bit planes, the scale words and (4-bit) the row layout the
// LayoutRow kernels read (refimpl.RepackRow).
type gemmPacked struct{ words, planes, sz, row []byte }

// packGEMM repacks w for the kernels of its width.
func packGEMM(w *refimpl.QWeight) (gemmPacked, error) {
	if w.Bits == 5 {
		p, err := refimpl.RepackW5(w)
		if err != nil {
			return gemmPacked{}, err
		}
		return gemmPacked{p.WordBytes(), p.PlaneBytes(), p.SZBytes(), nil}, nil
	}
	p, err := refimpl.RepackW4(w)
	if err != nil {
		return gemmPacked{}, err
	}
	r, err := refimpl.RowFromW4(p)
	if err != nil {
		return gemmPacked{}, err
	}
	return gemmPacked{p.WordBytes(), nil, p.SZBytes(), r.Codes}, nil
}

// zeroFirstChannels returns w with the weights of channel 0 of every group
// set to their zero point (dequantized weight exactly 0): with the
// "subnormal" activations, whose group maximum sits on channel 0, the output
// then comes only from e4m3-subnormal activation codes, and a kernel that
// decodes those as zero produces zeros.
func zeroFirstChannels(w *refimpl.QWeight) *refimpl.QWeight {
	G := w.K / refimpl.GroupSize
	if w.Bits == 5 {
		codes := refimpl.UnpackInt5(w.QWeight, w.QHigh, w.K, w.N)
		zeros := refimpl.UnpackInt5(w.QZeros, w.ZHigh, G, w.N)
		for g := 0; g < G; g++ {
			k := g * refimpl.GroupSize
			copy(codes[k*w.N:(k+1)*w.N], zeros[g*w.N:(g+1)*w.N])
		}
		out := *w
		out.QWeight, out.QHigh = refimpl.PackInt5(codes, w.K, w.N)
		return &out
	}
	codes := refimpl.UnpackAWQ(w.QWeight, w.K, w.N)
	zeros := refimpl.UnpackAWQ(w.QZeros, G, w.N)
	for g := 0; g < G; g++ {
		k := g * refimpl.GroupSize
		copy(codes[k*w.N:(k+1)*w.N], zeros[g*w.N:(g+1)*w.N])
	}
	out := *w
	out.QWeight = refimpl.PackAWQ(codes, w.K, w.N)
	return &out
}

// gemmActivations draws float32 rows [M, K] of "rotated" activations: a
// log-normal row scale times N(0,1); outlier: 1% of values x50;
// subnormal: e4m3-subnormal codes everywhere but channel 0 of each group
// (see the case below and zeroFirstChannels).
func gemmActivations(rng *rand.Rand, M, K int, dist string) []float32 {
	x := make([]float32, M*K)
	for m := 0; m < M; m++ {
		rs := math.Exp(rng.NormFloat64())
		for k := 0; k < K; k++ {
			v := rng.NormFloat64() * rs
			switch dist {
			case "outlier":
				if rng.IntN(100) == 0 {
					v *= 50
				}
			case "subnormal":
				// Channel 0 of each group is the group's (and the row's)
				// largest value; the others sit at 2e-6..3e-5 of it, which
				// quantizes to e4m3-subnormal codes (below 2^-6 after the
				// x448/amax scaling). Paired with zeroFirstChannels weights.
				if k%refimpl.GroupSize == 0 {
					v = rs * float64(1-2*rng.IntN(2))
				} else {
					v = rs * (2e-6 + 2.8e-5*rng.Float64()) * float64(1-2*rng.IntN(2))
				}
			}
			x[m*K+k] = float32(v)
		}
	}
	return x
}

type gemmCase struct {
	label   string
	shape   GemmShape
	M       int
	dist    string
	prefill bool
}

// gemmCases are the gate's cases on a device with sms SMs: the hand-chosen
// ones (handGemmCases) plus the cheapest domain cases that reach every
// launch-geometry class the domain reaches (gemmClassCover).
func gemmCases(full bool, sms int) ([]gemmCase, error) { return gemmCasesBits(4, full, sms) }

// gemmCasesBits is gemmCases for the bits-wide kernels: the same hand
// cases, and the class cover of those kernels' launch classes.
func gemmCasesBits(bits int, full bool, sms int) ([]gemmCase, error) {
	base, err := handGemmCases(full)
	if err != nil {
		return nil, err
	}
	add, err := gemmClassCoverBits(bits, base, full, sms)
	return append(base, add...), err
}

// synthShapes are the synthetic shapes at the kernels' pipeline edges (odd
// G, fewer groups than the wgmma kernels' stages; G = 2 and 8, where the
// wp consumers run one round, or four).
var synthShapes = []struct {
	label string
	shape GemmShape
}{{"synthetic/K384", GemmShape{K: 384, Parts: []int{256, 128}}}, {"synthetic/K640", GemmShape{K: 640, Parts: []int{384}}},
	{"synthetic/K256", GemmShape{K: 256, Parts: []int{256}}}, {"synthetic/K1024", GemmShape{K: 1024, Parts: []int{128, 256}}}}

func handGemmCases(full bool) ([]gemmCase, error) {
	names, shs, err := GemmShapes("qwen38-27b-tp2")
	if err != nil {
		return nil, err
	}
	// Every decode M class (m8, m16, m32, m64) with an odd M in each; full
	// adds both ladders, a prefill M whose last rasterization group is
	// partial (1200), and the TP=1 shapes (down: K=17408, G=136).
	dec, pre := []int{1, 8, 9, 24, 33, 64}, []int{200, 513}
	if full {
		dec = []int{1, 2, 5, 8, 9, 16, 24, 33, 40, 48, 64}
		pre = []int{128, 200, 512, 513, 1024, 1200, 2048, 4096, 8191, 8192}
		n1, s1, err := GemmShapes("qwen38-27b-tp1")
		if err != nil {
			return nil, err
		}
		for i := range n1 {
			n1[i] = "tp1/" + n1[i]
		}
		names, shs = append(names, n1...), append(shs, s1...)
	}
	var out []gemmCase
	i := 0
	for si, sh := range shs {
		for _, M := range dec {
			out = append(out, gemmCase{names[si], sh, M, gemmDists[(i+si)%3], false})
			i++
		}
		for _, M := range pre {
			out = append(out, gemmCase{names[si], sh, M, gemmDists[(i+si)%3], true})
			i++
		}
	}
	// The synthetic pipeline-edge prefill shapes (see the file comment).
	out = append(out,
		gemmCase{synthShapes[0].label, synthShapes[0].shape, 200, "subnormal", true},
		gemmCase{synthShapes[1].label, synthShapes[1].shape, 129, "outlier", true})
	return out, nil
}

// gemmClassDomain is every case the GEMMs may be launched with: the TP=2
// and TP=1 shapes and the synthetic ones, decode M = 1..DecMaxM and
// prefill M = DecMaxM+1..8192.
func gemmClassDomain() ([]gemmCase, error) {
	var labels []string
	var shs []GemmShape
	for _, set := range []string{"qwen38-27b-tp2", "qwen38-27b-tp1"} {
		n, s, err := GemmShapes(set)
		if err != nil {
			return nil, err
		}
		if set != "qwen38-27b-tp2" {
			for i := range n {
				n[i] = "tp1/" + n[i]
			}
		}
		labels, shs = append(labels, n...), append(shs, s...)
	}
	for _, s := range synthShapes {
		labels, shs = append(labels, s.label), append(shs, s.shape)
	}
	var out []gemmCase
	for i, sh := range shs {
		for M := 1; M <= 8192; M++ {
			out = append(out, gemmCase{labels[i], sh, M, "", M > DecMaxM})
		}
	}
	return out, nil
}

// gemmCaseClasses are the launch classes the gate's launches of one case
// reach on a device with sms SMs: every decode launch (the baseline at
// each of DecGateSplits, the variants at the law's S) or every prefill
// kernel, on either target.
func gemmCaseClasses(c gemmCase, full bool, sms int) []string {
	return gemmCaseClassesBits(4, c, full, sms)
}

// gemmCaseClassesBits is gemmCaseClasses for the bits-wide kernels.
func gemmCaseClassesBits(bits int, c gemmCase, full bool, sms int) []string {
	var lists [][]string
	add := func(cls []string) {
		lists = append(lists, cls)
	}
	for _, arch := range kernels.CodeArchs {
		if c.prefill {
			for _, k := range PreKernelsBits(bits, c.M, arch, full) {
				add(PreLaunchClasses(k.Name, c.shape, c.M))
			}
			continue
		}
		N, K := c.shape.N(), c.shape.K
		law := DecSplitK(c.M, N, K, sms)
		base, err := kernels.BaselineFor(Family, DecOp(bits), c.M, arch)
		if err != nil {
			continue
		}
		Ss := DecGateSplits(c.M, N, K, sms)
		for _, S := range Ss {
			add(DecLaunchClasses(base.Name, c.shape, c.M, S, S == law))
		}
		for _, k := range DecKernelsBits(bits, c.M, arch, full) {
			if k.Role != kernels.Variant {
				continue
			}
			// Every split the baseline runs, and its own law's S (runGEMMCase;
			// the row-layout kernels' law is the baseline's).
			for _, S := range Ss {
				add(DecLaunchClasses(k.Name, c.shape, c.M, S, S == law))
			}
			if own := DecSplitFor(k, c.M, N, K, sms); own != law && !slices.Contains(Ss, own) {
				add(DecLaunchClasses(k.Name, c.shape, c.M, own, true))
			}
		}
	}
	return coverage.Union(lists...)
}

var gemmCoverCache sync.Map // "full/sms" -> []gemmCase

// gemmClassCoverBits is the cheapest set of domain cases (cost: M·K·N,
// plus a per-case overhead) that, added to base, reaches every class of
// the bits-wide kernels on a device with sms SMs.
func gemmClassCoverBits(bits int, base []gemmCase, full bool, sms int) ([]gemmCase, error) {
	key := fmt.Sprint(bits, "/", full, "/", sms)
	if v, ok := gemmCoverCache.Load(key); ok {
		return v.([]gemmCase), nil
	}
	dom, err := gemmClassDomain()
	if err != nil {
		return nil, err
	}
	out := coverage.Extend(base, dom, func(c gemmCase) []string { return gemmCaseClassesBits(bits, c, full, sms) },
		func(c gemmCase) float64 { return float64(c.M+16) * float64(c.shape.K) * float64(c.shape.N()) },
		func(j int, c gemmCase) gemmCase { c.dist = gemmDists[j%len(gemmDists)]; return c })
	gemmCoverCache.Store(key, out)
	return out, nil
}

// gateGEMMBits is the gemm gate (bits 4) or the gemm5 gate (bits 5): the
// same cases and checks on bits-wide weights and kernels.
func gateGEMMBits(bits int) func(*gates.T) { return func(t *gates.T) { gateGEMM(t, bits) } }

func gateGEMM(t *gates.T, bits int) {
	t.Device()
	cases, err := gemmCasesBits(bits, t.Full(), t.Device().Info().SMs)
	t.Check(err, "shapes")
	var worst float64
	weights := map[string]*refimpl.QWeight{}
	packed := map[string]gemmPacked{}
	// Progress, weighted by each case's multiply-adds (the fp64 reference's
	// cost), plus a fixed share for its weights and launches.
	work := func(c gemmCase) float64 { return float64((c.M + 16) * c.shape.K * c.shape.N()) }
	meter := t.Progress("cases", len(cases))
	var total float64
	for _, c := range cases {
		total += work(c)
	}
	meter.SetWork(total)
	for ci, c := range cases {
		key := c.label
		if c.dist == "subnormal" {
			key += "/zero-first-channels"
		}
		w, ok := weights[key]
		if !ok {
			wrng := rand.New(rand.NewPCG(t.Seed(), uint64(len(weights))+0x77))
			if bits == 5 {
				w = gemmWeights5(wrng, c.shape.K, c.shape.N())
			} else {
				w = GateWeights(wrng, c.shape.K, c.shape.N())
			}
			if c.dist == "subnormal" {
				w = zeroFirstChannels(w)
			}
			p, err := packGEMM(w)
			t.Check(err, "repack "+key)
			weights[key], packed[key] = w, p
			t.Logf("weights %s (%s): seed %d stream %#x", key, c.shape, t.Seed(), len(weights)-1+0x77)
		}
		r := runGEMMCase(t, c, t.Seed()+uint64(ci), w, packed[key])
		worst = max(worst, r)
		t.Release()
		meter.Step(1, work(c))
	}
	t.Metric("cases", float64(len(cases)))
	t.Metric("worst_bound_use", worst)
}

// gemmRef holds the fp64 reference of one case's subset.
type gemmRef struct {
	sel           refimpl.Subset
	ref, refExact []float64
	mag           []float64 // refimpl.GEMMRefWithMags' magnitude of ref (row-sum fold)
	magAbs        []float64 // and its magnitude for codes taken as q − z (the wgmma prefill)
	magUns        []float64 // and for unsigned codes with z·Σa in the fold (the wgmma decode)
	floor         float64
	G             int     // K/128, for the per-element bound
	extraAdds     int     // additions the kernel makes beyond the in-loop form's (the ZPE epilogue's 2G), for the per-element bound
	splits        int     // split-K partials the launch adds (1: none), for the per-element bound
	opAcc         float64 // the kernel's in-op accumulation term of that bound (0: exact products, fp32 adds; wgmmaFP8Acc)
}

// negated is the reference of the negated activations: -ref and -refExact
// with the same magnitudes and floor.
func (rr gemmRef) negated() gemmRef {
	neg := func(v []float64) []float64 {
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = -x
		}
		return out
	}
	rr.ref, rr.refExact = neg(rr.ref), neg(rr.refExact)
	return rr
}

// withSplits is rr for a launch that adds S split-K partials.
func (rr gemmRef) withSplits(S int) gemmRef {
	rr.splits = S
	return rr
}

// gemmCaseData is one case's device inputs, as bytes the kernels read, and
// the reference on the case's subset: what the gate and the benches
// upload and check against.
type gemmCaseData struct {
	codes    []byte    // decode: [P,M,K]; prefill: tiled [P,Mpad,K]
	rowCodes []byte    // prefill: row-major [P,M,K] (the row-major form's input)
	scales   []float32 // group scales [P,M,G] or token scales [P,M]
	rsums    []float32 // [P,M,G]
	rr       gemmRef
}

// newGemmCaseData draws the case's activations (seeded), quantizes them
// with the producers' Go mirrors (per group for decode, per token for
// prefill) and computes the fp64 reference on the case's subset.
func newGemmCaseData(c gemmCase, seed uint64, w *refimpl.QWeight) *gemmCaseData {
	rng := rand.New(rand.NewPCG(seed, 0x6e))
	K, M, P := c.shape.K, c.M, len(c.shape.Parts)
	xs := make([][]float32, P)
	qs := make([]*refimpl.QuantAct, P)
	var wg sync.WaitGroup
	for p := 0; p < P; p++ {
		xs[p] = gemmActivations(rng, M, K, c.dist)
	}
	for p := 0; p < P; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if c.prefill {
				qs[p] = refimpl.QuantizeActToken(xs[p], M, K)
			} else {
				qs[p] = refimpl.QuantizeActGroup(xs[p], M, K)
			}
		}()
	}
	wg.Wait()
	d := &gemmCaseData{rr: gemmReference(c, seed, w, xs, qs)}
	for p := 0; p < P; p++ {
		if c.prefill {
			d.codes = append(d.codes, refimpl.TileRows(qs[p].Codes, M, K)...)
			d.rowCodes = append(d.rowCodes, qs[p].Codes...)
			d.scales = append(d.scales, qs[p].TokenScale...)
		} else {
			d.codes = append(d.codes, qs[p].Codes...)
			d.scales = append(d.scales, qs[p].GroupScale...)
		}
		d.rsums = append(d.rsums, qs[p].RowSums...)
	}
	return d
}

func runGEMMCase(t *gates.T, c gemmCase, seed uint64, w *refimpl.QWeight, pk gemmPacked) float64 {
	K, N, M, G := c.shape.K, c.shape.N(), c.M, c.shape.G()
	mode := map[bool]string{false: "decode", true: "prefill"}[c.prefill]
	name := fmt.Sprintf("%s %s M=%d %s seed=%d", c.label, mode, M, c.dist, seed)
	// The case's metric keys name it by shape, mode, M and distribution
	// (and each launch by kernel, split and launch kind); its seed is a
	// value (CaseSeeds), so two runs' keys are the same.
	ck := gates.NewCase("shape", c.label, "mode", mode, "M", M, "dist", c.dist)
	t.CaseSeed(ck, seed)

	d := newGemmCaseData(c, seed, w)
	rr, codes, rowCodes, scales, rsums := d.rr, d.codes, d.rowCodes, d.scales, d.rsums

	bits := w.Bits
	bw := t.Buffer("weights", len(pk.words))
	bsz := t.Buffer("sz", len(pk.sz))
	t.Upload(bw, pk.words)
	t.Upload(bsz, pk.sz)
	var planes gpu.Ptr
	if bits == 5 {
		bpl := t.Buffer("planes", len(pk.planes))
		t.Upload(bpl, pk.planes)
		planes = bpl.Ptr()
	}
	out := t.Buffer("out", 2*(M+gemmRowsPast)*N)

	bact := t.Buffer("act", len(codes))
	bsc := t.Buffer("scales", 4*len(scales))
	brs := t.Buffer("rsum", 4*len(rsums))
	t.Upload(bact, codes)
	t.Upload(bsc, gates.F32Bytes(scales))
	t.Upload(brs, gates.F32Bytes(rsums))

	worst := 0.0
	// check compares out with the reference of a launch that adds terms
	// partial sums into each output (DecSumTerms).
	check := func(kern, variant string, key gates.Case, terms int) {
		k, _ := kernels.Lookup(kern)
		got := t.Download(out)
		worst = max(worst, checkGEMMOut(t, name+" "+variant, key, got, M, N, refFor(rr, k).withSplits(terms)))
	}
	// perSM is the driver's count of a stream-K kernel's blocks an SM holds
	// at split S (DecArgs.PerSM: the grid is one block a slot); where it
	// differs from decResidentAt's estimate, the law's tables (printed
	// without a device) are off, which the log says.
	perSM := func(kern string, S int) int {
		if !DecStreamK(kern) {
			return 0
		}
		n := t.BlocksPerSM(kern, DecKSBlockThreads(kern, S), DecShared(kern, M, S))
		if est := decResidentAt(kern, M, S); n > 0 && est > 0 && n != est { // est 0: no estimate (no footprint registers)
			t.Logf("%s at M=%d S=%d: the driver holds %d blocks an SM, decResidentAt estimates %d", kern, M, S, n, est)
		}
		return n
	}
	if c.prefill {
		// Every prefill kernel the device has, each on a freshly poisoned
		// output: the tiled-activation kernel, then the row-major ones.
		var brow, brs16 *gates.Buffer
		ran := 0
		pre := PreKernelsBits(bits, M, t.Device().Info().CodeArch(), t.Full())
		slices.SortStableFunc(pre, func(a, b kernels.Kernel) int { return int(a.Status) - int(b.Status) }) // experimental last
		for _, k := range pre {
			kn := k.Name
			act := bact
			if PreRowMajor(kn) {
				if brow == nil {
					brow = t.Buffer("act-rowmajor", len(rowCodes))
					t.Upload(brow, rowCodes)
				}
				act = brow
			}
			rk := refFor(rr, k)
			pa := PreArgs{W: bw.Ptr(), SZ: bsz.Ptr(), Act: act.Ptr(), TScale: bsc.Ptr(), RS: brs.Ptr(), Out: out.Ptr(), Kernel: kn, Bits: bits, Planes: planes}
			if k.Form == FormPreZPE {
				if brs16 == nil {
					rs16 := ZPERowSums(rsums, len(c.shape.Parts), M, G)
					brs16 = t.Buffer("rsum-f16", len(rs16))
					t.Upload(brs16, rs16)
				}
				pa.RS16 = brs16.Ptr()
				rk = zpeRef(rk, w, c.shape.Parts, rsums, scales, M)
			}
			t.Poison(out, 0xFF)
			kern, grid, block, shared, args, err := PreLaunch(c.shape, M, pa)
			t.Check(err, name)
			t.Launch(kern, grid, block, shared, args...)
			worst = max(worst, checkGEMMOut(t, name+" "+kern, ck.With("kernel", kern), t.Download(out), M, N, rk))
			ran++
		}
		t.Metric(ck.Key("prefill_kernels"), float64(ran)) // every registered prefill kernel the device has
		if ran == 0 {
			t.Failf("%s: no prefill kernel exists for this device: nothing was checked", name)
		}
		return worst
	}
	law := DecSplitK(M, N, K, t.Device().Info().SMs)
	Ss := DecGateSplits(M, N, K, t.Device().Info().SMs)
	maxS := DecClusterS
	// Variants with a split law of their own (DecSplitFor) also run at
	// it (ownLaw) and at every split the dec suite times them at (their
	// OwnLaws row's Fixed splits that fit and are at most G: ownSs).
	ownLaw, ownSs := map[string]int{}, map[string][]int{}
	for _, k := range DecKernelsBits(bits, M, t.Device().Info().CodeArch(), true) {
		if k.Role != kernels.Variant {
			continue
		}
		if S := DecSplitFor(k, M, N, K, t.Device().Info().SMs); S != law {
			ownLaw[k.Name] = S
			ownSs[k.Name] = append(ownSs[k.Name], S)
		}
		if l, ok := OwnLawOf(k.Tag); ok {
			for _, S := range l.Fixed {
				if S <= G && DecKSFits(k.Name, M, S) && !slices.Contains(ownSs[k.Name], S) {
					ownSs[k.Name] = append(ownSs[k.Name], S)
				}
			}
		}
		for _, S := range ownSs[k.Name] {
			maxS = max(maxS, S)
		}
	}
	for _, s := range Ss {
		maxS = max(maxS, s)
	}
	// ws for the largest split, and for every stream-K kernel at each
	// split it runs (its ws is per block, not per split).
	wsBytes := DecWorkspaceBytes(M, N, maxS)
	for _, k := range DecKernelsBits(bits, M, t.Device().Info().CodeArch(), true) {
		if DecStreamK(k.Name) {
			for S := 1; S <= DecWKMaxS; S++ {
				// S > G launches only for the warp-specialized kernels (their
				// consumer count, whatever G is).
				if _, wp := decWPGeom[k.Name]; !DecKSFits(k.Name, M, S) || (S > G && !wp) {
					continue
				}
				n := perSM(k.Name, S)
				for _, sms := range append([]int{t.Device().Info().SMs}, gateSKSMs...) {
					wsBytes = max(wsBytes, DecSKWorkspaceBytes(k.Name, M, N, K, S, DecSKSlots(k.Name, M, S, sms, n)))
				}
			}
		}
	}
	ws := t.Buffer("ws", max(4, wsBytes))
	sema := t.Buffer("sema", DecSemaBytes(N))
	t.Init(sema, make([]byte, DecSemaBytes(N)))                                                                                                                                                         // the counters' required start (and end) state
	base := DecArgs{W: bw.Ptr(), SZ: bsz.Ptr(), Act: bact.Ptr(), ASG: bsc.Ptr(), RS: brs.Ptr(), Out: out.Ptr(), WS: ws.Ptr(), Sema: sema.Ptr(), Bits: bits, Planes: planes, SMs: t.Device().Info().SMs} // every decode launch's buffers; copies vary Out, Act, RS, Kernel
	// The law's S launches as the product does (DecLaunchOpts: a
	// cluster launch where S = DecClusterS), the other S values plainly
	// (split-K through ws and sema); then the previous generation at the
	// law's S. Both reduce paths are also compared directly below.
	type run struct {
		S       int
		kern    string
		cluster bool
		sameAs  bool // bit-identical to the baseline's output at (S, cluster) (the row-layout kernels)
		sms     int  // stream-K: the SM count its grid is sized for (0: the device's)
	}
	var runs []run
	arch := t.Device().Info().CodeArch()
	baseK, err := kernels.BaselineFor(Family, DecOp(bits), M, arch)
	t.Check(err, name)
	clusterAt := func(k kernels.Kernel, S int) bool {
		return k.Caps&kernels.Cluster != 0 && DecLaunchOpts(S) != (gpu.LaunchOpts{})
	}
	for _, S := range Ss {
		runs = append(runs, run{S, baseK.Name, S == law && clusterAt(baseK, S), false, 0})
	}
	// Every registered variant serving M at every S the baseline runs,
	// launched as the baseline is (a cluster at the law's S where it
	// declares one): each split protocol of each body is gated
	// (attribution kernels compute no GEMM: not gated). Row-layout
	// variants (LayoutRow) also run the other reduce path at S =
	// DecClusterS, each output byte-identical to the baseline's.
	// splitRuns: variant k at every S the baseline runs, at its own
	// law's S (launched as the product launches it) and at its law's
	// Fixed splits (plainly).
	splitRuns := func(k kernels.Kernel) []run {
		var out []run
		for _, S := range Ss {
			if !DecKSFits(k.Name, M, S) {
				continue // an in-block split is the block's warps: S of them must fit one block
			}
			out = append(out, run{S, k.Name, S == law && clusterAt(k, S), false, 0})
		}
		for _, S := range ownSs[k.Name] {
			if !slices.Contains(Ss, S) {
				own, ok := ownLaw[k.Name]
				out = append(out, run{S, k.Name, ok && S == own && clusterAt(k, S), false, 0})
			}
		}
		// Stream-K: the same splits on grids sized for other SM counts, so
		// the parts fall on other tile and block boundaries.
		if DecStreamK(k.Name) {
			for _, r := range slices.Clone(out) {
				for _, sms := range gateSKSMs {
					out = append(out, run{r.S, k.Name, false, false, sms})
				}
			}
		}
		return out
	}
	var experimental []run
	for _, k := range DecKernelsBits(bits, M, arch, t.Full()) {
		switch {
		case k.Role != kernels.Variant:
		case k.Status == kernels.Experimental: // the same splits, run last (full suite only)
			experimental = append(experimental, splitRuns(k)...)
		case DecWeightLayout(k) == LayoutRow:
			runs = append(runs, gateRowLayoutRuns(k, Ss, law, G, clusterAt, func(S int, cl bool) run { return run{S, k.Name, cl, true, 0} })...)
		default:
			runs = append(runs, splitRuns(k)...)
		}
	}
	if pk.row != nil {
		brow := t.Buffer("weights-row", len(pk.row))
		t.Upload(brow, pk.row)
		base.WRow = brow.Ptr()
	}
	// The current kernel's output bits by (S, cluster launch), kept for the
	// comparisons below so they do not launch the same thing again.
	type launchKey struct {
		S       int
		cluster bool
	}
	bitsAt := map[launchKey][]byte{}
	var plain []byte
	clusterLaunches, rowLayoutMatches, replays := 0, 0, 0
	runOne := func(r run) {
		S := r.S
		t.Poison(out, 0xFF)
		t.Poison(ws, 0xFF)
		a := base
		a.Kernel = r.kern
		if r.sms > 0 {
			a.SMs = r.sms
		}
		a.PerSM = perSM(r.kern, S)
		kern, grid, block, args, err := DecLaunch(c.shape, M, S, a)
		t.Check(err, name)
		tag := fmt.Sprintf("%s S=%d", kern, S)
		clustered := r.cluster && t.LaunchEx(kern, grid, block, DecShared(kern, M, S), DecLaunchOpts(S), args...)
		key := ck.With("kernel", kern).With("S", S).With("launch", launchKind(clustered, false))
		if clustered {
			clusterLaunches++
			tag += " cluster"
			t.RequireFilled(name+" "+tag, ws, 0xFF, "the cluster reduce never writes ws (proof it ran)")
		} else {
			t.Launch(kern, grid, block, DecShared(kern, M, S), args...) // (also where the backend has no cluster launch)
			w := t.Download(ws)
			extent := DecWorkspaceBytes(M, N, S)
			switch {
			case DecStreamK(kern):
				slots := a.skSlots(kern, M, S)
				extent = DecSKWorkspaceBytes(kern, M, N, K, S, slots)
				shared := DecSKSharedTiles(kern, M, N, K, S, slots)
				tag += fmt.Sprintf(" grid %d", grid.X)
				if untouched := bytes.Count(w, []byte{0xFF}) == len(w); untouched != (shared == 0) {
					t.Failf("%s %s: ws untouched %v, but %d of the %d column tiles are shared between blocks (each must go through ws, and only they)", name, tag, untouched, shared, N/DecBN)
				}
			case DecInBlock(kern):
				t.RequireFilled(name+" "+tag, ws, 0xFF, "the in-block split-K reduce never writes ws")
			case S > 1 && bytes.Count(w, []byte{0xFF}) == len(w):
				t.Failf("%s %s: the plain split-K launch left ws untouched: its reduce did not go through ws", name, tag)
			}
			// ws is sized for the largest S of the case: the launch's own
			// extent ends earlier, and a write past it (one element is
			// enough) would be inside the allocation, unseen by canaries.
			if err := wsPastExtent(w, extent); err != nil {
				t.Failf("%s %s: %v", name, tag, err)
			}
		}
		if S == law {
			tag += " (law)"
		}
		check(kern, tag, key, DecSumTerms(kern, M, N, K, S, a.skSlots(kern, M, S)))
		if r.sameAs {
			// The baseline's bits at this launch, or at the other reduce path
			// of the same S (the gate proves the two equal for the baseline).
			want, ok := bitsAt[launchKey{S, clustered}]
			if !ok {
				want, ok = bitsAt[launchKey{S, !clustered}]
			}
			if !ok {
				t.Failf("%s %s: no baseline output at S=%d to compare the row-layout kernel's bits with", name, tag, S)
			} else if got := t.Download(out); !bytes.Equal(got[:2*M*N], want[:2*M*N]) {
				t.Failf("%s %s: %s (row and fragment layout must give the same operands)", name, tag, firstBitDiff(got, want, M, N, baseK.Name))
			}
			rowLayoutMatches++
		}
		if r.kern == baseK.Name {
			bitsAt[launchKey{S, clustered}] = t.Download(out)
			if S == law {
				plain = bitsAt[launchKey{S, clustered}] // the reference bits for the PDL pair below
			}
		}
		t.RequireFilled(name+" "+tag, sema, 0, "the split-K counters must be back at 0 (the last block resets them)")
		// Replays: the same launch again, onto poisoned outputs and
		// workspace, must give the same bits (the op and every split-K
		// protocol are deterministic). A race that leaves an output within
		// its bound on one launch, or shows on one launch in several, fails
		// here.
		first := t.Download(out)
		for rep := 1; rep < DecGateLaunches; rep++ {
			t.Poison(out, 0xFF)
			t.Poison(ws, 0xFF)
			if clustered {
				t.LaunchEx(kern, grid, block, DecShared(kern, M, S), DecLaunchOpts(S), args...)
			} else {
				t.Launch(kern, grid, block, DecShared(kern, M, S), args...)
			}
			replays++
			got := t.Download(out)
			if !bytes.Equal(got[:2*M*N], first[:2*M*N]) {
				t.Failf("%s %s: launch %d of %d is not the first launch's bits: %s (the kernel is not deterministic: a race)", name, tag, rep+1, DecGateLaunches, firstBitDiff(got, first, M, N, "the first launch"))
				break
			}
			if i := gates.FirstWritten(got, 2*M*N); i >= 0 {
				t.Failf("%s %s: launch %d of %d wrote row %d (past M=%d)", name, tag, rep+1, DecGateLaunches, i/(2*N), M)
				break
			}
			t.RequireFilled(fmt.Sprintf("%s %s launch %d", name, tag, rep+1), sema, 0, "the split-K counters must be back at 0 after every launch")
		}
	}
	for _, r := range runs {
		runOne(r)
	}
	// Both split-K reduce paths at S = DecClusterS: the plain launch
	// (ws and sema) and the cluster launch (distributed shared memory) must
	// give the same bits (the same additions in the same order).
	if cs := DecClusterS; cs <= G && baseK.Caps&kernels.Cluster != 0 {
		var bits [2][]byte
		for i, opts := range []gpu.LaunchOpts{{}, DecLaunchOpts(cs)} {
			if b, ok := bitsAt[launchKey{cs, i == 1}]; ok { // checked in the loop above
				bits[i] = b
				continue
			}
			t.Poison(out, 0xFF)
			t.Poison(ws, 0xFF)
			kern, grid, block, args, err := DecLaunch(c.shape, M, cs, base)
			t.Check(err, name)
			if !t.LaunchEx(kern, grid, block, DecShared(kern, M, cs), opts, args...) {
				break
			}
			bits[i] = t.Download(out)
			what := fmt.Sprintf("%s %s S=%d %v", name, kern, cs, opts)
			key := ck.With("kernel", kern).With("S", cs).With("launch", launchKind(i == 1, false))
			worst = max(worst, checkGEMMOut(t, what, key, bits[i], M, N, rr.withSplits(cs)))
			if w := t.Download(ws); i == 0 && bytes.Count(w, []byte{0xFF}) == len(w) {
				t.Failf("%s: the plain launch left ws untouched: its split-K reduce did not go through ws", what)
			}
			t.RequireFilled(what, sema, 0, "the split-K counters must be back at 0 (the last block resets them)")
			if i == 1 {
				clusterLaunches++
				t.RequireFilled(what, ws, 0xFF, "the cluster reduce never writes ws (proof it ran)")
			}
		}
		if bits[1] != nil && !bytes.Equal(bits[0][:2*M*N], bits[1][:2*M*N]) {
			t.Failf("%s S=%d: the ws reduce and the cluster reduce differ in the output bits", name, cs)
		}
	}
	// Programmatic dependent launch: two launches back to back on one stream,
	// the second PDL-launched, sharing the split-K workspace and counters.
	// The second reads negated activations (codes with the sign bit flipped,
	// negated row sums), so every intermediate it writes is the exact
	// negation of the first's (RNE is symmetric): if anything it did before
	// its grid_dep_wait touched ws, sema or out, the first output would take
	// in wrong partials. The first output must equal the plain launch's bits,
	// the second their negation (zeros either sign), the counters end at 0.
	// Run at the law's launch (a cluster where S = DecClusterS) and plainly
	// at S = 3 (the ws reduce) when that differs.
	pdlPairs := 0
	// Every PDL kernel of the case: the baseline at the law's launch (and
	// plainly at S = 3 when the law's is a cluster), each variant that
	// declares PDL at its own law's S (the in-block kernels' reads and
	// writes of out and activations differ from the baseline's).
	type pair struct {
		kern string
		S    int
		opts gpu.LaunchOpts
	}
	var pairs []pair
	if law > 1 && plain != nil && baseK.Caps&kernels.PDL != 0 {
		pairs = append(pairs, pair{"", law, DecLaunchOpts(law)})
		if DecLaunchOpts(law) != (gpu.LaunchOpts{}) && 3 <= G {
			pairs = append(pairs, pair{"", 3, gpu.LaunchOpts{}})
		}
	}
	for _, k := range DecKernelsBits(bits, M, arch, false) {
		if k.Role == kernels.Variant && k.Caps&kernels.PDL != 0 && DecWeightLayout(k) != LayoutRow {
			if S := DecSplitFor(k, M, N, K, t.Device().Info().SMs); S > 1 && DecKSFits(k.Name, M, S) {
				pairs = append(pairs, pair{k.Name, S, gpu.LaunchOpts{}})
			}
		}
	}
	if len(pairs) > 0 {
		negCodes := make([]byte, len(codes))
		for i, b := range codes {
			negCodes[i] = b ^ 0x80
		}
		negRS := make([]float32, len(rsums))
		for i, v := range rsums {
			negRS[i] = -v
		}
		bact2 := t.Buffer("act-neg", len(negCodes))
		brs2 := t.Buffer("rsum-neg", 4*len(negRS))
		t.Upload(bact2, negCodes)
		t.Upload(brs2, gates.F32Bytes(negRS))
		out2 := t.Buffer("out-pdl", 2*(M+gemmRowsPast)*N)
		for _, pr := range pairs {
			a := base
			a.Kernel = pr.kern
			a.PerSM = perSM(pr.kern, pr.S)
			ref := plain
			if b, ok := bitsAt[launchKey{pr.S, false}]; ok && pr.kern == "" && pr.S != law {
				ref = b // the plain S launch, checked in the loop above
			} else if pr.kern != "" || pr.S != law {
				t.Poison(out, 0xFF)
				t.Poison(ws, 0xFF)
				kern, grid, block, args, err := DecLaunch(c.shape, M, pr.S, a)
				t.Check(err, name)
				t.Launch(kern, grid, block, DecShared(kern, M, pr.S), args...)
				ref = t.Download(out)
			}
			t.Poison(out, 0xFF)
			t.Poison(out2, 0xFF)
			t.Poison(ws, 0xFF)
			kern, grid, block, args1, err := DecLaunch(c.shape, M, pr.S, a)
			t.Check(err, name)
			a.Act, a.RS, a.Out = bact2.Ptr(), brs2.Ptr(), out2.Ptr()
			_, _, _, args2, err := DecLaunch(c.shape, M, pr.S, a)
			t.Check(err, name+" (second of the PDL pair)")
			if !t.LaunchPDLPair(kern, grid, block, DecShared(kern, M, pr.S), pr.opts, args1, args2) {
				break
			}
			tag := fmt.Sprintf("%s S=%d PDL pair %v", kern, pr.S, pr.opts)
			got1, got2 := t.Download(out), t.Download(out2)
			key := ck.With("kernel", kern).With("S", pr.S).With("launch", launchKind(pr.opts != (gpu.LaunchOpts{}), true))
			pk, _ := kernels.Lookup(kern)
			worst = max(worst, checkGEMMOut(t, name+" "+tag+" (first)", key, got1, M, N, refFor(rr, pk).withSplits(DecSumTerms(pk.Name, M, N, K, pr.S, a.skSlots(pk.Name, M, pr.S)))))
			bad, first := 0, ""
			for i := 0; i < M*N; i++ {
				b1 := uint16(got1[2*i]) | uint16(got1[2*i+1])<<8
				b2 := uint16(got2[2*i]) | uint16(got2[2*i+1])<<8
				br := uint16(ref[2*i]) | uint16(ref[2*i+1])<<8
				zero := b1&0x7FFF == 0 && b2&0x7FFF == 0
				if b1 != br || (b2 != b1^0x8000 && !zero) {
					if bad == 0 {
						first = fmt.Sprintf("m=%d n=%d: first %#04x (plain %#04x), second %#04x", i/N, i%N, b1, br, b2)
					}
					bad++
				}
			}
			if bad > 0 {
				t.Failf("%s %s: %d of %d elements: first output not the plain launch's bits or second not its negation (first: %s)", name, tag, bad, M*N, first)
			}
			if i := gates.FirstWritten(got2, 2*M*N); i >= 0 {
				t.Failf("%s %s (second): row %d (past M=%d) was written", name, tag, i/(2*N), M)
			}
			if DecInBlock(kern) {
				t.RequireFilled(name+" "+tag, ws, 0xFF, "the in-block split-K reduce never writes ws")
			}
			pdlPairs++
			t.RequireFilled(name+" "+tag, sema, 0, "the split-K counters must be back at 0 after the pair")
		}
	}
	// How many PDL pairs ran (0 where the backend has no PDL launch: HIP),
	// so a results file shows what was and was not exercised.
	// Experimental variants last in the case, after every check of the
	// verified kernels: a fault in one (a sticky device error) cannot cost
	// them their results.
	for _, r := range experimental {
		runOne(r)
	}
	t.Metric(ck.Key("pdl_pairs"), float64(pdlPairs))
	t.Metric(ck.Key("cluster_launches"), float64(clusterLaunches))
	t.Metric(ck.Key("replays"), float64(replays)) // launches repeated and compared bit for bit with the first
	if bits == 4 {
		t.Metric(ck.Key("row_layout_bit_checks"), float64(rowLayoutMatches)) // launches of the rl kernel compared byte for byte with the baseline
	}
	return worst
}

// gateRowLayoutRuns are the gate's launches of row-layout kernel k: each
// of the baseline's splits Ss as the baseline launches it (a cluster at
// the law's S where the kernel declares it), and at S = DecClusterS (when
// the baseline runs it) the other reduce path too, every output compared
// byte for byte with the baseline's.
func gateRowLayoutRuns[R any](k kernels.Kernel, Ss []int, law, G int, clusterAt func(kernels.Kernel, int) bool, mk func(S int, cluster bool) R) []R {
	var out []R
	for _, S := range Ss {
		c := S == law && clusterAt(k, S)
		out = append(out, mk(S, c))
		if S == DecClusterS && S <= G && clusterAt(k, S) {
			out = append(out, mk(S, !c))
		}
	}
	return out
}

// firstBitDiff describes where got and want (M x N bf16) differ: how many
// elements, the first one, and which 16-column tiles (j16 = n / 16, one
// decode warp's columns) and rows hold them, so a race's footprint (one
// warp's tile, one block's 64 columns, some rows) shows in the message.
func firstBitDiff(got, want []byte, M, N int, wantName string) string {
	bad, first := 0, ""
	tiles := map[int]bool{}
	var tileList []int
	rowLo, rowHi := -1, -1
	for i := 0; i < M*N; i++ {
		g := uint16(got[2*i]) | uint16(got[2*i+1])<<8
		w := uint16(want[2*i]) | uint16(want[2*i+1])<<8
		if g != w {
			if bad == 0 {
				first = fmt.Sprintf("m=%d n=%d: %#04x, %s %#04x", i/N, i%N, g, wantName, w)
				rowLo = i / N
			}
			rowHi = i / N
			if j := (i % N) / 16; !tiles[j] {
				tiles[j] = true
				tileList = append(tileList, j)
			}
			bad++
		}
	}
	if bad == 0 {
		return fmt.Sprintf("no element differs from %s's bits", wantName)
	}
	slices.Sort(tileList)
	shown := tileList[:min(len(tileList), 8)]
	more := ""
	if len(tileList) > len(shown) {
		more = ", …"
	}
	return fmt.Sprintf("%d of %d elements differ from %s's bits, first %s; in %d of %d 16-column tiles (j16 %s%s), rows %d..%d",
		bad, M*N, wantName, first, len(tileList), N/16, strings.Trim(fmt.Sprint(shown), "[]"), more, rowLo, rowHi)
}

// launchKind is a decode launch's "launch" label in metric keys: plain
// (split-K through ws), cluster (the distributed-shared-memory reduce), or
// the first output of a PDL pair launched either way.
func launchKind(cluster, pdlPair bool) string {
	k := map[bool]string{false: "plain", true: "cluster"}[cluster]
	if pdlPair {
		k = "pdl-pair-" + k
	}
	return k
}

// gateSKSMs are the SM counts the decode gate also sizes the stream-K
// grids for (beside the device's): a prime count, so the block and part
// boundaries fall off the tiles' in other places, and a small one, where
// the parts are longest.
var gateSKSMs = []int{37, 3}

// wsPastExtent checks a poisoned (0xFF) workspace after a plain launch
// whose partials take its first extent bytes (DecWorkspaceBytes at its S,
// DecSKWorkspaceBytes for stream-K): nothing past them may be written.
func wsPastExtent(ws []byte, extent int) error {
	if i := gates.FirstWritten(ws, extent); i >= 0 {
		return fmt.Errorf("ws byte %d, past the %d bytes of its partials, was written", i, extent)
	}
	return nil
}

// gemmSubset is the part of a case's output the reference computes and
// the checks compare.
func gemmSubset(c gemmCase, seed uint64) refimpl.Subset {
	K, N, M := c.shape.K, c.shape.N(), c.M
	// Rows: every row up to M = 64; else one in each of 64 strata and one
	// in every 16-row slab. Columns: every column while M·N·K <= 1e9; else
	// one in each of max(1024, N/16) strata, one in every 16-column slab
	// and each partition's first and last. So every 16x16 block of the
	// output (a sub-tile of every kernel's tiling) has a checked element.
	maxRows, maxCols := 0, 0
	if M > 64 {
		maxRows = 64
	}
	big := float64(M)*float64(N)*float64(K) > 1e9
	if big {
		maxCols = max(1024, N/16)
	}
	sel := refimpl.RandomSubset(M, N, maxRows, maxCols, seed^0x5eed)
	if sel.Rows != nil {
		sel.Rows = refimpl.Union(sel.Rows, refimpl.TileIndices(M, gemmCheckTile, seed^0x7111))
	}
	edges, start := []int{}, 0 // each partition's first and last column
	for _, w := range c.shape.Parts {
		edges = append(edges, start, start+w-1)
		start += w
	}
	if sel.Cols != nil {
		sel.Cols = refimpl.Union(sel.Cols, refimpl.TileIndices(N, gemmCheckTile, seed^0x7112), edges)
	}
	return sel
}

// gemmReference computes the fp64 reference (same codes and scales) with its
// magnitude, and the reference from the unquantized activations, on the
// case's subset.
func gemmReference(c gemmCase, seed uint64, w *refimpl.QWeight, xs [][]float32, qs []*refimpl.QuantAct) gemmRef {
	K, M, P := c.shape.K, c.M, len(c.shape.Parts)
	sel := gemmSubset(c, seed)
	rows := sel.RowsOf(M)
	R := len(rows)
	a := make([]float64, P*R*K)
	ax := make([]float64, P*R*K)
	for p := 0; p < P; p++ {
		for i, m := range rows {
			for k := 0; k < K; k++ {
				a[(p*R+i)*K+k] = qs[p].CodeValue(m, k) * qs[p].Scale(m, k)
				ax[(p*R+i)*K+k] = float64(xs[p][m*K+k])
			}
		}
	}
	colSel := refimpl.Subset{Cols: sel.Cols}
	ref, mag, magAbs, magUns := refimpl.GEMMRefWithMags(a, R, w, c.shape.Parts, colSel)
	exact := refimpl.GEMMRef(ax, R, w, c.shape.Parts, colSel)
	return gemmRef{sel: sel, ref: ref, refExact: exact, mag: mag, magAbs: magAbs, magUns: magUns, floor: refimpl.Bf16Floor(ref), G: c.shape.G(), splits: 1}
}

// refFor is the reference checks of kernel k use: the fp8 wgmma kernels
// (pq_gemm_pre_wg, pq_gemm_dec_wg_*) accumulate fp8 products with the
// measured loss wgmmaFP8Acc, relative to the magnitude of the products
// they sum: magUns for the decode bodies that take the codes unsigned and
// fold z·Σa (DecWGUnsigned), magAbs for those that take them as q − z
// (the prefill and the other decode classes).
func refFor(rr gemmRef, k kernels.Kernel) gemmRef {
	if k.MatrixOp[kernels.SM90a] != MatrixOpWGMMA {
		return rr
	}
	rr.opAcc, rr.mag = wgmmaFP8Acc, rr.magAbs
	if DecWGUnsigned(k.Name) {
		rr.mag = rr.magUns
	}
	return rr
}

// gemmElemBound is how far one output element may be from its reference.
// The kernel's fp32 result v is within E = (γ + opAcc)·mag of ref, γ =
// (128 + G + S + 8)·2^-24 the worst-case fp32 summation error over the
// additions the kernel makes into one output (128 in the matrix op's k
// steps of a group, G group folds, S split-K partials, 8 for the
// zero-point fold and the scalings), mag their magnitude
// (refimpl.GEMMRefWithMags), opAcc the extra term of a matrix op that
// accumulates with fewer bits than fp32 (wgmmaFP8Acc). One rounding to
// nearest bf16 then moves v by at most half a bf16 ulp of |v| <= |ref| + E:
//
//	|got − ref| <= ½·ulp(|ref| + E) + E.
//
// A second bf16 rounding anywhere in the epilogue (of a partial sum, or
// before a scaling) adds up to another half ulp, which the bound leaves no
// room for.
func gemmElemBound(ref, mag float64, G, S int, opAcc float64) float64 {
	e := (float64(128+G+S+8)*0x1p-24 + opAcc) * mag
	return refimpl.BF16RoundBound(ref, e)
}

// gemmElemOK reports whether got is within gemmElemBound of ref; NaN fails.
func gemmElemOK(got, ref, mag float64, G, S int, opAcc float64) bool {
	return math.Abs(got-ref) <= gemmElemBound(ref, mag, G, S, opAcc)
}

// wgmmaFP8Acc is the bound's extra relative term (× the magnitude) for
// the kernels whose products Hopper's fp8 wgmma sums (refFor). The tensor
// core adds each instruction's products into its accumulator with fewer
// bits than fp32 (about 14: DeepSeek-V3 technical report,
// arXiv:2412.19437 §3.3.2). Measured on the H200 by the gate wgmma-acc
// (families/wgmmaacc, 2026-12-02, results/h200-2026-12-02e): a chain of k32
// steps loses up to 3.63 · 2^-13 of the products' magnitude per step
// (more than one 14-bit truncation), so the term is 4 steps (one 128-group
// in its temporary, folded into fp32 once per group) of
// refimpl.WGMMAE4M3StepLoss = 2^-11: 2^-9 of the group's magnitude, and
// summed over the groups 2^-9 of the magnitude of the products summed
// (refFor picks it). The norm checks allow the same term
// (wgmmaNormAllowance). Each check's worst element margin is recorded
// (elem_margin.*).
const wgmmaFP8Acc = 4 * refimpl.WGMMAE4M3StepLoss // 4 k32 steps per 128-group

// wgmmaNormAllowance is the norm checks' room for an op that accumulates
// with fewer bits than fp32: ||opAcc · mag||₂ / ||ref||₂, the relative
// norm of the per-element accumulation terms (the triangle inequality
// over the rounding of ref plus those terms). 0 for opAcc = 0, so the
// fp32-accumulating kernels keep the bare 1.15 x floor.
func wgmmaNormAllowance(ref, mag []float64, opAcc float64) float64 {
	if opAcc == 0 {
		return 0
	}
	var e, r float64
	for i, v := range ref {
		e += mag[i] * mag[i]
		r += v * v
	}
	if r == 0 {
		return 0
	}
	return opAcc * math.Sqrt(e/r)
}

// checkGEMMOut checks one downloaded output ([M + gemmRowsPast, N] bf16):
// rows past M untouched, no NaN (unwritten) element in rows < M, rel on the
// subset within the bound. It returns the share of its bounds the output
// used: the larger of rel over the norm bound (gemmTolFactor × floor plus
// the accumulation allowance) and the worst element's error over its
// gemmElemBound; at most 1 passes (rel / floor alone is recorded as the
// metrics rel and floor: on a cancelling case it is large while the
// allowance the bound has for it is larger still). what names the output
// in messages (with its seed); key names its metrics (gates.Case: no seed).
func checkGEMMOut(t gates.Reporter, what string, key gates.Case, got []byte, M, N int, rr gemmRef) float64 {
	if i := gates.FirstWritten(got, 2*M*N); i >= 0 {
		t.Failf("%s: row %d (past M=%d) was written at column %d", what, i/(2*N), M, (i%(2*N))/2)
	}
	bits := func(i int) uint16 { return uint16(got[2*i]) | uint16(got[2*i+1])<<8 }
	// Count NaN (poison or computed) in parallel over rows.
	nan := make([]int, runtime.GOMAXPROCS(0))
	firstNaN := make([]int, len(nan))
	var wg sync.WaitGroup
	per := (M + len(nan) - 1) / len(nan)
	for wkr := range nan {
		firstNaN[wkr] = -1
		lo, hi := wkr*per, min(M, (wkr+1)*per)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo * N; i < hi*N; i++ {
				if bits(i)&0x7FFF > 0x7F80 {
					if nan[wkr] == 0 {
						firstNaN[wkr] = i
					}
					nan[wkr]++
				}
			}
		}()
	}
	wg.Wait()
	total, first := 0, -1
	for wkr, n := range nan {
		total += n
		if first < 0 && firstNaN[wkr] >= 0 {
			first = firstNaN[wkr]
		}
	}
	if total > 0 {
		t.Failf("%s: %d of %d outputs are NaN or unwritten (first at m=%d n=%d, bits %#04x)", what, total, M*N, first/N, first%N, bits(first))
	}
	rows, cols := rr.sel.RowsOf(M), rr.sel.ColsOf(N)
	g := make([]float64, 0, len(rows)*len(cols))
	for _, m := range rows {
		for _, n := range cols {
			g = append(g, refimpl.BF16ToF64(bits(m*N+n)))
		}
	}
	rel := refimpl.RelErr(g, rr.ref)
	relx := refimpl.RelErr(g, rr.refExact)
	ratio := rel / rr.floor
	t.Metric(key.Key("rel"), rel)
	t.Metric(key.Key("floor"), rr.floor)
	t.Metric(key.Key("rel_exact"), relx)
	t.Logf("%s: rel %.3e floor %.3e (%.3fx), rel vs unquantized %.3e; %s", what, rel, rr.floor, ratio, relx, rr.sel.Describe(M, N))
	allow := wgmmaNormAllowance(rr.ref, rr.mag, rr.opAcc)
	if !(rel <= gemmTolFactor*rr.floor+allow) {
		bad, n := refimpl.FormatBad(g, rr.ref, 8*rr.floor, 3)
		t.Failf("%s: rel %.4e > %.2f x floor %.4e + accumulation allowance %.3e (%d elements off by > 8 floor x max|ref|:%s)", what, rel, gemmTolFactor, rr.floor, allow, n, bad)
	}
	// Per row too: a pooled norm lets a few wrong rows (or a small-scale row
	// entirely wrong) hide under the large rows. Each sampled row must meet
	// the same criterion against its own floor; and each element must be
	// within gemmElemBound: one bf16 ulp of ref plus the worst-case fp32
	// summation error over the terms the kernel adds, so the slack scales
	// with what cancellation can lose (a tiny output of large cancelling
	// terms), not with the row's largest |ref|.
	// The rows are checked in parallel, each into its own result, and
	// reduced in row order, so the failure named first is the serial
	// loop's.
	C := len(cols)
	type rowCheck struct {
		bad                 bool
		badElems            int
		margin              float64 // the worst element's |error| / its bound
		firstRow, firstElem string
	}
	checks := make([]rowCheck, len(rows))
	par.For(len(rows), func(ri int) {
		rc := &checks[ri]
		gr, rr2 := g[ri*C:(ri+1)*C], rr.ref[ri*C:(ri+1)*C]
		fl := refimpl.Bf16Floor(rr2)
		if fl > 0 {
			ra := wgmmaNormAllowance(rr2, rr.mag[ri*C:(ri+1)*C], rr.opAcc)
			if rrel := refimpl.RelErr(gr, rr2); !(rrel <= gemmTolFactor*fl+ra) {
				rc.bad = true
				rc.firstRow = fmt.Sprintf("m=%d rel %.3e floor %.3e allowance %.3e", rows[ri], rrel, fl, ra)
			}
		}
		mr := rr.mag[ri*C : (ri+1)*C]
		for ci, v := range rr2 {
			bound := gemmElemBound(v, mr[ci], rr.G+rr.extraAdds, rr.splits, rr.opAcc)
			if d := math.Abs(gr[ci] - v); mr[ci] > 0 {
				rc.margin = max(rc.margin, d/bound)
			}
			if !gemmElemOK(gr[ci], v, mr[ci], rr.G+rr.extraAdds, rr.splits, rr.opAcc) {
				if rc.badElems == 0 {
					rc.firstElem = fmt.Sprintf("m=%d n=%d got %g want %g mag %g bound %g", rows[ri], cols[ci], gr[ci], v, mr[ci], bound)
				}
				rc.badElems++
			}
		}
	})
	badRows, badElems := 0, 0
	margin := 0.0
	firstRow, firstElem := "", ""
	for _, rc := range checks {
		if rc.bad {
			if badRows == 0 {
				firstRow = rc.firstRow
			}
			badRows++
		}
		if rc.badElems > 0 && badElems == 0 {
			firstElem = rc.firstElem
		}
		badElems += rc.badElems
		margin = max(margin, rc.margin)
	}
	if badRows > 0 {
		t.Failf("%s: %d of %d sampled rows exceed %.2f x their own bf16 floor + accumulation allowance (first: %s)", what, badRows, len(rows), gemmTolFactor, firstRow)
	}
	t.Metric(key.Key("elem_margin"), margin)
	use := margin
	if d := gemmTolFactor*rr.floor + allow; d > 0 {
		use = max(use, rel/d)
	} else if rel > 0 {
		use = math.Inf(1)
	}
	if badElems > 0 {
		t.Failf("%s: %d of %d sampled elements off by more than half a bf16 ulp + ((128+G+S+8) x 2^-24 + %g) x mag, G=%d S=%d (first: %s)", what, badElems, len(g), rr.opAcc, rr.G, rr.splits, firstElem)
	}
	if math.IsNaN(rel) || math.IsNaN(use) {
		return math.Inf(1)
	}
	return use
}
