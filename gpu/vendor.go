package gpu

import "fmt"

// VendorGEMM is an open vendor GEMM library, cuBLASLt on the CUDA backend
// and hipBLASLt on HIP: the peer the benches time beside our GEMMs and the
// source of the matrix-peak ceilings. Both compute the same TN GEMM
// y[M,N] = x[M,K]·w[N,K]ᵀ (see cublaslt.go).
type VendorGEMM interface {
	Name() string // "cuBLASLt", "hipBLASLt"
	Version() int
	Path() string
	PlanGEMM(dev Device, t GemmType, M, N, K int) (*GemmPlan, error)
	Close() error
}

// OpenVendorGEMM opens the vendor GEMM library of a backend ("cuda", "hip").
// Call it on the OS thread that opened the device.
func OpenVendorGEMM(backend string) (VendorGEMM, error) {
	switch backend {
	case "cuda":
		b, err := OpenBLASLt()
		if err != nil {
			return nil, err
		}
		return b, nil
	case "hip":
		b, err := OpenHipBLASLt()
		if err != nil {
			return nil, err
		}
		return b, nil
	}
	return nil, fmt.Errorf("no vendor GEMM library binding for backend %s", backend)
}
