package ewrot

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/parharness/parharness/bench"
	"github.com/parharness/parharness/families/producers"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/refimpl"
)

// The ewrot bench suite: each op's fused producer against the unfused
// chain (ew_op_bf16, then the producers' baseline of the same Op: two
// launches) in the same run, cold (every buffer set rotated through enough
// copies to defeat the last-level cache), on the deployed (K, P) of the
// linear each op feeds in --shapes.
//
//   decode M (1..128): group (ew_rotq_group) vs op+<producers group tag>
//   prefill M:         token-row / token-tiled (ew_rotq_token) vs
//                      op+<producers fused tag>-row / -tiled
//
// Bytes (the GB/s numerator, compared with the copy ceiling measured in
// the same run): the op's bf16 inputs read once (silu-mul [M, 2K];
// sigmoid gate and gated norm [M, K] twice, the norm weight D) and the
// outputs written once (codes P·M·K; decode: group scales and row sums
// 2·P·M·G floats; prefill: token scales P·M and row sums P·M·G floats).
// The unfused chain's intermediate rows are not counted: it is slower at
// equal work. Rotation records count in the footprint (copies), not in
// Bytes, as in the producers' suites. Every variant's output is checked
// (bench.Check) against the Go mirror with the gate's comparison; the
// last buffer set holds other inputs with their own mirror, so a launch
// that reads a fixed set fails.

// BenchDecodeMs is the decode ladder (up to the decode band's top).
var BenchDecodeMs = append(append([]int{}, bench.DecodeMs...), GroupMaxM)

func init() {
	bench.RegisterSuite(bench.Suite{Family: Family, Name: "ewrot", Isolated: true,
		Doc:      "elementwise-fed producers (silu-mul, sigmoid gate, gated RMSNorm) fused vs the unfused chain (ew_op_bf16 + the producers' kernel, two launches): decode band per group, prefill per token row-major and tiled",
		Run:      runBench,
		Variants: benchVariantNames,
		Axes:     "mode: silu-mul, sigmoid-gate, gated-norm on the (K, P) of the linear each feeds in --shapes (mode-KxP); M: --m, default decode " + fmt.Sprint(BenchDecodeMs) + " and prefill " + fmt.Sprint(bench.PrefillMs) + "; regime cold",
	})
}

// peerTag is the variant name of a producers kernel in an unfused chain.
func peerTag(op string, tiled bool) string {
	pop := map[string]string{OpGroup: producers.OpGroup, OpToken: producers.OpToken}[op]
	for _, k := range kernels.Select(kernels.Query{Family: producers.Family, Op: pop, Roles: []kernels.Role{kernels.Baseline}}) {
		return variantTag(k.Tag, op, tiled)
	}
	return "?"
}

func variantTag(tag, op string, tiled bool) string {
	if op == OpToken {
		return tag + "-" + LayoutName(tiled)
	}
	return tag
}

func benchVariantNames() []string {
	out := []string{"op+" + peerTag(OpGroup, false), "group"}
	for _, tiled := range []bool{false, true} {
		out = append(out, "op+"+peerTag(OpToken, tiled), variantTag("token", OpToken, tiled))
	}
	return out
}

// benchBytes is what a point must move (see the suite comment).
func benchBytes(mode Mode, op string, M, K, P int) int64 {
	G := int64(K / refimpl.GroupSize)
	in := int64(M * mode.InputCols(K) * 2)
	if mode != SiluMul {
		in += int64(M * K * 2)
	}
	if mode == GatedNorm {
		in += int64(HeadDim * 2)
	}
	out := int64(P * M * K)
	if op == OpGroup {
		return in + out + 2*int64(P*M)*G*4
	}
	return in + out + int64(P*M)*4 + int64(P*M)*G*4
}

type benchBufs struct {
	c                  *bench.Ctx
	M, K, P, copies    int
	fp                 int64 // Point.Footprint: what one fused call touches, records included
	params             Params
	a, b, w            bench.CopySet
	idx, cs, chs       bench.CopySet
	rows               bench.CopySet
	codes, scale, rsum bench.CopySet
	want, wantLast     Want
	err                error
}

func (b *benchBufs) alloc(size int) bench.CopySet {
	if b.err != nil {
		return bench.CopySet{}
	}
	s, err := bench.AllocCopies(b.c, size, b.copies)
	b.err = err
	return s
}

func (b *benchBufs) at(k int) Bufs {
	return Bufs{A: b.a.At(k), B: b.b.At(k), W: b.w.At(k), Idx: b.idx.At(k), CS: b.cs.At(k), ChS: b.chs.At(k),
		Codes: b.codes.At(k), Scale: b.scale.At(k), RSum: b.rsum.At(k), Out: b.rows.At(k)}
}

func (b *benchBufs) wantAt(k int) Want {
	if k == b.copies-1 && b.copies > 1 {
		return b.wantLast
	}
	return b.want
}

// newBenchBufs allocates and fills one point's buffer sets, with the
// mirror's outputs for the first sets' inputs and the last set's.
func newBenchBufs(c *bench.Ctx, mode Mode, op string, M, K, P int) (*benchBufs, error) {
	G, Mpad := K/refimpl.GroupSize, refimpl.PadRows(M)
	recBytes := int64(4*P*8*G*32 + 16*P*8*G*32 + 4*P*K)
	fp := benchBytes(mode, op, M, K, P) + recBytes
	b := &benchBufs{c: c, M: M, K: K, P: P, fp: fp, params: Params{Mode: mode, D: HeadDim, Eps: float32(refimpl.RMSNormEps)},
		copies: bench.CopiesFor(fp, c.Dev.Info().LLCBytes)}
	pc, err := Prepare(uint64(M*K*P)+uint64(mode), Case{K: K, P: P, M: M, Params: b.params, Dist: "normal"}, op == OpGroup)
	if err != nil {
		return nil, err
	}
	b.want, b.wantLast = pc.Want, pc.Want
	last := pc.In
	if b.copies > 1 {
		last = RandomInputs(rand.New(rand.NewPCG(uint64(M), 0x1a57)), b.params, M, K, "normal")
		b.wantLast = BuildWant(pc.RR, OpRows(b.params, last, M, K), M, K, P, op == OpGroup)
	}
	b.a = b.alloc(2 * len(pc.In.A))
	b.b, b.w = b.a, b.a
	if pc.In.B != nil {
		b.b = b.alloc(2 * len(pc.In.B))
	}
	if pc.In.W != nil {
		b.w = b.alloc(2 * len(pc.In.W))
	}
	idx, cs, chs := pc.RR.Bytes()
	b.idx, b.cs, b.chs = b.alloc(len(idx)), b.alloc(len(cs)), b.alloc(len(chs))
	b.rows = b.alloc(2 * (M*K + rowsPastM*K))
	b.codes = b.alloc(P*Mpad*K + rowsPastM*K)
	b.scale = b.alloc(4 * (P*M*G + rowsPastM*G))
	b.rsum = b.alloc(4 * (P*M*G + rowsPastM*G))
	if b.err != nil {
		return nil, b.err
	}
	ups := []bench.CopyUpload{{Set: b.a, Data: gates.U16Bytes(pc.In.A)}, {Set: b.idx, Data: idx}, {Set: b.cs, Data: cs}, {Set: b.chs, Data: chs}}
	lastUps := []bench.CopyUpload{{Set: b.a, Data: gates.U16Bytes(last.A)}}
	if pc.In.B != nil {
		ups = append(ups, bench.CopyUpload{Set: b.b, Data: gates.U16Bytes(pc.In.B)})
		lastUps = append(lastUps, bench.CopyUpload{Set: b.b, Data: gates.U16Bytes(last.B)})
	}
	if pc.In.W != nil {
		ups = append(ups, bench.CopyUpload{Set: b.w, Data: gates.U16Bytes(pc.In.W)})
		lastUps = append(lastUps, bench.CopyUpload{Set: b.w, Data: gates.U16Bytes(last.W)})
	}
	if err := bench.UploadEachCopy(c, b.copies, ups...); err != nil {
		return nil, err
	}
	if b.copies > 1 {
		if err := bench.UploadLastCopy(c, b.copies, lastUps...); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// check poisons copy k's outputs (the intermediate rows too) before the
// check run and compares them with the mirror after it: the fused
// kernel's codes, scales and row sums with the rows untouched, or the
// chain's with the rows as ew_op_bf16 writes them.
func (b *benchBufs) check(op string, tiled, chain bool) *bench.Check {
	dev := b.c.Dev
	return &bench.Check{
		Prepare: func(k int) error {
			for _, s := range []bench.CopySet{b.rows, b.codes, b.scale, b.rsum} {
				if err := s.Poison(dev, k, 0xFF); err != nil {
					return err
				}
			}
			return nil
		},
		Verify: func(k int) error {
			var got Outputs
			for _, d := range []struct {
				s   bench.CopySet
				dst *[]byte
			}{{b.rows, &got.Rows}, {b.codes, &got.Codes}, {b.scale, &got.Scale}, {b.rsum, &got.RSum}} {
				var err error
				if *d.dst, err = d.s.Download(dev, k); err != nil {
					return err
				}
			}
			var f gates.Findings
			label := fmt.Sprintf("%s K=%d P=%d M=%d copy %d", b.params.Mode, b.K, b.P, b.M, k)
			w := b.wantAt(k)
			CheckOp(&f, label, op, tiled, b.M, b.K, b.P, w, got)
			if chain {
				CompareOut(&f, label+" intermediate rows", got.Rows, w.Rows, 2, func(i int) string { return fmt.Sprint(i) })
			} else {
				poisoned(&f, label, "intermediate rows", got.Rows)
			}
			return f.Err()
		},
	}
}

// variants are the unfused chain and the fused kernel of op, per code
// layout, each with its check; the first chain is the point's baseline, so
// the fused kernel's row reads as its ratio to the two launches.
func (b *benchBufs) variants(op string) []bench.Variant {
	arch := b.c.Dev.Info().CodeArch()
	fusedK, err := kernels.BaselineFor(Family, op, b.M, arch)
	if err != nil {
		b.err = err
		return nil
	}
	opK, err := kernels.BaselineFor(Family, OpElementwise, b.M, arch)
	if err != nil {
		b.err = err
		return nil
	}
	peer, err := ProducerPeer(op, b.M, arch)
	if err != nil {
		b.err = err
		return nil
	}
	var vs []bench.Variant
	for _, tiled := range Layouts(op) {
		tiled := tiled
		own := func(kernel string) bench.Variant {
			grid, block, _, err := Launch(kernel, b.M, b.K, b.P, tiled, b.params, Bufs{})
			if err != nil {
				b.err = err
				return bench.Variant{}
			}
			f, err := b.c.Launcher(kernel, grid, block, 0, func(k int) []any {
				_, _, args, _ := Launch(kernel, b.M, b.K, b.P, tiled, b.params, b.at(k))
				return args
			})
			if err != nil && b.err == nil {
				b.err = err
			}
			return bench.Variant{Enqueue: f}
		}
		fused := own(fusedK.Name)
		fused.Name, fused.Check = variantTag("token", op, tiled), b.check(op, tiled, false)
		if op == OpGroup {
			fused.Name = "group"
		}
		first := own(opK.Name)
		first.Name = "op"
		grid, block, _, err := producers.ProducerLaunch(peer.Name, b.M, b.K, b.P, 0, tiled, producers.ProducerBufs{})
		if err != nil {
			b.err = err
			return nil
		}
		pf, err := b.c.Launcher(peer.Name, grid, block, 0, func(k int) []any {
			x := b.at(k)
			_, _, args, _ := producers.ProducerLaunch(peer.Name, b.M, b.K, b.P, 0, tiled, producers.ProducerBufs{X: x.Out,
				Idx: x.Idx, CS: x.CS, ChS: x.ChS, Codes: x.Codes, Scale: x.Scale, RSum: x.RSum})
			return args
		})
		if err != nil && b.err == nil {
			b.err = err
		}
		seq := bench.Sequence(first, bench.Variant{Name: variantTag(peer.Tag, op, tiled), Enqueue: pf})
		seq.Check, seq.Unchecked = b.check(op, tiled, true), ""
		vs = append(vs, seq, fused)
	}
	return vs
}

func runBench(c *bench.Ctx) error {
	type pt struct {
		mode    Mode
		op      string
		K, P, M int
	}
	var pts []pt
	for _, mode := range Modes {
		l, ok := c.Shapes.Linear(mode.Linear())
		if !ok {
			c.Skipf("ewrot %s: the shapes set has no linear %s", mode, mode.Linear())
			continue
		}
		Ms := c.MsOr(slices.Concat(BenchDecodeMs, bench.PrefillMs))
		for _, M := range Ms {
			op := OpToken // the prefill form past the decode band
			if M <= GroupMaxM {
				op = OpGroup
			}
			pts = append(pts, pt{mode, op, l.K, l.P(), M})
		}
	}
	for i, p := range pts {
		if c.Progress != nil {
			c.Progress(i, len(pts), fmt.Sprintf("ewrot %s K=%d P=%d M=%d", p.mode, p.K, p.P, p.M))
		}
		if p.op == OpToken && producers.FusedTokenCheck(p.K) != nil {
			c.Skipf("ewrot %s K=%d: %v", p.mode, p.K, producers.FusedTokenCheck(p.K))
			continue
		}
		shape := fmt.Sprintf("%s-K%dxP%d", p.mode, p.K, p.P)
		if !c.Take(shape, p.M) {
			continue
		}
		b, err := newBenchBufs(c, p.mode, p.op, p.M, p.K, p.P)
		if err != nil {
			c.FreeAll()
			return err
		}
		vs := b.variants(p.op)
		if b.err != nil {
			c.FreeAll()
			return b.err
		}
		point := bench.Point{Suite: "ewrot", Kernel: p.op, Shape: shape, M: p.M, Regime: bench.Cold,
			Bytes: benchBytes(p.mode, p.op, p.M, p.K, p.P), Footprint: b.fp,
			Copies: b.copies, Variants: vs, Extra: map[string]float64{"K": float64(p.K), "P": float64(p.P), "mode": float64(p.mode)}}
		if err := c.Measure(point); err != nil {
			return err
		}
	}
	return nil
}
