package gemm

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/parharness/parharness/bench"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/kernels"
)

// The wp suite: what the fragment-order weights (refimpl.RepackW4) buy the
// decode band over the row layout (refimpl.RepackRow). In every point the
// same GEMM runs twice at the split-K law's S, launched as the product
// launches it (DecLaunchOpts):
//
//   fragment  the decode baseline pq_gemm_dec_m* (A)
//   row       its row-layout twin pq_gemm_dec_rl_m* (B), which loads as many
//             bytes per lane and rebuilds the fragment words with lane
//             shuffles (hipsrc/gemm/rowlayout.h)
//
// beside the engine's identical-code control A'. Both read the same scale
// words, activations, scales and row sums from the same rotation of buffer
// sets (cold); the weight copies are one per layout. Before any timing
// every checked buffer set's "row" output is compared with the reference
// (the gate's bounds) AND byte for byte with the "fragment" kernel's
// output on that set, launched right before (the kernels see the same
// operands, so anything but the same bits is a FAIL, and a failed variant
// is not timed). The record of "row" carries ratio_vs_baseline = row time
// / fragment time; the log prints it per point. Shapes: every --shapes
// linear; M: --m, default the decode ladder 1..64; regimes stream and
// isolated (--regimes). The source measurement this repeats: fragment
// order at 0.80-0.90x the row layout's time at decode on gfx1201.

func init() {
	bench.RegisterSuite(bench.Suite{Family: Family, Name: "wp", Isolated: true,
		Doc:      "decode-band W4A8 GEMM on fragment-order weights (fragment = pq_gemm_dec_m*) against row-layout weights (row = pq_gemm_dec_rl_m*, bit-identical outputs checked before timing) at the split-K law's S, every --shapes linear, M 1..64, cold",
		Run:      runWPSuite,
		Variants: func() []string { return []string{WPFragment, WPRow} },
		Axes:     "shape: every --shapes linear; M: --m (<= 64), default 1, 2, 5, 8, 16, 40, 48, 64; regimes stream and isolated"})
}

// The wp suite's variants.
const (
	WPFragment = "fragment"
	WPRow      = "row"
)

// rowLayoutTwin is the row-layout decode kernel of base's M class on arch.
func rowLayoutTwin(base kernels.Kernel, M int, arch string) (kernels.Kernel, error) {
	for _, k := range DecKernels(M, arch, true) {
		if DecWeightLayout(k) == LayoutRow && k.MinM == base.MinM && k.MaxM == base.MaxM {
			return k, nil
		}
	}
	return kernels.Kernel{}, fmt.Errorf("gemm: no row-layout decode kernel (tag %s) for %s's M class %d..%d on %s", TagRowLayout, base.Name, base.MinM, base.MaxM, arch)
}

func runWPSuite(c *bench.Ctx) error {
	names, shs, err := GemmShapesOf(c.Shapes)
	if err != nil {
		return err
	}
	arch, sms := c.Dev.Info().CodeArch(), c.Dev.Info().SMs
	Ms := c.MsOr(bench.DecodeMs)
	return forDecodePoints(c, "wp", names, shs, Ms, func(si int, s GemmShape, M int, bw *benchWeights) error {
		if err := measureWPPoint(c, names[si], s, M, DecSplitK(M, s.N(), s.K, sms), arch, bw); err != nil {
			c.FreeAll()
			return err
		}
		return nil
	})
}

func measureWPPoint(c *bench.Ctx, label string, s GemmShape, M, law int, arch string, bw *benchWeights) error {
	base, err := kernels.BaselineFor(Family, OpDec, M, arch)
	if err != nil {
		return err
	}
	rl, err := rowLayoutTwin(base, M, arch)
	if err != nil {
		return err
	}
	b, err := newGemmBufs(c, label, s, M, false, false, law, bw)
	if err != nil {
		return err
	}
	// One row-layout weight copy per buffer set (a call reads one layout:
	// the footprint, which sized the rotation, counts one).
	if b.wrow, err = bench.AllocCopies(c, len(bw.pk.row), b.copies); err != nil {
		return err
	}
	if err := bench.UploadEachCopy(c, b.copies, bench.CopyUpload{Set: b.wrow, Data: bw.pk.row}); err != nil {
		return err
	}
	frag, err := b.decVariant(base, law, WPFragment, false, false)
	if err != nil {
		return err
	}
	row, err := b.decVariant(rl, law, WPRow, false, false)
	if err != nil {
		return err
	}
	row.Check = sameBitsCheck(c.Dev, b, row.Check, frag, base.Name)
	var vs []bench.Variant
	for _, v := range []bench.Variant{frag, row} {
		if c.Want(v.Name) || v.Name == WPFragment { // the baseline always runs: the ratio is against it
			vs = append(vs, v)
		}
	}
	p := gemmPoint("wp", label, s, M, false, b, vs)
	p.Extra["S_law"] = float64(law)
	before := len(c.RecordsSnapshot())
	if err := c.Measure(p); err != nil {
		return err
	}
	if c.Log != nil {
		for _, r := range c.RecordsSnapshot()[before:] {
			if ratio, ok := r.Extra["ratio_vs_baseline"]; ok && r.Variant == WPRow {
				fmt.Fprintf(c.Log, "wp %s M=%d %s: row/fragment %.3f (%s)\n", label, M, r.Regime, ratio, r.Verdict)
			}
		}
	}
	return nil
}

// sameBitsCheck is chk (the reference check of a row-layout variant) plus
// byte identity with the fragment-order variant frag on the same buffer
// set: Prepare launches frag on set k alone (its own poisoning first),
// keeps its output, then poisons for the checked variant; Verify runs chk
// and compares the output's M x N bf16 bytes with frag's.
func sameBitsCheck(dev gpu.Device, b *gemmBufs, chk *bench.Check, frag bench.Variant, fragName string) *bench.Check {
	want := map[int][]byte{}
	n := 2 * b.M * b.s.N()
	return &bench.Check{
		Launches: fragName,
		Prepare: func(k int) error {
			if err := frag.Check.Prepare(k); err != nil {
				return err
			}
			if err := frag.Enqueue(0, k); err != nil {
				return fmt.Errorf("wp: %s on buffer set %d (the bit-identity reference): %w", fragName, k, err)
			}
			if err := dev.Synchronize(); err != nil {
				return err
			}
			got, err := b.out.Download(dev, k)
			if err != nil {
				return err
			}
			want[k] = slices.Clone(got[:n])
			return chk.Prepare(k)
		},
		Verify: func(k int) error {
			if err := chk.Verify(k); err != nil {
				return err
			}
			got, err := b.out.Download(dev, k)
			if err != nil {
				return err
			}
			w, ok := want[k]
			if !ok {
				return fmt.Errorf("wp: buffer set %d verified before it was prepared (no %s output to compare with)", k, fragName)
			}
			if !bytes.Equal(got[:n], w) {
				return fmt.Errorf("wp %s M=%d set %d: %s", b.label, b.M, k, firstBitDiff(got, w, b.M, b.s.N(), fragName))
			}
			return nil
		},
	}
}
