package i8

import (
	"github.com/parharness/parharness/gates"
)

func init() {
	gates.Register(gates.Gate{Family: Family, Name: "i8", Headline: []string{"worst_rel_over_floor", "producer_runs", "gemm_runs"}, Suites: gates.Quick | gates.Full, Device: true, Run: gateI8,
		Proves: "every registered I8 producer (per-group decode band; per-token pass C and fused, row-major and tiled) equals the Go int8 mirror byte for byte on the deployed (K, P), decode and prefill M with odd M, ties and clamp cases, and the e4m3 pass A + int8 pass C equals the fused kernel; every I8 decode GEMM is within 1.15x the bf16 floor of the fp64 reference (pooled, per row) and each element within half a bf16 ulp + (G+S+2)·2^-24·mag on the deployed shapes, every M class and split, normal/outlier/small-code/subnormal/large activations; poisoned outputs, rows past M untouched, split-K counters reset, canaries"})
}

// gateI8 runs the producer half (gate_prod.go), then the decode GEMM half
// and the prefill GEMM cases (gate_gemm.go).
func gateI8(t *gates.T) {
	t.Device()
	pc := prodCases(t.Full())
	runs := runProducerCases(t, pc, t.Seed())
	t.Metric("producer_cases", float64(len(pc)))
	t.Metric("producer_runs", float64(runs))
	gc, err := gemmCases(t.Full(), t.Device().Info().SMs)
	t.Check(err, "gemm cases")
	worst, gruns := runGemmCases(t, gc, t.Seed()^0x18)
	t.Metric("gemm_cases", float64(len(gc)))
	t.Metric("gemm_runs", float64(gruns))
	prc, err := preCases()
	t.Check(err, "prefill cases")
	pworst, pruns := runPreCases(t, prc, t.Seed()^0x9e)
	t.Metric("prefill_runs", float64(pruns))
	t.Metric("worst_rel_over_floor", max(worst, pworst))
	t.Logf("%d producer cases (%d launches checked), %d decode GEMM cases (%d launches checked), %d prefill launches checked (experimental: full suite only)", len(pc), runs, len(gc), gruns, pruns)
}
