package producers

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/parharness/parharness/bench"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/refimpl"
	"github.com/parharness/parharness/regret"
)

// Producer suites (hipsrc/producers.hip), cold regime: every buffer set
// (input rows, rotation records, outputs) is rotated through enough copies
// to defeat the last-level cache. Bytes counted: the bf16 input read once
// and the codes, scales and row sums written once (records excluded), as
// the issue defines the figure.

type producerSuite struct {
	name, doc string
	kernel    string // the records' kernel name; "" names it after the first variant
	Ms        []int
	variants  func(b *producerBufs) []bench.Variant
	bytes     func(M, K, P int) int64
	// needs says what the variants read besides the inputs bytes counts:
	// rotation records (their footprint counts them), the shuffle-routed
	// records (built only then), pass A's outputs (primed in every copy).
	needs needs
}

type needs struct{ records, shuffle, passA bool }

func init() {
	G := func(K int) int64 { return int64(K / Group) }
	for _, s := range []producerSuite{
		{name: "grpq", doc: "decode-band producer pq_rotq_group (per-group scales), one launch for all partitions; hot-records and all-hot variants attribute the cold fetch, group-pdl launches with programmatic dependent launch",
			Ms: bench.DecodeMs,
			variants: func(b *producerBufs) []bench.Variant {
				vs := []bench.Variant{b.group(), b.groupHot("group-hot-records", false), b.groupHot("group-hot", true)}
				if v, ok := b.groupPDL(); ok {
					vs = append(vs, v)
				}
				return vs
			},
			bytes: func(M, K, P int) int64 {
				return int64(M*K*2) + int64(P*M*K) + 2*int64(P*M)*G(K)*4
			},
			needs: needs{records: true}},
		{name: "rot", doc: "prefill pass A pq_rot_bf16: rotate -> bf16 rows + group amax; variant lanes = rows (pq_rot_bf16_lr)",
			Ms:       bench.PrefillMs,
			variants: func(b *producerBufs) []bench.Variant { return []bench.Variant{b.passA(), b.passALR()} },
			bytes:    passABytes, needs: needs{records: true}},
		{name: "rotsh", doc: "prefill pass A shuffle-routed (pq_rot_bf16_sh: the row-group in registers, 4 warp shuffles per layer) against pq_rot_bf16; a suite of its own until the kernel has passed the producers gate (--full) on a device",
			Ms: bench.PrefillMs,
			variants: func(b *producerBufs) []bench.Variant {
				vs := []bench.Variant{b.passA(), b.passASH(0)}
				for _, r := range []int{16, 64} { // its 41 record registers may want more rows per warp than the law's
					if r != RowsPerWarp(b.M) {
						vs = append(vs, b.passASH(r))
					}
				}
				return vs
			},
			bytes: passABytes, needs: needs{records: true, shuffle: true}},
		{name: "passc", doc: "prefill pass C pq_tokq: token scale, encode, row sums (row-major; tiled as a variant)",
			Ms:       bench.PrefillMs,
			variants: func(b *producerBufs) []bench.Variant { return []bench.Variant{b.passC(false), b.passC(true)} },
			bytes: func(M, K, P int) int64 {
				return int64(P*M*K*2) + int64(P*M)*G(K)*4 + int64(P*M*K) + int64(P*M*4) + int64(P*M)*G(K)*4
			},
			needs: needs{passA: true}},
		{name: "tokq", doc: "fused per-token producer pq_rotq_token, row-major codes, against pass A + pass C",
			Ms: bench.PrefillMs,
			variants: func(b *producerBufs) []bench.Variant {
				return []bench.Variant{b.fused(false), b.twoPass(false), b.twoPassLR(false)}
			},
			bytes: tokBytes, needs: needs{records: true}},
		{name: "tokqt", doc: "fused per-token producer pq_rotq_token, fragment-tiled codes, against pass A + pass C tiled",
			Ms: bench.PrefillMs,
			variants: func(b *producerBufs) []bench.Variant {
				return []bench.Variant{b.fused(true), b.twoPass(true), b.twoPassLR(true)}
			},
			bytes: tokBytes, needs: needs{records: true}},
	} {
		s := s
		bench.RegisterSuite(bench.Suite{Name: s.name, Doc: s.doc, Run: func(c *bench.Ctx) error { return runProducerSuite(c, s) }})
	}
}

// The rows-per-warp law of the group-wise producers (kernels.RowsPerWarp),
// scored on pass A over both ladders.
func init() {
	rpws := []int{1, 2, 4, 8, 16}
	var names []string
	for _, r := range rpws {
		names = append(names, fmt.Sprintf("rpw%d", r))
	}
	law := bench.Law{Name: "kernels.RowsPerWarp", Kernel: "passA", Variants: names, Pick: func(c regret.Cell) string {
		return fmt.Sprintf("rpw%d", RowsPerWarp(c.M))
	}}
	s := producerSuite{name: "rpw", kernel: "passA", doc: "pass A at fixed rows per warp (1..16) on both ladders: the regret table of kernels.RowsPerWarp",
		Ms: append(append([]int{}, bench.DecodeMs...), bench.PrefillMs...),
		variants: func(b *producerBufs) []bench.Variant {
			var vs []bench.Variant
			for _, r := range rpws {
				vs = append(vs, b.passARPW(r))
			}
			return vs
		},
		bytes: passABytes, needs: needs{records: true}}
	bench.RegisterSuite(bench.Suite{Name: s.name, Doc: s.doc, Run: func(c *bench.Ctx) error { return runProducerSuite(c, s) }, Laws: []bench.Law{law}})
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

// producerBufs holds one point's buffers: Copies sets laid end to end.
type producerBufs struct {
	c                             *bench.Ctx
	M, K, P, copies               int
	fp                            int64 // Point.Footprint: what one call of the lightest variant touches
	x, idx, cs, chs               bench.CopySet
	codes, scale, rsum, xr, gamax bench.CopySet
	shCtrl, shCS, shFin           bench.CopySet // pq_rot_bf16_sh's records
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

// bufsAt are the buffers of copy set kx, with the rotation records and
// channel scales taken from set kr.
func (b *producerBufs) bufsAt(kr, kx int) ProducerBufs {
	return ProducerBufs{X: b.x.At(kx), Idx: b.idx.At(kr), CS: b.cs.At(kr), ChS: b.chs.At(kr),
		ShCtrl: b.shCtrl.At(kr), ShCS: b.shCS.At(kr), ShFin: b.shFin.At(kr),
		Codes: b.codes.At(kx), Scale: b.scale.At(kx), RSum: b.rsum.At(kx), XR: b.xr.At(kx), GAmax: b.gamax.At(kx)}
}

// variant times one producer launch (kernels.ProducerLaunch: the geometry
// and arguments the gate launches too) with opts; call k reads records
// from set kr and everything else from set kx, (kr, kx) = sets(k). An
// error other than a missing extended launch is kept in b.err and fails
// the suite.
func (b *producerBufs) variant(name, kernel string, rpw int, tiled bool, opts gpu.LaunchOpts, sets func(k int) (kr, kx int)) (bench.Variant, error) {
	grid, block, _, err := ProducerLaunch(kernel, b.M, b.K, b.P, rpw, tiled, ProducerBufs{})
	var f func(gpu.Stream, int) error
	if err == nil {
		f, err = b.c.LauncherEx(kernel, grid, block, 0, opts, func(k int) []any {
			_, _, args, _ := ProducerLaunch(kernel, b.M, b.K, b.P, rpw, tiled, b.bufsAt(sets(k)))
			return args
		})
	}
	if err != nil && !errors.Is(err, bench.ErrNoExLaunch) && b.err == nil {
		b.err = err
	}
	return bench.Variant{Name: name, Enqueue: f}, err
}

// sameSet is the cold rotation: every buffer from the call's own set.
func sameSet(k int) (int, int) { return k, k }

func (b *producerBufs) plain(name, kernel string, rpw int, tiled bool) bench.Variant {
	v, _ := b.variant(name, kernel, rpw, tiled, gpu.LaunchOpts{}, sameSet)
	return v
}

func (b *producerBufs) group() bench.Variant { return b.plain("group", "pq_rotq_group", 0, false) }

// groupHot is the decode-band producer with part of its traffic pinned to
// buffer set 0 (cache-hot) for attribution: the rotation records and
// channel scales, or (all) everything. The time they save is what fetching
// those bytes cold costs.
func (b *producerBufs) groupHot(name string, all bool) bench.Variant {
	sets := func(k int) (int, int) {
		if all {
			return 0, 0
		}
		return 0, k
	}
	v, _ := b.variant(name, "pq_rotq_group", 0, false, gpu.LaunchOpts{}, sets)
	v.Regime = bench.Hot // inputs pinned to buffer set 0: cache-resident
	return v
}

// groupPDL is the decode-band producer under programmatic dependent launch:
// each call's records and channel scales load while the previous call
// finishes (as behind the previous layer in a decode step). false, after a
// skip note, where the backend cannot.
func (b *producerBufs) groupPDL() (bench.Variant, bool) {
	v, err := b.variant("group-pdl", "pq_rotq_group", 0, false, gpu.LaunchOpts{PDL: true}, sameSet)
	if errors.Is(err, bench.ErrNoExLaunch) {
		b.c.Skipf("grpq M=%d K=%d P=%d: variant group-pdl: %v", b.M, b.K, b.P, err)
		return bench.Variant{}, false
	}
	return v, true
}

func (b *producerBufs) passA() bench.Variant { return b.passARPW(0) }

// rpwVariant names a group-wise variant at rpw rows per warp: the law's
// choice under lawName when rpw is 0, else fixed under fixedFmt.
func rpwVariant(lawName, fixedFmt string, rpw int) string {
	if rpw == 0 {
		return lawName
	}
	return fmt.Sprintf(fixedFmt, rpw)
}

// passARPW is pass A at a fixed rows-per-warp (0: the law's choice).
func (b *producerBufs) passARPW(rpw int) bench.Variant {
	return b.plain(rpwVariant("passA", "rpw%d", rpw), "pq_rot_bf16", rpw, false)
}

func (b *producerBufs) passALR() bench.Variant {
	return b.plain("passA-lr", "pq_rot_bf16_lr", 0, false)
}

// passASH is pass A shuffle-routed (pq_rot_bf16_sh) at rpw rows per warp
// (0: the law's); its channel scales are the same buffer as pq_rot_bf16's.
func (b *producerBufs) passASH(rpw int) bench.Variant {
	return b.plain(rpwVariant("passA-sh", "passA-sh-rpw%d", rpw), "pq_rot_bf16_sh", rpw, false)
}

func (b *producerBufs) twoPassLR(tiled bool) bench.Variant {
	return bench.Sequence(b.passALR(), b.passC(tiled))
}

func (b *producerBufs) passC(tiled bool) bench.Variant {
	return b.plain("passC-"+layoutName(tiled), "pq_tokq", 0, tiled)
}

func (b *producerBufs) fused(tiled bool) bench.Variant {
	return b.plain("fused-"+layoutName(tiled), "pq_rotq_token", 0, tiled)
}

func (b *producerBufs) twoPass(tiled bool) bench.Variant {
	return bench.Sequence(b.passA(), b.passC(tiled))
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
		if s.name == "grpq" && p.M > 128 {
			c.Skipf("%s K=%d P=%d M=%d: the decode band stops at M=128", s.name, p.K, p.P, p.M)
			continue
		}
		if err := FusedTokenCheck(p.K); err != nil && (s.name == "tokq" || s.name == "tokqt") {
			c.Skipf("%s K=%d P=%d: %v", s.name, p.K, p.P, err)
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
		kernel := s.kernel
		if kernel == "" {
			kernel = vs[0].Name
		}
		point := bench.Point{Suite: s.name, Kernel: kernel, Shape: fmt.Sprintf("K%dxP%d", p.K, p.P), M: p.M, Regime: bench.Cold,
			Bytes: s.bytes(p.M, p.K, p.P), Footprint: b.fp, Copies: b.copies, Variants: vs,
			Extra: map[string]float64{"K": float64(p.K), "P": float64(p.P)}}
		if err := c.Measure(point); err != nil {
			return err
		}
	}
	return nil
}

// newProducerBufs allocates the buffer sets of one point and fills inputs
// and records (the same contents in every copy). The cold rotation's copy
// count comes from what one call of the suite's lightest variant touches,
// the bytes it counts plus the records it reads, not from the union of
// every buffer here: buffers a suite never touches would otherwise count
// towards the footprint and leave too few copies to defeat the cache.
func newProducerBufs(c *bench.Ctx, s producerSuite, M, K, P int) (*producerBufs, error) {
	G := K / Group
	Mpad := refimpl.PadRows(M)
	sizes := []int{2 * M * K, 4 * P * 8 * G * 32, 16 * P * 8 * G * 32, 4 * P * K,
		P * Mpad * K, 4 * P * M * G, 4 * P * M * G, 2 * P * M * K, 4 * P * M * G}
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
	rr, err := refimpl.BuildRotRecords(rots)
	if err != nil {
		return nil, err
	}
	x := make([]byte, 2*M*K)
	for i := 0; i < M*K; i++ {
		binary.LittleEndian.PutUint16(x[2*i:], refimpl.F64ToBF16(rng.NormFloat64()))
	}
	idx, cs, chs := rr.Bytes()
	ups := []bench.CopyUpload{{Set: b.x, Data: x}, {Set: b.idx, Data: idx}, {Set: b.cs, Data: cs}, {Set: b.chs, Data: chs}}
	if s.needs.shuffle {
		sr, err := refimpl.BuildShuffleRecords(rots)
		if err != nil {
			return nil, err
		}
		ctrl, scs, fin, _ := sr.Bytes()
		ups = append(ups, bench.CopyUpload{Set: b.shCtrl, Data: ctrl}, bench.CopyUpload{Set: b.shCS, Data: scs}, bench.CopyUpload{Set: b.shFin, Data: fin})
	}
	if err := bench.UploadEachCopy(c, b.copies, ups...); err != nil {
		return nil, err
	}
	if s.needs.passA { // pass C reads pass A's outputs: give it real ones in every copy
		return b, b.primePassC()
	}
	return b, nil
}

// primePassC runs pass A once per copy so pass C benches read real rows.
func (b *producerBufs) primePassC() error {
	a := b.passA()
	if b.err != nil {
		return b.err
	}
	for k := 0; k < b.copies; k++ {
		if err := a.Enqueue(0, k); err != nil {
			return err
		}
	}
	return b.c.Dev.Synchronize()
}
