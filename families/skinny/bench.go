package skinny

import (
	"fmt"
	"math/rand/v2"

	"github.com/parharness/parharness/bench"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/kernels"
)

// The skinny suite (skinny.hip), cold: x, w and the output rotate through
// enough buffer sets to defeat the last-level cache; the split-K
// workspace and counters are one set (scratch, as in serving). Points: the
// gate's shapes (gdn_in_ba at TP 2 and 1, N = 256 and 1280 at K = 5120)
// and any other bf16 linear of --shapes, M = 1, 2, 4, 8, 16, 32, 64. Each
// point times the baseline (n8) and every registered variant serving M
// (experimental ones when --variants names their tag), every one checked
// by the gate's comparison (the mirror's bits and the fp64 bounds) before
// and after timing, then the vendor bf16 GEMM (cuBLASLt, hipBLASLt) at the
// same (M, N, K) on random inputs, the figure to beat.
//
// Bytes per call (the GB/s numerator) = what must cross DRAM: the weights
// 2·N·K, x 2·M·K and y 2·M·N. The split-K partials (4·S·M·N written and
// read back, 30 KiB at N = 48, M = 8) stay in L2 and are not counted.
// Flops = 2·M·N·K. The copy ceiling the GB/s compare with is measured by
// bench2 before the suite (a 1 GiB cold copy, read + write).

func init() {
	bench.RegisterSuite(bench.Suite{Family: Family, Name: "skinny", Isolated: true,
		Doc: "skinny bf16 GEMM (split-K, deterministic reduce) vs the vendor bf16 GEMM (cuBLASLt / hipBLASLt) on gdn_in_ba (N=48, 96) and N=256, 1280 at K=5120, M 1..64, cold", Run: runSkinnySuite})
}

// BenchMs is the suite's default M ladder.
var BenchMs = []int{1, 2, 4, 8, 16, 32, 64}

// PointBytes are the bytes one call must move: weights, x and y in bf16.
func PointBytes(s Shape, M int) int64 {
	N, K, m := int64(s.N), int64(s.K), int64(M)
	return 2*N*K + 2*m*K + 2*m*N
}

// benchBufs is one point's buffer sets. Copy 0 .. holds the inputs the
// gate would draw; the middle checked copy holds the negated weights and
// the last the negated activations (each's exact output is the negated
// reference), so a launch that reads a fixed copy's weights or
// activations fails the check of that copy.
type benchBufs struct {
	c           *bench.Ctx
	s           Shape
	M, copies   int
	x, w, out   bench.CopySet
	ws, counter gpu.Ptr
	wsBytes     int
	footprint   int64
	ref         *caseRef
}

func newBenchBufs(c *bench.Ctx, s Shape, M int, w []uint16) (*benchBufs, error) {
	x := genActivations(rand.New(rand.NewPCG(uint64(M)<<20^uint64(s.N), 0x5a)), M, s.K, "normal")
	b := &benchBufs{c: c, s: s, M: M, ref: newCaseRef(x, w, M, s)}
	xb, wb := gates.U16Bytes(x), gates.U16Bytes(w)
	outBytes := 2 * (M + rowsPast) * s.N
	b.footprint = int64(bench.CopyStride(len(xb)) + bench.CopyStride(len(wb)) + bench.CopyStride(2*M*s.N))
	b.copies = bench.CopiesFor(b.footprint, c.Dev.Info().LLCBytes)
	var err error
	for _, a := range []struct {
		dst  *bench.CopySet
		size int
	}{{&b.x, len(xb)}, {&b.w, len(wb)}, {&b.out, outBytes}} {
		if *a.dst, err = bench.AllocCopies(c, a.size, b.copies); err != nil {
			return nil, err
		}
	}
	if err := bench.UploadEachCopy(c, b.copies, bench.CopyUpload{Set: b.x, Data: xb}, bench.CopyUpload{Set: b.w, Data: wb}); err != nil {
		return nil, err
	}
	if mid := b.midCopy(); mid >= 0 {
		if err := c.Dev.HtoD(b.w.At(mid), flipSigns(wb)); err != nil {
			return nil, err
		}
	}
	if b.copies > 1 {
		if err := bench.UploadLastCopy(c, b.copies, bench.CopyUpload{Set: b.x, Data: flipSigns(xb)}); err != nil {
			return nil, err
		}
	}
	b.wsBytes = max(256, WorkspaceBytes(s, M))
	if b.ws, err = c.Alloc(int64(b.wsBytes)); err != nil {
		return nil, err
	}
	cb := max(256, CounterBytes(s))
	if b.counter, err = c.Alloc(int64(cb)); err != nil {
		return nil, err
	}
	if err := c.Dev.Memset(b.counter, 0, cb); err != nil {
		return nil, err
	}
	return b, nil
}

// midCopy is the checked middle buffer set (-1 when only the first and
// last are checked).
func (b *benchBufs) midCopy() int { return bench.MiddleCheckedCopy(b.copies) }

// refAt is the reference of buffer set k: negated for the middle set
// (negated weights) and the last (negated activations).
func (b *benchBufs) refAt(k int) *caseRef {
	if (k == b.copies-1 && b.copies > 1) || k == b.midCopy() {
		return b.ref.negated()
	}
	return b.ref
}

// check is the gate's comparison of copy c's output (checkOut) with
// kernel k's reference, on an
// output poisoned before the check run, with the workspace poisoned too (a
// reduce that reads a partial no block wrote reads NaN).
func (b *benchBufs) check(k kernels.Kernel, name string) *bench.Check {
	what := fmt.Sprintf("%s M=%d %s", b.s.Label, b.M, name)
	return bench.PoisonedOutputCheck(b.c.Dev, b.out, b.ws, b.wsBytes, func(c int, got []byte) error {
		var f gates.Findings
		checkOut(&f, fmt.Sprintf("%s copy %d", what, c), gates.NewCase("copy", c), got, b.M, b.s.N, b.refAt(c).forKernel(k))
		return f.Err()
	})
}

// variant times kernel k as variant name.
func (b *benchBufs) variant(k kernels.Kernel, name string) (bench.Variant, error) {
	s, M := b.s, b.M
	kern, grid, block, shared, _, err := Launch(s, M, Args{Kernel: k.Name})
	if err != nil {
		return bench.Variant{}, err
	}
	f, err := b.c.LauncherEx(kern, grid, block, shared, LaunchOpts(kern, s), func(c int) []any {
		_, _, _, _, args, _ := Launch(s, M, Args{X: b.x.At(c), W: b.w.At(c), Out: b.out.At(c), WS: b.ws, Counters: b.counter, Kernel: k.Name})
		return args
	})
	return bench.Variant{Name: name, Enqueue: f, Check: b.check(k, name)}, err
}

// benchShapes are the gate's shapes, then the bf16 linears of --shapes
// that are none of them.
func benchShapes(c *bench.Ctx) ([]Shape, error) {
	out, err := Shapes()
	if err != nil {
		return nil, err
	}
	if c.Shapes == nil {
		return out, nil
	}
	more, err := ShapesOf(c.Shapes, c.Shapes.Name+"/")
	if err != nil {
		return nil, err
	}
	for _, s := range more {
		dup := false
		for _, o := range out {
			dup = dup || (o.N == s.N && o.K == s.K)
		}
		if !dup {
			out = append(out, s)
		}
	}
	return out, nil
}

func runSkinnySuite(c *bench.Ctx) error {
	shs, err := benchShapes(c)
	if err != nil {
		return err
	}
	lt, ltErr := gpu.OpenVendorGEMM(c.Dev.Info().Backend)
	if lt != nil {
		defer lt.Close()
	}
	arch := c.Dev.Info().CodeArch()
	Ms := c.MsOr(BenchMs)
	total := len(shs) * len(Ms)
	for si, s := range shs {
		var w []uint16
		for mi, M := range Ms {
			if c.Progress != nil {
				c.Progress(si*len(Ms)+mi, total, fmt.Sprintf("skinny %s M=%d", s.Label, M))
			}
			if M < 1 || M > MaxM {
				c.Skipf("skinny %s M=%d: outside the kernels' M range 1..%d", s.Label, M, MaxM)
				continue
			}
			if !c.Take(s.Label, M) {
				continue
			}
			if w == nil {
				w = genWeights(rand.New(rand.NewPCG(uint64(s.K), uint64(s.N))), s.N, s.K)
			}
			b, err := newBenchBufs(c, s, M, w)
			if err != nil {
				c.FreeAll()
				return err
			}
			var vs []bench.Variant
			for _, k := range Kernels(M, arch, true) {
				if k.Status == kernels.Experimental && !c.Named(k.Tag) {
					c.Skipf("skinny %s M=%d: %s (%s) is experimental: name it in --variants to time it", s.Label, M, k.Tag, k.Name)
					continue
				}
				if err := s.CheckKernel(k, M); err != nil {
					c.Skipf("skinny %s M=%d: %s: %v", s.Label, M, k.Tag, err)
					continue
				}
				v, err := b.variant(k, k.Tag)
				if err != nil {
					c.FreeAll()
					return err
				}
				vs = append(vs, v)
			}
			p := bench.Point{Suite: "skinny", Kernel: "skinny_bf16", Shape: s.Label, M: M, Regime: bench.Cold,
				Bytes: PointBytes(s, M), Flops: 2 * int64(M) * int64(s.N) * int64(s.K),
				Footprint: b.footprint, Copies: b.copies, Variants: vs,
				Extra: map[string]float64{"K": float64(s.K), "N": float64(s.N), "S": float64(s.S())}}
			if err := c.Measure(p); err != nil {
				return err
			}
			peerRow(c, lt, ltErr, s, M)
		}
	}
	return nil
}

// peerRow appends the vendor bf16 GEMM's records at (M, N, K), or records
// as a skip why not.
func peerRow(c *bench.Ctx, lt gpu.VendorGEMM, ltErr error, s Shape, M int) {
	if ltErr != nil {
		c.Skipf("skinny %s M=%d: vendor peer (cuBLASLt or hipBLASLt): %v", s.Label, M, ltErr)
		return
	}
	recs, err := bench.MeasurePeerGEMM(c, lt, gpu.GemmBF16, "skinny", s.Label, M, s.N, s.K, bench.Cold)
	if err != nil {
		c.Skipf("skinny %s M=%d: bf16 peer: %v", s.Label, M, err)
		return
	}
	for _, rec := range recs {
		if rec.Extra == nil {
			rec.Extra = map[string]float64{}
		}
		rec.Extra["K"], rec.Extra["N"] = float64(s.K), float64(s.N)
		c.AddRecords(rec)
	}
}

// flipSigns is bf16 values (little-endian bits) with their sign bits
// flipped: the negated values.
func flipSigns(b []byte) []byte {
	out := append([]byte{}, b...)
	for i := 1; i < len(out); i += 2 {
		out[i] ^= 0x80
	}
	return out
}
