package gemm

import (
	"fmt"
	"sort"

	"github.com/parharness/parharness/bench"
	"github.com/parharness/parharness/kernels"
)

// The W5A8 and ZPE suites (cold regime, buffer sets rotated as in dec and
// pre; every variant's output checked in the first, middle and last set):
//
//   int5  5-bit against 4-bit weights in one point: decode band (variants
//         "w4" = the pq_gemm_dec_m* baseline, "w5" = pq_gemm_dec5_m*, both at
//         the split-K law's S) on gate_up, qkv, down, in_proj, M 1, 2, 4, 8,
//         16, 32, 64; prefill ("w4" = pq_gemm_pre, "w5" = pq_gemm_pre5) on
//         every --shapes linear, M 128..2048. The point's Bytes are the
//         4-bit call's; Extra bytes_w4 / bytes_w5 are both calls' (the 5-bit
//         weight stream is 5.25 bits per weight against 4.25: 1.235x). Each
//         point's kernel is pq_gemm_dec (decode) or pq_gemm_pre (prefill).
//         Target (H200): w5 <= 1.25x w4 at M <= 8, where both are bound by
//         the weight stream.
//   zpe   the zero-point epilogue against the in-loop fold: "in-loop" =
//         pq_gemm_pre, "zpe" = pq_gemm_pre_zpe, every --shapes linear at M =
//         512, 2048, 8192. Target (H200): zpe >= 5% faster at M = 2048 on every
//         shape.

func init() {
	bench.RegisterSuite(bench.Suite{Family: Family, Name: "int5", Doc: "W5A8 against W4A8 GEMMs in the same point (variants w4, w5): decode band at the split-K law on gate_up, qkv, down, in_proj, M 1..64, and tiled prefill on every --shapes linear, M 128..2048, cold", Run: runInt5Suite,
		Variants: func() []string { return []string{"w4", "w5"} },
		Axes:     "shape: decode gate_up, qkv, down, in_proj; prefill every --shapes linear; M: --m (<= 64 decode, > 64 prefill), default 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048; regime cold"})
	bench.RegisterSuite(bench.Suite{Family: Family, Name: "zpe", Doc: "per-token prefill W4A8: the zero-point term as an epilogue product (zpe) against the in-loop fold (in-loop) on every --shapes linear at M=512, 2048, 8192, cold", Run: runZPESuite,
		Variants: func() []string { return []string{"in-loop", "zpe"} },
		Axes:     "shape: every --shapes linear; M: --m, default 512, 2048, 8192; regime cold"})
}

// Int5Ms is the int5 suite's default M ladder: decode up to DecMaxM, then
// prefill.
var Int5Ms = []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048}

func runInt5Suite(c *bench.Ctx) error {
	decNames, decShapes, err := GemmShapesOf(c.Shapes, "gate_up", "qkv", "down", "in_proj")
	if err != nil {
		return err
	}
	preNames, preShapes, err := GemmShapesOf(c.Shapes)
	if err != nil {
		return err
	}
	Ms := c.MsOr(Int5Ms)
	sort.Ints(Ms)
	arch, sms := c.Dev.Info().CodeArch(), c.Dev.Info().SMs
	type job struct {
		label string
		s     GemmShape
		M     int
	}
	var jobs []job
	for _, M := range Ms {
		names, shs := preNames, preShapes
		if M <= DecMaxM {
			names, shs = decNames, decShapes
		}
		for i := range shs {
			jobs = append(jobs, job{names[i], shs[i], M})
		}
	}
	weights := map[string][2]*benchWeights{}
	for ji, j := range jobs {
		if c.Progress != nil {
			c.Progress(ji, len(jobs), fmt.Sprintf("int5 %s M=%d", j.label, j.M))
		}
		if !c.Take(j.label, j.M) {
			continue
		}
		bw, ok := weights[j.label]
		if !ok {
			for i, bits := range []int{4, 5} {
				if bw[i], err = newBenchWeightsBits(j.s, bits); err != nil {
					return err
				}
			}
			weights[j.label] = bw
		}
		prefill := j.M > DecMaxM
		law := DecSplitK(j.M, j.s.N(), j.s.K, sms)
		S := 1
		if !prefill {
			S = law
		}
		// The 4-bit footprint is the smaller, so it needs at least as many
		// buffer sets to stay cold: the 5-bit sets take its count.
		b4, err := newGemmBufsCopies(c, j.label, j.s, j.M, prefill, false, S, bw[0], 0)
		if err != nil {
			c.FreeAll()
			return err
		}
		b5, err := newGemmBufsCopies(c, j.label, j.s, j.M, prefill, false, S, bw[1], b4.copies)
		if err != nil {
			c.FreeAll()
			return err
		}
		if b4.copies != b5.copies {
			c.FreeAll()
			return fmt.Errorf("int5 %s M=%d: buffer sets %d (4-bit) and %d (5-bit) differ", j.label, j.M, b4.copies, b5.copies)
		}
		var vs []bench.Variant
		for _, x := range []struct {
			name string
			b    *gemmBufs
			bits int
		}{{"w4", b4, 4}, {"w5", b5, 5}} {
			var v bench.Variant
			if prefill {
				k, kerr := kernels.BaselineFor(Family, PreOp(x.bits), j.M, arch)
				if kerr != nil {
					c.FreeAll()
					return kerr
				}
				v, err = x.b.preVariant(k, x.name)
			} else {
				k, kerr := kernels.BaselineFor(Family, DecOp(x.bits), j.M, arch)
				if kerr != nil {
					c.FreeAll()
					return kerr
				}
				v, err = x.b.decVariant(k, S, x.name, false, false)
			}
			if err != nil {
				c.FreeAll()
				return err
			}
			vs = append(vs, v)
		}
		p := gemmPoint("int5", j.label, j.s, j.M, prefill, b4, vs)
		p.Extra["bytes_w4"] = float64(gemmPointBytesBits(j.s, j.M, prefill, 4))
		p.Extra["bytes_w5"] = float64(gemmPointBytesBits(j.s, j.M, prefill, 5))
		p.Footprint = b5.footprint
		if !prefill {
			p.Extra["S_law"] = float64(law)
		}
		if err := c.Measure(p); err != nil {
			return err
		}
	}
	return nil
}

func runZPESuite(c *bench.Ctx) error {
	names, shs, err := GemmShapesOf(c.Shapes)
	if err != nil {
		return err
	}
	Ms := c.MsOr([]int{512, 2048, 8192})
	sort.Ints(Ms)
	arch := c.Dev.Info().CodeArch()
	total := len(shs) * len(Ms)
	for si, s := range shs {
		var bw *benchWeights
		for mi, M := range Ms {
			if c.Progress != nil {
				c.Progress(si*len(Ms)+mi, total, fmt.Sprintf("zpe %s M=%d", names[si], M))
			}
			if !c.Take(names[si], M) {
				continue
			}
			if bw == nil {
				if bw, err = newBenchWeights(s); err != nil {
					return err
				}
			}
			b, err := newGemmBufs(c, names[si], s, M, true, false, 1, bw)
			if err != nil {
				c.FreeAll()
				return err
			}
			var vs []bench.Variant
			for _, x := range []struct{ name, kernel string }{{"in-loop", "pq_gemm_pre"}, {"zpe", "pq_gemm_pre_zpe"}} {
				k, ok := kernels.Lookup(x.kernel)
				if !ok || !k.ForArch(arch) {
					c.FreeAll()
					return fmt.Errorf("zpe: kernel %s is not registered for %s", x.kernel, arch)
				}
				v, err := b.preVariant(k, x.name)
				if err != nil {
					c.FreeAll()
					return err
				}
				vs = append(vs, v)
			}
			if err := c.Measure(gemmPoint("zpe", names[si], s, M, true, b, vs)); err != nil {
				return err
			}
		}
	}
	return nil
}
