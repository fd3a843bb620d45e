package i8

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/parharness/parharness/bench"
	"github.com/parharness/parharness/families/gemm"
	"github.com/parharness/parharness/families/producers"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/refimpl"
)

// The i8 suite: the int8 paths against the e4m3 paths in the same run, on
// the decode shapes (gate_up, qkv, down, in_proj of --shapes), M ladder
// 1, 2, 4, 8, 16, 32, 64, cold:
//   - GEMM vs GEMM (kernel "i8_dec"): the e4m3 decode baseline
//     (families/gemm, by registry through gemm.DecLaunch, at its law's S,
//     as a cluster launch where the law's S is gemm.DecClusterS) as the
//     baseline, variant "e4m3"; the I8 decode baseline at DecSplitK,
//     variant "i8"; every other registered I8 decode kernel serving M at
//     the same S, by its tag ("i8-staged", sm_90a). All read the same weights (refimpl.RepackW4) and
//     scale words; the activations are the same float32 rows quantized by
//     each path's Go mirror. Bytes per call: weights N·K/2 + scale words
//     4·G·N + codes P·M·K + scales and row sums 8·P·M·G + bf16 out 2·M·N
//     (the same for both paths: a code is one byte either way).
//   - producer vs producer (kernel "i8_group"): pq_rotq_group (e4m3,
//     variant "e4m3") against pq_i8_group ("i8") at the shape's (K, P).
//     Bytes per call: x 2·M·K + codes P·M·K + scales and row sums
//     8·P·M·G + the rotation records (20 bytes per lane, layer and group:
//     640·P·G·8) and channel scales 4·P·K.
// Every variant's output is checked before and after timing: the GEMMs
// within their gate bounds (the e4m3 one with the e4m3 gate's element
// bound, (128+G+S+8)·2^-24·mag), the producers byte for byte against their
// mirrors. The last buffer set holds negated activations (exact negations
// of every output: RNE and both code grids are symmetric), so a launch
// that reads a fixed set fails its check. The copy ceiling is measured by
// the suite framework in the same run.

func init() {
	bench.RegisterSuite(bench.Suite{Family: Family, Name: "i8", Doc: "int8 against e4m3 activations: decode GEMM vs GEMM and decode producer vs producer on gate_up, qkv, down, in_proj, M 1..64, cold", Run: runI8Suite,
		Variants: func() []string {
			out := []string{"e4m3", "i8"}
			for _, k := range kernels.Select(kernels.Query{Family: Family, Op: OpDec, Full: true, Roles: []kernels.Role{kernels.Variant}}) {
				if !slices.Contains(out, k.Tag) {
					out = append(out, k.Tag)
				}
			}
			return out
		},
		Axes: "shape: gate_up, qkv, down, in_proj of --shapes; M: --m, default 1, 2, 4, 8, 16, 32, 64; regime cold"})
}

// BenchMs is the suite's default M ladder.
var BenchMs = []int{1, 2, 4, 8, 16, 32, 64}

func runI8Suite(c *bench.Ctx) error {
	names, shs, err := gemm.GemmShapesOf(c.Shapes, "gate_up", "qkv", "down", "in_proj")
	if err != nil {
		return err
	}
	Ms := c.MsOr(BenchMs)
	total := len(shs) * len(Ms)
	for si, s := range shs {
		var w *refimpl.QWeight
		var pk *refimpl.W4Packed
		for mi, M := range Ms {
			if c.Progress != nil {
				c.Progress(si*len(Ms)+mi, total, fmt.Sprintf("i8 %s M=%d", names[si], M))
			}
			if M > DecMaxM {
				c.Skipf("i8 %s M=%d: above the decode band (M <= %d)", names[si], M, DecMaxM)
				continue
			}
			if !c.Take(names[si], M) {
				continue
			}
			if w == nil {
				w = gemm.GateWeights(rand.New(rand.NewPCG(uint64(s.K), uint64(s.N()))), s.K, s.N())
				if pk, err = refimpl.RepackW4(w); err != nil {
					return err
				}
			}
			if err := gemmPoint(c, names[si], s, M, w, pk); err != nil {
				c.FreeAll()
				return err
			}
			c.FreeAll()
			if err := producerPoint(c, names[si], s, M); err != nil {
				c.FreeAll()
				return err
			}
			c.FreeAll()
		}
	}
	return nil
}

// alloc uploads data into a copy set (every copy; the last one gets last
// when it is not nil).
func alloc(c *bench.Ctx, copies int, data, last []byte) (bench.CopySet, error) {
	cs, err := bench.AllocCopies(c, len(data), copies)
	if err != nil {
		return cs, err
	}
	if err := bench.UploadEachCopy(c, copies, bench.CopyUpload{Set: cs, Data: data}); err != nil {
		return cs, err
	}
	if last != nil && copies > 1 {
		err = bench.UploadLastCopy(c, copies, bench.CopyUpload{Set: cs, Data: last})
	}
	return cs, err
}

func negI8(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = byte(-int8(c))
	}
	return out
}

// negE4M3 negates e4m3 codes (a zero stays 0x00: the encoder never writes 0x80).
func negE4M3(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if c != 0 {
			out[i] = c ^ 0x80
		}
	}
	return out
}

func negI32(v []int32) []int32 {
	out := make([]int32, len(v))
	for i, x := range v {
		out[i] = -x
	}
	return out
}

func negF32(v []float32) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = -x
	}
	return out
}

// gemmPoint measures the e4m3 decode GEMM against the I8 one at (s, M).
func gemmPoint(c *bench.Ctx, label string, s gemm.GemmShape, M int, w *refimpl.QWeight, pk *refimpl.W4Packed) error {
	K, N, G, P := s.K, s.N(), s.G(), len(s.Parts)
	rng := rand.New(rand.NewPCG(uint64(M)<<20^uint64(N), 0xbe))
	xs := make([][]float32, P)
	for p := range xs {
		xs[p] = gemmActivations(rng, M, K, "normal")
	}
	sel := gemmSubset(s, M, uint64(M)^uint64(N))
	ia := newI8Activations(xs, M, K)
	iref := i8Reference(ia, w, s.Parts, M, sel)
	// The e4m3 path's activations and reference (refimpl.GEMMRefWithMags
	// on the dequantized codes).
	var ecodes []byte
	var escales, ersums []float32
	deq := make([]float64, 0, P*M*K)
	for p := range xs {
		q := refimpl.QuantizeActGroup(xs[p], M, K)
		ecodes, escales, ersums = append(ecodes, q.Codes...), append(escales, q.GroupScale...), append(ersums, q.RowSums...)
		deq = append(deq, q.Dequant()...)
	}
	eref, emag, _, _ := refimpl.GEMMRefWithMags(deq, M, w, s.Parts, refimpl.Subset{Cols: sel.Cols})
	erefR := gemmRef{sel: sel, ref: eref, mag: emag, floor: refimpl.Bf16Floor(eref), G: G, splits: 1, elemExtra: 134 * 0x1p-24}

	wb, szb := pk.WordBytes(), pk.SZBytes()
	footprint := int64(0)
	for _, n := range []int{len(wb), len(szb), len(ia.codes), 4 * len(ia.scales), 4 * len(ia.rsums), 2 * (M + gemmRowsPast) * N} {
		footprint += int64(bench.CopyStride(n))
	}
	copies := bench.CopiesFor(footprint, c.Dev.Info().LLCBytes)
	sets := map[string]*bench.CopySet{}
	var err error
	up := func(name string, data, last []byte) {
		if err != nil {
			return
		}
		var cs bench.CopySet
		cs, err = alloc(c, copies, data, last)
		sets[name] = &cs
	}
	up("w", wb, nil)
	up("sz", szb, nil)
	up("iact", ia.codes, negI8(ia.codes))
	up("isc", gates.F32Bytes(ia.scales), nil)
	up("irs", i32Bytes(ia.rsums), i32Bytes(negI32(ia.rsums)))
	up("eact", ecodes, negE4M3(ecodes))
	up("esc", gates.F32Bytes(escales), nil)
	up("ers", gates.F32Bytes(ersums), gates.F32Bytes(negF32(ersums)))
	if err != nil {
		return err
	}
	out, err := bench.AllocCopies(c, 2*(M+gemmRowsPast)*N, copies)
	if err != nil {
		return err
	}
	sms := c.Dev.Info().SMs
	eS, iS := gemm.DecSplitK(M, N, K, sms), DecSplitK(M, N, K, sms)
	wsBytes := max(256, DecWorkspaceBytes(M, N, max(eS, iS)), gemm.DecWorkspaceBytes(M, N, max(eS, iS)))
	ws, err := c.Alloc(int64(wsBytes))
	if err != nil {
		return err
	}
	semaBytes := max(256, gemm.DecSemaBytes(N), DecSemaBytes(N))
	sema, err := c.Alloc(int64(semaBytes))
	if err != nil {
		return err
	}
	if err := c.Dev.Memset(sema, 0, semaBytes); err != nil {
		return err
	}
	check := func(name string, rr gemmRef) *bench.Check {
		return bench.PoisonedOutputCheck(c.Dev, out, ws, wsBytes, func(k int, got []byte) error {
			want := rr
			if k == copies-1 && copies > 1 {
				want = rr.negated()
			}
			var f gates.Findings
			checkGEMMOut(&f, fmt.Sprintf("i8 %s M=%d %s copy %d", label, M, name, k), gates.Case{}, got, M, N, want)
			return f.Err()
		})
	}
	// e4m3: the product's launch (cluster reduce where the law's S is
	// gemm.DecClusterS and the device can launch clusters).
	ekern, egrid, eblock, _, err := gemm.DecLaunch(s, M, eS, gemm.DecArgs{})
	if err != nil {
		return err
	}
	opts := gpu.LaunchOpts{}
	if _, ok := c.Dev.(gpu.ExLauncher); ok {
		opts = gemm.DecLaunchOpts(eS)
	}
	ef, err := c.LauncherEx(ekern, egrid, eblock, gemm.DecShared(ekern, M, eS), opts, func(k int) []any {
		_, _, _, args, _ := gemm.DecLaunch(s, M, eS, gemm.DecArgs{W: sets["w"].At(k), SZ: sets["sz"].At(k), Act: sets["eact"].At(k), ASG: sets["esc"].At(k), RS: sets["ers"].At(k), Out: out.At(k), WS: ws, Sema: sema})
		return args
	})
	if err != nil {
		return err
	}
	ikern, igrid, iblock, _, err := DecLaunch(s, M, iS, DecArgs{})
	if err != nil {
		return err
	}
	iff, err := c.Launcher(ikern, igrid, iblock, 0, func(k int) []any {
		_, _, _, args, _ := DecLaunch(s, M, iS, DecArgs{W: sets["w"].At(k), SZ: sets["sz"].At(k), Act: sets["iact"].At(k), ASG: sets["isc"].At(k), RS: sets["irs"].At(k), Out: out.At(k), WS: ws, Sema: sema})
		return args
	})
	if err != nil {
		return err
	}
	vs := []bench.Variant{
		{Name: "e4m3", Enqueue: ef, Check: check("e4m3 "+ekern, erefR.withSplits(eS))},
		{Name: "i8", Enqueue: iff, Check: check("i8 "+ikern, iref.withSplits(iS))},
	}
	// Every other registered I8 decode kernel serving M, by its tag
	// (experimental ones when --variants names them).
	for _, k := range DecKernels(M, c.Dev.Info().CodeArch(), true)[1:] {
		if k.Status == kernels.Experimental && !c.Named(k.Tag) {
			c.Skipf("i8 %s M=%d: %s (%s) is experimental: name it in --variants to time it", label, M, k.Tag, k.Name)
			continue
		}
		kn := k.Name
		f, err := c.Launcher(kn, igrid, iblock, 0, func(k int) []any {
			_, _, _, args, _ := DecLaunch(s, M, iS, DecArgs{W: sets["w"].At(k), SZ: sets["sz"].At(k), Act: sets["iact"].At(k), ASG: sets["isc"].At(k), RS: sets["irs"].At(k), Out: out.At(k), WS: ws, Sema: sema, Kernel: kn})
			return args
		})
		if err != nil {
			return err
		}
		vs = append(vs, bench.Variant{Name: k.Tag, Enqueue: f, Check: check(k.Tag+" "+kn, iref.withSplits(iS))})
	}
	bytes := int64(N)*int64(K)/2 + 4*int64(G)*int64(N) + int64(P*M*K) + 8*int64(P*M*G) + 2*int64(M*N)
	return c.Measure(bench.Point{Suite: "i8", Kernel: "i8_dec", Shape: label, M: M, Regime: bench.Cold,
		Bytes: bytes, Flops: 2 * int64(M) * int64(N) * int64(K), Footprint: footprint, Copies: copies,
		Variants: vs,
		Extra:    map[string]float64{"K": float64(K), "N": float64(N), "P": float64(P), "S_e4m3": float64(eS), "S_i8": float64(iS)}})
}

// producerPoint measures pq_rotq_group (e4m3) against pq_i8_group at the
// shape's (K, P).
func producerPoint(c *bench.Ctx, label string, s gemm.GemmShape, M int) error {
	K, P, G := s.K, len(s.Parts), s.G()
	rng := rand.New(rand.NewPCG(uint64(M)<<20^uint64(K), uint64(P)))
	rots := make([]*refimpl.Rotation, P)
	for p := range rots {
		rots[p] = refimpl.RandomRotation(rng, K)
	}
	rr, err := refimpl.BuildRotRecords(rots)
	if err != nil {
		return err
	}
	x := randomActivations(rng, M, K, "normal")
	neg := make([]uint16, len(x))
	for i, v := range x {
		neg[i] = v ^ 0x8000
	}
	type want struct{ codes, scales, rsums []byte }
	mirror := func(x []uint16) (e, i want) {
		iw := buildI8Mirror(rr, x, M)
		i = want{iw.groupCodes, iw.groupScales, iw.groupRSums}
		for p := 0; p < P; p++ {
			q := refimpl.QuantizeActGroup(rr.RotateF32(x, M, p), M, K)
			e.codes, e.scales, e.rsums = append(e.codes, q.Codes...), append(e.scales, gates.F32Bytes(q.GroupScale)...), append(e.rsums, gates.F32Bytes(q.RowSums)...)
		}
		return e, i
	}
	ew, iw := mirror(x)
	ewNeg, iwNeg := mirror(neg)
	idx, cs, chs := rr.Bytes()
	footprint := int64(0)
	for _, n := range []int{2 * M * K, len(idx), len(cs), len(chs), P*M*K + rowsPastM*K, 8 * (P*M*G + rowsPastM*G)} {
		footprint += int64(bench.CopyStride(n))
	}
	copies := bench.CopiesFor(footprint, c.Dev.Info().LLCBytes)
	bx, err := alloc(c, copies, gates.U16Bytes(x), gates.U16Bytes(neg))
	if err != nil {
		return err
	}
	var rec [3]bench.CopySet
	for i, d := range [][]byte{idx, cs, chs} {
		if rec[i], err = alloc(c, copies, d, nil); err != nil {
			return err
		}
	}
	var outs [3]bench.CopySet // codes, scales, row sums (4-byte elements for both kinds)
	for i, n := range []int{P*M*K + rowsPastM*K, 4 * (P*M*G + rowsPastM*G), 4 * (P*M*G + rowsPastM*G)} {
		if outs[i], err = bench.AllocCopies(c, n, copies); err != nil {
			return err
		}
	}
	variant := func(name, kernel string, launch func(b producers.ProducerBufs) (gpu.Dim3, gpu.Dim3, []any, error), w, wNeg want) (bench.Variant, error) {
		bufsAt := func(k int) producers.ProducerBufs {
			return producers.ProducerBufs{X: bx.At(k), Idx: rec[0].At(k), CS: rec[1].At(k), ChS: rec[2].At(k), Codes: outs[0].At(k), Scale: outs[1].At(k), RSum: outs[2].At(k)}
		}
		grid, block, _, err := launch(producers.ProducerBufs{})
		if err != nil {
			return bench.Variant{}, err
		}
		f, err := c.Launcher(kernel, grid, block, 0, func(k int) []any { _, _, a, _ := launch(bufsAt(k)); return a })
		if err != nil {
			return bench.Variant{}, err
		}
		chk := &bench.Check{
			Prepare: func(k int) error {
				for _, o := range outs {
					if err := o.Poison(c.Dev, k, 0xFF); err != nil {
						return err
					}
				}
				return nil
			},
			Verify: func(k int) error {
				ww := w
				if k == copies-1 && copies > 1 {
					ww = wNeg
				}
				var f gates.Findings
				for i, wantB := range [][]byte{ww.codes, ww.scales, ww.rsums} {
					got, err := outs[i].Download(c.Dev, k)
					if err != nil {
						return err
					}
					elem := map[bool]int{true: 1, false: 4}[i == 0]
					gates.CompareBytes(&f, fmt.Sprintf("i8 %s M=%d %s output %d copy %d", label, M, name, i, k), got, wantB, elem, func(j int) string { return fmt.Sprintf("element %d", j) })
				}
				return f.Err()
			},
		}
		return bench.Variant{Name: name, Enqueue: f, Check: chk}, nil
	}
	ekk, err := kernels.BaselineFor(producers.Family, producers.OpGroup, M, c.Dev.Info().CodeArch())
	if err != nil {
		return err
	}
	ek := ekk.Name
	ev, err := variant("e4m3", ek, func(b producers.ProducerBufs) (gpu.Dim3, gpu.Dim3, []any, error) {
		return producers.ProducerLaunch(ek, M, K, P, 0, false, b)
	}, ew, ewNeg)
	if err != nil {
		return err
	}
	iv, err := variant("i8", "pq_i8_group", func(b producers.ProducerBufs) (gpu.Dim3, gpu.Dim3, []any, error) {
		return ProducerLaunch("pq_i8_group", M, K, P, 0, false, ProducerBufs{X: b.X, Idx: b.Idx, CS: b.CS, ChS: b.ChS, Codes: b.Codes, Scale: b.Scale, RSum: b.RSum})
	}, iw, iwNeg)
	if err != nil {
		return err
	}
	bytes := int64(2*M*K) + int64(P*M*K) + 8*int64(P*M*G) + int64(len(idx)+len(cs)+len(chs))
	return c.Measure(bench.Point{Suite: "i8", Kernel: "i8_group", Shape: label, M: M, Regime: bench.Cold,
		Bytes: bytes, Footprint: footprint, Copies: copies, Variants: []bench.Variant{ev, iv},
		Extra: map[string]float64{"K": float64(K), "P": float64(P)}})
}
