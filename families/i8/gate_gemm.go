package i8

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/parharness/parharness/families/gemm"
	"github.com/parharness/parharness/families/internal/classes"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/internal/coverage"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/refimpl"
)

// The i8 gate, GEMM half: every registered I8 decode GEMM on the deployed
// shapes (TP=2; TP=1 too in full) and a synthetic odd-G shape, decode M
// classes (odd M, every launch class DecClasses names covered), at every
// split the e4m3 gate runs (gemm.DecGateSplits: the law's S, 1, 3, 8),
// against the fp64 reference (ref.go) from the same codes and scales:
// pooled and per-row rel <= 1.15 × the bf16 floor, each element within
// elemBound; activations normal, outlier, small codes (with weights whose
// channel 0 is at its zero point), float32-subnormal and large-magnitude.
// The output is poisoned (0xFF, a bf16 NaN) before every launch: no NaN in
// rows < M, 16 rows past M untouched; the split-K counters back at zero
// after every launch; a plain split launch wrote its workspace and nothing
// past its S partials; every I8 decode kernel gives the same output bits
// at the same S (the same integer sums folded in the same order).

type gemmCase struct {
	label string
	shape gemm.GemmShape
	M     int
	dist  string
}

const gemmRowsPast = 16

// synthShape has an odd group count (G = 5) and two partitions.
var synthShape = struct {
	label string
	shape gemm.GemmShape
}{"synthetic/K640", gemm.GemmShape{K: 640, Parts: []int{128, 192}}}

// gemmShapeSet is the gate's shapes: TP=2 (and TP=1 when full) and the
// synthetic one.
func gemmShapeSet(full bool) ([]string, []gemm.GemmShape, error) {
	names, shs, err := gemm.GemmShapes("qwen38-27b-tp2")
	if err != nil {
		return nil, nil, err
	}
	if full {
		n1, s1, err := gemm.GemmShapes("qwen38-27b-tp1")
		if err != nil {
			return nil, nil, err
		}
		for i := range n1 {
			names, shs = append(names, "tp1/"+n1[i]), append(shs, s1[i])
		}
	}
	return append(names, synthShape.label), append(shs, synthShape.shape), nil
}

// handGemmCases: every shape at M = 1, 8, 17 and 64 (and 3, 33 on the
// first two), the distributions turning over the cases.
func handGemmCases(full bool) ([]gemmCase, error) {
	names, shs, err := gemmShapeSet(full)
	if err != nil {
		return nil, err
	}
	var out []gemmCase
	i := 0
	for si := range shs {
		Ms := []int{1, 8, 17, 64}
		if si < 2 {
			Ms = append(Ms, 3, 33)
		}
		if full {
			Ms = []int{1, 2, 3, 5, 8, 9, 13, 16, 17, 24, 31, 32, 33, 40, 48, 63, 64}
		}
		for _, M := range Ms {
			out = append(out, gemmCase{label: names[si], shape: shs[si], M: M, dist: gemmDists[i%len(gemmDists)]})
			i++
		}
	}
	return out, nil
}

// gemmCaseClasses are the launch classes a case reaches on either target
// at the splits the gate runs it with on an sms-SM device.
func gemmCaseClasses(c gemmCase, sms int) []string {
	return classes.Union(func(arch string) []kernels.Kernel {
		return kernels.Select(kernels.Query{Family: Family, Op: OpDec, M: c.M, Arch: arch, Roles: []kernels.Role{kernels.Baseline, kernels.Variant}})
	}, func(k kernels.Kernel) []string {
		var lists [][]string
		for _, S := range gemm.DecGateSplits(c.M, c.shape.N(), c.shape.K, sms) {
			lists = append(lists, DecClasses(k.Name, c.shape, c.M, S))
		}
		return coverage.Union(lists...)
	})
}

// gemmClassDomain is every shape of the gate's set times M = 1..64.
func gemmClassDomain(full bool) ([]gemmCase, error) {
	names, shs, err := gemmShapeSet(full)
	if err != nil {
		return nil, err
	}
	var out []gemmCase
	for si := range shs {
		for M := 1; M <= DecMaxM; M++ {
			out = append(out, gemmCase{label: names[si], shape: shs[si], M: M})
		}
	}
	return out, nil
}

var (
	gemmCoverMu   sync.Mutex
	gemmCoverAdds = map[[2]int][]gemmCase{}
)

// gemmCases are the hand cases plus the cheapest domain cases reaching
// every launch class of the domain on an sms-SM device.
func gemmCases(full bool, sms int) ([]gemmCase, error) {
	base, err := handGemmCases(full)
	if err != nil {
		return nil, err
	}
	key := [2]int{map[bool]int{false: 0, true: 1}[full], sms}
	gemmCoverMu.Lock()
	defer gemmCoverMu.Unlock()
	if add, ok := gemmCoverAdds[key]; ok {
		return append(base, add...), nil
	}
	dom, err := gemmClassDomain(full)
	if err != nil {
		return nil, err
	}
	add := coverage.Extend(base, dom, func(c gemmCase) []string { return gemmCaseClasses(c, sms) },
		func(c gemmCase) float64 { return float64((c.M + 16) * c.shape.K * c.shape.N()) },
		func(j int, c gemmCase) gemmCase { c.dist = gemmDists[j%len(gemmDists)]; return c })
	gemmCoverAdds[key] = add
	return append(base, add...), nil
}

// gemmCaseData is one case's device inputs and reference.
type gemmCaseData struct {
	act *i8Activations
	rr  gemmRef
}

func newGemmCaseData(c gemmCase, seed uint64, w *refimpl.QWeight) *gemmCaseData {
	rng := rand.New(rand.NewPCG(seed, 0x6e))
	xs := make([][]float32, len(c.shape.Parts))
	for p := range xs {
		xs[p] = gemmActivations(rng, c.M, c.shape.K, c.dist)
	}
	a := newI8Activations(xs, c.M, c.shape.K)
	return &gemmCaseData{act: a, rr: i8Reference(a, w, c.shape.Parts, c.M, gemmSubset(c.shape, c.M, seed))}
}

// checkGEMMOut checks one downloaded output ([M + gemmRowsPast, N] bf16)
// against rr and returns rel / floor.
func checkGEMMOut(t gates.Reporter, what string, key gates.Case, got []byte, M, N int, rr gemmRef) float64 {
	if i := gates.FirstWritten(got, 2*M*N); i >= 0 {
		t.Failf("%s: row %d (past M=%d) was written at column %d", what, i/(2*N), M, (i%(2*N))/2)
	}
	bits := func(i int) uint16 { return uint16(got[2*i]) | uint16(got[2*i+1])<<8 }
	nan, first := 0, -1
	for i := 0; i < M*N; i++ {
		if bits(i)&0x7FFF > 0x7F80 {
			if nan == 0 {
				first = i
			}
			nan++
		}
	}
	if nan > 0 {
		t.Failf("%s: %d of %d outputs are NaN or unwritten (first at m=%d n=%d, bits %#04x)", what, nan, M*N, first/N, first%N, bits(first))
	}
	rows, cols := rr.sel.RowsOf(M), rr.sel.ColsOf(N)
	C := len(cols)
	g := make([]float64, 0, len(rows)*C)
	for _, m := range rows {
		for _, n := range cols {
			g = append(g, refimpl.BF16ToF64(bits(m*N+n)))
		}
	}
	rel := refimpl.RelErr(g, rr.ref)
	ratio := rel / rr.floor
	if rr.floor == 0 && rel == 0 {
		ratio = 0
	}
	t.Metric(key.Key("rel"), rel)
	t.Metric(key.Key("floor"), rr.floor)
	t.Logf("%s: rel %.3e floor %.3e (%.3fx); %s", what, rel, rr.floor, ratio, rr.sel.Describe(M, N))
	if !(rel <= gemmTolFactor*rr.floor) {
		bad, n := refimpl.FormatBad(g, rr.ref, 8*rr.floor, 3)
		t.Failf("%s: rel %.4e > %.2f x floor %.4e (%d elements off by > 8 floor x max|ref|:%s)", what, rel, gemmTolFactor, rr.floor, n, bad)
	}
	badRows, badElems, margin := 0, 0, 0.0
	firstRow, firstElem := "", ""
	for ri := range rows {
		gr, want := g[ri*C:(ri+1)*C], rr.ref[ri*C:(ri+1)*C]
		if fl := refimpl.Bf16Floor(want); fl > 0 {
			if rrel := refimpl.RelErr(gr, want); !(rrel <= gemmTolFactor*fl) {
				if badRows == 0 {
					firstRow = fmt.Sprintf("m=%d rel %.3e floor %.3e", rows[ri], rrel, fl)
				}
				badRows++
			}
		}
		for ci, v := range want {
			mg := rr.mag[ri*C+ci]
			b := rr.bound(v, mg)
			d := math.Abs(gr[ci] - v)
			if b > 0 {
				margin = max(margin, d/b)
			}
			if !(d <= b) {
				if badElems == 0 {
					firstElem = fmt.Sprintf("m=%d n=%d got %g want %g mag %g bound %g", rows[ri], cols[ci], gr[ci], v, mg, b)
				}
				badElems++
			}
		}
	}
	if badRows > 0 {
		t.Failf("%s: %d of %d rows exceed %.2f x their own bf16 floor (first: %s)", what, badRows, len(rows), gemmTolFactor, firstRow)
	}
	t.Metric(key.Key("elem_margin"), margin)
	if badElems > 0 {
		t.Failf("%s: %d of %d elements off by more than half a bf16 ulp + E (first: %s)", what, badElems, len(g), firstElem)
	}
	if math.IsNaN(ratio) {
		return math.Inf(1)
	}
	return ratio
}

// runGemmCases runs the GEMM half of the gate; it returns the worst
// rel / floor and the number of checked launches.
func runGemmCases(t *gates.T, cases []gemmCase, seed uint64) (worst float64, ran int) {
	weights := map[string]*refimpl.QWeight{}
	packed := map[string]*refimpl.W4Packed{}
	for ci, c := range cases {
		key := c.label
		if c.dist == "smallcodes" {
			key += "/zero-first-channels"
		}
		w, ok := weights[key]
		if !ok {
			w = gemm.GateWeights(rand.New(rand.NewPCG(seed, uint64(len(weights))+0x77)), c.shape.K, c.shape.N())
			if c.dist == "smallcodes" {
				w = zeroFirstChannels(w)
			}
			p, err := refimpl.RepackW4(w)
			t.Check(err, "repack "+key)
			weights[key], packed[key] = w, p
		}
		r, n := runGemmCase(t, c, seed+uint64(ci), w, packed[key])
		worst, ran = max(worst, r), ran+n
		t.Release()
	}
	return worst, ran
}

func runGemmCase(t *gates.T, c gemmCase, seed uint64, w *refimpl.QWeight, pk *refimpl.W4Packed) (worst float64, ran int) {
	K, N, M := c.shape.K, c.shape.N(), c.M
	name := fmt.Sprintf("%s M=%d %s seed=%d", c.label, M, c.dist, seed)
	ck := gates.NewCase("shape", c.label, "M", M, "dist", c.dist)
	t.CaseSeed(ck, seed)
	d := newGemmCaseData(c, seed, w)
	bw := t.Buffer("weights", 4*len(pk.Words))
	bsz := t.Buffer("sz", 4*len(pk.SZ))
	t.Upload(bw, pk.WordBytes())
	t.Upload(bsz, pk.SZBytes())
	bact := t.Buffer("act", len(d.act.codes))
	bsc := t.Buffer("scales", 4*len(d.act.scales))
	brs := t.Buffer("rsum", 4*len(d.act.rsums))
	t.Upload(bact, d.act.codes)
	t.Upload(bsc, gates.F32Bytes(d.act.scales))
	t.Upload(brs, i32Bytes(d.act.rsums))
	out := t.Buffer("out", 2*(M+gemmRowsPast)*N)
	sms := t.Device().Info().SMs
	Ss := gemm.DecGateSplits(M, N, K, sms)
	maxS := 1
	for _, s := range Ss {
		maxS = max(maxS, s)
	}
	ws := t.Buffer("ws", max(4, DecWorkspaceBytes(M, N, maxS)))
	sema := t.Buffer("sema", DecSemaBytes(N))
	t.Init(sema, make([]byte, DecSemaBytes(N)))
	arch := t.Device().Info().CodeArch()
	first := map[int][]byte{} // the first kernel's output bits by S
	firstName := ""
	for _, k := range DecKernels(M, arch, t.Full()) {
		if firstName == "" {
			firstName = k.Name
		}
		for _, S := range Ss {
			t.Poison(out, 0xFF)
			t.Poison(ws, 0xFF)
			kern, grid, block, args, err := DecLaunch(c.shape, M, S, DecArgs{W: bw.Ptr(), SZ: bsz.Ptr(), Act: bact.Ptr(), ASG: bsc.Ptr(), RS: brs.Ptr(), Out: out.Ptr(), WS: ws.Ptr(), Sema: sema.Ptr(), Kernel: k.Name})
			t.Check(err, name)
			t.Launch(kern, grid, block, 0, args...)
			tag := fmt.Sprintf("%s %s S=%d", name, kern, S)
			wsGot := t.Download(ws)
			if S > 1 && bytes.Count(wsGot, []byte{0xFF}) == len(wsGot) {
				t.Failf("%s: the split-K launch left ws untouched: its reduce did not go through ws", tag)
			}
			if i := gates.FirstWritten(wsGot, DecWorkspaceBytes(M, N, S)); i >= 0 {
				t.Failf("%s: ws byte %d, past its S=%d partials (%d bytes), was written", tag, i, S, DecWorkspaceBytes(M, N, S))
			}
			got := t.Download(out)
			worst = max(worst, checkGEMMOut(t, tag, ck.With("kernel", kern).With("S", S), got, M, N, d.rr.withSplits(S)))
			// Every I8 decode kernel computes the same int32 group sums and
			// folds them in the same order: the same bits at the same S.
			if b, ok := first[S]; !ok {
				first[S] = got
			} else if !bytes.Equal(b[:2*M*N], got[:2*M*N]) {
				t.Failf("%s: output bits differ from %s's at the same S (same integer sums, same fold order)", tag, firstName)
			}
			t.RequireFilled(tag, sema, 0, "the split-K counters must be back at 0 (the last block resets them)")
			ran++
		}
	}
	return worst, ran
}

func i32Bytes(v []int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(x), byte(x>>8), byte(x>>16), byte(x>>24)
	}
	return b
}

// The prefill half (pq_i8_gemm_pre, experimental: the full suite only):
// TP=2 shapes and a synthetic K=384 (G = 3, two partitions), M from 1 to
// 513 (odd M, partial M tiles, several rasterization groups at 1100),
// per-token int8 activations tiled as pq_i8_tokq writes them; the bound is
// elemBound with S = 2 (the G folds plus the product by As).
var preSynth = struct {
	label string
	shape gemm.GemmShape
}{"synthetic/K384", gemm.GemmShape{K: 384, Parts: []int{256, 128}}}

func preCases() ([]gemmCase, error) {
	names, shs, err := gemm.GemmShapes("qwen38-27b-tp2")
	if err != nil {
		return nil, err
	}
	names, shs = append(names, preSynth.label), append(shs, preSynth.shape)
	Ms := [][]int{{1, 513}, {200}, {129}, {64}, {17}, {1100, 3}}
	var out []gemmCase
	i := 0
	for si := range shs {
		for _, M := range Ms[si%len(Ms)] {
			out = append(out, gemmCase{label: names[si], shape: shs[si], M: M, dist: gemmDists[i%len(gemmDists)]})
			i++
		}
	}
	return out, nil
}

// runPreCases runs every registered I8 prefill kernel on the device over
// cases; nothing when no prefill kernel is in the suite.
func runPreCases(t *gates.T, cases []gemmCase, seed uint64) (worst float64, ran int) {
	ks := kernels.Select(kernels.Query{Family: Family, Op: OpPre, Arch: t.Device().Info().CodeArch(), Full: t.Full(), Roles: []kernels.Role{kernels.Baseline, kernels.Variant}})
	if len(ks) == 0 {
		return 0, 0
	}
	for ci, c := range cases {
		rng := rand.New(rand.NewPCG(seed+uint64(ci), 0x9e))
		w := gemm.GateWeights(rng, c.shape.K, c.shape.N())
		if c.dist == "smallcodes" {
			w = zeroFirstChannels(w)
		}
		pk, err := refimpl.RepackW4(w)
		t.Check(err, "repack")
		K, N, M := c.shape.K, c.shape.N(), c.M
		xs := make([][]float32, len(c.shape.Parts))
		for p := range xs {
			xs[p] = gemmActivations(rng, M, K, c.dist)
		}
		a := newI8TokenActivations(xs, M, K)
		rr := i8Reference(a, w, c.shape.Parts, M, preSubset(c.shape, M, seed+uint64(ci))).withSplits(2)
		name := fmt.Sprintf("prefill %s M=%d %s seed=%d", c.label, M, c.dist, seed+uint64(ci))
		bw, bsz := t.Buffer("weights", 4*len(pk.Words)), t.Buffer("sz", 4*len(pk.SZ))
		t.Upload(bw, pk.WordBytes())
		t.Upload(bsz, pk.SZBytes())
		bact, bsc, brs := t.Buffer("act", len(a.codes)), t.Buffer("tscale", 4*len(a.scales)), t.Buffer("rsum", 4*len(a.rsums))
		t.Upload(bact, a.codes)
		t.Upload(bsc, gates.F32Bytes(a.scales))
		t.Upload(brs, i32Bytes(a.rsums))
		out := t.Buffer("out", 2*(M+gemmRowsPast)*N)
		for _, k := range ks {
			t.Poison(out, 0xFF)
			kern, grid, block, args, err := PreLaunch(c.shape, M, PreArgs{W: bw.Ptr(), SZ: bsz.Ptr(), Act: bact.Ptr(), TScale: bsc.Ptr(), RS: brs.Ptr(), Out: out.Ptr(), Kernel: k.Name})
			t.Check(err, name)
			t.Launch(kern, grid, block, 0, args...)
			key := gates.NewCase("shape", c.label, "mode", "prefill", "M", M, "dist", c.dist).With("kernel", kern)
			worst = max(worst, checkGEMMOut(t, name+" "+kern, key, t.Download(out), M, N, rr))
			ran++
		}
		t.Release()
	}
	return worst, ran
}
