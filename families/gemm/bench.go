package gemm

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/parharness/parharness/bench"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/refimpl"
	"github.com/parharness/parharness/regret"
	"github.com/parharness/parharness/results"
)

// W4A8 GEMM suites (gemm.hip), cold regime: every buffer set
// (weights, scale words, activations, scales, row sums, output) is rotated
// through enough copies to defeat the last-level cache; the split-K
// workspace and counters are one set (scratch, as in serving).
//
//   dec  decode band on gate_up, qkv, down, in_proj, M ladder 1..64:
//        the kernel at the split-K law's S (baseline) against fixed S = 1, 2,
//        4, 8, the law's launch under programmatic dependent launch ("pdl":
//        the weight stream starts while the previous call finishes), its
//        plain launch where the law's launch is a cluster ("ws"), the
//        previous kernel generation ("v1") and the memory-side attribution
//        ("memonly", M <= 8) at the law's S; each own-law tag at its law's
//        S and its fixed splits ("wk1S4"), and, when named, its law's
//        launch under PDL ("wk1pdl") and the read roof ("read",
//        readroof.go); then a regret table of the law against the
//        per-cell argmin, and a cuBLASLt fp8 row at the same (M, N, K)
//        (fp8 weights, 2x the bytes of int4: the peer a W4A8 decode has
//        to beat on time).
//   pre  per-token prefill on every shape of --shapes (default TP=2) at M = 2048, 8192, with the
//        cuBLASLt fp8 row.
//
// Bytes per call = the weight stream (N·K/2 + 4·G·N for the scale words) +
// activation codes and their scales and row sums + the bf16 output. Flops
// = 2·M·N·K.

func init() {
	// Each law's pick in a cell is the S the run launched it at, which
	// every dec record carries (Extra["S_law"]: DecSplitK; Extra
	// ["S_law_<tag>"]: DecSplitKFootprint of an own-law tag; both on that
	// device's SM count), so the table scores exactly what ran.
	var names []string
	for s := 1; s <= DecMaxS; s++ {
		names = append(names, decSplitName("", s))
	}
	laws := []bench.Law{decLaw("gemm.DecSplitK", "S_law", "", names)}
	var ownNames []string
	for _, l := range OwnLaws {
		var tagNames []string
		for s := max(l.MinS, 1); s <= l.MaxS; s++ {
			tagNames = append(tagNames, decSplitName(l.Tag, s))
		}
		ownNames = append(ownNames, tagNames...)
		ownNames = append(ownNames, decPDLName(l.Tag))
		laws = append(laws, decLaw(l.Name, "S_law_"+l.Tag, l.Tag, tagNames))
	}
	var pdlNames []string
	for _, v := range ownNames {
		if strings.HasSuffix(v, "pdl") {
			pdlNames = append(pdlNames, v)
		}
	}
	// gemm.DecBody last: the suite's last law of a kernel marks its plots
	// (cmd/parharness lawPicks).
	laws = append(laws,
		decBodyPDLLaw(slices.Concat([]string{decPDLName("")}, pdlNames)),
		decBodyLaw(slices.Concat(names, slices.DeleteFunc(slices.Clone(ownNames), func(v string) bool { return strings.HasSuffix(v, "pdl") }))))
	bench.RegisterSuite(bench.Suite{Family: Family, Name: "dec", Isolated: true, Doc: "decode-band W4A8 GEMM (split-K law vs fixed S; regret table; cuBLASLt fp8 peer) on gate_up, qkv, down, in_proj, M 1..64, cold", Run: runDecSuite, Laws: laws,
		Variants: func() []string {
			tags := slices.DeleteFunc(registryTags(OpDec), func(t string) bool { return t == TagRowLayout || slices.Contains(OwnLawTags, t) })
			return slices.Concat(names, []string{"pdl", "ws"}, tags, ownNames, vendorPeers, []string{DecReadVariant})
		},
		Axes: "shape: gate_up, qkv, down, in_proj of --shapes; M: --m, default 1, 2, 5, 8, 16, 40, 48, 64; regime cold", PeerTargets: decTargets})
	bench.RegisterSuite(bench.Suite{Family: Family, Name: "pre", Doc: "per-token tiled prefill W4A8 GEMM on every --shapes linear (default TP=2) at M=2048, 8192 (cuBLASLt fp8 peer), cold", Run: runPreSuite,
		Variants: func() []string { return slices.Concat(registryTags(OpPre), vendorPeers) },
		Axes:     "shape: every --shapes linear; M: --m, default 2048, 8192; regime cold"})
}

// decTargets are the decode band's goals against the vendor's fp8 GEMM, in
// every regime: faster at every M, at least 1.4x as fast up to M = 16, and
// at least 75% of the copy ceiling up to M = 8 (the record's bytes: the
// weight stream, activations and output, nearly all weights there).
var decTargets = []bench.PeerTarget{
	{Name: "faster", Met: func(r results.PeerRow, _ float64) bool { return r.KernelUS < r.PeerUS }},
	{Name: "1.4x M<=16", Applies: func(M int) bool { return M <= 16 }, Met: func(r results.PeerRow, _ float64) bool { return r.PeerUS >= 1.4*r.KernelUS }},
	bench.CopyShareTarget("75% M<=8", 0.75, func(M int) bool { return M <= 8 }),
}

// decLaw is a dec-suite split law scored on the S each record names in
// Extra[extra], as variant decSplitName(tag, S).
func decLaw(name, extra, tag string, variants []string) bench.Law {
	return bench.Law{Name: name, Kernel: "pq_gemm_dec", Variants: variants, PickFrom: func(doc *results.Document, suite string) regret.Law {
		picks := map[regret.Cell]string{}
		for _, r := range doc.Records {
			if S, ok := r.Extra[extra]; ok && r.Suite == suite && r.Kernel == "pq_gemm_dec" {
				picks[regret.Cell{Shape: r.Shape, M: r.M}] = decSplitName(tag, int(S))
			}
		}
		return func(c regret.Cell) string { return picks[c] }
	}}
}

// decBodyLaw scores DecBody against every plain launch the run timed
// (variants: every body's split names): its pick in a cell is the body's
// own law's S (Extra["S_law_<tag>"]) on the record's N and the device's
// SMs. Where the record has no such S (a device without the sm_90a
// bodies, a document without its device, or a run from before the
// bodies) it is the baseline's law.
func decBodyLaw(variants []string) bench.Law {
	return bench.Law{Name: "gemm.DecBody", Kernel: "pq_gemm_dec", Variants: variants, Over: "the baseline's and own laws' splits", PickFrom: func(doc *results.Document, suite string) regret.Law {
		return decBodyPicks(doc, suite, decSplitName)
	}}
}

// decBodyPDLLaw scores DecBody as a decode step serves it: every body
// launched with programmatic dependent launch at its own law's S
// (variants: the baseline's "pdl" and each own law's "<tag>pdl"). Plain
// launches expose a body's prologue, which PDL overlaps with the previous
// call, so the two tables can disagree; this one is the served order. A
// run times the own laws' PDL launches only when --variants names them,
// so the table covers the cells where the pick's launch was timed.
func decBodyPDLLaw(variants []string) bench.Law {
	return bench.Law{Name: "gemm.DecBody/pdl", Kernel: "pq_gemm_dec", Variants: variants, Over: "every body's PDL launch", OnlyPicked: true, PickFrom: func(doc *results.Document, suite string) regret.Law {
		return decBodyPicks(doc, suite, func(tag string, _ int) string { return decPDLName(tag) })
	}}
}

// decBodyPicks is DecBody's pick in each cell of doc's suite records,
// named by name(tag, S) at the tag's own-law S (the baseline's tag "" at
// its law's S where the record has none for DecBody's tag).
func decBodyPicks(doc *results.Document, suite string, name func(tag string, S int) string) regret.Law {
	picks := map[regret.Cell]string{}
	sm90 := doc.Device != nil && doc.Device.SMs > 0 && (gpu.Info{Arch: doc.Device.Arch}).CodeArch() == kernels.SM90a
	for _, r := range doc.Records {
		if r.Suite != suite || r.Kernel != "pq_gemm_dec" {
			continue
		}
		c := regret.Cell{Shape: r.Shape, M: r.M}
		if _, done := picks[c]; done {
			continue
		}
		if sm90 {
			tag := DecBody(r.M, int(r.Extra["N"]), doc.Device.SMs)
			if S, ok := r.Extra["S_law_"+tag]; ok {
				picks[c] = name(tag, int(S))
				continue
			}
		}
		if S, ok := r.Extra["S_law"]; ok {
			picks[c] = name("", int(S))
		}
	}
	return func(c regret.Cell) string { return picks[c] }
}

// vendorPeers are the variant names of the vendor fp8 GEMM rows
// (bench.MeasurePeerGEMM: the library's name, lower case).
var vendorPeers = []string{"cublaslt", "hipblaslt"}

// registryTags are the variant names of op's registered kernels (their
// tags) on any target, experimental ones included.
func registryTags(op string) []string {
	var out []string
	for _, k := range kernels.Select(kernels.Query{Family: Family, Op: op, Full: true}) {
		if !slices.Contains(out, k.Tag) {
			out = append(out, k.Tag)
		}
	}
	return out
}

// DecFixedS are the fixed split-K counts the dec suite times beside the law.
var DecFixedS = []int{1, 2, 4, 8}

type gemmBufs struct {
	c                               *bench.Ctx
	s                               GemmShape
	M, copies                       int
	w, sz, act, actRow, sc, rs, out bench.CopySet
	pl, rs16                        bench.CopySet // 5-bit planes; fp16 row sums (prefill, 4-bit: the ZPE form's)
	wrow                            bench.CopySet // row-layout weights (bench2 wp: the LayoutRow kernels read them instead of w)
	bits                            int
	zref                            gemmRef // the ZPE form's reference (prefill, 4-bit)
	ws, sema                        gpu.Ptr
	wsBytes                         int
	footprint                       int64
	ref                             gemmRef // the first copies' reference; the last copy holds negated activations (-ref)
	label                           string
}

// gemmWeightBytes is the weight stream of a bits-wide weight: 4 bits of
// words per weight, 1 of planes at 5 bits, and 4 bytes of scale word per
// 128 weights.
func gemmWeightBytes(s GemmShape, bits int) int64 {
	b := int64(s.N())*int64(s.K)/2 + 4*int64(s.G())*int64(s.N())
	if bits == 5 {
		b += int64(s.N()) * int64(s.K) / 8
	}
	return b
}

// benchWeights are one shape's weights, drawn as the gate draws them and
// repacked, kept across the M values of a suite run.
type benchWeights struct {
	w  *refimpl.QWeight
	pk gemmPacked
}

func newBenchWeights(s GemmShape) (*benchWeights, error) { return newBenchWeightsBits(s, 4) }

func newBenchWeightsBits(s GemmShape, bits int) (*benchWeights, error) {
	rng := rand.New(rand.NewPCG(uint64(s.K), uint64(s.N())))
	w := GateWeights(rng, s.K, s.N())
	if bits == 5 {
		w = gemmWeights5(rng, s.K, s.N())
	}
	pk, err := packGEMM(w)
	if err != nil {
		return nil, err
	}
	return &benchWeights{w: w, pk: pk}, nil
}

// newGemmBufs allocates Copies buffer sets for one point and fills every
// copy with the same inputs, built as the gate builds them (checkpoint-like
// weights, activations quantized by the producer mirrors, their scales and
// row sums), with the reference the variants' outputs are checked against.
// rowMajor adds row-major activation copies for the prefill forms that
// read them. The footprint (one call's bytes, which sizes the rotation)
// counts one activation layout: a call reads one of them.
func newGemmBufs(c *bench.Ctx, label string, s GemmShape, M int, prefill, rowMajor bool, maxS int, bw *benchWeights) (*gemmBufs, error) {
	return newGemmBufsCopies(c, label, s, M, prefill, rowMajor, maxS, bw, 0)
}

// newGemmBufsCopies is newGemmBufs with at least minCopies buffer sets (two
// weight widths timed in one point rotate through the same number). 5-bit
// weights add their plane copies; 4-bit prefill adds the ZPE form's fp16
// row sums (read instead of the fp32 ones, so not in the footprint).
func newGemmBufsCopies(c *bench.Ctx, label string, s GemmShape, M int, prefill, rowMajor bool, maxS int, bw *benchWeights, minCopies int) (*gemmBufs, error) {
	N := s.N()
	d := newGemmCaseData(gemmCase{label: label, shape: s, M: M, dist: "normal", prefill: prefill}, uint64(M)<<20^uint64(N), bw.w)
	b := &gemmBufs{c: c, s: s, M: M, ref: d.rr, label: label, bits: bw.w.Bits}
	wb, szb := bw.pk.words, bw.pk.sz
	data := [][]byte{wb, szb, d.codes, gates.F32Bytes(d.scales), gates.F32Bytes(d.rsums)}
	sets := []*bench.CopySet{&b.w, &b.sz, &b.act, &b.sc, &b.rs}
	if b.bits == 5 {
		data, sets = append(data, bw.pk.planes), append(sets, &b.pl)
	}
	for _, x := range data {
		b.footprint += int64(bench.CopyStride(len(x)))
	}
	b.footprint += int64(bench.CopyStride(2 * M * N))
	var rs16 []byte
	if prefill && b.bits == 4 {
		P := len(s.Parts)
		rs16 = ZPERowSums(d.rsums, P, M, s.G())
		data, sets = append(data, rs16), append(sets, &b.rs16)
		b.zref = zpeRef(d.rr, bw.w, s.Parts, d.rsums, d.scales, M)
	}
	b.copies = max(bench.CopiesFor(b.footprint, c.Dev.Info().LLCBytes), minCopies)
	var err error
	for i, dst := range sets {
		if *dst, err = bench.AllocCopies(c, len(data[i]), b.copies); err != nil {
			return nil, err
		}
	}
	// gemmRowsPast rows of room after each output, poisoned by the check:
	// a write past row M fails it as it fails the gate.
	if b.out, err = bench.AllocCopies(c, 2*(M+gemmRowsPast)*N, b.copies); err != nil {
		return nil, err
	}
	ups := []bench.CopyUpload{}
	for i, x := range data {
		ups = append(ups, bench.CopyUpload{Set: *sets[i], Data: x})
	}
	if rowMajor {
		if b.actRow, err = bench.AllocCopies(c, len(d.rowCodes), b.copies); err != nil {
			return nil, err
		}
		ups = append(ups, bench.CopyUpload{Set: b.actRow, Data: d.rowCodes})
	}
	if err := bench.UploadEachCopy(c, b.copies, ups...); err != nil {
		return nil, err
	}
	// The last buffer set holds the negated activations (codes with the
	// sign bit flipped, negated row sums) and the middle one the negated
	// weight scales (the fp16 sign bit of each scale word): either's exact
	// output is -ref (RNE is symmetric), so a launch that reads a fixed
	// set's activations fails the check of the last set, and one that reads
	// a fixed set's weights the check of the middle one.
	if mid := b.midCopy(); mid >= 0 {
		if err := c.Dev.HtoD(b.sz.At(mid), negScaleWords(szb)); err != nil {
			return nil, err
		}
	}
	if b.copies > 1 {
		last := []bench.CopyUpload{{Set: b.act, Data: flipSigns(d.codes)}, {Set: b.rs, Data: gates.F32Bytes(negated(d.rsums))}}
		if rs16 != nil { // RNE is symmetric: the fp16 row sums of the negated ones are the sign-flipped fp16 row sums
			last = append(last, bench.CopyUpload{Set: b.rs16, Data: ZPERowSums(negated(d.rsums), len(s.Parts), M, s.G())})
		}
		if rowMajor {
			last = append(last, bench.CopyUpload{Set: b.actRow, Data: flipSigns(d.rowCodes)})
		}
		if err := bench.UploadLastCopy(c, b.copies, last...); err != nil {
			return nil, err
		}
	}
	if !prefill {
		skBytes, err := decSKWorkspaceMax(c, M, N, s.K)
		if err != nil {
			return nil, err
		}
		b.wsBytes = max(256, DecWorkspaceBytes(M, N, maxS), skBytes)
		if b.ws, err = c.Alloc(int64(b.wsBytes)); err != nil {
			return nil, err
		}
		if b.sema, err = c.Alloc(int64(max(256, DecSemaBytes(N)))); err != nil {
			return nil, err
		}
		if err := c.Dev.Memset(b.sema, 0, max(256, DecSemaBytes(N))); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// decSKWorkspaceMax is the largest ws a stream-K decode kernel serving M
// needs at any split that fits on c's device (0 where none serves M).
func decSKWorkspaceMax(c *bench.Ctx, M, N, K int) (int, error) {
	n := 0
	for _, k := range DecKernels(M, c.Dev.Info().CodeArch(), true) {
		if !DecStreamK(k.Name) {
			continue
		}
		for S := 1; S <= DecWKMaxS; S++ {
			if !DecKSFits(k.Name, M, S) {
				continue
			}
			perSM, err := decSKPerSM(c, k.Name, M, S)
			if err != nil {
				return 0, err
			}
			n = max(n, DecSKWorkspaceBytes(k.Name, M, N, K, S, DecSKSlots(k.Name, M, S, c.Dev.Info().SMs, perSM)))
		}
	}
	return n, nil
}

// decSKSlotsOf is the (SMs, blocks an SM) a stream-K launch of kernel
// sizes its grid by (DecArgs.SMs, PerSM): the device's, or under
// bench2 --max-grid at most that many slots of one block, so the grid
// shrinks to the cap (never grows: ws is sized for the device's grid).
func decSKSlotsOf(c *bench.Ctx, kernel string, M, S int) (sms, perSM int, err error) {
	sms = c.Dev.Info().SMs
	if perSM, err = decSKPerSM(c, kernel, M, S); err != nil {
		return 0, 0, err
	}
	if c.MaxGrid > 0 && DecStreamK(kernel) && c.MaxGrid < DecSKSlots(kernel, M, S, sms, perSM) {
		return c.MaxGrid, 1, nil
	}
	return sms, perSM, nil
}

// decSKPerSM is the driver's count of a stream-K kernel's blocks an SM
// holds at M rows and split S (DecArgs.PerSM); 0 where kernel is not
// stream-K or the backend does not say (DecSKSlots then estimates). A
// driver error is returned, not replaced by the estimate: a grid larger
// than the device holds runs in waves and its times mislead.
func decSKPerSM(c *bench.Ctx, kernel string, M, S int) (int, error) {
	if c.Kernels == nil || !DecStreamK(kernel) {
		return 0, nil
	}
	n, err := c.Kernels.MaxActiveBlocks(kernel, DecKSBlockThreads(kernel, S), DecShared(kernel, M, S))
	if err != nil {
		return 0, fmt.Errorf("stream-K grid of %s at M=%d S=%d: %w", kernel, M, S, err)
	}
	return n, nil
}

// midCopy is the checked middle buffer set, which holds the negated
// weight scales (-1 when there is none apart from the first and last).
func (b *gemmBufs) midCopy() int { return bench.MiddleCheckedCopy(b.copies) }

// refAt is rr for buffer set k: negated for the last set, whose
// activations are, and the middle set, whose weight scales are.
func (b *gemmBufs) refAt(k int, rr gemmRef) gemmRef {
	if (k == b.copies-1 && b.copies > 1) || k == b.midCopy() {
		return rr.negated()
	}
	return rr
}

// check is the output check of a variant whose output in copy k is to
// be within the gate's bounds of the reference rr: the output copy is
// poisoned before the check run and compared after it (checkGEMMOut).
func (b *gemmBufs) check(name string, rr gemmRef) *bench.Check {
	what := fmt.Sprintf("%s M=%d %s", b.label, b.M, name)
	wsBytes := 0
	if b.ws != 0 {
		wsBytes = b.wsBytes
	}
	return bench.PoisonedOutputCheck(b.c.Dev, b.out, b.ws, wsBytes, func(k int, got []byte) error {
		var f gates.Findings
		checkGEMMOut(&f, fmt.Sprintf("%s copy %d", what, k), gates.Case{}, got, b.M, b.s.N(), b.refAt(k, rr))
		return f.Err()
	})
}

// decVariant times decode kernel k at split S: clusters of the S splits
// (DecLaunchOpts) where k declares the cluster reduce and the device can
// launch them (elsewhere plainly: the same bits through ws); pdl launches
// every call with programmatic dependent launch (each call's weight
// stream starts while the previous call finishes, as behind the producer
// in a decode step); plain forces a plain launch (ws reduce).
func (b *gemmBufs) decVariant(k kernels.Kernel, S int, name string, pdl, plain bool) (bench.Variant, error) {
	s, M := b.s, b.M
	sms, spm, err := decSKSlotsOf(b.c, k.Name, M, S)
	if err != nil {
		return bench.Variant{}, err
	}
	kern, grid, block, _, err := DecLaunch(s, M, S, DecArgs{Kernel: k.Name, Bits: b.bits, Planes: 1, WRow: 1, SMs: sms, PerSM: spm})
	if err != nil {
		return bench.Variant{}, err
	}
	if DecWeightLayout(k) == LayoutRow && b.wrow.Size == 0 {
		return bench.Variant{}, fmt.Errorf("%s reads row-layout weights: the buffer sets have none (bench2 wp allocates them)", k.Name)
	}
	if pdl && k.Caps&kernels.PDL == 0 {
		return bench.Variant{}, fmt.Errorf("%s does not declare PDL (no grid_dep_wait): a PDL launch would race with the previous kernel", k.Name)
	}
	opts := gpu.LaunchOpts{PDL: pdl}
	if _, ok := b.c.Dev.(gpu.ExLauncher); ok && k.Caps&kernels.Cluster != 0 && !plain {
		opts.Cluster = DecLaunchOpts(S).Cluster // the cluster reduce (same bits)
	}
	f, err := b.c.LauncherEx(kern, grid, block, DecShared(kern, M, S), opts, func(c int) []any {
		_, _, _, args, _ := DecLaunch(s, M, S, DecArgs{W: b.w.At(c), SZ: b.sz.At(c),
			Act: b.act.At(c), ASG: b.sc.At(c), RS: b.rs.At(c), Out: b.out.At(c), WS: b.ws, Sema: b.sema, Kernel: k.Name, Bits: b.bits, Planes: b.planesAt(c), WRow: b.wrowAt(c), SMs: sms, PerSM: spm})
		return args
	})
	v := bench.Variant{Name: name, Enqueue: f}
	if k.Role == kernels.Attribution {
		v.Unchecked = "attribution kernel (" + k.Name + "): part of the baseline's work, no GEMM output to compare"
	} else {
		v.Check = b.check(name, refFor(b.ref, k).withSplits(DecSumTerms(k.Name, M, s.N(), s.K, S, DecSKSlots(k.Name, M, S, sms, spm))))
	}
	return v, err
}

// preVariant times prefill kernel k as variant name, on the activation
// layout its form reads.
func (b *gemmBufs) preVariant(k kernels.Kernel, name string) (bench.Variant, error) {
	s, M := b.s, b.M
	zpe := k.Form == FormPreZPE
	if zpe && b.rs16.Size == 0 {
		return bench.Variant{}, fmt.Errorf("%s reads fp16 row sums: the buffer sets have none (4-bit prefill only)", k.Name)
	}
	kern, grid, block, shared, _, err := PreLaunch(s, M, PreArgs{Kernel: k.Name, Bits: b.bits, Planes: 1, RS16: 1})
	if err != nil {
		return bench.Variant{}, err
	}
	act := b.act
	if PreRowMajor(k.Name) {
		act = b.actRow
	}
	f, err := b.c.Launcher(kern, grid, block, shared, func(c int) []any {
		a := PreArgs{W: b.w.At(c), SZ: b.sz.At(c), Act: act.At(c), TScale: b.sc.At(c), RS: b.rs.At(c), Out: b.out.At(c), Kernel: k.Name, Bits: b.bits, Planes: b.planesAt(c)}
		if zpe {
			a.RS16 = b.rs16.At(c)
		}
		_, _, _, _, args, _ := PreLaunch(s, M, a)
		return args
	})
	ref := refFor(b.ref, k)
	if zpe {
		ref = b.zref
	}
	return bench.Variant{Name: name, Enqueue: f, Check: b.check(name, ref)}, err
}

// wrowAt is buffer set c's row-layout weights, else 0.
func (b *gemmBufs) wrowAt(c int) gpu.Ptr {
	if b.wrow.Size == 0 {
		return 0
	}
	return b.wrow.At(c)
}

// planesAt is buffer set c's plane stream (5-bit), else 0.
func (b *gemmBufs) planesAt(c int) gpu.Ptr {
	if b.bits != 5 {
		return 0
	}
	return b.pl.At(c)
}

func gemmPointBytes(s GemmShape, M int, prefill bool) int64 {
	return gemmPointBytesBits(s, M, prefill, 4)
}

// gemmPointBytesBits is a call's bytes on bits-wide weights.
func gemmPointBytesBits(s GemmShape, M int, prefill bool, bits int) int64 {
	N, K, G, P := int64(s.N()), int64(s.K), int64(s.G()), int64(len(s.Parts))
	m := int64(M)
	act := P*m*K + P*m*G*4 // codes + row sums
	if prefill {
		act += P * m * 4
	} else {
		act += P * m * G * 4
	}
	return gemmWeightBytes(s, bits) + act + 2*m*N
}

// peerRow appends the vendor library's fp8 record (cuBLASLt or hipBLASLt) at
// (M, N, K), or records as a skip why not.
func peerRow(c *bench.Ctx, lt gpu.VendorGEMM, ltErr error, suite, label string, s GemmShape, M int) {
	if ltErr != nil {
		c.Skipf("%s %s M=%d: vendor peer (cuBLASLt or hipBLASLt): %v", suite, label, M, ltErr)
		return
	}
	recs, err := bench.MeasurePeerGEMM(c, lt, gpu.GemmFP8, suite, label, M, s.N(), s.K, bench.Cold)
	if err != nil {
		c.Skipf("%s %s M=%d: fp8 peer: %v", suite, label, M, err)
		return
	}
	for _, rec := range recs {
		if rec.Extra == nil {
			rec.Extra = map[string]float64{}
		}
		rec.Extra["K"], rec.Extra["N"] = float64(s.K), float64(s.N())
		c.AddRecords(rec)
	}
}

// gemmPoint is the measured point of a GEMM suite (dec or pre) at one
// shape and M, with its variants.
func gemmPoint(suite, label string, s GemmShape, M int, prefill bool, b *gemmBufs, vs []bench.Variant) bench.Point {
	kernel := map[bool]string{false: "pq_gemm_dec", true: "pq_gemm_pre"}[prefill]
	return bench.Point{Suite: suite, Kernel: kernel, Shape: label, M: M, Regime: bench.Cold,
		Bytes: gemmPointBytes(s, M, prefill), Flops: 2 * int64(M) * int64(s.N()) * int64(s.K),
		Footprint: b.footprint, Copies: b.copies, Variants: vs,
		Extra: map[string]float64{"K": float64(s.K), "N": float64(s.N()), "P": float64(len(s.Parts))}}
}

func runDecSuite(c *bench.Ctx) error {
	names, shs, err := GemmShapesOf(c.Shapes, "gate_up", "qkv", "down", "in_proj")
	if err != nil {
		return err
	}
	lt, ltErr := gpu.OpenVendorGEMM(c.Dev.Info().Backend)
	if lt != nil {
		defer lt.Close()
	}
	arch, sms := c.Dev.Info().CodeArch(), c.Dev.Info().SMs
	Ms := c.MsOr(bench.DecodeMs)
	if c.Log != nil {
		WriteDecSplitKTable(c.Log, names, shs, Ms, sms)
	}
	return forDecodePoints(c, "dec", names, shs, Ms, func(si int, s GemmShape, M int, bw *benchWeights) error {
		// The law's pick is the baseline (named by its S, so the regret
		// table finds it); fixed S values beside it.
		law := DecSplitK(M, s.N(), s.K, sms)
		Ss := []int{law}
		for _, S := range DecFixedS {
			if S != law && S <= s.G() {
				Ss = append(Ss, S)
			}
		}
		ownSs := map[string][]int{}
		maxS := slices.Max(Ss)
		for _, tag := range OwnLawTags {
			if ss := decOwnSplits(tag, arch, M, s, sms); len(ss) > 0 {
				ownSs[tag] = ss
				maxS = max(maxS, slices.Max(ss))
			}
		}
		b, err := newGemmBufs(c, names[si], s, M, false, false, maxS, bw)
		if err != nil {
			c.FreeAll()
			return err
		}
		vs, err := b.decVariants(names[si], law, Ss, ownSs, arch)
		if err == nil && c.Named(DecReadVariant) {
			var v bench.Variant
			v, err = b.decReadVariant(bw.pk.words)
			vs = append(vs, v)
		}
		if err != nil {
			c.FreeAll()
			return err
		}
		p := gemmPoint("dec", names[si], s, M, false, b, vs)
		p.Extra["S_law"] = float64(law)
		for tag, ss := range ownSs {
			p.Extra["S_law_"+tag] = float64(ss[0])
		}
		if err := c.Measure(p); err != nil {
			return err
		}
		peerRow(c, lt, ltErr, "dec", names[si], s, M)
		return nil
	})
}

// forDecodePoints walks a decode suite's points, shape by shape and M by
// M: progress, M above the decode band skipped, --shard's share, one set
// of weight copies per shape (made at its first point), then point.
func forDecodePoints(c *bench.Ctx, suite string, names []string, shs []GemmShape, Ms []int, point func(si int, s GemmShape, M int, bw *benchWeights) error) error {
	total := len(shs) * len(Ms)
	for si, s := range shs {
		var bw *benchWeights
		for mi, M := range Ms {
			if c.Progress != nil {
				c.Progress(si*len(Ms)+mi, total, fmt.Sprintf("%s %s M=%d", suite, names[si], M))
			}
			if M > DecMaxM {
				c.Skipf("%s %s M=%d: above the decode band (M <= %d)", suite, names[si], M, DecMaxM)
				continue
			}
			if !c.Take(names[si], M) {
				continue
			}
			if bw == nil {
				var err error
				if bw, err = newBenchWeights(s); err != nil {
					return err
				}
			}
			if err := point(si, s, M, bw); err != nil {
				return err
			}
		}
	}
	return nil
}

// decVariants are one decode point's variants: the baseline at the law's
// S (first) and at fixed S; the law's launch under PDL and, where it is a
// cluster launch, plainly (ws); then every other registered decode kernel
// serving M (variants, attribution kernels; experimental ones only when
// --variants names them) at the law's S, named by its registry tag, or,
// for the own-law tags, at each of ownSs[tag] as "<tag>S<S>".
func (b *gemmBufs) decVariants(label string, law int, Ss []int, ownSs map[string][]int, arch string) ([]bench.Variant, error) {
	c, M := b.c, b.M
	ks := DecKernels(M, arch, true)
	base := ks[0]
	var vs []bench.Variant
	for _, S := range Ss {
		v, err := b.decVariant(base, S, decSplitName("", S), false, false)
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
	if base.Caps&kernels.PDL != 0 {
		var err error
		if vs, err = b.decPDL(vs, label, base, law, "pdl"); err != nil {
			return nil, err
		}
	}
	if _, ex := c.Dev.(gpu.ExLauncher); ex && base.Caps&kernels.Cluster != 0 && DecLaunchOpts(law) != (gpu.LaunchOpts{}) {
		v, err := b.decVariant(base, law, "ws", false, true)
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
	for _, k := range ks[1:] {
		if DecWeightLayout(k) == LayoutRow {
			continue // bench2 wp times the row-layout kernels against the fragment order
		}
		if slices.Contains(OwnLawTags, k.Tag) { // its own law (DecSplitKFootprint) and fixed S beside it
			for _, S := range ownSs[k.Tag] {
				name := decSplitName(k.Tag, S)
				if k.Status == kernels.Experimental && !c.Named(name) {
					c.Skipf("dec %s M=%d: %s (%s) is experimental: name it in --variants to time it", label, M, name, k.Name)
					continue
				}
				v, err := b.decVariant(k, S, name, false, false)
				if err != nil {
					return nil, err
				}
				vs = append(vs, v)
			}
			// Its law's launch under PDL, only when named: outside the
			// regret table (a launch mode, not a split).
			if name := decPDLName(k.Tag); c.Named(name) {
				if len(ownSs[k.Tag]) == 0 {
					c.Skipf("dec %s M=%d: variant %s: %s's law gives no split at this point", label, M, name, k.Tag)
					continue
				}
				var err error
				if vs, err = b.decPDL(vs, label, k, ownSs[k.Tag][0], name); err != nil {
					return nil, err
				}
			}
			continue
		}
		if k.Status == kernels.Experimental && !c.Named(k.Tag) {
			c.Skipf("dec %s M=%d: %s (%s) is experimental: name it in --variants to time it", label, M, k.Tag, k.Name)
			continue
		}
		v, err := b.decVariant(k, law, k.Tag, false, false)
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
	return vs, nil
}

// decPDL appends kernel k at split S under programmatic dependent launch
// as variant name. A kernel without a PDL launch, or a device without the
// extended launch, is a skip with its reason, not a silent absence.
func (b *gemmBufs) decPDL(vs []bench.Variant, label string, k kernels.Kernel, S int, name string) ([]bench.Variant, error) {
	if k.Caps&kernels.PDL == 0 {
		b.c.Skipf("dec %s M=%d: variant %s: %s has no PDL launch (kernels.PDL not in its registry row)", label, b.M, name, k.Name)
		return vs, nil
	}
	v, err := b.decVariant(k, S, name, true, false)
	switch {
	case errors.Is(err, bench.ErrNoExLaunch):
		b.c.Skipf("dec %s M=%d: variant %s: %v", label, b.M, name, err)
		return vs, nil
	case err != nil:
		return nil, err
	}
	return append(vs, v), nil
}

// decPDLName names an own-law tag's variant at its law's split under
// programmatic dependent launch: "wk1pdl".
func decPDLName(tag string) string { return tag + "pdl" }

// decSplitName names a decode variant at split S: the baseline's "S4" (tag
// ""), an own-law kernel's "wgS4".
func decSplitName(tag string, S int) string { return fmt.Sprintf("%sS%d", tag, S) }

// decOwnSplits are the splits the dec suite times the decode kernel of
// tag serving M at on arch: its law's S first, then its law's Fixed
// splits (at most G); none where no such kernel serves M.
func decOwnSplits(tag, arch string, M int, s GemmShape, sms int) []int {
	for _, k := range DecKernels(M, arch, true) {
		if k.Tag != tag {
			continue
		}
		l, _ := OwnLawOf(tag)
		law := DecSplitFor(k, M, s.N(), s.K, sms)
		out := []int{law}
		for _, S := range l.Fixed {
			if S != law && S <= s.G() && DecKSFits(k.Name, M, S) {
				out = append(out, S)
			}
		}
		return out
	}
	return nil
}

func runPreSuite(c *bench.Ctx) error {
	names, shs, err := GemmShapesOf(c.Shapes)
	if err != nil {
		return err
	}
	lt, ltErr := gpu.OpenVendorGEMM(c.Dev.Info().Backend)
	if lt != nil {
		defer lt.Close()
	}
	arch := c.Dev.Info().CodeArch()
	Ms := c.MsOr([]int{2048, 8192})
	sort.Ints(Ms)
	total := len(shs) * len(Ms)
	for si, s := range shs {
		var bw *benchWeights
		for mi, M := range Ms {
			if c.Progress != nil {
				c.Progress(si*len(Ms)+mi, total, fmt.Sprintf("pre %s M=%d", names[si], M))
			}
			if !c.Take(names[si], M) {
				continue
			}
			if bw == nil {
				var err error
				if bw, err = newBenchWeights(s); err != nil {
					return err
				}
			}
			var ks []kernels.Kernel
			rowMajor := false
			for _, k := range PreKernels(M, arch, true) {
				if k.Status == kernels.Experimental && !c.Named(k.Tag) {
					c.Skipf("pre %s M=%d: %s (%s) is experimental: name it in --variants to time it", names[si], M, k.Tag, k.Name)
					continue
				}
				ks = append(ks, k)
				rowMajor = rowMajor || PreRowMajor(k.Name)
			}
			b, err := newGemmBufs(c, names[si], s, M, true, rowMajor, 1, bw)
			if err != nil {
				c.FreeAll()
				return err
			}
			var vs []bench.Variant
			for _, k := range ks {
				v, err := b.preVariant(k, k.Tag)
				if err != nil {
					c.FreeAll()
					return err
				}
				vs = append(vs, v)
			}
			if err := c.Measure(gemmPoint("pre", names[si], s, M, true, b, vs)); err != nil {
				return err
			}
			peerRow(c, lt, ltErr, "pre", names[si], s, M)
		}
	}
	return nil
}

// flipSigns is e4m3 codes with their sign bits flipped: the negated values.
func flipSigns(codes []byte) []byte {
	out := make([]byte, len(codes))
	for i, c := range codes {
		out[i] = c ^ 0x80
	}
	return out
}

func negated(v []float32) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = -x
	}
	return out
}

// negScaleWords flips the sign bit of the fp16 scale in every scale word
// (refimpl.W4Packed.SZ: scale bits | (z-8) << 16): every dequantized
// weight negated exactly.
func negScaleWords(sz []byte) []byte {
	out := append([]byte{}, sz...)
	for i := 1; i < len(out); i += 4 {
		out[i] ^= 0x80 // bit 15 of the little-endian word
	}
	return out
}
