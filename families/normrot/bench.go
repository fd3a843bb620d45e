package normrot

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/parharness/parharness/bench"
	"github.com/parharness/parharness/families/producers"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/regret"
	"github.com/parharness/parharness/results"
	"github.com/parharness/parharness/shapes"
)

// The norm-fed producer suites, cold: every buffer set rotates through
// enough copies to defeat the last-level cache, and the engine measures
// the copy ceiling in the same run.
//
// fuse (decode band): the unfused chain (pq_addnorm, then the producers'
// pq_rotq_group on its hs: two launches in one graph) is the baseline,
// the fused pq_addnorm_rotq_group beside it.
//
// tokstream (per token, the decode band's M and prefill's, on the norm-fed
// shapes and LawShapes): the unfused chain (pq_addnorm, then
// pq_rotq_token) is the baseline; the fused per-token kernel at 8, 16 and
// 32 warps per row (the regret table of WavesPerRow), and the existing
// fused per-token producer pq_rotq_token alone on a ready hs (its GB/s
// for the same bytes is the figure the fused kernels must reach).
//
// Bytes per call, what the chain must move (fuseBytes): x and residual
// read (4MK), w (2K), channel scales (4PK), rotation records (40PK: per
// (partition, group) 8 layers x 32 lanes x (4 index + 16 cos/sin) bytes),
// hs and residual' written (4MK), codes (PMK), and per group scales and
// sums (8PMG) or per token scales (4PM) and sums (4PMG). The unfused
// chain also writes and reads hs between its launches (4MK more it does
// not get credit for). Every variant is checked (bench.Check) with the
// gate's comparison before and after its timed replays.

// FuseMs and TokMs are the suites' default M ladders; TokMs has the
// decode band's M too, where WavesPerRow picks 32 and 16 warps.
var (
	FuseMs = []int{1, 2, 4, 8, 16, 32, 64, 128}
	TokMs  = []int{1, 8, 16, 17, 64, 65, 128, 512, 1024, 2048, 4096, 8192}
)

// LawShapes are synthetic (K, P) that tokstream adds to the norm-fed
// shapes of --shapes so the law's K >= 8192 branch is scored (no
// norm-fed linear of the built-in sets has so long a row).
var LawShapes = []shapes.KP{{K: 8192, P: 2}}

func fuseBytes(M, K, P int, perToken bool) int64 {
	m, k, p, g := int64(M), int64(K), int64(P), int64(K/Group)
	b := 4*m*k + 2*k + 4*p*k + 40*p*k + 4*m*k + p*m*k + 4*p*m*g
	if perToken {
		return b + 4*p*m
	}
	return b + 4*p*m*g
}

func waveName(w int) string { return fmt.Sprintf("w%d", w) }

// shapeName is a point's shape column: "K<k>xP<p>".
func shapeName(K, P int) string { return fmt.Sprintf("K%dxP%d", K, P) }

// parseShape reads a shape column back; ok is false for anything that is
// not exactly shapeName's form.
func parseShape(s string) (K, P int, ok bool) {
	k, p, cut := strings.Cut(strings.TrimPrefix(s, "K"), "xP")
	if !cut || !strings.HasPrefix(s, "K") {
		return 0, 0, false
	}
	var err1, err2 error
	K, err1 = strconv.Atoi(k)
	P, err2 = strconv.Atoi(p)
	if err1 != nil || err2 != nil || K <= 0 || P <= 0 || shapeName(K, P) != s {
		return 0, 0, false
	}
	return K, P, true
}

// lawWaves is the law's pick for a regret cell on a target ("" for a
// shape it cannot read: no pick, which the regret table reports).
func lawWaves(codeArch string, sms int) regret.Law {
	return func(c regret.Cell) string {
		K, P, ok := parseShape(c.Shape)
		if !ok {
			return ""
		}
		return waveName(WavesPerRowOn(codeArch, c.M, K, P, sms))
	}
}

func init() {
	bench.RegisterSuite(bench.Suite{Family: Family, Name: "fuse", Isolated: true,
		Doc:      "decode band: residual add + Gemma RMSNorm + rotate + per-group e4m3 fused (pq_addnorm_rotq_group) against the unfused chain pq_addnorm + pq_rotq_group (two launches), cold",
		Run:      func(c *bench.Ctx) error { return runSuite(c, "fuse", FuseMs, false) },
		Variants: func() []string { return []string{"unfused", "fused"} },
		Axes:     "shape: the norm-fed (K, P) of --shapes (KxP); M: --m, default " + joinInts(FuseMs) + "; regime cold"})
	var waves []string
	for _, w := range WaveChoices {
		waves = append(waves, waveName(w))
	}
	law := bench.Law{Name: "normrot.WavesPerRow", Kernel: "normtoken", Variants: waves, PickFrom: func(doc *results.Document, _ string) regret.Law {
		arch := kernels.GFX1201
		if strings.HasPrefix(doc.Device.Arch, "sm_") {
			arch = kernels.SM90a
		}
		return lawWaves(arch, doc.Device.SMs)
	}}
	bench.RegisterSuite(bench.Suite{Family: Family, Name: "tokstream", Isolated: true, Laws: []bench.Law{law},
		Doc:      "prefill per token: the fused norm-fed producer at 8/16/32 warps per row (regret table of normrot.WavesPerRow) against the unfused chain pq_addnorm + pq_rotq_token, with pq_rotq_token alone on a ready hs for its GB/s, row-major codes, cold",
		Run:      func(c *bench.Ctx) error { return runSuite(c, "tokstream", TokMs, true) },
		Variants: func() []string { return append([]string{"unfused", "rotq-token"}, waves...) },
		Axes:     "shape: the norm-fed (K, P) of --shapes (KxP) and K8192xP2 (synthetic: the law's K >= 8192 branch); M: --m, default " + joinInts(TokMs) + "; regime cold"})
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

// benchBufs are one point's buffer sets and the mirror's outputs for the
// first copies' inputs and for the last copy's (negated x and residual).
type benchBufs struct {
	c                            *bench.Ctx
	M, K, P, copies              int
	x, res, w, idx, cs, chs      bench.CopySet
	hs, rout, codes, scale, rsum bench.CopySet
	want, wantLast               want
	perToken                     bool
	err                          error
}

func (b *benchBufs) wantAt(k int) want {
	if k == b.copies-1 && b.copies > 1 {
		return b.wantLast
	}
	return b.want
}

func (b *benchBufs) at(k int) Bufs {
	return Bufs{X: b.x.At(k), Res: b.res.At(k), W: b.w.At(k), Idx: b.idx.At(k), CS: b.cs.At(k), ChS: b.chs.At(k),
		HS: b.hs.At(k), ResOut: b.rout.At(k), Codes: b.codes.At(k), Scale: b.scale.At(k), RSum: b.rsum.At(k)}
}

func newBenchBufs(c *bench.Ctx, M, K, P int, perToken bool) (*benchBufs, error) {
	G := K / Group
	fp := fuseBytes(M, K, P, perToken)
	b := &benchBufs{c: c, M: M, K: K, P: P, perToken: perToken, copies: bench.CopiesFor(fp, c.Dev.Info().LLCBytes)}
	sizes := []int{2 * M * K, 2 * M * K, 2 * K, 4 * P * 8 * G * 32, 16 * P * 8 * G * 32, 4 * P * K,
		2 * (M*K + rowsPastM*K), 2 * (M*K + rowsPastM*K), P*M*K + rowsPastM*K, 4 * (P*M*G + rowsPastM*G), 4 * (P*M*G + rowsPastM*G)}
	for i, dst := range []*bench.CopySet{&b.x, &b.res, &b.w, &b.idx, &b.cs, &b.chs, &b.hs, &b.rout, &b.codes, &b.scale, &b.rsum} {
		if b.err == nil {
			*dst, b.err = bench.AllocCopies(c, sizes[i], b.copies)
		}
	}
	if b.err != nil {
		return nil, b.err
	}
	seed := uint64(M*K*P) + 17
	in, err := prepareCase(seed, normCase{K: K, P: P, M: M, dist: "normal"})
	if err != nil {
		return nil, err
	}
	b.want, b.wantLast = in.want, in.want
	idx, cs, chs := in.rr.Bytes()
	if err := bench.UploadEachCopy(c, b.copies, bench.CopyUpload{Set: b.x, Data: gates.U16Bytes(in.x)}, bench.CopyUpload{Set: b.res, Data: gates.U16Bytes(in.res)},
		bench.CopyUpload{Set: b.w, Data: gates.U16Bytes(in.w)}, bench.CopyUpload{Set: b.idx, Data: idx}, bench.CopyUpload{Set: b.cs, Data: cs}, bench.CopyUpload{Set: b.chs, Data: chs}); err != nil {
		return nil, err
	}
	if b.copies == 1 {
		return b, nil
	}
	// The last set holds the negated rows, with their own mirror: a launch
	// that reads a fixed set writes the other set's bytes where the check
	// of the last set looks.
	xl, rl := make([]uint16, len(in.x)), make([]uint16, len(in.res))
	for i := range in.x {
		xl[i], rl[i] = in.x[i]^0x8000, in.res[i]^0x8000
	}
	b.wantLast = buildWant(in.rr, xl, rl, in.w, M, K, P, !perToken)
	return b, bench.UploadLastCopy(c, b.copies, bench.CopyUpload{Set: b.x, Data: gates.U16Bytes(xl)}, bench.CopyUpload{Set: b.res, Data: gates.U16Bytes(rl)})
}

// check is a variant's output check: every output of copy k poisoned
// (hs restored from the mirror instead when hsInput: the producer alone
// reads it), then the gate's comparison of op's outputs.
func (b *benchBufs) check(op string, hsInput bool) *bench.Check {
	dev := b.c.Dev
	label := fmt.Sprintf("K=%d P=%d M=%d", b.K, b.P, b.M)
	return &bench.Check{
		Prepare: func(k int) error {
			for _, s := range []bench.CopySet{b.hs, b.rout, b.codes, b.scale, b.rsum} {
				if err := s.Poison(dev, k, 0xFF); err != nil {
					return err
				}
			}
			if hsInput {
				return dev.HtoD(b.hs.At(k), b.wantAt(k).hs)
			}
			return nil
		},
		Verify: func(k int) error {
			var got outputs
			for _, d := range []struct {
				s   bench.CopySet
				dst *[]byte
			}{{b.hs, &got.hs}, {b.rout, &got.res}, {b.codes, &got.codes}, {b.scale, &got.scale}, {b.rsum, &got.rsum}} {
				var err error
				if *d.dst, err = d.s.Download(dev, k); err != nil {
					return err
				}
			}
			var f gates.Findings
			w := b.wantAt(k)
			if hsInput {
				// The producer alone: hs is its input (left as uploaded),
				// residual' nobody's output (still poison).
				w.res = nil
			}
			checkOp(&f, fmt.Sprintf("%s copy %d", label, k), op, false, b.M, b.K, b.P, w, got)
			return f.Err()
		},
	}
}

// launcher is one launch of kernel on copy k's buffers; producer kernels
// (another family's) read hs as their x.
func (b *benchBufs) launcher(kernel string, own bool) func(gpu.Stream, int) error {
	var grid, block gpu.Dim3
	var err error
	args := func(k int) []any {
		var a []any
		if own {
			_, _, a, _ = Launch(kernel, b.M, b.K, b.P, false, Eps, b.at(k))
		} else {
			bb := b.at(k)
			_, _, a, _ = producers.ProducerLaunch(kernel, b.M, b.K, b.P, 0, false, producers.ProducerBufs{X: bb.HS, Idx: bb.Idx, CS: bb.CS, ChS: bb.ChS, Codes: bb.Codes, Scale: bb.Scale, RSum: bb.RSum})
		}
		return a
	}
	if own {
		grid, block, _, err = Launch(kernel, b.M, b.K, b.P, false, Eps, Bufs{})
	} else {
		grid, block, _, err = producers.ProducerLaunch(kernel, b.M, b.K, b.P, 0, false, producers.ProducerBufs{})
	}
	var f func(gpu.Stream, int) error
	if err == nil {
		f, err = b.c.Launcher(kernel, grid, block, 0, args)
	}
	if err != nil && b.err == nil {
		b.err = fmt.Errorf("normrot bench: %s K=%d P=%d M=%d: %w", kernel, b.K, b.P, b.M, err)
	}
	return f
}

// variants are the point's variants, baseline (the unfused chain) first.
func (b *benchBufs) variants() []bench.Variant {
	prod, op := "pq_rotq_group", OpGroup
	if b.perToken {
		prod, op = "pq_rotq_token", OpToken
	}
	norm := bench.Variant{Name: "norm", Enqueue: b.launcher("pq_addnorm", true)}
	pv := bench.Variant{Name: "rotq", Enqueue: b.launcher(prod, false)}
	unfused := bench.Sequence(norm, pv)
	unfused.Name, unfused.Check, unfused.Unchecked = "unfused", b.check(op, false), ""
	vs := []bench.Variant{unfused}
	if !b.perToken {
		return append(vs, bench.Variant{Name: "fused", Enqueue: b.launcher("pq_addnorm_rotq_group", true), Check: b.check(OpGroup, false)})
	}
	for _, w := range WaveChoices {
		if w > MaxWaves(b.c.Dev.Info().CodeArch()) {
			continue // not built for this target
		}
		vs = append(vs, bench.Variant{Name: waveName(w), Enqueue: b.launcher(TokenKernel(w), true), Check: b.check(OpToken, false)})
	}
	return append(vs, bench.Variant{Name: "rotq-token", Enqueue: b.launcher(prod, false), Check: b.check(OpToken, true)})
}

func runSuite(c *bench.Ctx, name string, Ms []int, perToken bool) error {
	type pt struct{ K, P, M int }
	var pts []pt
	kps := NormFedShapes(c.Shapes)
	if perToken && len(kps) > 0 {
		kps = append(kps, LawShapes...)
	}
	for _, kp := range kps {
		for _, M := range c.MsOr(Ms) {
			pts = append(pts, pt{kp.K, kp.P, M})
		}
	}
	if len(pts) == 0 {
		c.Skipf("%s: the shapes set has no norm-fed linear (%v)", name, NormFedLinears)
	}
	kernel := OpGroup
	if perToken {
		kernel = OpToken
	}
	for i, p := range pts {
		if c.Progress != nil {
			c.Progress(i, len(pts), fmt.Sprintf("%s K=%d P=%d M=%d", name, p.K, p.P, p.M))
		}
		if err := ShapeCheck(p.K); err != nil {
			c.Skipf("%s K=%d P=%d: %v", name, p.K, p.P, err)
			continue
		}
		if !perToken && p.M > GroupMaxM {
			c.Skipf("%s K=%d P=%d M=%d: the decode kernel serves M <= %d", name, p.K, p.P, p.M, GroupMaxM)
			continue
		}
		if perToken && producers.FusedTokenCheck(p.K) != nil {
			c.Skipf("%s K=%d P=%d: %v", name, p.K, p.P, producers.FusedTokenCheck(p.K))
			continue
		}
		shape := shapeName(p.K, p.P)
		if !c.Take(shape, p.M) {
			continue
		}
		b, err := newBenchBufs(c, p.M, p.K, p.P, perToken)
		if err != nil {
			c.FreeAll()
			return err
		}
		vs := b.variants()
		if b.err != nil {
			c.FreeAll()
			return b.err
		}
		point := bench.Point{Suite: name, Kernel: kernel, Shape: shape, M: p.M, Regime: bench.Cold,
			Bytes: fuseBytes(p.M, p.K, p.P, perToken), Footprint: fuseBytes(p.M, p.K, p.P, perToken), Copies: b.copies, Variants: vs,
			Extra: map[string]float64{"K": float64(p.K), "P": float64(p.P), "law_waves": float64(WavesPerRowOn(c.Dev.Info().CodeArch(), p.M, p.K, p.P, c.Dev.Info().SMs))}}
		if err := c.Measure(point); err != nil {
			return err
		}
	}
	return nil
}
