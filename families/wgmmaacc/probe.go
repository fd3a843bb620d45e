// Package wgmmaacc measures what Hopper's fp8 wgmma loses when it chains
// k32 steps into one accumulator: the premise of the element bound the
// gemm gate applies to the wgmma GEMMs (gemm.wgmmaFP8Acc: at most 2^-13 of
// the products' magnitude per step, after the DeepSeek-V3 report's "about
// 14 bits"). One H200 seed put pq_gemm_pre_wg 2.3% past that bound
// (results/h200-2026-12-02d/README.md), so the model is measured here
// rather than assumed.
//
// pq_wgmma_acc_probe (wgmmaacc.hip) runs 1..4 chained wgmma.m64n8k32.e4m3
// ops on chosen codes, and each of its 512 outputs is compared with the
// exact sum (fp64: e4m3 products and sums of these sizes are exact there):
//
//   - exact: integers |a|, |b| <= 4, so every partial sum fits 14 bits:
//     the output must be the exact sum. This proves the probe's operand
//     layouts, so that the other cases measure the accumulator only.
//   - align: in each row one large product and 31 small ones per step,
//     2^-4..2^-13 of it over the rows: how many bits of the small products
//     survive next to the large one.
//   - subgrid: one large product and 31 small ones of the same sign per
//     step, each a little under a power of two 2^-1..2^-6 of 2^-8 of the
//     large one: if the small products are cut to the large one's grid
//     rather than rounded, every cut adds up.
//   - outlier: the gemm gate's kind of operands (codes c − z in −15..15
//     against e4m3 activations with rare large values), in several draws.
//
// Each output must be within steps · StepBound · Σ|a·b| of the exact sum.
// The worst |D − exact| per case is recorded in units of 2^-13 · Σ|a·b|
// per step (the "14 bits" model: 1). On the H200 (2026-12-02, three
// seeds, results/h200-2026-12-02e) the exact and align cases were exact,
// subgrid reached 3.63 and the outlier draws 0.68..1.95: the hardware
// loses more than one 14-bit truncation per step, so StepBound is the
// measured worst rounded up to 4 units, and the wgmma GEMMs' bound
// (gemm.wgmmaFP8Acc) is 4 steps of it per 128-group. The kernel is
// Experimental (full suite only): a measurement, not a product kernel.
package wgmmaacc

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/refimpl"
)

// Family is this folder's name in the registry.
const Family = "wgmmaacc"

// Kernel is the probe's registry name.
const Kernel = "pq_wgmma_acc_probe"

func init() {
	kernels.Register(kernels.Kernel{Name: Kernel, Family: Family, Module: "wgmmaacc", Op: "probe", Role: kernels.Baseline, Status: kernels.Experimental, Tag: "probe",
		Targets: []string{kernels.SM90a}, // no MatrixOp: not a GEMM (isa-sm90a asks a GEMM's op to sit in its k loop)
		// ptxas 13.0 on the H200 notes (C7519) warpgroup arrives it injects
		// around the chained ops (results/h200-2026-12-02f/gate-u2.log.gz).
		AllowWGMMANotes: "a measurement of the accumulator's bits, never timed: injected arrives cost time, not bits",
		Doc:             "not a GEMM: 1..4 chained wgmma.m64n8k32.e4m3 on given codes into one fp32 accumulator, one warpgroup, for the gate wgmma-acc; experimental: a measurement, not a product kernel"})
	gates.Register(gates.Gate{Family: Family, Name: "wgmma-acc", Headline: []string{"worst_err_per_step"}, Suites: gates.Full, Device: true, Run: gateWGMMAAcc,
		Proves: "the fp8 wgmma (m64n8k32.e4m3, 1..4 steps chained in one accumulator, as the wgmma GEMMs sum a group) gives the exact sum where 14 bits hold every partial sum, and is otherwise within steps x 2^-11 (StepBound, the H200's measured worst rounded up) of the products' magnitude of it: the premise of the wgmma GEMMs' element bound"})
}

// The probe's shapes (wgmmaacc.hip).
const (
	Rows, Cols, K, MaxSteps = 64, 8, 32, 4
	OutlierDraws            = 8 // independent draws of the outlier operands
)

// StepBound is the accumulator's error per chained k32 step the gate
// allows, relative to the products' magnitude Σ|a·b|
// (refimpl.WGMMAE4M3StepLoss, which the wgmma GEMMs' bound is built from).
const StepBound = refimpl.WGMMAE4M3StepLoss

// MetricKey is the case's worst_err_per_step key in the results file.
func (c Case) MetricKey() string {
	return gates.NewCase("case", c.Name, "steps", c.Steps).Key("worst_err_per_step")
}

// Case is one probe launch: A [Steps][Rows][K] and B [Steps][Cols][K] as
// values, each exactly an e4m3 code's value.
type Case struct {
	Name  string // the kind of operands (with Steps, the case's metric labels)
	Steps int
	Exact bool // every partial sum fits 14 bits: the output must be exact
	A, B  []float32
}

// Label names the case in messages: its name and step count.
func (c Case) Label() string { return fmt.Sprintf("%s/steps=%d", c.Name, c.Steps) }

// Sums is D[r][n] = Σ_s Σ_k A[s][r][k]·B[s][n][k] in fp64, and the
// magnitude Σ|A·B| of each sum.
func (c Case) Sums() (sum, mag []float64) {
	sum, mag = make([]float64, Rows*Cols), make([]float64, Rows*Cols)
	for s := 0; s < c.Steps; s++ {
		for r := 0; r < Rows; r++ {
			for n := 0; n < Cols; n++ {
				for k := 0; k < K; k++ {
					p := float64(c.A[(s*Rows+r)*K+k]) * float64(c.B[(s*Cols+n)*K+k])
					sum[r*Cols+n] += p
					mag[r*Cols+n] += math.Abs(p)
				}
			}
		}
	}
	return sum, mag
}

// e4m3Value is x rounded to the nearest e4m3 value.
func e4m3Value(x float32) float32 { return refimpl.DecodeE4M3(refimpl.EncodeE4M3(x)) }

// Cases are the gate's cases for seed.
func Cases(seed uint64) []Case {
	rng := rand.New(rand.NewPCG(seed, 0xACC))
	mk := func(name string, steps int, exact bool, a func(s, r, k int) float32, b func(s, n, k int) float32) Case {
		c := Case{Name: name, Steps: steps, Exact: exact, A: make([]float32, steps*Rows*K), B: make([]float32, steps*Cols*K)}
		for s := 0; s < steps; s++ {
			for r := 0; r < Rows; r++ {
				for k := 0; k < K; k++ {
					c.A[(s*Rows+r)*K+k] = e4m3Value(a(s, r, k))
				}
			}
			for n := 0; n < Cols; n++ {
				for k := 0; k < K; k++ {
					c.B[(s*Cols+n)*K+k] = e4m3Value(b(s, n, k))
				}
			}
		}
		return c
	}
	small := func(int, int, int) float32 { return float32(rng.IntN(9) - 4) }
	var out []Case
	for _, steps := range []int{1, 4} {
		out = append(out, mk("exact", steps, true, small, small))
	}
	// Row r: one product 256 (16 x 16) and 31 of ±16 x 2^-(r%10) (e4m3
	// reaches 2^-9): 2^-4..2^-13 of the large one; column n flips the small
	// products' signs on its own k pattern, so the 8 columns see different
	// cancellations.
	out = append(out, mk("align", 4, false,
		func(_, r, k int) float32 {
			if k == 0 {
				return 16
			}
			return float32(math.Ldexp(1, -(r % 10)))
		},
		func(_, n, k int) float32 {
			if k == 0 || (k>>(n%5))&1 == 0 {
				return 16
			}
			return -16
		}))
	// Row r: 16 x 16 at k = 0, then 31 products 1.875·2^-(r%6) x 16 or
	// x 30 (column parity), all positive.
	out = append(out, mk("subgrid", 4, false,
		func(_, r, k int) float32 {
			if k == 0 {
				return 16
			}
			return float32(1.875 * math.Ldexp(1, -(r%6)))
		},
		func(_, n, k int) float32 {
			if k == 0 || n%2 == 0 {
				return 16
			}
			return 30
		}))
	for d := 0; d < OutlierDraws; d++ {
		out = append(out, mk(fmt.Sprintf("outlier%d", d), 4, false,
			func(int, int, int) float32 { return float32(rng.IntN(31) - 15) },
			func(int, int, int) float32 {
				v := rng.NormFloat64()
				if rng.IntN(64) == 0 {
					v *= 100
				}
				return float32(v)
			}))
	}
	return out
}

// codes are values as e4m3 codes, zero-padded to n bytes.
func codes(v []float32, n int) []byte {
	out := make([]byte, n)
	for i, x := range v {
		out[i] = refimpl.EncodeE4M3(x)
	}
	return out
}

// Judge compares the probe's outputs with the exact sums: the worst
// |D − exact| / (2^-13 · Σ|a·b|) per step, and the first output past the
// bound (steps · StepBound · Σ|a·b|; in an exact case, any difference;
// NaN always).
func Judge(c Case, got []float32) (worst float64, bad error) {
	sum, mag := c.Sums()
	for i, g := range got {
		e := math.Abs(float64(g) - sum[i])
		if math.IsNaN(float64(g)) {
			e = math.Inf(1)
		}
		unit := 0x1p-13 * mag[i] * float64(c.Steps)
		if unit > 0 {
			worst = max(worst, e/unit)
		}
		if bad == nil && ((c.Exact && e != 0) || e > StepBound*mag[i]*float64(c.Steps)) {
			bad = fmt.Errorf("%s: D[%d][%d] = %v, exact %v: |err| %.3g, %.3g x 2^-13·Σ|a·b| per step", c.Label(), i/Cols, i%Cols, g, sum[i], e, e/max(unit, 1e-300))
		}
	}
	return worst, bad
}

func gateWGMMAAcc(t *gates.T) {
	k, ok := kernels.Lookup(Kernel)
	if !ok {
		t.Failf("%s is not registered", Kernel)
		return
	}
	if arch := t.Device().Info().CodeArch(); !slices.Contains(k.Targets, arch) {
		t.Skipf("%s runs on %v only; this device is %s", Kernel, k.Targets, arch)
	}
	a := t.Buffer("a", MaxSteps*Rows*K)
	b := t.Buffer("b", MaxSteps*Cols*K)
	d := t.Buffer("d", 4*Rows*Cols)
	worst := 0.0
	for _, c := range Cases(t.Seed()) {
		t.Upload(a, codes(c.A, a.N))
		t.Upload(b, codes(c.B, b.N))
		t.Poison(d, 0xFF)
		t.Launch(Kernel, gpu.D1(1), gpu.D1(128), 0, a.Ptr(), b.Ptr(), d.Ptr(), uint32(c.Steps))
		raw := t.Download(d)
		got := make([]float32, Rows*Cols)
		for i := range got {
			got[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		w, err := Judge(c, got)
		if err != nil {
			t.Failf("%v", err)
		}
		t.Metric(c.MetricKey(), w)
		worst = max(worst, w)
		t.Logf("%s: worst |err| %.3g x 2^-13·Σ|a·b| per step", c.Label(), w)
	}
	t.Metric("worst_err_per_step", worst)
}
