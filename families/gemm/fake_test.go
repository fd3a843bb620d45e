package gemm

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/parharness/parharness/bench"
	"github.com/parharness/parharness/families/internal/faketest"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/internal/fakegpu"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/refimpl"
	"github.com/parharness/parharness/results"
	"github.com/parharness/parharness/shapes"
)

// The GEMM gate and benches on a fake device (internal/faketest): every
// launch's arguments match the compiled kernel's declared parameters on
// both targets, every registered GEMM kernel is run by the gate (but for
// attribution kernels) and timed by a bench, and a device that computes
// nothing fails every check.

var fakeTargets = faketest.Targets(1 << 20)

// tinyShapes has every linear the GEMM suites sweep, at small K and N.
func tinyShapes(t *testing.T) *shapes.Set {
	s, err := shapes.Parse("tiny", strings.NewReader(`model tiny
tp 1
linear attn_qkv    K=384 N=256+128+128
linear attn_o      K=256 N=128
linear gdn_in_qkvz K=384 N=(128+128)+128
linear mlp_gate_up K=384 N=128+128
linear mlp_down    K=256 N=128
`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// decClassEdges are the decode M values that reach every registered
// decode kernel's M class: each class's largest M, and with first its
// smallest too (an odd M in every class above m8).
func decClassEdges(first bool) []int {
	var ms []int
	for _, k := range kernels.Select(kernels.Query{Family: Family, Full: true}) {
		if k.Op != OpDec && k.Op != OpDec5 {
			continue
		}
		ms = append(ms, k.MaxM)
		if first {
			ms = append(ms, k.MinM)
		}
	}
	slices.Sort(ms)
	return slices.Compact(ms)
}

func TestGateRunsEveryRegisteredKernel(t *testing.T) {
	for _, info := range fakeTargets {
		env, dev := faketest.Env(t, info)
		sh := GemmShape{K: 384, Parts: []int{256, 128}}
		res := gates.RunGate(env, gates.Gate{Name: "gemm-launches", Device: true, Run: func(t *gates.T) {
			// 4-bit and 5-bit weights: every kernel of both widths.
			for _, w := range []*refimpl.QWeight{GateWeights(rand.New(rand.NewPCG(3, 4)), sh.K, sh.N()), gemmWeights5(rand.New(rand.NewPCG(3, 5)), sh.K, sh.N())} {
				p, err := packGEMM(w)
				t.Check(err, "repack")
				var cs []gemmCase
				for _, M := range decClassEdges(true) {
					cs = append(cs, gemmCase{"fake/dec", sh, M, "normal", false})
				}
				for _, c := range append(cs, gemmCase{"fake/pre", sh, 200, "normal", true}) {
					runGEMMCase(t, c, 5, w, p)
					t.Release()
				}
			}
		}})
		if bad := faketest.ArgumentErrors(res); len(bad) > 0 {
			t.Errorf("%s: %v", info.Arch, bad)
		}
		if res.Status != gates.Fail || !strings.Contains(res.Reason, "unwritten") {
			t.Errorf("%s: a device that runs nothing got %s (%s) from the GEMM checks", info.Arch, res.Status, res.Reason)
		}
		want := faketest.Registered(Family, info, kernels.Baseline, kernels.Variant)
		if miss := faketest.Missing(want, dev.Kernels()); len(miss) > 0 {
			t.Errorf("%s: registered GEMM kernels the gate never ran: %v (ran %v)", info.Arch, miss, dev.Kernels())
		}
		for _, k := range faketest.Registered(Family, info, kernels.Attribution) {
			if len(faketest.Missing([]string{k}, dev.Kernels())) == 0 {
				t.Errorf("%s: the gate ran the attribution kernel %s, which has no GEMM output to check", info.Arch, k)
			}
		}
	}
}

// The gate runs every decode variant with a split law of its own at every
// split the dec suite times it at (its OwnLaws row's Fixed splits that fit
// the block and are at most G), so no timed split goes ungated.
func TestGateRunsOwnLawVariantsAtEveryTimedSplit(t *testing.T) {
	for _, info := range fakeTargets {
		env, dev := faketest.Env(t, info)
		sh := GemmShape{K: 384, Parts: []int{256, 128}} // G = 3
		w := GateWeights(rand.New(rand.NewPCG(3, 4)), sh.K, sh.N())
		Ms := []int{1, 9, 24, 64}
		gates.RunGate(env, gates.Gate{Name: "gemm-splits", Device: true, Run: func(t *gates.T) {
			p, err := packGEMM(w)
			t.Check(err, "repack")
			for _, M := range Ms {
				runGEMMCase(t, gemmCase{"fake/dec", sh, M, "normal", false}, 5, w, p)
				t.Release()
			}
		}})
		ran := map[string]map[int]bool{} // kernel "M" -> S launched
		for _, l := range dev.Launches {
			if len(l.Args) < 14 {
				continue
			}
			M, okM := l.Args[8].(uint32)
			S, okS := l.Args[13].(uint32)
			if !okM || !okS {
				continue
			}
			key := fmt.Sprintf("%s M=%d", l.Kernel, M)
			if ran[key] == nil {
				ran[key] = map[int]bool{}
			}
			ran[key][int(S)] = true
		}
		checked := 0
		for _, M := range Ms {
			for _, k := range DecKernelsBits(4, M, info.CodeArch(), true) {
				l, ok := OwnLawOf(k.Tag)
				if !ok || k.Role != kernels.Variant {
					continue
				}
				for _, S := range l.Fixed {
					if S > sh.G() || !DecKSFits(k.Name, M, S) {
						continue
					}
					checked++
					if key := fmt.Sprintf("%s M=%d", k.Name, M); !ran[key][S] {
						t.Errorf("%s: %s timed at S=%d by the dec suite, never launched there by the gate (ran at %v)", info.Arch, key, S, slices.Sorted(maps.Keys(ran[key])))
					}
				}
			}
		}
		if info.CodeArch() == kernels.SM90a && checked == 0 {
			t.Errorf("%s: no own-law decode variant found: the test checks nothing", info.Arch)
		}
	}
}

func TestBenchTimesEveryRegisteredKernel(t *testing.T) {
	for _, info := range fakeTargets {
		c, dev := faketest.Ctx(t, info, tinyShapes(t), append(decClassEdges(false), 200))
		for _, s := range bench.FamilySuites(Family) {
			if err := s.Run(c); err != nil {
				t.Fatalf("%s suite %s: %v", info.Arch, s.Name, err)
			}
		}
		// Experimental kernels, the own-law PDL launches and the read roof
		// run only when --variants names them: a second pass of the dec
		// suite names the wgmma kernels' split variants, every <tag>pdl and
		// the read roof.
		if dec, ok := bench.LookupSuite("dec"); ok {
			var pdls []string
			for _, tag := range OwnLawTags {
				pdls = append(pdls, decPDLName(tag))
			}
			c.Variants = slices.DeleteFunc(dec.Variants(), func(v string) bool {
				return !strings.HasPrefix(v, TagWG+"S") && !slices.Contains(pdls, v) && v != DecReadVariant
			})
			n0 := len(c.Records)
			if err := dec.Run(c); err != nil {
				t.Fatalf("%s suite dec, experimental variants %v: %v", info.Arch, c.Variants, err)
			}
			// The read roof ran at every point, on its own bytes (the weight
			// words: less than the point's).
			roofs, beside := 0, 0
			for _, r := range c.Records[n0:] {
				if r.Variant == DecReadVariant {
					roofs++
				}
				if !strings.HasPrefix(r.Variant, "S") {
					continue
				}
				i := slices.IndexFunc(c.Records[n0:], func(q results.Record) bool {
					return q.Variant == DecReadVariant && q.Shape == r.Shape && q.M == r.M && q.Regime == r.Regime
				})
				if i < 0 {
					t.Errorf("%s %s: --variants %s: no read roof record beside it", info.Arch, r.Key(), DecReadVariant)
					continue
				}
				beside++
				if q := c.Records[n0+i]; q.Bytes <= 0 || q.Bytes >= r.Bytes || q.Flops != 0 || !q.HasFlag(results.FlagRoof) {
					t.Errorf("%s %s: read roof's work %d bytes %d flops, flags %v: want the weight words alone (point: %d bytes), no flops, %s", info.Arch, q.Key(), q.Bytes, q.Flops, q.Flags, r.Bytes, results.FlagRoof)
				}
			}
			if roofs == 0 || beside == 0 {
				t.Errorf("%s: --variants %s: %d read roof records, %d beside a baseline record", info.Arch, DecReadVariant, roofs, beside)
			}
			// Each named PDL variant ran or said why not (one per M class).
			if info.CodeArch() == kernels.SM90a {
				for _, name := range pdls {
					ran := slices.ContainsFunc(c.Records[n0:], func(r results.Record) bool { return r.Variant == name })
					told := slices.ContainsFunc(c.Skipped, func(m string) bool { return strings.Contains(m, "variant "+name+":") })
					if !ran && !told {
						t.Errorf("%s: --variants %s: neither a record nor a skip", info.Arch, name)
					}
				}
			}
			c.Variants = nil
		}
		for _, s := range bench.FamilySuites(Family) {
			if u := faketest.UndeclaredVariants(s, c.Records); len(u) > 0 {
				t.Errorf("%s: variants the suite runs but does not declare (--variants would refuse them): %v", info.Arch, u)
			}
		}
		if miss := faketest.Missing(faketest.Registered(Family, info), dev.Kernels()); len(miss) > 0 {
			t.Errorf("%s: registered GEMM kernels no suite timed: %v", info.Arch, miss)
		}
		n := 0
		for _, r := range c.Records {
			if r.Check == nil {
				t.Errorf("%s %s: no check recorded", info.Arch, r.Key())
				continue
			}
			switch r.Check.Status {
			case results.CheckFail:
				n++
				if len(r.SamplesUS) != 0 || r.Verdict != "" {
					t.Errorf("%s %s: a failed variant was timed (%d samples, verdict %q)", info.Arch, r.Key(), len(r.SamplesUS), r.Verdict)
				}
			case results.CheckNone:
				if r.Variant != "memonly" {
					t.Errorf("%s %s: unchecked (%s)", info.Arch, r.Key(), r.Check.Reason)
				}
			default:
				t.Errorf("%s %s: check %s on a device that computes nothing", info.Arch, r.Key(), r.Check.Status)
			}
		}
		if n == 0 {
			t.Errorf("%s: no records", info.Arch)
		}
	}
}

// The bench's output check passes the reference rounded to bf16 and fails
// an unwritten output and a wrong element, for decode and prefill.
func TestBenchCheckCatchesWrongOutputs(t *testing.T) {
	c, dev := faketest.Ctx(t, fakeTargets[0], tinyShapes(t), nil)
	s := GemmShape{K: 384, Parts: []int{256, 128}}
	bw, err := newBenchWeights(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, prefill := range []bool{false, true} {
		M := map[bool]int{false: 9, true: 61}[prefill]
		b, err := newGemmBufs(c, "tiny", s, M, prefill, prefill, 4, bw)
		if err != nil {
			t.Fatal(err)
		}
		chk := b.check("v", b.ref.withSplits(2))
		N := s.N()
		rows, cols := b.ref.sel.RowsOf(M), b.ref.sel.ColsOf(N)
		if len(rows) != M || len(cols) != N {
			t.Fatalf("the tiny case should check every element: %d rows %d cols", len(rows), len(cols))
		}
		k := b.copies - 1
		for _, tc := range []struct {
			what  string
			spoil func(out []byte)
			ok    bool
		}{
			{"correct", nil, true},
			{"copy 0's output", nil, false},
			{"one element 2x", func(out []byte) {
				v := refimpl.BF16ToF64(uint16(out[2*5]) | uint16(out[2*5+1])<<8)
				h := refimpl.F64ToBF16(2*v + 1)
				out[2*5], out[2*5+1] = byte(h), byte(h>>8)
			}, false},
			{"one element unwritten", func(out []byte) { out[2*(M*N-1)], out[2*(M*N-1)+1] = 0xFF, 0xFF }, false},
		} {
			if err := chk.Prepare(k); err != nil {
				t.Fatal(err)
			}
			out, _ := dev.Mem(b.out.At(k), b.out.Size)
			want := b.refAt(k, b.ref).ref
			for i, m := range rows {
				for j, n := range cols {
					h := refimpl.F64ToBF16(want[i*len(cols)+j])
					out[2*(m*N+n)], out[2*(m*N+n)+1] = byte(h), byte(h>>8)
				}
			}
			if tc.spoil != nil {
				tc.spoil(out)
			}
			if tc.what == "copy 0's output" {
				for i := range rows {
					for j, n := range cols {
						h := refimpl.F64ToBF16(b.ref.ref[i*len(cols)+j])
						out[2*(rows[i]*N+n)], out[2*(rows[i]*N+n)+1] = byte(h), byte(h>>8)
					}
				}
			}
			if err := chk.Verify(k); (err == nil) != tc.ok {
				t.Errorf("prefill=%v %s: Verify = %v, want ok=%v", prefill, tc.what, err, tc.ok)
			}
		}
		// The middle copy holds the negated weight scales: copy 0's output
		// there (a launch that reads a fixed copy's weights) fails, -ref passes.
		mid := b.midCopy()
		if mid < 0 {
			t.Fatalf("prefill=%v: %d copies, no middle copy checked", prefill, b.copies)
		}
		for _, neg := range []bool{false, true} {
			if err := chk.Prepare(mid); err != nil {
				t.Fatal(err)
			}
			out, _ := dev.Mem(b.out.At(mid), b.out.Size)
			want := b.ref.ref
			if neg {
				want = b.ref.negated().ref
			}
			for i, m := range rows {
				for j, n := range cols {
					h := refimpl.F64ToBF16(want[i*len(cols)+j])
					out[2*(m*N+n)], out[2*(m*N+n)+1] = byte(h), byte(h>>8)
				}
			}
			if err := chk.Verify(mid); (err == nil) != neg {
				t.Errorf("prefill=%v middle copy, negated=%v: Verify = %v", prefill, neg, err)
			}
		}
		c.FreeAll()
	}
}

// zeroGEMM is a fake device's stand-in for every GEMM kernel: it writes
// zeros to the M×N output (argument 5 of the decode and prefill launches;
// M and N are the first two uint32 arguments after it), so every check
// computes finite figures and records its metrics.
func zeroGEMM(d *fakegpu.Device, l fakegpu.Launch) error {
	if len(l.Args) < 8 {
		return nil
	}
	out, ok := l.Args[5].(gpu.Ptr)
	if !ok {
		return nil
	}
	var dims []int
	for _, a := range l.Args[6:] {
		if v, ok := a.(uint32); ok {
			dims = append(dims, int(v))
		}
	}
	if len(dims) < 2 {
		return nil
	}
	mem, err := d.Mem(out, 2*dims[0]*dims[1])
	if err != nil {
		return err
	}
	clear(mem)
	return nil
}

// Two gate runs with different seeds record the same metric keys and the
// same case names: a key names its case (shape, mode, M, distribution,
// kernel, split, launch), the seed is a value (CaseSeeds). A seed in a
// key would make two results files share none of their keys.
func TestGateMetricKeysIndependentOfSeed(t *testing.T) {
	sh := GemmShape{K: 384, Parts: []int{256, 128}}
	cases := []gemmCase{{"fake/dec", sh, 9, "normal", false}, {"fake/dec", sh, 33, "outlier", false}, {"fake/pre", sh, 200, "subnormal", true}}
	run := func(seed uint64) gates.Result {
		env, dev := faketest.Env(t, fakeTargets[0])
		dev.Exec = zeroGEMM
		env.Seed = seed
		return gates.RunGate(env, gates.Gate{Name: "gemm-keys", Device: true, Run: func(t *gates.T) {
			w := GateWeights(rand.New(rand.NewPCG(t.Seed(), 4)), sh.K, sh.N())
			p, err := packGEMM(w)
			t.Check(err, "repack")
			for i, c := range cases {
				runGEMMCase(t, c, t.Seed()+uint64(i), w, p)
				t.Release()
			}
		}})
	}
	a, b := run(1), run(2)
	for _, r := range []gates.Result{a, b} {
		for _, f := range append([]string{r.Reason}, r.Failures...) {
			if strings.Contains(f, "metric not recorded") {
				t.Errorf("seed %d: %s", r.Seed, f)
			}
		}
	}
	keys := func(m map[string]float64) []string { return slices.Sorted(maps.Keys(m)) }
	ka, kb := keys(a.Metrics), keys(b.Metrics)
	if !slices.Equal(ka, kb) {
		t.Errorf("metric keys differ between seeds:\n%v\n%v", ka, kb)
	}
	for _, want := range []string{
		"rel{shape=fake/dec,mode=decode,M=9,dist=normal,kernel=pq_gemm_dec_m16,S=2,launch=cluster}",
		"prefill_kernels{shape=fake/pre,mode=prefill,M=200,dist=subnormal}",
	} {
		if !slices.Contains(ka, want) {
			t.Errorf("no metric %s among %d keys (first %v)", want, len(ka), ka[:min(5, len(ka))])
		}
	}
	if len(ka) < 20 {
		t.Errorf("only %d metric keys: %v", len(ka), ka)
	}
	sa, sb := slices.Sorted(maps.Keys(a.CaseSeeds)), slices.Sorted(maps.Keys(b.CaseSeeds))
	if !slices.Equal(sa, sb) || len(sa) != len(cases) {
		t.Errorf("case seeds: %v vs %v, want %d cases each", a.CaseSeeds, b.CaseSeeds, len(cases))
	}
	for k, v := range a.CaseSeeds {
		if b.CaseSeeds[k] == v {
			t.Errorf("case %s: the same seed %d in both runs", k, v)
		}
	}
}

// The decode gate launches every (kernel, S, launch kind) DecGateLaunches
// times and requires the first launch's bits each time: a kernel that
// writes one element differently on every other launch (a race that a
// single launch can hide) fails with that reason; one that repeats itself
// does not.
func TestGateCatchesNondeterministicDecode(t *testing.T) {
	sh := GemmShape{K: 384, Parts: []int{256, 128}}
	for _, plant := range []bool{false, true} {
		t.Run(fmt.Sprintf("planted=%v", plant), func(t *testing.T) {
			env, dev := faketest.Env(t, fakeTargets[0])
			launches := map[string]int{}
			dev.Exec = func(d *fakegpu.Device, l fakegpu.Launch) error {
				if err := zeroGEMM(d, l); err != nil {
					return err
				}
				launches[l.Kernel]++
				if plant && l.Kernel == DecKernel(9) && launches[l.Kernel]%2 == 0 {
					mem, err := d.Mem(l.Args[5].(gpu.Ptr), 2)
					if err != nil {
						return err
					}
					mem[1] = 0x3F // 0x3F00: bf16 0.5 in element 0
				}
				return nil
			}
			res := gates.RunGate(env, gates.Gate{Name: "gemm-replays", Device: true, Run: func(t *gates.T) {
				w := GateWeights(rand.New(rand.NewPCG(3, 4)), sh.K, sh.N())
				p, err := packGEMM(w)
				t.Check(err, "repack")
				runGEMMCase(t, gemmCase{"fake/dec", sh, 9, "normal", false}, 5, w, p)
			}})
			races := failuresWith(res, "not deterministic")
			if plant && races == 0 {
				t.Errorf("a decode kernel that changes its output on every other launch passed the replay check: %s %v", res.Reason, res.Failures)
			}
			if !plant && races != 0 {
				t.Errorf("a deterministic fake reported as racy: %v", res.Failures)
			}
			if n := metricSum(res, "replays"); n == 0 {
				t.Errorf("no replays recorded (metrics %v)", res.Metrics)
			}
		})
	}
}

// failuresWith counts a gate result's reason and failures that contain sub.
func failuresWith(res gates.Result, sub string) int {
	n := 0
	for _, f := range append([]string{res.Reason}, res.Failures...) {
		if strings.Contains(f, sub) {
			n++
		}
	}
	return n
}

// metricSum adds a gate result's metric name over all its cases.
func metricSum(res gates.Result, name string) float64 {
	sum := 0.0
	for k, v := range res.Metrics {
		if strings.HasPrefix(k, name+"{") {
			sum += v
		}
	}
	return sum
}
