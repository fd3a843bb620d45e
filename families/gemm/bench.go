package gemm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/parharness/parharness/bench"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/refimpl"
	"github.com/parharness/parharness/regret"
	"github.com/parharness/parharness/results"
)

// W4A8 GEMM suites (hipsrc/gemm.hip), cold regime: every buffer set
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
//        ("memonly", M <= 8) at the law's S; then a regret table of the law against the per-cell argmin,
//        and a cuBLASLt fp8 row at the same (M, N, K) (fp8 weights, 2x the
//        bytes of int4: the peer a W4A8 decode has to beat on time).
//   pre  per-token prefill on every shape of --shapes (default TP=2) at M = 2048, 8192, with the
//        cuBLASLt fp8 row.
//
// Bytes per call = the weight stream (N·K/2 + 4·G·N for the scale words) +
// activation codes and their scales and row sums + the bf16 output. Flops
// = 2·M·N·K.

func init() {
	var names []string
	for s := 1; s <= DecMaxS; s++ {
		names = append(names, fmt.Sprintf("S%d", s))
	}
	// The law's pick in each cell is the S the run launched it at, which
	// every dec record carries (Extra["S_law"], kernels.DecSplitK on that
	// device's SM count), so the table scores exactly what ran.
	law := bench.Law{Name: "kernels.DecSplitK", Kernel: "pq_gemm_dec", Variants: names, PickFrom: func(doc *results.Document, suite string) regret.Law {
		picks := map[regret.Cell]string{}
		for _, r := range doc.Records {
			if S, ok := r.Extra["S_law"]; ok && r.Suite == suite && r.Kernel == "pq_gemm_dec" {
				picks[regret.Cell{Shape: r.Shape, M: r.M}] = fmt.Sprintf("S%d", int(S))
			}
		}
		return func(c regret.Cell) string { return picks[c] }
	}}
	bench.RegisterSuite(bench.Suite{Name: "dec", Doc: "decode-band W4A8 GEMM (split-K law vs fixed S; regret table; cuBLASLt fp8 peer) on gate_up, qkv, down, in_proj, M 1..64, cold", Run: runDecSuite, Laws: []bench.Law{law}})
	bench.RegisterSuite(bench.Suite{Name: "pre", Doc: "per-token tiled prefill W4A8 GEMM on every --shapes linear (default TP=2) at M=2048, 8192 (cuBLASLt fp8 peer), cold", Run: runPreSuite})
}

// DecFixedS are the fixed split-K counts the dec suite times beside the law.
var DecFixedS = []int{1, 2, 4, 8}

type gemmBufs struct {
	c                       *bench.Ctx
	copies                  int
	w, sz, act, sc, rs, out bench.CopySet
	ws, sema                gpu.Ptr
	footprint               int64
}

func gemmWeightBytes(s GemmShape) int64 {
	return int64(s.N())*int64(s.K)/2 + 4*int64(s.G())*int64(s.N())
}

// newGemmBufs allocates and fills Copies buffer sets for one point.
func newGemmBufs(c *bench.Ctx, s GemmShape, M int, prefill bool, maxS int) (*gemmBufs, error) {
	N, K, G, P := s.N(), s.K, s.G(), len(s.Parts)
	rows := M
	if prefill {
		rows = refimpl.PadRows(M)
	}
	scN := P * M * G // group scales
	if prefill {
		scN = P * M // token scales
	}
	b := &gemmBufs{c: c}
	sets := []*bench.CopySet{&b.w, &b.sz, &b.act, &b.sc, &b.rs, &b.out}
	sizes := []int{N * K / 2, 4 * G * N, P * rows * K, 4 * scN, 4 * P * M * G, 2 * M * N}
	for _, n := range sizes {
		b.footprint += int64(bench.CopyStride(n))
	}
	b.copies = bench.CopiesFor(b.footprint, c.Dev.Info().LLCBytes)
	var err error
	for i, dst := range sets {
		if *dst, err = bench.AllocCopies(c, sizes[i], b.copies); err != nil {
			return nil, err
		}
	}
	if !prefill {
		if b.ws, err = c.Alloc(int64(max(256, DecWorkspaceBytes(M, N, maxS)))); err != nil {
			return nil, err
		}
		if b.sema, err = c.Alloc(int64(max(256, DecSemaBytes(N)))); err != nil {
			return nil, err
		}
		if err := c.Dev.Memset(b.sema, 0, max(256, DecSemaBytes(N))); err != nil {
			return nil, err
		}
	}
	// Contents: random nibbles; realistic scale words; e4m3 codes of modest
	// magnitude; positive scales and row sums of plausible size.
	rng := rand.New(rand.NewPCG(uint64(N*K+M), 13))
	if err := fillRandomBytes(c, b.w.Base, int64(b.w.Stride)*int64(b.copies), rng); err != nil {
		return nil, err
	}
	szw := make([]byte, b.sz.Stride)
	for i := 0; i+4 <= 4*G*N; i += 4 {
		sc := refimpl.F64ToF16(1e-3 * math.Pow(10, rng.Float64()))
		d := int16(rng.IntN(13) - 6)
		binary.LittleEndian.PutUint32(szw[i:], uint32(sc)|uint32(uint16(d))<<16)
	}
	sc := make([]byte, b.sc.Stride)
	for i := 0; i+4 <= len(sc); i += 4 {
		binary.LittleEndian.PutUint32(sc[i:], math.Float32bits(float32(0.01*(0.5+rng.Float64()))))
	}
	rs := make([]byte, b.rs.Stride)
	for i := 0; i+4 <= len(rs); i += 4 {
		binary.LittleEndian.PutUint32(rs[i:], math.Float32bits(float32(rng.NormFloat64()*100)))
	}
	if err := bench.UploadEachCopy(c, b.copies, bench.CopyUpload{Set: b.sz, Data: szw}, bench.CopyUpload{Set: b.sc, Data: sc}, bench.CopyUpload{Set: b.rs, Data: rs}); err != nil {
		return nil, err
	}
	if err := bench.FillSmallRandom(c, b.act.Base, int64(b.act.Stride)*int64(b.copies), gpu.GemmFP8); err != nil {
		return nil, err
	}
	return b, nil
}

func fillRandomBytes(c *bench.Ctx, p gpu.Ptr, n int64, rng *rand.Rand) error {
	const block = 1 << 20
	buf := make([]byte, block)
	for i := 0; i+8 <= block; i += 8 {
		binary.LittleEndian.PutUint64(buf[i:], rng.Uint64())
	}
	return bench.UploadRepeated(c, p, n, buf)
}

// decVariant times one decode kernel at split S, the staged kernels as
// clusters of the S splits (kernels.DecLaunchOpts) where the device can
// (elsewhere plainly: the same bits through ws); pdl
// launches every call with programmatic dependent launch (each call's
// weight stream starts while the previous call finishes, as behind the
// producer in a decode step); plain forces a plain launch (ws reduce).
func (b *gemmBufs) decVariant(s GemmShape, M, S int, kernel, name string, pdl, plain bool) (bench.Variant, error) {
	kern, grid, block, _, err := DecLaunch(s, M, S, DecArgs{Kernel: kernel})
	if err != nil {
		return bench.Variant{}, err
	}
	staged := kernel == "" || kernel == DecKernel(M) || kernel == "pq_gemm_dec_memonly_m8"
	if pdl && !staged {
		return bench.Variant{}, fmt.Errorf("%s has no grid_dep_wait: a PDL launch would race with the previous kernel", kernel)
	}
	opts := gpu.LaunchOpts{PDL: pdl}
	if _, ok := b.c.Dev.(gpu.ExLauncher); ok && staged && !plain {
		opts.Cluster = DecLaunchOpts(S).Cluster // the staged kernels' cluster reduce (same bits)
	}
	f, err := b.c.LauncherEx(kern, grid, block, 0, opts, func(k int) []any {
		_, _, _, args, _ := DecLaunch(s, M, S, DecArgs{W: b.w.At(k), SZ: b.sz.At(k),
			Act: b.act.At(k), ASG: b.sc.At(k), RS: b.rs.At(k), Out: b.out.At(k), WS: b.ws, Sema: b.sema, Kernel: kernel})
		return args
	})
	return bench.Variant{Name: name, Enqueue: f}, err
}

// preVariant times prefill kernel kernel ("" is pq_gemm_pre) as variant
// name. The activation buffers hold random codes either way (a row-major
// kernel reads the first M·K bytes of each tiled copy, which is as random).
func (b *gemmBufs) preVariant(s GemmShape, M int, kernel, name string) (bench.Variant, error) {
	kern, grid, block, shared, _, err := PreLaunch(s, M, PreArgs{Kernel: kernel})
	if err != nil {
		return bench.Variant{}, err
	}
	f, err := b.c.Launcher(kern, grid, block, shared, func(k int) []any {
		_, _, _, _, args, _ := PreLaunch(s, M, PreArgs{W: b.w.At(k), SZ: b.sz.At(k),
			Act: b.act.At(k), TScale: b.sc.At(k), RS: b.rs.At(k), Out: b.out.At(k), Kernel: kernel})
		return args
	})
	return bench.Variant{Name: name, Enqueue: f}, err
}

func gemmPointBytes(s GemmShape, M int, prefill bool) int64 {
	N, K, G, P := int64(s.N()), int64(s.K), int64(s.G()), int64(len(s.Parts))
	m := int64(M)
	act := P*m*K + P*m*G*4 // codes + row sums
	if prefill {
		act += P * m * 4
	} else {
		act += P * m * G * 4
	}
	return gemmWeightBytes(s) + act + 2*m*N
}

// peerRow appends the vendor library's fp8 record (cuBLASLt or hipBLASLt) at
// (M, N, K), or records as a skip why not.
func peerRow(c *bench.Ctx, lt gpu.VendorGEMM, ltErr error, suite, label string, s GemmShape, M int) {
	if ltErr != nil {
		c.Skipf("%s %s M=%d: vendor peer (cuBLASLt or hipBLASLt): %v", suite, label, M, ltErr)
		return
	}
	rec, err := bench.MeasurePeerGEMM(c, lt, gpu.GemmFP8, suite, label, M, s.N(), s.K, bench.Cold)
	if err != nil {
		c.Skipf("%s %s M=%d: fp8 peer: %v", suite, label, M, err)
		return
	}
	if rec.Extra == nil {
		rec.Extra = map[string]float64{}
	}
	rec.Extra["K"], rec.Extra["N"] = float64(s.K), float64(s.N())
	c.Records = append(c.Records, rec)
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
	sms := c.Dev.Info().SMs
	Ms := c.MsOr(bench.DecodeMs)
	if c.Log != nil {
		WriteDecSplitKTable(c.Log, names, shs, Ms, sms)
	}
	total := len(shs) * len(Ms)
	for si, s := range shs {
		for mi, M := range Ms {
			if c.Progress != nil {
				c.Progress(si*len(Ms)+mi, total, fmt.Sprintf("dec %s M=%d", names[si], M))
			}
			if M > DecMaxM {
				c.Skipf("dec %s M=%d: above the decode band (M <= %d)", names[si], M, DecMaxM)
				continue
			}
			// The law's pick is the baseline (named by its S, so the regret
			// table finds it); fixed S values beside it.
			law := DecSplitK(M, s.N(), s.K, sms)
			Ss := []int{law}
			for _, S := range DecFixedS {
				if S != law && S <= s.G() {
					Ss = append(Ss, S)
				}
			}
			b, err := newGemmBufs(c, s, M, false, slices.Max(Ss))
			if err != nil {
				c.FreeAll()
				return err
			}
			var vs []bench.Variant
			for _, S := range Ss {
				v, err := b.decVariant(s, M, S, "", fmt.Sprintf("S%d", S), false, false)
				if err != nil {
					c.FreeAll()
					return err
				}
				vs = append(vs, v)
			}
			// The law's launch under programmatic dependent launch (CUDA).
			if v, err := b.decVariant(s, M, law, "", "pdl", true, false); err == nil {
				vs = append(vs, v)
			} else if errors.Is(err, bench.ErrNoExLaunch) {
				c.Skipf("dec %s M=%d: variant pdl: %v", names[si], M, err)
			} else {
				c.FreeAll()
				return err
			}
			// The law's S reduced through ws and sema (plain launch): the
			// A/B of the cluster reduce.
			if _, ex := c.Dev.(gpu.ExLauncher); ex && DecLaunchOpts(law) != (gpu.LaunchOpts{}) { // else the baseline already is the plain launch
				v, err := b.decVariant(s, M, law, "", "ws", false, true)
				if err != nil {
					c.FreeAll()
					return err
				}
				vs = append(vs, v)
			}
			// The other kernels that take M (previous generation, attribution)
			// at the law's S: the A/B of a change (sm_90a only).
			for _, k := range DecKernelsFor(M)[1:] {
				tag, _, _ := strings.Cut(strings.TrimPrefix(k, "pq_gemm_dec_"), "_") // "v1", "memonly"
				if !c.Kernels.Exists(k) {
					c.Skipf("dec %s M=%d: variant %s: %s exists on sm_90a only (on gfx1201 the default kernel is that body)", names[si], M, tag, k)
					continue
				}
				v, err := b.decVariant(s, M, law, k, tag, false, false)
				if err != nil {
					c.FreeAll()
					return err
				}
				vs = append(vs, v)
			}
			p := gemmPoint("dec", names[si], s, M, false, b, vs)
			p.Extra["S_law"] = float64(law)
			if err := c.Measure(p); err != nil {
				return err
			}
			peerRow(c, lt, ltErr, "dec", names[si], s, M)
		}
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
	Ms := c.MsOr([]int{2048, 8192})
	sort.Ints(Ms)
	total := len(shs) * len(Ms)
	for si, s := range shs {
		for mi, M := range Ms {
			if c.Progress != nil {
				c.Progress(si*len(Ms)+mi, total, fmt.Sprintf("pre %s M=%d", names[si], M))
			}
			b, err := newGemmBufs(c, s, M, true, 1)
			if err != nil {
				c.FreeAll()
				return err
			}
			v, err := b.preVariant(s, M, "", "pq_gemm_pre")
			if err != nil {
				c.FreeAll()
				return err
			}
			vs := []bench.Variant{v}
			if !c.Kernels.Exists(PreWG) {
				c.Skipf("pre %s M=%d: variant wg: %s exists on sm_90a only", names[si], M, PreWG)
			} else {
				w, err := b.preVariant(s, M, PreWG, "wg")
				if err != nil {
					c.FreeAll()
					return err
				}
				vs = append(vs, w)
			}
			if err := c.Measure(gemmPoint("pre", names[si], s, M, true, b, vs)); err != nil {
				return err
			}
			peerRow(c, lt, ltErr, "pre", names[si], s, M)
		}
	}
	return nil
}
