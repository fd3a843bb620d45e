package bench

import (
	"fmt"
	"io"
	"strings"

	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/results"
)

// MatrixCeilings measures the fp8 and bf16 matrix peaks through the vendor
// library (cuBLASLt on CUDA, hipBLASLt on HIP) at 8192^3 in the same run;
// where the library is absent it says so and returns none.
func MatrixCeilings(c *Ctx, log io.Writer) []results.Ceiling {
	out, err := matrixCeilings(c)
	if err != nil {
		fmt.Fprintf(log, "matrix ceilings: not measured (%v)\n", err)
	}
	return out
}

// matrixCeilings times the vendor GEMM (cuBLASLt on CUDA, hipBLASLt on
// HIP) at M=N=K=8192 (hot: a matrix peak is a compute figure) for fp8 e4m3
// (bf16 out) and bf16.
func matrixCeilings(c *Ctx) ([]results.Ceiling, error) {
	lt, err := gpu.OpenVendorGEMM(c.Dev.Info().Backend)
	if err != nil {
		return nil, err
	}
	defer lt.Close()
	const n = 8192
	var out []results.Ceiling
	for _, k := range []struct {
		name string
		typ  gpu.GemmType
	}{{results.CeilingFP8TFlops, gpu.GemmFP8}, {results.CeilingBF16TFlops, gpu.GemmBF16}} {
		recs, err := MeasurePeerGEMM(c, lt, k.typ, "ceiling", fmt.Sprintf("%d^3", n), n, n, n, Hot)
		if err != nil {
			return out, err
		}
		rec := recs[0] // a hot point has its stream record only
		typName := gemmTypeName(k.typ)
		if c.Dev.Info().Backend == "hip" && k.typ == gpu.GemmFP8 && gpu.HipFP8IsFNUZ(c.Dev.Info().Arch) {
			typName = "fp8 e4m3fnuz"
		}
		out = append(out, results.Ceiling{Name: k.name, Value: rec.TFlops, Unit: "TF/s",
			How: fmt.Sprintf("%s v%d %s GEMM %d^3 (TN, fp32 accumulate, bf16 out), graph-timed trimmed mean %.1f us, random inputs", lt.Name(), lt.Version(), typName, n, rec.TrimmedMeanUS)})
	}
	return out, nil
}

func gemmTypeName(t gpu.GemmType) string {
	if t == gpu.GemmFP8 {
		return "fp8 e4m3"
	}
	return "bf16"
}

// MeasurePeerGEMM times one vendor GEMM (gpu.VendorGEMM: cuBLASLt or
// hipBLASLt) y[M,N] = x[M,K]·w[N,K]ᵀ and returns its records (the
// stream record, then the isolated one when the engine times both; not appended to
// c.Records). Inputs are filled with small random values (bf16/e4m3 bit
// patterns of modest magnitude, so no NaN or Inf reaches the tensor
// cores); cold rotates weight copies.
func MeasurePeerGEMM(c *Ctx, lt gpu.VendorGEMM, typ gpu.GemmType, suite, shape string, m, n, k int, regime string) ([]results.Record, error) {
	defer c.FreeAll()
	plan, err := lt.PlanGEMM(c.Dev, typ, m, n, k)
	if err != nil {
		return nil, err
	}
	defer plan.Close()
	peer := strings.ToLower(lt.Name())
	nx, nw, ny := gpu.GemmBytes(typ, m, n, k)
	xBytes, wBytes, yBytes := int64(nx), int64(nw), int64(ny)
	footprint := xBytes + wBytes + yBytes
	copies := 1
	if regime == Cold {
		copies = CopiesFor(footprint, c.Dev.Info().LLCBytes)
	}
	x, err := c.Alloc(xBytes * int64(copies))
	if err != nil {
		return nil, err
	}
	w, err := c.Alloc(wBytes * int64(copies))
	if err != nil {
		return nil, err
	}
	y, err := c.Alloc(yBytes * int64(copies))
	if err != nil {
		return nil, err
	}
	for _, b := range []struct {
		p gpu.Ptr
		n int64
	}{{x, xBytes * int64(copies)}, {w, wBytes * int64(copies)}} {
		if err := FillSmallRandom(c, b.p, b.n, typ); err != nil {
			return nil, err
		}
	}
	p := Point{Suite: suite, Kernel: peer + "_" + map[gpu.GemmType]string{gpu.GemmFP8: "fp8", gpu.GemmBF16: "bf16"}[typ],
		Shape: shape, M: m, Regime: regime, Bytes: footprint, Flops: 2 * int64(m) * int64(n) * int64(k),
		Footprint: footprint, Copies: copies,
		Variants: []Variant{{Name: peer, Enqueue: func(s gpu.Stream, i int) error {
			return plan.Enqueue(x.Add(int(xBytes)*i), w.Add(int(wBytes)*i), y.Add(int(yBytes)*i), s)
		}, Unchecked: "vendor library peer on random inputs: timed as the figure to beat, its output not compared"}}}
	return c.Engine.Measure(p)
}
