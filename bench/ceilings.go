package bench

import (
	"fmt"
	"io"

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
	lt, err := openPeerLib(c)
	if err != nil {
		return nil, err
	}
	defer lt.Close()
	_, libName := peerNames(lt)
	const n = 8192
	var out []results.Ceiling
	for _, k := range []struct {
		name string
		typ  gpu.GemmType
		elem int64
	}{{results.CeilingFP8TFlops, gpu.GemmFP8, 1}, {results.CeilingBF16TFlops, gpu.GemmBF16, 2}} {
		rec, err := MeasurePeerGEMM(c, lt, k.typ, "ceiling", fmt.Sprintf("%d^3", n), n, n, n, Hot)
		if err != nil {
			return out, err
		}
		typName := gemmTypeName(k.typ)
		if _, hip := lt.(*gpu.HipBLASLt); hip && k.typ == gpu.GemmFP8 && gpu.HipFP8IsFNUZ(c.Dev.Info().Arch) {
			typName = "fp8 e4m3fnuz"
		}
		out = append(out, results.Ceiling{Name: k.name, Value: rec.TFlops, Unit: "TF/s",
			How: fmt.Sprintf("%s v%d %s GEMM %d^3 (TN, fp32 accumulate, bf16 out), graph-timed trimmed mean %.1f us, random inputs", libName, lt.Version(), typName, n, rec.TrimmedMeanUS)})
	}
	return out, nil
}

func gemmTypeName(t gpu.GemmType) string {
	if t == gpu.GemmFP8 {
		return "fp8 e4m3"
	}
	return "bf16"
}

// PeerLib is an open vendor GEMM library: *gpu.BLASLt (cuBLASLt, CUDA
// backend) or *gpu.HipBLASLt (hipBLASLt, HIP backend).
type PeerLib interface {
	Version() int
	Path() string
	Close() error
}

// peerPlan is what MeasurePeerGEMM needs of a planned vendor GEMM:
// *gpu.GemmPlan or *gpu.HipGemmPlan.
type peerPlan interface {
	Enqueue(x, w, y gpu.Ptr, s gpu.Stream) error
	Close() error
}

// openPeerLib opens the vendor GEMM library of the device's backend.
func openPeerLib(c *Ctx) (PeerLib, error) {
	switch be := c.Dev.Info().Backend; be {
	case "cuda":
		lt, err := gpu.OpenBLASLt()
		if err != nil {
			return nil, err
		}
		return lt, nil
	case "hip":
		lt, err := gpu.OpenHipBLASLt()
		if err != nil {
			return nil, err
		}
		return lt, nil
	default:
		return nil, fmt.Errorf("no peer library binding for backend %s", be)
	}
}

// peerNames are the library's record name ("cublaslt", "hipblaslt": the
// kernel prefix and variant name of its records) and its display name.
func peerNames(lt PeerLib) (record, display string) {
	if _, ok := lt.(*gpu.HipBLASLt); ok {
		return "hipblaslt", "hipBLASLt"
	}
	return "cublaslt", "cuBLASLt"
}

// planPeer plans y[m,n] = x[m,k]·w[n,k]ᵀ of typ with lt on dev.
func planPeer(lt PeerLib, dev gpu.Device, typ gpu.GemmType, m, n, k int) (peerPlan, error) {
	switch l := lt.(type) {
	case *gpu.BLASLt:
		p, err := l.Plan(dev, typ, m, n, k)
		if err != nil {
			return nil, err
		}
		return p, nil
	case *gpu.HipBLASLt:
		p, err := l.Plan(dev, typ, m, n, k)
		if err != nil {
			return nil, err
		}
		return p, nil
	}
	return nil, fmt.Errorf("no peer GEMM plan for %T", lt)
}

// MeasurePeerGEMM times one vendor GEMM (cuBLASLt or hipBLASLt, see
// PeerLib) y[M,N] = x[M,K]·w[N,K]ᵀ and returns its record (not appended to
// c.Records). Inputs are filled with small random values (bf16/e4m3 bit
// patterns of modest magnitude, so no NaN or Inf reaches the tensor
// cores); cold rotates weight copies.
func MeasurePeerGEMM(c *Ctx, lt PeerLib, typ gpu.GemmType, suite, shape string, m, n, k int, regime string) (results.Record, error) {
	defer c.FreeAll()
	plan, err := planPeer(lt, c.Dev, typ, m, n, k)
	if err != nil {
		return results.Record{}, err
	}
	defer plan.Close()
	peer, _ := peerNames(lt)
	elem := int64(1)
	if typ == gpu.GemmBF16 {
		elem = 2
	}
	xBytes, wBytes, yBytes := int64(m)*int64(k)*elem, int64(n)*int64(k)*elem, int64(m)*int64(n)*2
	footprint := xBytes + wBytes + yBytes
	copies := 1
	if regime == Cold {
		copies = CopiesFor(footprint, c.Dev.Info().LLCBytes)
	}
	x, err := c.Alloc(xBytes * int64(copies))
	if err != nil {
		return results.Record{}, err
	}
	w, err := c.Alloc(wBytes * int64(copies))
	if err != nil {
		return results.Record{}, err
	}
	y, err := c.Alloc(yBytes * int64(copies))
	if err != nil {
		return results.Record{}, err
	}
	for _, b := range []struct {
		p gpu.Ptr
		n int64
	}{{x, xBytes * int64(copies)}, {w, wBytes * int64(copies)}} {
		if err := fillSmallRandom(c, b.p, b.n, typ); err != nil {
			return results.Record{}, err
		}
	}
	p := Point{Suite: suite, Kernel: peer + "_" + map[gpu.GemmType]string{gpu.GemmFP8: "fp8", gpu.GemmBF16: "bf16"}[typ],
		Shape: shape, M: m, Regime: regime, Bytes: footprint, Flops: 2 * int64(m) * int64(n) * int64(k),
		Footprint: footprint, Copies: copies,
		Variants: []Variant{{Name: peer, Enqueue: func(s gpu.Stream, i int) error {
			return plan.Enqueue(x.Add(int(xBytes)*i), w.Add(int(wBytes)*i), y.Add(int(yBytes)*i), s)
		}}}}
	recs, err := c.Engine.Measure(p)
	if err != nil {
		return results.Record{}, err
	}
	return recs[0], nil
}
