package normrot

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/parharness/parharness/families/producers"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/internal/coverage"
	"github.com/parharness/parharness/internal/par"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/refimpl"
	"github.com/parharness/parharness/shapes"
)

// The norm-fed producer gates.
//
// normrot (device): every registered normrot kernel, byte for byte against
// the Go mirror (AddNormRows, then refimpl's rotation and quantization) on
// the norm-fed (K, P) of the shapes sets (NormFedLinears), decode and
// prefill M with odd M, row-major and tiled codes; every output poisoned
// (0xFF) before every launch, rows past M checked untouched, tiled pad rows
// zero, outputs a kernel does not own untouched, canaries on every buffer.
// Fused equals the unfused chain: pq_addnorm's hs (a device output) fed to
// the producers family's pq_rotq_group and pq_rotq_token gives the fused
// kernels' downloaded bytes exactly.
//
// normrot-semantics (CPU): the mirror against fp64: residual' exactly the
// once-rounded sum, hs within half a bf16 ulp plus the fp32 path's error
// (HSRelErr), codes times scales within the producers' e4m3 bound of the
// fp64 rotation of hs.

func init() {
	gates.Register(gates.Gate{Family: Family, Name: "normrot", Headline: []string{"variant_runs", "cases"}, Suites: gates.Quick | gates.Full, Device: true, Run: gateNormRot,
		Proves: "every norm-fed producer (residual add + Gemma RMSNorm alone; fused with rotate + quantize: decode band per-group, per-token with 8/16/32 warps, row-major and tiled) equals the Go mirror byte for byte on the norm-fed (K, P), decode and prefill M (odd M included), with poisoned outputs, untouched rows past M and outputs not its own, canaries; the fused kernels equal the unfused chain (pq_addnorm, then pq_rotq_group / pq_rotq_token on its hs) byte for byte"})
	gates.Register(gates.Gate{Family: Family, Name: "normrot-semantics", Suites: gates.Quick | gates.Full, Run: gateSemantics,
		Proves: "the norm-fed mirror against fp64: residual' is the once-rounded sum exactly, hs within half a bf16 ulp plus the derived fp32 error, codes x scales within the producers' e4m3 bound of the fp64-rotated hs"})
}

// NormFedLinears are the linears of the shapes sets whose input is a
// norm's output (the decoder layer's input_layernorm feeds attention's
// qkv and GDN's in_proj, post_attention_layernorm feeds the MLP's
// gate_up; shapes/qwen38-27b-tp*.txt).
var NormFedLinears = []string{"attn_qkv", "gdn_in_qkvz", "mlp_gate_up"}

// NormFedShapes are the distinct (K, P) of the norm-fed W4A8 linears of a set.
func NormFedShapes(s *shapes.Set) []shapes.KP {
	var out []shapes.KP
	for _, l := range s.W4A8() {
		kp := shapes.KP{K: l.K, P: l.P()}
		if slices.Contains(NormFedLinears, l.Name) && !slices.Contains(out, kp) {
			out = append(out, kp)
		}
	}
	return out
}

type normCase struct {
	K, P, M int
	dist    string
}

const rowsPastM = 3

// gateCases are hand-chosen cases (the norm-fed shapes of the TP=2 set, or
// both sets when full, times M) plus what classCover adds so every launch
// class of the domain runs.
func gateCases(full bool) []normCase {
	base := handCases(full)
	return append(base, classCover(base, full)...)
}

func handCases(full bool) []normCase {
	sets := []string{"qwen38-27b-tp2"}
	Ms := []int{1, 3, 8, 17, 64, 127, 200, 513}
	if full {
		sets = append(sets, "qwen38-27b-tp1")
		tp2 := shapes.MustBuiltin("qwen38-27b-tp2")
		Ms = slices.Concat(tp2.Ladder("decode"), []int{3, 17, 65, 127}, tp2.Ladder("prefill"), []int{1023, 8191})
	}
	var kps []shapes.KP
	for _, name := range sets {
		for _, kp := range NormFedShapes(shapes.MustBuiltin(name)) {
			if !slices.Contains(kps, kp) {
				kps = append(kps, kp)
			}
		}
	}
	var out []normCase
	i := 0
	for _, kp := range kps {
		for _, M := range Ms {
			out = append(out, normCase{K: kp.K, P: kp.P, M: M, dist: dists[(i+i/len(Ms))%len(dists)]})
			i++
		}
	}
	return out
}

// OddGShapes are synthetic (K, P) with an odd group count and one with a
// long row, which the class domain includes (no norm-fed shape has them).
var OddGShapes = []shapes.KP{{K: 384, P: 3}, {K: 640, P: 1}, {K: 8192, P: 2}}

// ClassMaxM is the largest M of the class domain.
const ClassMaxM = 8192

// ClassDomain is every (K, P, M) a normrot kernel may be launched with:
// the norm-fed shapes of every built-in set and OddGShapes, M = 1..ClassMaxM.
func ClassDomain() []normCase {
	var kps []shapes.KP
	for _, name := range shapes.Builtins() {
		for _, kp := range NormFedShapes(shapes.MustBuiltin(name)) {
			if !slices.Contains(kps, kp) {
				kps = append(kps, kp)
			}
		}
	}
	kps = append(kps, OddGShapes...)
	var out []normCase
	for _, kp := range kps {
		for M := 1; M <= ClassMaxM; M++ {
			out = append(out, normCase{K: kp.K, P: kp.P, M: M})
		}
	}
	return out
}

// CaseClasses are the launch classes of every kernel a case runs, on
// either target.
func CaseClasses(c normCase, full bool) []string {
	var out []string
	for _, arch := range kernels.CodeArchs {
		for _, k := range kernels.Select(kernels.Query{Family: Family, M: c.M, Arch: arch, Full: full, Roles: []kernels.Role{kernels.Baseline, kernels.Variant}}) {
			cls, err := LaunchClasses(k.Name, c.M, c.K, c.P)
			if err != nil {
				panic(err) // a registered kernel without classes is a programming error
			}
			for _, cl := range cls {
				if !slices.Contains(out, cl) {
					out = append(out, cl)
				}
			}
		}
	}
	return out
}

var (
	coverOnce [2]sync.Once
	coverAdds [2][]normCase
)

// classCover is the cheapest set of domain cases (cost: rows times K times
// P plus a per-case overhead) that, added to base, reaches every class.
func classCover(base []normCase, full bool) []normCase {
	fi := map[bool]int{false: 0, true: 1}[full]
	coverOnce[fi].Do(func() {
		coverAdds[fi] = coverage.Extend(base, ClassDomain(), func(c normCase) []string { return CaseClasses(c, full) },
			func(c normCase) float64 { return float64((c.M + 32) * c.K * c.P) },
			func(j int, c normCase) normCase { c.dist = dists[j%len(dists)]; return c })
	})
	return coverAdds[fi]
}

// outputs are the downloads of one launch's output buffers.
type outputs struct{ hs, res, codes, scale, rsum []byte }

// checkOp compares what a kernel of op wrote with the mirror; outputs the
// op does not own must still be all poison.
func checkOp(r gates.Reporter, label, op string, tiled bool, M, K, P int, w want, got outputs) {
	G, Mpad := K/Group, refimpl.PadRows(M)
	at := func(per int) func(int) string {
		return func(i int) string { row := i / per; return fmt.Sprintf("p=%d m=%d i=%d", row/M, row%M, i%per) }
	}
	poisoned := func(what string, b []byte) {
		if i := par.IndexNot(b, 0xFF); i >= 0 {
			r.Failf("%s: %s was written at byte %d (%#02x): not this kernel's output, every byte must still be the poison", label, what, i, b[i])
		}
	}
	gates.CompareBytes(r, label+" hs", got.hs, w.hs, 2, at(K))
	gates.CompareBytes(r, label+" residual", got.res, w.res, 2, at(K))
	switch op {
	case OpNorm:
		poisoned("codes", got.codes)
		poisoned("scale", got.scale)
		poisoned("rsum", got.rsum)
	case OpGroup:
		gates.CompareBytes(r, label+" codes", got.codes, w.GroupCodes, 1, at(K))
		gates.CompareBytes(r, label+" group scales", got.scale, w.GroupScales, 4, at(G))
		gates.CompareBytes(r, label+" row sums", got.rsum, w.GroupRSums, 4, at(G))
	case OpToken:
		if tiled {
			gates.CompareBytes(r, label+" codes", got.codes, w.TokCodesTiled, 1, func(i int) string { return fmt.Sprintf("p=%d tiled byte %d", i/(Mpad*K), i%(Mpad*K)) })
		} else {
			gates.CompareBytes(r, label+" codes", got.codes, w.TokCodesRow, 1, at(K))
		}
		gates.CompareBytes(r, label+" token scales", got.scale, w.TokScales, 4, func(i int) string { return fmt.Sprintf("p=%d m=%d", i/M, i%M) })
		gates.CompareBytes(r, label+" row sums", got.rsum, w.TokRSums, 4, at(G))
	default:
		r.Failf("%s: op %q has no check (families/normrot/gate.go checkOp)", label, op)
	}
}

// layouts are the code layouts a kernel of op writes.
func layouts(op string) []bool {
	if op == OpToken {
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

// caseKernels are the registered kernels a case at M runs on this device:
// the norm, the decode kernel, the per-token kernels.
func caseKernels(t *gates.T, M int) []kernels.Kernel {
	ks := kernels.Select(kernels.Query{Family: Family, M: M, Arch: t.Device().Info().CodeArch(), Full: t.Full(),
		Roles: []kernels.Role{kernels.Baseline, kernels.Variant}})
	order := map[string]int{OpNorm: 0, OpGroup: 1, OpToken: 2}
	slices.SortStableFunc(ks, func(a, b kernels.Kernel) int { return order[a.Op] - order[b.Op] })
	return ks
}

// caseInputs are one case's host data and mirror.
type caseInputs struct {
	x, res, w []uint16
	rr        *refimpl.RotRecords
	want      want
}

func prepareCase(seed uint64, c normCase) (in *caseInputs, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	rng := rand.New(rand.NewPCG(seed, 0x4e))
	rots := make([]*refimpl.Rotation, c.P)
	for p := range rots {
		rots[p] = refimpl.RandomRotation(rng, c.K)
	}
	rr, err := refimpl.BuildRotRecords(rots)
	if err != nil {
		return nil, err
	}
	x, res, w := randomInputs(rng.Uint64(), c.M, c.K, c.dist)
	return &caseInputs{x: x, res: res, w: w, rr: rr, want: buildWant(rr, x, res, w, c.M, c.K, c.P, c.M <= GroupMaxM)}, nil
}

func gateNormRot(t *gates.T) { runCases(t, gateCases(t.Full())) }

// runCases runs every case, building case i+1's inputs and mirror while
// the device runs case i.
func runCases(t *gates.T, cases []normCase) {
	meter := t.Progress("cases", len(cases))
	type prepared struct {
		in  *caseInputs
		err error
	}
	next := make(chan prepared, 1)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for ci, c := range cases {
			in, err := prepareCase(t.Seed()+uint64(ci), c)
			select {
			case next <- prepared{in, err}:
			case <-done:
				return
			}
		}
	}()
	runs := 0
	for ci, c := range cases {
		pc := <-next
		t.Check(pc.err, fmt.Sprintf("case %d (K=%d P=%d M=%d): inputs and mirror", ci, c.K, c.P, c.M))
		runs += runCase(t, c, t.Seed()+uint64(ci), pc.in)
		t.Release()
		meter.Step(1, 1)
	}
	t.Metric("cases", float64(len(cases)))
	t.Metric("variant_runs", float64(runs))
	t.Logf("%d cases (K x P x M x distribution), %d kernel runs checked, fused == unfused on every case", len(cases), runs)
}

// runCase runs and checks every kernel of one case, then the unfused
// chain against the fused kernels' downloads; it returns the runs checked.
func runCase(t *gates.T, c normCase, seed uint64, in *caseInputs) (ran int) {
	K, P, M, G := c.K, c.P, c.M, c.K/Group
	Mpad := refimpl.PadRows(M)
	name := fmt.Sprintf("K=%d P=%d M=%d %s seed=%d", K, P, M, c.dist, seed)
	bx, bres, bw := t.Buffer("x", 2*M*K), t.Buffer("residual", 2*M*K), t.Buffer("w", 2*K)
	t.Upload(bx, gates.U16Bytes(in.x))
	t.Upload(bres, gates.U16Bytes(in.res))
	t.Upload(bw, gates.U16Bytes(in.w))
	idx, cs, chs := in.rr.Bytes()
	bidx, bcs, bchs := t.Buffer("rot_idx", len(idx)), t.Buffer("rot_cs", len(cs)), t.Buffer("chs", len(chs))
	t.Upload(bidx, idx)
	t.Upload(bcs, cs)
	t.Upload(bchs, chs)
	hs := t.Buffer("hs", 2*(M*K+rowsPastM*K))
	rout := t.Buffer("residual_out", 2*(M*K+rowsPastM*K))
	codes := t.Buffer("codes", P*Mpad*K+rowsPastM*K)
	scale := t.Buffer("scale", 4*(P*M*G+rowsPastM*G))
	rsum := t.Buffer("rsum", 4*(P*M*G+rowsPastM*G))
	outs := []*gates.Buffer{hs, rout, codes, scale, rsum}
	bufs := Bufs{X: bx.Ptr(), Res: bres.Ptr(), W: bw.Ptr(), Idx: bidx.Ptr(), CS: bcs.Ptr(), ChS: bchs.Ptr(),
		HS: hs.Ptr(), ResOut: rout.Ptr(), Codes: codes.Ptr(), Scale: scale.Ptr(), RSum: rsum.Ptr()}
	download := func() outputs {
		return outputs{hs: t.Download(hs), res: t.Download(rout), codes: t.Download(codes), scale: t.Download(scale), rsum: t.Download(rsum)}
	}
	// fused holds the fused kernels' downloads per (op, layout) for the
	// unfused chain's comparison.
	fused := map[string]outputs{}
	for _, k := range caseKernels(t, M) {
		for _, tiled := range layouts(k.Op) {
			for _, b := range outs {
				t.Poison(b, 0xFF)
			}
			grid, block, args, err := Launch(k.Name, M, K, P, tiled, Eps, bufs)
			t.Check(err, name)
			t.Launch(k.Name, grid, block, 0, args...)
			label := fmt.Sprintf("%s %s %s", k.Name, layoutName(tiled), name)
			got := download()
			checkOp(t, label, k.Op, tiled, M, K, P, in.want, got)
			if _, ok := fused[k.Op+layoutName(tiled)]; !ok {
				fused[k.Op+layoutName(tiled)] = got
			}
			ran++
		}
	}
	ran += runUnfused(t, c, name, bufs, outs, fused)
	return ran
}

// runUnfused runs the unfused chain: pq_addnorm writes hs and residual',
// then the producers family's decode-band and per-token producers read
// that hs (the device's bytes, not the mirror's) and write codes, scales
// and sums, which must equal the fused kernels' downloads byte for byte.
func runUnfused(t *gates.T, c normCase, name string, b Bufs, outs []*gates.Buffer, fused map[string]outputs) (ran int) {
	K, P, M := c.K, c.P, c.M
	hs, rout, codes, scale, rsum := outs[0], outs[1], outs[2], outs[3], outs[4]
	type step struct {
		kernel, fusedKey string
		tiled            bool
	}
	var steps []step
	if M <= producers.GroupMaxM {
		steps = append(steps, step{"pq_rotq_group", OpGroup + "row", false})
	}
	if producers.FusedTokenCheck(K) == nil {
		steps = append(steps, step{"pq_rotq_token", OpToken + "row", false}, step{"pq_rotq_token", OpToken + "tiled", true})
	}
	for _, s := range steps {
		f, ok := fused[s.fusedKey]
		if !ok {
			continue // the fused kernel does not run on this device or M
		}
		for _, bb := range outs {
			t.Poison(bb, 0xFF)
		}
		grid, block, args, err := Launch("pq_addnorm", M, K, P, false, Eps, b)
		t.Check(err, name)
		t.Launch("pq_addnorm", grid, block, 0, args...)
		pb := producers.ProducerBufs{X: b.HS, Idx: b.Idx, CS: b.CS, ChS: b.ChS, Codes: b.Codes, Scale: b.Scale, RSum: b.RSum}
		grid, block, args, err = producers.ProducerLaunch(s.kernel, M, K, P, 0, s.tiled, pb)
		t.Check(err, name)
		t.Launch(s.kernel, grid, block, 0, args...)
		label := fmt.Sprintf("unfused pq_addnorm + %s %s %s vs fused", s.kernel, layoutName(s.tiled), name)
		got := outputs{hs: t.Download(hs), res: t.Download(rout), codes: t.Download(codes), scale: t.Download(scale), rsum: t.Download(rsum)}
		for _, o := range []struct {
			what      string
			got, want []byte
		}{{"hs", got.hs, f.hs}, {"residual", got.res, f.res}, {"codes", got.codes, f.codes}, {"scales", got.scale, f.scale}, {"row sums", got.rsum, f.rsum}} {
			if !par.Equal(o.got, o.want) {
				i := 0
				for i < len(o.got) && o.got[i] == o.want[i] {
					i++
				}
				t.Failf("%s: %s differ from byte %d (unfused %#02x, fused %#02x)", label, o.what, i, o.got[i], o.want[i])
			}
		}
		ran++
	}
	return ran
}

// gateSemantics checks the mirror (which the devices equal byte for byte)
// against fp64 on a few rows of each distribution.
func gateSemantics(t *gates.T) {
	for ci, c := range []normCase{{K: 5120, P: 3, M: 3, dist: "normal"}, {K: 5120, P: 2, M: 2, dist: "outlier"}, {K: 640, P: 1, M: 3, dist: "cancel"}} {
		rng := rand.New(rand.NewPCG(t.Seed(), uint64(ci)))
		rots := make([]*refimpl.Rotation, c.P)
		for p := range rots {
			rots[p] = refimpl.RandomRotation(rng, c.K)
		}
		rr, err := refimpl.BuildRotRecords(rots)
		t.Check(err, "records")
		x, res, w := randomInputs(rng.Uint64(), c.M, c.K, c.dist)
		worstHS, worstCode := checkSemantics(t, c, rots, rr, x, res, w)
		t.Metric(gates.NewCase("K", c.K, "dist", c.dist).Key("hs_err_over_tol"), worstHS)
		t.Metric(gates.NewCase("K", c.K, "dist", c.dist).Key("code_err_over_tol"), worstCode)
	}
}

// checkSemantics compares one case's mirror with fp64 and returns the
// worst error over its bound for hs and for the codes.
func checkSemantics(r gates.Reporter, c normCase, rots []*refimpl.Rotation, rr *refimpl.RotRecords, x, res, w []uint16) (worstHS, worstCode float64) {
	K, M, G := c.K, c.M, c.K/Group
	hs, rOut := AddNormRows(x, res, w, M, K, Eps)
	e := HSRelErr(G)
	for m := 0; m < M; m++ {
		r64, hs64 := AddNorm64(x[m*K:(m+1)*K], res[m*K:(m+1)*K], w, Eps)
		for k := 0; k < K; k++ {
			if rOut[m*K+k] != r64[k] {
				r.Failf("K=%d m=%d k=%d (%s): residual' %#04x, the once-rounded sum is %#04x", K, m, k, c.dist, rOut[m*K+k], r64[k])
			}
			ref := hs64[k]
			tol := refimpl.BF16RoundBound(ref, e*math.Abs(ref))
			if d := math.Abs(refimpl.BF16ToF64(hs[m*K+k]) - ref); d > tol || math.IsNaN(d) {
				r.Failf("K=%d m=%d k=%d (%s): hs %g vs fp64 %g, |diff| %g > %g (half a bf16 ulp + %.3g relative)", K, m, k, c.dist, refimpl.BF16ToF64(hs[m*K+k]), ref, d, tol, e)
			} else if tol > 0 {
				worstHS = max(worstHS, d/tol)
			}
		}
	}
	for p := range rots {
		v := rr.RotateF32(hs, M, p)
		gq := refimpl.QuantizeActGroup(v, M, K)
		_, f := refimpl.RoundRowsBF16(v)
		tq := refimpl.QuantizeActToken(f, M, K)
		if err := refimpl.CheckActQuant(v, gq); err != nil {
			r.Failf("K=%d p=%d (%s) per-group: %v", K, p, c.dist, err)
		}
		if err := refimpl.CheckActQuant(f, tq); err != nil {
			r.Failf("K=%d p=%d (%s) per-token: %v", K, p, c.dist, err)
		}
		for m := 0; m < M; m++ {
			exact := make([]float64, K)
			for k := range exact {
				exact[k] = refimpl.BF16ToF64(hs[m*K+k])
			}
			rots[p].Forward(exact)
			for g := 0; g < G; g++ {
				var norm float64
				for k := g * Group; k < (g+1)*Group; k++ {
					norm += exact[k] * exact[k]
				}
				// The float32 rotation's bound, as the producers' semantics
				// gate derives it (families/producers/gate.go).
				rot := 2e-6*math.Sqrt(norm) + 2e-43
				for mode, q := range []*refimpl.QuantAct{gq, tq} {
					for k := g * Group; k < (g+1)*Group; k++ {
						y := exact[k]
						s := q.Scale(m, k)
						got := q.CodeValue(m, k) * s
						tol := e4m3Tol(math.Abs(y), s, rot, mode == 1)
						if d := math.Abs(got - y); d > tol || math.IsNaN(got) {
							r.Failf("K=%d p=%d m=%d k=%d mode=%d (%s): code x scale %g vs fp64 %g, |diff| %g > %g", K, p, m, k, mode, c.dist, got, y, d, tol)
						} else if tol > 0 {
							worstCode = max(worstCode, d/tol)
						}
					}
				}
			}
		}
	}
	return worstHS, worstCode
}

// e4m3Tol is the producers' semantics bound (families/producers/gate.go
// semanticsTol, whose comment derives it): the float32 rotation's error
// rot, the bf16 rounding of the per-token path when viaBF16, and e4m3's
// half ulp (2^-4 relative, or half the subnormal step 2^-9 times the
// scale), each on the value it rounds.
func e4m3Tol(ay, s, rot float64, viaBF16 bool) float64 {
	a := ay + rot
	var bf float64
	if viaBF16 {
		bf = math.Ldexp(a, -8) + math.Ldexp(1, -134)
		a += bf
	}
	return (1+math.Ldexp(1, -20))*math.Max(math.Ldexp(a, -4), math.Ldexp(s, -10)) + bf + rot
}
