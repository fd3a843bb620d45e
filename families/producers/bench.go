package producers

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/parharness/parharness/bench"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/refimpl"
	"github.com/parharness/parharness/regret"
	"github.com/parharness/parharness/results"
)

// Producer suites, cold regime: every buffer set (input rows, rotation
// records, outputs) is rotated through enough copies to defeat the
// last-level cache. Bytes counted: the bf16 input read once and the codes,
// scales and row sums written once (records excluded).
//
// The timed kernels come from the registry: a suite times the baseline of
// its Op and every registered variant beside it (experimental kernels only
// when --variants names them). Inputs are built as the gate builds them
// (realistic activations, random rotations and their records) and the
// mirror's outputs are what every variant's output is checked against
// (bench.Check), byte for byte, with the gate's comparison.

type producerSuite struct {
	name, doc string
	kernel    string // the records' kernel column
	op        string // the Op whose kernels it times
	Ms        []int
	variants  func(b *producerBufs) []bench.Variant
	bytes     func(M, K, P int) int64
	// needs says what the variants read besides the inputs bytes counts:
	// rotation records (their footprint counts them), the shuffle-routed
	// records (built only then), pass A's outputs (written in every copy).
	needs needs
	// names are the variant names besides the op's kernels' tags
	// (opTags), for Suite.Variants.
	names func() []string
}

type needs struct{ records, shuffle, passA bool }

// opTags are the variant names of op's registered kernels (tagOf, every
// layout), on any target, experimental ones included.
func opTags(op string) []string {
	var out []string
	for _, k := range kernels.Select(kernels.Query{Family: Family, Op: op, Full: true, Roles: []kernels.Role{kernels.Baseline, kernels.Variant}}) {
		for _, tiled := range layouts(op) {
			if t := tagOf(k, tiled); !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// twoPassNames are the tokq/tokqt sequences' names: each pass-A kernel
// then the pass-C baseline in the layout (bench.Sequence joins with "+").
func twoPassNames(tiled bool) []string {
	var out []string
	for _, c := range kernels.Select(kernels.Query{Family: Family, Op: OpPassC, Roles: []kernels.Role{kernels.Baseline}}) {
		for _, a := range opTags(OpPassA) {
			out = append(out, a+"+"+tagOf(c, tiled))
		}
	}
	return out
}

// suiteVariants is a producer suite's Suite.Variants.
func (s producerSuite) suiteVariants() []string {
	if s.names == nil {
		return opTags(s.op)
	}
	return slices.Concat(opTags(s.op), s.names())
}

func init() {
	G := func(K int) int64 { return int64(K / Group) }
	for _, s := range []producerSuite{
		{name: "grpq", kernel: "group", op: OpGroup, doc: "decode-band producer (per-group scales), one launch for all partitions: its registered kernels; hot-records and all-hot variants attribute the cold fetch, group-pdl launches with programmatic dependent launch",
			Ms: bench.DecodeMs,
			variants: func(b *producerBufs) []bench.Variant {
				base := b.opKernels(OpGroup)
				vs := b.kernelVariants(OpGroup, false)
				vs = append(vs, b.groupHot(base[0], "group-hot-records", false), b.groupHot(base[0], "group-hot", true))
				if v, ok := b.groupPDL(base[0]); ok {
					vs = append(vs, v)
				}
				return vs
			},
			names: func() []string { return []string{"group-hot-records", "group-hot", "group-pdl"} },
			bytes: groupBytes,
			needs: needs{records: true, shuffle: true}},
		{name: "rot", kernel: "passA", op: OpPassA, doc: "prefill pass A (rotate -> bf16 rows + group amax): every registered pass-A kernel (plain, lanes = rows, shuffle-routed)",
			Ms:       bench.PrefillMs,
			variants: func(b *producerBufs) []bench.Variant { return b.kernelVariants(OpPassA, false) },
			bytes:    passABytes, needs: needs{records: true, shuffle: true}},
		{name: "passc", kernel: "passC", op: OpPassC, doc: "prefill pass C (token scale, encode, row sums), row-major and tiled: every registered pass-C kernel",
			Ms: bench.PrefillMs,
			variants: func(b *producerBufs) []bench.Variant {
				return append(b.kernelVariants(OpPassC, false), b.kernelVariants(OpPassC, true)...)
			},
			bytes: func(M, K, P int) int64 {
				return int64(P*M*K*2) + int64(P*M)*G(K)*4 + int64(P*M*K) + int64(P*M*4) + int64(P*M)*G(K)*4
			},
			needs: needs{passA: true}},
		{name: "tokq", kernel: "fused-row", op: OpToken, doc: "fused per-token producer, row-major codes, against every pass-A kernel + pass C",
			Ms:       bench.PrefillMs,
			variants: func(b *producerBufs) []bench.Variant { return b.tokenVariants(false) },
			names:    func() []string { return twoPassNames(false) },
			bytes:    tokBytes, needs: needs{records: true, shuffle: true}},
		{name: "tokqt", kernel: "fused-tiled", op: OpToken, doc: "fused per-token producer, fragment-tiled codes, against every pass-A kernel + pass C tiled",
			Ms:       bench.PrefillMs,
			variants: func(b *producerBufs) []bench.Variant { return b.tokenVariants(true) },
			names:    func() []string { return twoPassNames(true) },
			bytes:    tokBytes, needs: needs{records: true, shuffle: true}},
	} {
		s := s
		bench.RegisterSuite(bench.Suite{Family: Family, Name: s.name, Isolated: true, Doc: s.doc, Run: func(c *bench.Ctx) error { return runProducerSuite(c, s) },
			Variants: s.suiteVariants, Axes: s.axes()})
	}
}

// groupBytes is what a per-group producer launch moves: the bf16 rows in,
// codes, group scales and row sums out.
func groupBytes(M, K, P int) int64 {
	return int64(M*K*2) + int64(P*M*K) + 2*int64(P*M)*int64(K/Group)*4
}

// pg: the per-group producer on the prefill ladder, the PG form
// (pq_rotq_group_sh) against the plain one (pq_rotq_group), with the
// regret table of the per-arch law GroupProducer.
func init() {
	// The variants are the two kernels' tags (launch.go's rows; the
	// registry is not filled yet when this file's init runs).
	law := bench.Law{Name: "producers.GroupProducer", Kernel: "group", Variants: []string{"group", "group-sh"}, PickFrom: func(doc *results.Document, suite string) regret.Law {
		arch := "sm_90a"
		if doc.Device != nil && strings.HasPrefix(doc.Device.Arch, "gfx") {
			arch = "gfx1201"
		}
		return func(c regret.Cell) string {
			k, _ := kernels.Lookup(GroupProducer(arch, c.M))
			return k.Tag
		}
	}}
	s := producerSuite{name: "pg", kernel: "group", op: OpGroup, doc: "the per-group producer on the prefill ladder: the PG form (pq_rotq_group_sh: values in registers, shuffle-routed layers, no layer syncs) against the plain one (pq_rotq_group); regret of the per-arch law producers.GroupProducer",
		Ms:       bench.PrefillMs,
		variants: func(b *producerBufs) []bench.Variant { return b.kernelVariants(OpGroup, false) },
		bytes:    groupBytes, needs: needs{records: true, shuffle: true}}
	bench.RegisterSuite(bench.Suite{Family: Family, Name: s.name, Isolated: true, Doc: s.doc, Run: func(c *bench.Ctx) error { return runProducerSuite(c, s) }, Laws: []bench.Law{law},
		Variants: s.suiteVariants, Axes: s.axes()})
}

// The rows-per-warp law of the group-wise producers (RowsPerWarp), scored
// on the pass-A baseline over both ladders.
func init() {
	rpws := []int{1, 2, 4, 8, 16}
	var names []string
	for _, r := range rpws {
		names = append(names, fmt.Sprintf("rpw%d", r))
	}
	law := bench.Law{Name: "producers.RowsPerWarp", Kernel: "passA", Variants: names, Pick: func(c regret.Cell) string {
		return fmt.Sprintf("rpw%d", RowsPerWarp(c.M))
	}}
	s := producerSuite{name: "rpw", kernel: "passA", op: OpPassA, doc: "the pass-A baseline at fixed rows per warp (1..16) on both ladders: the regret table of producers.RowsPerWarp",
		Ms: append(append([]int{}, bench.DecodeMs...), bench.PrefillMs...),
		variants: func(b *producerBufs) []bench.Variant {
			base := b.opKernels(OpPassA)[0]
			var vs []bench.Variant
			for _, r := range rpws {
				vs = append(vs, b.variant(fmt.Sprintf("rpw%d", r), base, r, false, gpu.LaunchOpts{}, sameSet))
			}
			return vs
		},
		bytes: passABytes, needs: needs{records: true}}
	bench.RegisterSuite(bench.Suite{Family: Family, Name: s.name, Isolated: true, Doc: s.doc, Run: func(c *bench.Ctx) error { return runProducerSuite(c, s) }, Laws: []bench.Law{law},
		Variants: func() []string { return names }, Axes: s.axes()})
}

// axes says what a producer suite sweeps (Suite.Axes).
func (s producerSuite) axes() string {
	ms := make([]string, len(s.Ms))
	for i, m := range s.Ms {
		ms[i] = strconv.Itoa(m)
	}
	return "shape: the deployed (K, P) of --shapes (KxP); M: --m, default " + strings.Join(ms, ", ") + "; regime cold (hot for the attribution variants)"
}

// passABytes is pass A's traffic: bf16 rows in, P rotated bf16 rows and
// group amaxes out.
func passABytes(M, K, P int) int64 {
	return int64(M*K*2) + int64(P*M*K*2) + int64(P*M)*int64(K/Group)*4
}

func tokBytes(M, K, P int) int64 {
	G := int64(K / Group)
	return int64(M*K*2) + int64(P*M*K) + int64(P*M*4) + int64(P*M)*G*4
}

// producerBufs holds one point's buffers (Copies sets laid end to end)
// and the mirror's outputs every variant is checked against.
type producerBufs struct {
	c                             *bench.Ctx
	M, K, P, copies               int
	fp                            int64 // Point.Footprint: what one call of the lightest variant touches
	x, idx, cs, chs               bench.CopySet
	codes, scale, rsum, xr, gamax bench.CopySet
	shCtrl, shCS, shFin           bench.CopySet // shuffle-form records
	want, wantLast                producerWant  // the mirror's outputs for the first copies' inputs and the last copy's
	err                           error
}

func (b *producerBufs) alloc(size int) bench.CopySet {
	if b.err != nil {
		return bench.CopySet{}
	}
	s, err := bench.AllocCopies(b.c, size, b.copies)
	b.err = err
	return s
}

// opKernels are the registered kernels of op this point times, baseline
// first; experimental ones only when --variants names their tag.
func (b *producerBufs) opKernels(op string) []kernels.Kernel {
	var out []kernels.Kernel
	for _, k := range kernels.Select(kernels.Query{Family: Family, Op: op, M: b.M, Arch: b.c.Dev.Info().CodeArch(), Full: true,
		Roles: []kernels.Role{kernels.Baseline, kernels.Variant}}) {
		if k.Status == kernels.Experimental && !b.c.Named(k.Tag) && !b.c.Named(k.Tag+"-row") && !b.c.Named(k.Tag+"-tiled") {
			b.c.Skipf("%s M=%d K=%d P=%d: %s (%s) is experimental: name it in --variants to time it", op, b.M, b.K, b.P, k.Tag, k.Name)
			continue
		}
		out = append(out, k)
	}
	if len(out) == 0 || out[0].Role != kernels.Baseline {
		b.err = fmt.Errorf("producers: no baseline kernel of %s serves M=%d on %s", op, b.M, b.c.Dev.Info().CodeArch())
		return []kernels.Kernel{{}}
	}
	return out
}

// tagOf names a kernel's variant: its registry tag, with the code layout
// for the per-token Ops.
func tagOf(k kernels.Kernel, tiled bool) string {
	if len(layouts(k.Op)) > 1 {
		return k.Tag + "-" + layoutName(tiled)
	}
	return k.Tag
}

// kernelVariants are op's kernels at the law's rows per warp, each with its check.
func (b *producerBufs) kernelVariants(op string, tiled bool) []bench.Variant {
	var vs []bench.Variant
	for _, k := range b.opKernels(op) {
		vs = append(vs, b.variant(tagOf(k, tiled), k, 0, tiled, gpu.LaunchOpts{}, sameSet))
	}
	return vs
}

// tokenVariants are the per-token Op's kernels, then every pass-A kernel
// followed by the pass-C baseline (the two-pass path timed as a whole).
func (b *producerBufs) tokenVariants(tiled bool) []bench.Variant {
	vs := b.kernelVariants(OpToken, tiled)
	passC := b.opKernels(OpPassC)[0]
	for _, a := range b.opKernels(OpPassA) {
		pa := b.variant(tagOf(a, false), a, 0, false, gpu.LaunchOpts{}, sameSet)
		pc := b.variant(tagOf(passC, tiled), passC, 0, tiled, gpu.LaunchOpts{}, sameSet)
		seq := bench.Sequence(pa, pc)
		seq.Check, seq.Unchecked = b.check([]string{a.Op, passC.Op}, tiled, sameSet), ""
		vs = append(vs, seq)
	}
	return vs
}

// bufsAt are the buffers of copy set kx, with the rotation records and
// channel scales taken from set kr.
func (b *producerBufs) bufsAt(kr, kx int) ProducerBufs {
	return ProducerBufs{X: b.x.At(kx), Idx: b.idx.At(kr), CS: b.cs.At(kr), ChS: b.chs.At(kr),
		ShCtrl: b.shCtrl.At(kr), ShCS: b.shCS.At(kr), ShFin: b.shFin.At(kr),
		Codes: b.codes.At(kx), Scale: b.scale.At(kx), RSum: b.rsum.At(kx), XR: b.xr.At(kx), GAmax: b.gamax.At(kx)}
}

// variantErr is variant's launcher with the error returned: a missing
// extended launch (ErrNoExLaunch) is the caller's to skip on, any other
// error is kept in b.err and fails the suite.
func (b *producerBufs) variantErr(name string, k kernels.Kernel, rpw int, tiled bool, opts gpu.LaunchOpts, sets func(k int) (kr, kx int)) (bench.Variant, error) {
	grid, block, _, err := ProducerLaunch(k.Name, b.M, b.K, b.P, rpw, tiled, ProducerBufs{})
	var f func(gpu.Stream, int) error
	if err == nil {
		f, err = b.c.LauncherEx(k.Name, grid, block, 0, opts, func(c int) []any {
			_, _, args, _ := ProducerLaunch(k.Name, b.M, b.K, b.P, rpw, tiled, b.bufsAt(sets(c)))
			return args
		})
	}
	if err != nil && !errors.Is(err, bench.ErrNoExLaunch) && b.err == nil {
		b.err = err
	}
	return bench.Variant{Name: name, Enqueue: f, Check: b.check([]string{k.Op}, tiled, sets)}, err
}

// variant times one producer launch (ProducerLaunch: the geometry and
// arguments the gate launches too) with opts; call c reads records from
// set kr and everything else from set kx, (kr, kx) = sets(c).
func (b *producerBufs) variant(name string, k kernels.Kernel, rpw int, tiled bool, opts gpu.LaunchOpts, sets func(k int) (kr, kx int)) bench.Variant {
	v, _ := b.variantErr(name, k, rpw, tiled, opts, sets)
	return v
}

// sameSet is the cold rotation: every buffer from the call's own set.
func sameSet(k int) (int, int) { return k, k }

// check is the output check of a variant that runs ops in order (one
// kernel, or a two-pass sequence) writing layout tiled, in the buffer set
// sets(k) gives for the rotation's copy k. Before the check run every
// output is poisoned and pass A's rows and amaxes are restored from the
// mirror where the first op reads them (pass C) or must leave them alone
// (the fused producer); after it the last op's outputs are compared as
// the gate compares them.
func (b *producerBufs) check(ops []string, tiled bool, sets func(k int) (kr, kx int)) *bench.Check {
	dev := b.c.Dev
	first, last := ops[0], ops[len(ops)-1]
	label := fmt.Sprintf("K=%d P=%d M=%d", b.K, b.P, b.M)
	return &bench.Check{
		Prepare: func(c int) error {
			_, kx := sets(c)
			for _, s := range []bench.CopySet{b.codes, b.scale, b.rsum, b.xr, b.gamax} {
				if err := s.Poison(dev, kx, 0xFF); err != nil {
					return err
				}
			}
			if first == OpPassC || first == OpToken {
				w := b.wantAt(kx)
				if err := dev.HtoD(b.xr.At(kx), w.xr); err != nil {
					return err
				}
				return dev.HtoD(b.gamax.At(kx), w.gamax)
			}
			return nil
		},
		Verify: func(c int) error {
			_, kx := sets(c)
			var got producerOutputs
			for _, d := range []struct {
				s   bench.CopySet
				dst *[]byte
			}{{b.codes, &got.codes}, {b.scale, &got.scale}, {b.rsum, &got.rsum}, {b.xr, &got.xr}, {b.gamax, &got.gamax}} {
				var err error
				if *d.dst, err = d.s.Download(dev, kx); err != nil {
					return err
				}
			}
			var f gates.Findings
			checkProducerOp(&f, fmt.Sprintf("%s copy %d", label, kx), last, tiled, b.M, b.K, b.P, b.wantAt(kx), got)
			return f.Err()
		},
	}
}

// wantAt is the mirror's output for the inputs of buffer set k: the last
// set holds the negated activations.
func (b *producerBufs) wantAt(k int) producerWant {
	if k == b.copies-1 && b.copies > 1 {
		return b.wantLast
	}
	return b.want
}

// groupHot is the decode-band producer with part of its traffic pinned to
// buffer set 0 (cache-hot) for attribution: the rotation records and
// channel scales, or (all) everything. The time they save is what fetching
// those bytes cold costs.
func (b *producerBufs) groupHot(k kernels.Kernel, name string, all bool) bench.Variant {
	sets := func(c int) (int, int) {
		if all {
			return 0, 0
		}
		return 0, c
	}
	v := b.variant(name, k, 0, false, gpu.LaunchOpts{}, sets)
	v.Regime = bench.Hot // inputs pinned to buffer set 0: cache-resident
	return v
}

// groupPDL is the decode-band producer under programmatic dependent launch:
// each call's records and channel scales load while the previous call
// finishes (as behind the previous layer in a decode step). false, after a
// skip note, where the backend or the kernel cannot.
func (b *producerBufs) groupPDL(k kernels.Kernel) (bench.Variant, bool) {
	if k.Caps&kernels.PDL == 0 {
		b.c.Skipf("grpq M=%d K=%d P=%d: variant group-pdl: %s does not declare PDL", b.M, b.K, b.P, k.Name)
		return bench.Variant{}, false
	}
	v, err := b.variantErr("group-pdl", k, 0, false, gpu.LaunchOpts{PDL: true}, sameSet)
	if errors.Is(err, bench.ErrNoExLaunch) {
		b.c.Skipf("grpq M=%d K=%d P=%d: variant group-pdl: %v", b.M, b.K, b.P, err)
		return bench.Variant{}, false
	}
	return v, true
}

func runProducerSuite(c *bench.Ctx, s producerSuite) error {
	type pt struct{ K, P, M int }
	var pts []pt
	for _, kp := range c.Shapes.ProducerShapes() {
		for _, M := range c.MsOr(s.Ms) {
			pts = append(pts, pt{kp.K, kp.P, M})
		}
	}
	for i, p := range pts {
		if c.Progress != nil {
			c.Progress(i, len(pts), fmt.Sprintf("%s K=%d P=%d M=%d", s.name, p.K, p.P, p.M))
		}
		if _, err := kernels.BaselineFor(Family, s.op, p.M, c.Dev.Info().CodeArch()); err != nil {
			c.Skipf("%s K=%d P=%d M=%d: %v", s.name, p.K, p.P, p.M, err)
			continue
		}
		if err := FusedTokenCheck(p.K); err != nil && s.op == OpToken {
			c.Skipf("%s K=%d P=%d: %v", s.name, p.K, p.P, err)
			continue
		}
		shape := fmt.Sprintf("K%dxP%d", p.K, p.P)
		if !c.Take(shape, p.M) {
			continue
		}
		b, err := newProducerBufs(c, s, p.M, p.K, p.P)
		if err != nil {
			c.FreeAll()
			return err
		}
		vs := s.variants(b)
		if b.err != nil {
			c.FreeAll()
			return b.err
		}
		point := bench.Point{Suite: s.name, Kernel: s.kernel, Shape: shape, M: p.M, Regime: bench.Cold,
			Bytes: s.bytes(p.M, p.K, p.P), Footprint: b.fp, Copies: b.copies, Variants: vs,
			Extra: map[string]float64{"K": float64(p.K), "P": float64(p.P)}}
		if err := c.Measure(point); err != nil {
			return err
		}
	}
	return nil
}

// newProducerBufs allocates the buffer sets of one point and fills inputs
// and records (the same contents in every copy), built as the gate builds
// them, with the mirror's outputs to check against. The cold rotation's
// copy count comes from what one call of the suite's lightest variant
// touches, the bytes it counts plus the records it reads, not from the
// union of every buffer here: buffers a suite never touches would
// otherwise count towards the footprint and leave too few copies to
// defeat the cache.
func newProducerBufs(c *bench.Ctx, s producerSuite, M, K, P int) (*producerBufs, error) {
	G := K / Group
	Mpad := refimpl.PadRows(M)
	// The outputs (codes, scale, rsum, xr, gamax) have the gate's rowsPastM
	// rows of room after them, poisoned by the check: a write past row M
	// fails it as it fails the gate.
	sizes := []int{2 * M * K, 4 * P * 8 * G * 32, 16 * P * 8 * G * 32, 4 * P * K,
		P*Mpad*K + rowsPastM*K, 4 * (P*M*G + rowsPastM*G), 4 * (P*M*G + rowsPastM*G), 2 * (P*M*K + rowsPastM*K), 4 * (P*M*G + rowsPastM*G)}
	fp := s.bytes(M, K, P)
	if s.needs.records {
		fp += int64(sizes[1] + sizes[2] + sizes[3])
	}
	b := &producerBufs{c: c, M: M, K: K, P: P, fp: fp, copies: bench.CopiesFor(fp, c.Dev.Info().LLCBytes)}
	for i, dst := range []*bench.CopySet{&b.x, &b.idx, &b.cs, &b.chs, &b.codes, &b.scale, &b.rsum, &b.xr, &b.gamax} {
		*dst = b.alloc(sizes[i])
	}
	if s.needs.shuffle {
		b.shCtrl, b.shCS, b.shFin = b.alloc(sizes[1]), b.alloc(sizes[2]), b.alloc(4*P*G*32)
	}
	if b.err != nil {
		return nil, b.err
	}
	rng := rand.New(rand.NewPCG(uint64(M*K*P), 11))
	rots := make([]*refimpl.Rotation, P)
	for p := range rots {
		rots[p] = refimpl.RandomRotation(rng, K)
	}
	x := randomActivations(rng, M, K, "normal")
	in, err := newProducerInputs(rots, x, producerCase{K: K, P: P, M: M, dist: "normal"}, s.op == OpGroup, s.needs.shuffle)
	if err != nil {
		return nil, err
	}
	b.want, b.wantLast = in.want, in.want
	// The last buffer set holds the negated activations, with their own
	// mirror output: a launch that reads a fixed set's inputs writes the
	// other set's output where the check of the last set looks.
	var xLast []uint16
	if b.copies > 1 {
		xLast = make([]uint16, len(x))
		for i, v := range x {
			xLast[i] = v ^ 0x8000
		}
		inLast, err := newProducerInputs(rots, xLast, producerCase{K: K, P: P, M: M, dist: "normal"}, s.op == OpGroup, false)
		if err != nil {
			return nil, err
		}
		b.wantLast = inLast.want
	}
	idx, cs, chs := in.rr.Bytes()
	ups := []bench.CopyUpload{{Set: b.x, Data: in.xBytes}, {Set: b.idx, Data: idx}, {Set: b.cs, Data: cs}, {Set: b.chs, Data: chs}}
	if in.sr != nil {
		ctrl, scs, fin, _ := in.sr.Bytes()
		ups = append(ups, bench.CopyUpload{Set: b.shCtrl, Data: ctrl}, bench.CopyUpload{Set: b.shCS, Data: scs}, bench.CopyUpload{Set: b.shFin, Data: fin})
	}
	if s.needs.passA { // pass C reads pass A's outputs: the mirror's, in every copy
		ups = append(ups, bench.CopyUpload{Set: b.xr, Data: b.want.xr}, bench.CopyUpload{Set: b.gamax, Data: b.want.gamax})
	}
	if err := bench.UploadEachCopy(c, b.copies, ups...); err != nil {
		return nil, err
	}
	if b.copies == 1 {
		return b, nil
	}
	last := []bench.CopyUpload{{Set: b.x, Data: gates.U16Bytes(xLast)}}
	if s.needs.passA {
		last = append(last, bench.CopyUpload{Set: b.xr, Data: b.wantLast.xr}, bench.CopyUpload{Set: b.gamax, Data: b.wantLast.gamax})
	}
	return b, bench.UploadLastCopy(c, b.copies, last...)
}
