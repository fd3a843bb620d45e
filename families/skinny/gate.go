package skinny

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/parharness/parharness/families/internal/classes"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/internal/coverage"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/refimpl"
)

// The skinny gate (skinny.hip).
//
// skinny: on every bf16 linear of the built-in shapes sets (gdn_in_ba, N =
// 48 at TP 2 and 96 at TP 1, K = 5120), the synthetic N = 256 and 1280 at
// K = 5120 and two at the reduce's edges (N = 48 at K = 256, one slice, and
// K = 8448, 33 slices), M = 1, 3, 8, 17, 64 (quick) or every M in 1..64 (full),
// with seeded bf16 weights (per-column scales log-normal around 0.02) and
// activations (distributions: normal rows with log-normal scales,
// outlier-heavy, rows whose scales span 2^±30, and "order": two huge
// slices that cancel exactly only when the slices are summed in order, see
// genActivations), each registered kernel
// is launched twice onto poisoned outputs and a poisoned workspace, and
// its output must:
//   - equal Mirror (the kernel's documented fp32 op order) bit for bit in
//     every element of every row < M;
//   - be within the bf16 floor of the fp64 reference from the same bf16
//     values (refimpl.BF16GEMM): rel = ||out − ref||₂ / ||ref||₂ ≤ 1.15 ×
//     floor pooled and per row (floor: the rel of rounding ref itself to
//     bf16), and each element within elemBound;
//   - be the same bytes on the second launch (graph replay), rows past M
//     untouched (16 poisoned rows), no NaN;
// and after each launch the n-tile counters must be back at 0, the
// workspace past its launch's [S, M, N] extent untouched (one more slice
// of room is allocated and poisoned), every buffer's canaries intact and
// the inputs unchanged.

func init() {
	gates.Register(gates.Gate{Family: Family, Name: "skinny", Headline: []string{"worst_rel_over_floor", "mirror_mismatches", "cases"}, Suites: gates.Quick | gates.Full, Device: true, Run: gateSkinny,
		Proves: "every registered skinny bf16 GEMM kernel equals the Go mirror of its fp32 op order bit for bit and is within the bf16 floor of the fp64 reference (1.15x pooled and per row, each element within half a bf16 ulp + (8+5+S+1)·2^-24·Σ|x·w|) on gdn_in_ba (N=48 and 96), N=256, 1280 at K=5120 and N=48 at K=256, 8192 and 8448 (1, 32 and 33 slices), M in 1..64 incl. odd M (the sm_90a cluster form: M <= 8, its own mirror of J slices per split); bit-identical on a second launch, rows past M untouched, the split-K counters back at 0, the workspace past its extent untouched, canaries intact"})
}

// rowsPast are the poisoned output rows after M that must stay untouched.
const rowsPast = 16

// tolFactor is the pooled and per-row pass bound over the bf16 floor. A
// kernel that rounds its fp32 sum once is within E (elemBound) of ref
// before that rounding, E a few 2^-20 of the magnitude against bf16's
// 2^-9, so its rel is the floor to within a few percent; a second
// rounding anywhere adds an error of the floor's size (rel about √2 ×
// floor). 1.15 sits between the two, as in the gemm gate.
const tolFactor = 1.15

// dists are the activation distributions (genActivations); "order" runs
// on orderWeights.
var dists = []string{"normal", "outlier", "wide", "order"}

// orderScale is how much larger the "order" distribution's first two
// slices are than the rest (2^22): their partials cancel exactly when
// added to each other first, and swallow the other slices' low bits
// otherwise.
const orderScale = 0x1p22

// gateMs are the M values of a suite: every reduce-scatter round shape
// (one partial round, one full, several with a partial last) and odd M.
func gateMs(full bool) []int {
	if !full {
		return []int{1, 3, 8, 17, 64}
	}
	Ms := make([]int, MaxM)
	for i := range Ms {
		Ms[i] = i + 1
	}
	return Ms
}

type gateCase struct {
	shape Shape
	M     int
	dist  string
}

// edgeShapes are the gate's synthetic shapes at the kernels' reduce edges:
// one slice (the only block of an n-tile is the last), exactly one full
// batch of RED_BATCH = 32 loads (a reduce loop that runs one batch too many
// reads past the partials), and 33 slices (the second batch holds one).
var edgeShapes = []Shape{{"synthetic/K256", 48, Slice}, {"synthetic/K8192", 48, RedBatch * Slice}, {"synthetic/K8448", 48, (RedBatch + 1) * Slice}}

// gateCases are the suite's shapes (the deployed bf16 linears and
// edgeShapes) times gateMs, plus the cheapest (shape, M) cases that reach
// a launch class (LaunchClasses) the others do not, over M = 1..MaxM.
func gateCases(full bool) ([]gateCase, error) {
	shs, err := gateShapes()
	if err != nil {
		return nil, err
	}
	var out []gateCase
	for si, s := range shs {
		for mi, M := range gateMs(full) {
			out = append(out, gateCase{s, M, dists[(si+mi)%len(dists)]})
		}
	}
	dom := classDomain(shs)
	all := append(append([]gateCase{}, out...), dom...)
	base := make([]int, len(out))
	for i := range base {
		base[i] = i
	}
	added, _ := coverage.Cover(base, len(all), func(i int) []string { return caseClasses(all[i], full) },
		func(i int) float64 { return float64(all[i].M+8) * float64(all[i].shape.N) * float64(all[i].shape.K) })
	for j, i := range added {
		c := all[i]
		c.dist = dists[j%len(dists)]
		out = append(out, c)
	}
	return out, nil
}

func gateShapes() ([]Shape, error) {
	shs, err := Shapes()
	if err != nil {
		return nil, err
	}
	return append(shs, edgeShapes...), nil
}

// classDomain is every (shape, M) of the suite's shapes, M = 1..MaxM.
func classDomain(shs []Shape) []gateCase {
	var out []gateCase
	for _, s := range shs {
		for M := 1; M <= MaxM; M++ {
			out = append(out, gateCase{shape: s, M: M})
		}
	}
	return out
}

// caseClasses are the launch classes of every kernel the gate runs on a
// case, on either target.
func caseClasses(c gateCase, full bool) []string {
	return classes.Union(func(arch string) []kernels.Kernel { return Kernels(c.M, arch, full) }, func(k kernels.Kernel) []string {
		cls, err := LaunchClasses(k.Name, c.shape, c.M)
		if err != nil {
			return nil // a shape the kernel's n-tile does not divide: not run (runCase logs it)
		}
		return cls
	})
}

// genWeights draws bf16 weights [N, K]: N(0, 1) times a per-column scale
// 0.02·e^(N(0,1)/2), the spread of a trained projection's rows.
func genWeights(rng *rand.Rand, N, K int) []uint16 {
	w := make([]uint16, N*K)
	for n := 0; n < N; n++ {
		sc := 0.02 * math.Exp(0.5*rng.NormFloat64())
		for k := 0; k < K; k++ {
			w[n*K+k] = refimpl.F64ToBF16(rng.NormFloat64() * sc)
		}
	}
	return w
}

// orderWeights is w [N, K] with slice 1's weights a copy of slice 0's,
// for the "order" activations (w itself when there is one slice).
func orderWeights(w []uint16, N, K int) []uint16 {
	if K < 2*Slice {
		return w
	}
	out := append([]uint16{}, w...)
	for n := 0; n < N; n++ {
		copy(out[n*K+Slice:n*K+2*Slice], out[n*K:n*K+Slice])
	}
	return out
}

// genActivations draws bf16 rows [M, K]: N(0, 1) times a row scale,
// log-normal (normal, outlier, order) or 2^U(-30, 30) (wide: the per-row
// checks see tiny and huge rows side by side); outlier: 1% of values x 50;
// order: slice 0 scaled by orderScale and slice 1 its exact negation, so
// that with orderWeights partial 1 is exactly -partial 0 (same products
// negated, same tree). Summed in slice order they cancel exactly, and the
// output is the other slices' sum; in any order that adds another slice
// between them (reversed, as blocks arrive) the other slices' low bits are
// lost against the 2^22 larger partial, and the bf16 bits change, which the
// mirror check (and the replay check) then sees. On other data a reordered
// fp32 sum almost never changes a bf16 output.
func genActivations(rng *rand.Rand, M, K int, dist string) []uint16 {
	x := make([]uint16, M*K)
	for m := 0; m < M; m++ {
		rs := math.Exp(rng.NormFloat64())
		if dist == "wide" {
			rs = math.Ldexp(1, rng.IntN(61)-30)
		}
		for k := 0; k < K; k++ {
			v := rng.NormFloat64() * rs
			if dist == "outlier" && rng.IntN(100) == 0 {
				v *= 50
			}
			if dist == "order" && k < Slice && K >= 2*Slice {
				v *= orderScale
			}
			x[m*K+k] = refimpl.F64ToBF16(v)
		}
		if dist == "order" && K >= 2*Slice {
			for k := 0; k < Slice; k++ {
				x[m*K+Slice+k] = x[m*K+k] ^ 0x8000
			}
		}
	}
	return x
}

// caseRef is what one case's outputs are checked against.
type caseRef struct {
	ref, mag []float64 // fp64 reference and Σ|x·w| [M, N]
	mirror   []uint16  // the kernel's bits [M, N]
	floor    float64   // the rel of rounding ref to bf16
	S        int       // split-K splits, for elemBound
	chain    int       // rounded adds in a lane's partial (LaneK, plus J-1 for J-slice splits), for elemBound
	// x, w, M, shape and neg rebuild the mirror of another split geometry
	// (forKernel); neg: the inputs' signs flipped (negated).
	x, w  []uint16
	M     int
	shape Shape
	neg   bool
	// anyZeroSign: a zero of either sign matches a zero of mirror (the
	// negated inputs' reference: -x rounds like x but for the sign of an
	// exact zero).
	anyZeroSign bool
}

func newCaseRef(x, w []uint16, M int, s Shape) *caseRef {
	ref, mag := refimpl.BF16GEMM(x, w, M, s.N, s.K)
	return &caseRef{ref: ref, mag: mag, mirror: Mirror(x, w, M, s.N, s.K), floor: refimpl.Bf16Floor(ref), S: s.S(), chain: LaneK,
		x: x, w: w, M: M, shape: s}
}

// forKernel is the reference of kernel k's launches: for a kernel whose
// splits cover J > 1 slices (the cluster form), the mirror of that split
// (negated like cr) and its split count and chain length.
func (cr *caseRef) forKernel(k kernels.Kernel) *caseRef {
	S, J, err := Splits(k, cr.shape)
	if err != nil || J == 1 {
		return cr
	}
	out := *cr
	out.mirror = MirrorSplits(cr.x, cr.w, cr.M, cr.shape.N, cr.shape.K, J)
	if cr.neg {
		for i := range out.mirror {
			out.mirror[i] ^= 0x8000
		}
	}
	out.S, out.chain = S, LaneK+J-1 // 8 chain terms, then J-1 rounded adds of the slices' chains
	return &out
}

// negated is the reference of the negated inputs (x or w with every sign
// bit flipped): -ref, the mirror's bits negated, zeros of either sign.
func (cr *caseRef) negated() *caseRef {
	out := *cr
	out.ref = make([]float64, len(cr.ref))
	for i, v := range cr.ref {
		out.ref[i] = -v
	}
	out.mirror = make([]uint16, len(cr.mirror))
	for i, b := range cr.mirror {
		out.mirror[i] = b ^ 0x8000
	}
	out.anyZeroSign = true
	out.neg = !cr.neg
	return &out
}

// elemBound is how far one output element may be from its fp64 reference.
// The kernel's fp32 sum v adds K exact bf16 products; each passes through
// at most n = chain + 5 + S rounded additions (its lane's chain of LaneK
// terms per slice of its split, the 5 levels of the 32-lane tree, the
// S-split reduce), so |v − ref| ≤ γ_n ·
// mag with γ_n = n·u / (1 − n·u), u = 2^-24 (recursive summation, Higham,
// Accuracy and Stability of Numerical Algorithms, 2nd ed., §4.2), mag = Σ|x·w|.
// (n + 1)·u bounds γ_n for n(n+1) ≤ 2^24 and leaves about u·mag for the
// fp64 reference's own error (≤ K·2^-53·mag). One rounding to nearest bf16
// then moves v by at most half a bf16 ulp of |v| ≤ |ref| + E:
//
//	|got − ref| ≤ ½·ulp(|ref| + E) + E,   E = (chain + 5 + S + 1)·2^-24·mag.
//
// It assumes the products are in float32's normal range (exact), as the
// gate's data keeps them.
func elemBound(ref, mag float64, chain, S int) float64 {
	e := float64(chain+5+S+1) * 0x1p-24 * mag
	return refimpl.BF16RoundBound(ref, e)
}

// checkOut checks one downloaded output ([M + rowsPast, N] bf16) of a
// launch named by what: rows past M untouched, no NaN or unwritten element,
// the fp64 bounds (pooled, per row, per element) and the mirror's bits. It
// returns rel / floor (+Inf when not finite).
func checkOut(r gates.Reporter, what string, key gates.Case, got []byte, M, N int, cr *caseRef) float64 {
	if i := gates.FirstWritten(got, 2*M*N); i >= 0 {
		r.Failf("%s: row %d (past M=%d) was written at column %d", what, i/(2*N), M, (i%(2*N))/2)
	}
	bits := func(i int) uint16 { return uint16(got[2*i]) | uint16(got[2*i+1])<<8 }
	g := make([]float64, M*N)
	nan, firstNaN := 0, -1
	for i := range g {
		b := bits(i)
		if b&0x7FFF > 0x7F80 {
			if nan == 0 {
				firstNaN = i
			}
			nan++
		}
		g[i] = refimpl.BF16ToF64(b)
	}
	if nan > 0 {
		r.Failf("%s: %d of %d outputs are NaN or unwritten (first at row m=%d column n=%d, bits %#04x)", what, nan, M*N, firstNaN/N, firstNaN%N, bits(firstNaN))
	}
	rel := refimpl.RelErr(g, cr.ref)
	ratio := rel / cr.floor
	r.Metric(key.Key("rel"), rel)
	r.Metric(key.Key("floor"), cr.floor)
	r.Logf("%s: rel %.3e floor %.3e (%.3fx)", what, rel, cr.floor, ratio)
	if !(rel <= tolFactor*cr.floor) {
		bad, n := refimpl.FormatBad(g, cr.ref, 8*cr.floor, 3)
		r.Failf("%s: rel %.4e > %.2f x floor %.4e (%d elements off by > 8 floor x max|ref|:%s)", what, rel, tolFactor, cr.floor, n, bad)
	}
	badRows, badElems, mism := 0, 0, 0
	margin := 0.0
	firstRow, firstElem, firstMism := "", "", ""
	for m := 0; m < M; m++ {
		gr, rr := g[m*N:(m+1)*N], cr.ref[m*N:(m+1)*N]
		if fl := refimpl.Bf16Floor(rr); fl > 0 {
			if rrel := refimpl.RelErr(gr, rr); !(rrel <= tolFactor*fl) {
				if badRows == 0 {
					firstRow = fmt.Sprintf("row m=%d rel %.3e floor %.3e", m, rrel, fl)
				}
				badRows++
			}
		}
		for n := 0; n < N; n++ {
			i := m*N + n
			bound := elemBound(cr.ref[i], cr.mag[i], cr.chain, cr.S)
			d := math.Abs(g[i] - cr.ref[i])
			if cr.mag[i] > 0 {
				margin = max(margin, d/bound)
			}
			if !(d <= bound) {
				if badElems == 0 {
					firstElem = fmt.Sprintf("row m=%d column n=%d got %g want %g mag %g bound %g", m, n, g[i], cr.ref[i], cr.mag[i], bound)
				}
				badElems++
			}
			b, want := bits(i), cr.mirror[i]
			if b != want && !(cr.anyZeroSign && b&0x7FFF == 0 && want&0x7FFF == 0) {
				if mism == 0 {
					firstMism = fmt.Sprintf("row m=%d column n=%d got %#04x (%g) want %#04x (%g)", m, n, b, g[i], want, refimpl.BF16ToF64(want))
				}
				mism++
			}
		}
	}
	if badRows > 0 {
		r.Failf("%s: %d of %d rows exceed %.2f x their own bf16 floor (first: %s)", what, badRows, M, tolFactor, firstRow)
	}
	r.Metric(key.Key("elem_margin"), margin)
	if badElems > 0 {
		r.Failf("%s: %d of %d elements off the fp64 reference by more than half a bf16 ulp + (%d+5+S+1) x 2^-24 x mag, S=%d (first: %s)", what, badElems, M*N, cr.chain, cr.S, firstElem)
	}
	r.Metric(key.Key("mirror_mismatches"), float64(mism))
	if mism > 0 {
		r.Failf("%s: %d of %d elements differ from the mirror of the kernel's fp32 op order (lane chains, 32-lane tree, slices summed 0..S-1) (first: %s)", what, mism, M*N, firstMism)
	}
	if math.IsNaN(ratio) {
		return math.Inf(1)
	}
	return ratio
}

func gateSkinny(t *gates.T) {
	t.Device()
	cases, err := gateCases(t.Full())
	t.Check(err, "shapes")
	weights := map[string][]uint16{}
	worst, mism := 0.0, 0.0
	for ci, c := range cases {
		w, ok := weights[c.shape.Label]
		if !ok {
			stream := uint64(len(weights)) + 0x5c
			w = genWeights(rand.New(rand.NewPCG(t.Seed(), stream)), c.shape.N, c.shape.K)
			weights[c.shape.Label] = w
			t.Logf("weights %s: seed %d stream %#x", c.shape, t.Seed(), stream)
		}
		if c.dist == "order" {
			w = orderWeights(w, c.shape.N, c.shape.K)
		}
		r, m := runCase(t, c, t.Seed()+uint64(ci), w)
		worst, mism = max(worst, r), mism+m
		t.Release()
	}
	t.Metric("cases", float64(len(cases)))
	t.Metric("worst_rel_over_floor", worst)
	t.Metric("mirror_mismatches", mism)
}

// runCase runs every registered kernel serving the case's M (experimental
// ones last, in the full suite) twice and checks each launch; it returns
// the worst rel / floor and the number of elements that differed from the
// mirror.
func runCase(t *gates.T, c gateCase, seed uint64, w []uint16) (worst, mismatches float64) {
	s, M, N := c.shape, c.M, c.shape.N
	name := fmt.Sprintf("%s M=%d %s seed=%d", s, M, c.dist, seed)
	ck := gates.NewCase("shape", s.Label, "N", s.N, "K", s.K, "M", M, "dist", c.dist)
	t.CaseSeed(ck, seed)
	x := genActivations(rand.New(rand.NewPCG(seed, 0x5a)), M, s.K, c.dist)
	cr := newCaseRef(x, w, M, s)

	bx, bw := t.Buffer("x", 2*len(x)), t.Buffer("w", 2*len(w))
	t.Upload(bx, gates.U16Bytes(x))
	t.Upload(bw, gates.U16Bytes(w))
	out := t.Buffer("out", 2*(M+rowsPast)*N)
	wsBytes := WorkspaceBytes(s, M)
	ws := t.Buffer("ws", wsBytes+4*M*N) // one slice of room past the extent
	counters := t.Buffer("counters", CounterBytes(s))
	t.Init(counters, make([]byte, CounterBytes(s))) // the counters' required start (and end) state

	ks := Kernels(M, t.Device().Info().CodeArch(), t.Full())
	slices.SortStableFunc(ks, func(a, b kernels.Kernel) int { return int(a.Status) - int(b.Status) }) // experimental last
	ran := 0
	for _, k := range ks {
		if err := s.CheckKernel(k, M); err != nil {
			t.Logf("%s: %s not run: %v", name, k.Name, err)
			continue
		}
		kern, grid, block, shared, args, err := Launch(s, M, Args{X: bx.Ptr(), W: bw.Ptr(), Out: out.Ptr(), WS: ws.Ptr(), Counters: counters.Ptr(), Kernel: k.Name})
		t.Check(err, name)
		opts, kref := LaunchOpts(kern, s), cr.forKernel(k)
		var first []byte
		launched := true
		for launch := 1; launch <= 2; launch++ {
			what := fmt.Sprintf("%s %s launch %d", name, kern, launch)
			t.Poison(out, 0xFF)
			t.Poison(ws, 0xFF)
			if opts == (gpu.LaunchOpts{}) {
				t.Launch(kern, grid, block, shared, args...)
			} else if !t.LaunchEx(kern, grid, block, shared, opts, args...) {
				launched = false // the backend cannot launch clusters: LaunchEx noted why
				break
			}
			got := t.Download(out)
			t.RequireFilled(what, counters, 0, "the split-K counters must be back at 0 after every launch (the last block resets its n-tile's)")
			wb := t.Download(ws)
			if UsesWorkspace(k) && bytes.Count(wb[:wsBytes], []byte{0xFF}) == wsBytes {
				t.Failf("%s: the workspace was never written: the split-K reduce did not go through ws", what)
			}
			if !UsesWorkspace(k) {
				if i := gates.FirstWritten(wb, 0); i >= 0 {
					t.Failf("%s: ws byte %d was written: this form reduces in distributed shared memory and must leave the workspace alone", what, i)
				}
			} else if i := gates.FirstWritten(wb, wsBytes); i >= 0 {
				t.Failf("%s: ws byte %d was written, past the %d bytes of its [S=%d, M=%d, N=%d] partials", what, i, wsBytes, s.S(), M, N)
			}
			if launch == 1 {
				first = got
				worst = max(worst, checkOut(t, what, ck.With("kernel", kern), got, M, N, kref))
				continue
			}
			if !bytes.Equal(first, got) {
				diff, at := 0, -1
				for i := 0; i < len(got)/2; i++ {
					if got[2*i] != first[2*i] || got[2*i+1] != first[2*i+1] {
						if diff == 0 {
							at = i
						}
						diff++
					}
				}
				b := func(o []byte) uint16 { return uint16(o[2*at]) | uint16(o[2*at+1])<<8 }
				t.Failf("%s: not bit-identical to launch 1 in %d of %d elements (first: row m=%d column n=%d, launch 2 %#04x, launch 1 %#04x)", what, diff, len(got)/2, at/N, at%N, b(got), b(first))
			}
		}
		if !launched {
			continue
		}
		for i := 0; i < M*N; i++ {
			if b := uint16(first[2*i]) | uint16(first[2*i+1])<<8; b != kref.mirror[i] {
				mismatches++
			}
		}
		ran++
	}
	t.Metric(ck.Key("kernels"), float64(ran))
	if ran == 0 {
		t.Failf("%s: no skinny kernel exists for this device and shape: nothing was checked", name)
	}
	return worst, mismatches
}
