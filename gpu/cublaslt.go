package gpu

import (
	"fmt"
	"os"
	"path/filepath"
	"unsafe"
)

// cuBLASLt (libcublasLt) through purego: the vendor GEMM the bench engine
// runs as a peer row beside our W4A8 GEMMs and as the matrix-peak ceiling.
//
// Only the CUDA backend can use it. cuBLASLt works on the CUDA context that
// is current on the calling OS thread; the CUDA backend made the device's
// primary context current on the thread that opened it, so OpenBLASLt,
// Plan, Enqueue and Close must all be called from that same locked OS
// thread (the one that called Open after runtime.LockOSThread).
//
// The GEMM. Row-major, as the harness stores everything:
//
//	y[M,N] = x[M,K] · w[N,K]ᵀ      (x, w: K contiguous; y: N contiguous, bf16)
//
// cuBLAS is column-major. A row-major R×C matrix with row stride C is, byte
// for byte, a column-major C×R matrix with leading dimension C: its
// transpose. So, in column-major terms:
//
//	w  bytes = W  (K×N, ld K),  W = wᵀ
//	x  bytes = X  (K×M, ld K),  X = xᵀ
//	y  bytes = Y  (N×M, ld N),  Y = yᵀ = (x·wᵀ)ᵀ = w·xᵀ = Wᵀ·X
//
// which is cublasLtMatmul's D = op(A)·op(B) with A = w's bytes, transa = T,
// B = x's bytes, transb = N, and cuBLAS's (m, n, k) = (N, M, K). This "TN"
// form is the only one cuBLASLt accepts for fp8 inputs on Hopper, and it
// needs no copy or transpose of any operand. C is y itself with D's layout
// (beta = 0, so it is never read).
//
// Header values and prototypes below are from the CUDA 12.6 toolkit headers
// cublasLt.h and cublas_api.h (as stored in github.com/zspace/system.cuda-12.6,
// include/), checked against CUDA 13.0's cublas_api.h
// (github.com/leomaxwell972/CU13ToolKit_Includes, include/cublas_api.h) and
// library_types.h of CUDA 12.8+. None of the values used here changed
// between CUDA 11.x and 13.x.
//
// The GPU paths (Plan, Enqueue) are exercised by the bench engine on the
// device, and by TestBLASLtGEMMOnDevice where a CUDA device and libcublasLt
// are present; CI (no GPU, no cuBLAS) checks the loading errors, the symbol
// table and the layout arithmetic.

// cublasStatus is cublasStatus_t (cublas_api.h), a C enum (int).
type cublasStatus int32

// cublasStatus_t values (cublas_api.h).
const (
	cublasStatusSuccess         cublasStatus = 0  // CUBLAS_STATUS_SUCCESS
	cublasStatusNotInitialized  cublasStatus = 1  // CUBLAS_STATUS_NOT_INITIALIZED
	cublasStatusAllocFailed     cublasStatus = 3  // CUBLAS_STATUS_ALLOC_FAILED
	cublasStatusInvalidValue    cublasStatus = 7  // CUBLAS_STATUS_INVALID_VALUE
	cublasStatusArchMismatch    cublasStatus = 8  // CUBLAS_STATUS_ARCH_MISMATCH
	cublasStatusMappingError    cublasStatus = 11 // CUBLAS_STATUS_MAPPING_ERROR
	cublasStatusExecutionFailed cublasStatus = 13 // CUBLAS_STATUS_EXECUTION_FAILED
	cublasStatusInternalError   cublasStatus = 14 // CUBLAS_STATUS_INTERNAL_ERROR
	cublasStatusNotSupported    cublasStatus = 15 // CUBLAS_STATUS_NOT_SUPPORTED
	cublasStatusLicenseError    cublasStatus = 16 // CUBLAS_STATUS_LICENSE_ERROR
)

var cublasStatusNames = map[cublasStatus]string{
	cublasStatusSuccess:         "CUBLAS_STATUS_SUCCESS",
	cublasStatusNotInitialized:  "CUBLAS_STATUS_NOT_INITIALIZED",
	cublasStatusAllocFailed:     "CUBLAS_STATUS_ALLOC_FAILED",
	cublasStatusInvalidValue:    "CUBLAS_STATUS_INVALID_VALUE",
	cublasStatusArchMismatch:    "CUBLAS_STATUS_ARCH_MISMATCH",
	cublasStatusMappingError:    "CUBLAS_STATUS_MAPPING_ERROR",
	cublasStatusExecutionFailed: "CUBLAS_STATUS_EXECUTION_FAILED",
	cublasStatusInternalError:   "CUBLAS_STATUS_INTERNAL_ERROR",
	cublasStatusNotSupported:    "CUBLAS_STATUS_NOT_SUPPORTED",
	cublasStatusLicenseError:    "CUBLAS_STATUS_LICENSE_ERROR",
}

// cudaDataType_t values (library_types.h).
const (
	cudaR32F    = 0  // CUDA_R_32F: float
	cudaR16BF   = 14 // CUDA_R_16BF: nv_bfloat16
	cudaR8FE4M3 = 28 // CUDA_R_8F_E4M3: nv_fp8_e4m3
)

// cublasComputeType_t (cublas_api.h).
const cublasCompute32F = 68 // CUBLAS_COMPUTE_32F: float accumulation, default

// cublasOperation_t (cublas_api.h).
const (
	cublasOpN = 0 // CUBLAS_OP_N
	cublasOpT = 1 // CUBLAS_OP_T
)

// cublasLtMatmulDescAttributes_t (cublasLt.h). Both take an int32_t
// holding a cublasOperation_t.
const (
	cublasLtMatmulDescTransA = 3 // CUBLASLT_MATMUL_DESC_TRANSA
	cublasLtMatmulDescTransB = 4 // CUBLASLT_MATMUL_DESC_TRANSB
)

// cublasLtMatmulPreferenceAttributes_t (cublasLt.h); takes a uint64_t.
const cublasLtMatmulPrefMaxWorkspaceBytes = 1 // CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES

// matmulAlgo is cublasLtMatmulAlgo_t (cublasLt.h):
//
//	typedef struct { uint64_t data[8]; } cublasLtMatmulAlgo_t;
type matmulAlgo struct {
	data [8]uint64
}

// heuristicResult is cublasLtMatmulHeuristicResult_t (cublasLt.h), 96 bytes
// on LP64:
//
//	typedef struct {
//	  cublasLtMatmulAlgo_t algo;   // offset  0, 64 bytes
//	  size_t workspaceSize;        // offset 64,  8 bytes
//	  cublasStatus_t state;        // offset 72,  4 bytes (C enum)
//	  float wavesCount;            // offset 76,  4 bytes
//	  int reserved[4];             // offset 80, 16 bytes
//	} cublasLtMatmulHeuristicResult_t;
type heuristicResult struct {
	algo          matmulAlgo
	workspaceSize uintptr
	state         cublasStatus
	wavesCount    float32
	reserved      [4]int32
}

// blasLtLib is one loaded libcublasLt and its bound entry points. Handles
// (cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t,
// cublasLtMatmulPreference_t, cudaStream_t) are opaque pointers and travel
// as uintptr; device pointers are uintptr; enums are int32; size_t is
// uintptr.
type blasLtLib struct {
	*library

	// cublasStatus_t cublasLtCreate(cublasLtHandle_t* lightHandle);
	cublasLtCreate func(h *uintptr) cublasStatus
	// cublasStatus_t cublasLtDestroy(cublasLtHandle_t lightHandle);
	cublasLtDestroy func(h uintptr) cublasStatus
	// size_t cublasLtGetVersion(void);
	cublasLtGetVersion func() uintptr
	// const char* cublasLtGetStatusString(cublasStatus_t status);  (CUDA 11.4+)
	cublasLtGetStatusString func(s cublasStatus) uintptr

	// cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* matmulDesc,
	//     cublasComputeType_t computeType, cudaDataType_t scaleType);
	cublasLtMatmulDescCreate func(d *uintptr, computeType int32, scaleType int32) cublasStatus
	// cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc);
	cublasLtMatmulDescDestroy func(d uintptr) cublasStatus
	// cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc,
	//     cublasLtMatmulDescAttributes_t attr, const void* buf, size_t sizeInBytes);
	cublasLtMatmulDescSetAttribute func(d uintptr, attr int32, buf unsafe.Pointer, size uintptr) cublasStatus

	// cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* matLayout,
	//     cudaDataType type, uint64_t rows, uint64_t cols, int64_t ld);
	cublasLtMatrixLayoutCreate func(l *uintptr, typ int32, rows, cols uint64, ld int64) cublasStatus
	// cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t matLayout);
	cublasLtMatrixLayoutDestroy func(l uintptr) cublasStatus

	// cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref);
	cublasLtMatmulPreferenceCreate func(p *uintptr) cublasStatus
	// cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
	//     cublasLtMatmulPreferenceAttributes_t attr, const void* buf, size_t sizeInBytes);
	cublasLtMatmulPreferenceSetAttribute func(p uintptr, attr int32, buf unsafe.Pointer, size uintptr) cublasStatus
	// cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref);
	cublasLtMatmulPreferenceDestroy func(p uintptr) cublasStatus

	// cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t lightHandle,
	//     cublasLtMatmulDesc_t operationDesc,
	//     cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc,
	//     cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
	//     cublasLtMatmulPreference_t preference, int requestedAlgoCount,
	//     cublasLtMatmulHeuristicResult_t heuristicResultsArray[], int* returnAlgoCount);
	cublasLtMatmulAlgoGetHeuristic func(h, op, a, b, c, d, pref uintptr, requested int32, results *heuristicResult, returned *int32) cublasStatus

	// cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc,
	//     const void* alpha, const void* A, cublasLtMatrixLayout_t Adesc,
	//     const void* B, cublasLtMatrixLayout_t Bdesc, const void* beta,
	//     const void* C, cublasLtMatrixLayout_t Cdesc, void* D, cublasLtMatrixLayout_t Ddesc,
	//     const cublasLtMatmulAlgo_t* algo, void* workspace, size_t workspaceSizeInBytes,
	//     cudaStream_t stream);
	cublasLtMatmul func(h, op uintptr, alpha *float32, a, aDesc, b, bDesc uintptr, beta *float32,
		c, cDesc, d, dDesc uintptr, algo *matmulAlgo, workspace, workspaceSize uintptr, stream uintptr) cublasStatus
}

// symbols is the table of every entry point, in the order of the struct.
func (l *blasLtLib) symbols() []symbol {
	return []symbol{
		{"cublasLtCreate", &l.cublasLtCreate, false},
		{"cublasLtDestroy", &l.cublasLtDestroy, false},
		{"cublasLtGetVersion", &l.cublasLtGetVersion, false},
		{"cublasLtGetStatusString", &l.cublasLtGetStatusString, true},
		{"cublasLtMatmulDescCreate", &l.cublasLtMatmulDescCreate, false},
		{"cublasLtMatmulDescDestroy", &l.cublasLtMatmulDescDestroy, false},
		{"cublasLtMatmulDescSetAttribute", &l.cublasLtMatmulDescSetAttribute, false},
		{"cublasLtMatrixLayoutCreate", &l.cublasLtMatrixLayoutCreate, false},
		{"cublasLtMatrixLayoutDestroy", &l.cublasLtMatrixLayoutDestroy, false},
		{"cublasLtMatmulPreferenceCreate", &l.cublasLtMatmulPreferenceCreate, false},
		{"cublasLtMatmulPreferenceSetAttribute", &l.cublasLtMatmulPreferenceSetAttribute, false},
		{"cublasLtMatmulPreferenceDestroy", &l.cublasLtMatmulPreferenceDestroy, false},
		{"cublasLtMatmulAlgoGetHeuristic", &l.cublasLtMatmulAlgoGetHeuristic, false},
		{"cublasLtMatmul", &l.cublasLtMatmul, false},
	}
}

// err turns a cublasStatus_t into an *Error (nil on success).
func (l *blasLtLib) err(fn string, s cublasStatus) error {
	if s == cublasStatusSuccess {
		return nil
	}
	var msg func(cublasStatus) string
	if l != nil && l.cublasLtGetStatusString != nil {
		msg = func(s cublasStatus) string { return cString(l.cublasLtGetStatusString(s)) }
	}
	return statusError("cuBLASLt", fn, "cublasStatus_t", s, nameIn(cublasStatusNames), msg)
}

// CUBLASLtEnv names the variable holding a full path to libcublasLt, tried
// before anything else.
const CUBLASLtEnv = "PARHARNESS_CUBLASLT"

// CUBLASLtLibraries are the names tried through the dynamic loader's normal
// search path, after CUBLASLtEnv.
var CUBLASLtLibraries = []string{"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"}

// CUBLASLtGlobs are the fixed patterns tried after CUBLASLtLibraries: the
// NVIDIA wheels of Python environments (torch's venv first) and the
// toolkit's own folder. Within a pattern the matches are tried highest
// version first. cublasLtPatterns adds the toolkits and environments found
// from the environment and beside these.
var CUBLASLtGlobs = []string{
	"/opt/torch/.venv/lib/python3*/site-packages/nvidia/cublas/lib/libcublasLt.so.*",
	"/opt/torch/.venv/lib/python3*/site-packages/nvidia/cu13/lib/libcublasLt.so.*",
	"/usr/local/lib/python3*/dist-packages/nvidia/cublas/lib/libcublasLt.so.*",
	"/usr/lib/python3/dist-packages/nvidia/cublas/lib/libcublasLt.so.*",
	"/usr/local/cuda/lib64/libcublasLt.so*",
}

// cublasLtPatterns is every pattern OpenBLASLt tries after
// CUBLASLtLibraries, in order: CUBLASLtGlobs; $CUDA_HOME/lib64;
// /usr/local/cuda-*/lib64 (newest toolkit first); then the NVIDIA wheels'
// lib folders (nvidia/cublas/lib, and nvidia/cu13/lib as in torch's venv)
// under the site-packages of $VIRTUAL_ENV and of ~/.local. Fixed paths are
// under sysRoot.
func cublasLtPatterns() []string {
	var pats []string
	for _, g := range CUBLASLtGlobs {
		pats = append(pats, sysPath(g))
	}
	if h := os.Getenv("CUDA_HOME"); h != "" {
		pats = append(pats, filepath.Join(h, "lib64", "libcublasLt.so*"))
	}
	pats = append(pats, sysPath("/usr/local/cuda-*/lib64/libcublasLt.so*"))
	var sites []string
	if v := os.Getenv("VIRTUAL_ENV"); v != "" {
		sites = append(sites, filepath.Join(v, "lib", "python3*", "site-packages"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		sites = append(sites, filepath.Join(home, ".local", "lib", "python3*", "site-packages"))
	}
	for _, sp := range sites {
		pats = append(pats,
			filepath.Join(sp, "nvidia", "cublas", "lib", "libcublasLt.so.*"),
			filepath.Join(sp, "nvidia", "cu13", "lib", "libcublasLt.so.*"))
	}
	return pats
}

// spec is how OpenBLASLt finds libcublasLt: CUBLASLtEnv, then
// CUBLASLtLibraries, then cublasLtPatterns, bound to l's table.
func (l *blasLtLib) spec() libSpec {
	return libSpec{lib: "cuBLASLt", env: CUBLASLtEnv, names: CUBLASLtLibraries, globs: cublasLtPatterns(), syms: l.symbols()}
}

// cublasLtCandidates lists what OpenBLASLt tries, in order, and a note for
// each glob pattern that matched nothing.
func cublasLtCandidates() (cands []string, noMatch []string) {
	return (&blasLtLib{}).spec().candidates()
}

// openBLASLtLib loads the first libcublasLt that loads and has every
// required symbol. The error of a failed search is an *Error naming every
// path tried and why.
func openBLASLtLib() (*blasLtLib, error) {
	l := &blasLtLib{}
	lib, err := loadLib(l.spec())
	if err != nil {
		return nil, err
	}
	l.library = lib
	return l, nil
}

// BLASLt is an open cuBLASLt handle.
type BLASLt struct {
	ltHandle
	lib *blasLtLib
}

// OpenBLASLt loads libcublasLt (see CUBLASLtEnv, CUBLASLtLibraries,
// cublasLtPatterns) and creates a handle. On failure to load, the error is an
// *Error naming every path tried and why. Call it on the OS thread
// that opened the CUDA device.
func OpenBLASLt() (*BLASLt, error) {
	l, err := openBLASLtLib()
	if err != nil {
		return nil, err
	}
	b := &BLASLt{ltHandle: ltHandle{calls: l.calls()}, lib: l}
	if err := l.err("cublasLtCreate", l.cublasLtCreate(&b.handle)); err != nil {
		return nil, fmt.Errorf("%s loaded: %w", l.path, err)
	}
	return b, nil
}

// Version is cublasLtGetVersion(): major*10000 + minor*100 + patch
// (e.g. 130100 for cuBLAS 13.1.0).
func (b *BLASLt) Version() int { return int(b.lib.cublasLtGetVersion()) }

// Path is the library path or name that was loaded.
func (b *BLASLt) Path() string { return b.lib.path }

// cudaInType is the cudaDataType_t of x and w (the same on every arch).
func cudaInType(t GemmType, _ string) (int32, error) {
	switch t {
	case GemmFP8:
		return cudaR8FE4M3, nil
	case GemmBF16:
		return cudaR16BF, nil
	}
	return 0, fmt.Errorf("gpu: unknown GEMM type %v", t)
}

// cudaDataTypeName names a cudaDataType_t value.
func cudaDataTypeName(t int32) string {
	switch t {
	case cudaR32F:
		return "CUDA_R_32F"
	case cudaR16BF:
		return "CUDA_R_16BF"
	case cudaR8FE4M3:
		return "CUDA_R_8F_E4M3"
	}
	return fmt.Sprintf("cudaDataType %d", t)
}

// calls binds cuBLASLt's entry points and enum values into the shared
// plan's table (blaslt.go).
func (l *blasLtLib) calls() *ltCalls {
	return &ltCalls{
		lib: "cuBLASLt", backend: "cuda",
		inType: cudaInType, outType: cudaR16BF, typeName: cudaDataTypeName,
		descCreateTN: func(op *uintptr) error {
			if err := l.err("cublasLtMatmulDescCreate", l.cublasLtMatmulDescCreate(op, cublasCompute32F, cudaR32F)); err != nil {
				return err
			}
			for _, at := range [][2]int32{{cublasLtMatmulDescTransA, cublasOpT}, {cublasLtMatmulDescTransB, cublasOpN}} {
				v := at[1]
				if err := l.err("cublasLtMatmulDescSetAttribute", l.cublasLtMatmulDescSetAttribute(*op, at[0], unsafe.Pointer(&v), unsafe.Sizeof(v))); err != nil {
					return err
				}
			}
			return nil
		},
		descDestroy: func(op uintptr) error {
			return l.err("cublasLtMatmulDescDestroy", l.cublasLtMatmulDescDestroy(op))
		},
		layoutCreate: func(h *uintptr, typ int32, lay matLayout) error {
			return l.err("cublasLtMatrixLayoutCreate", l.cublasLtMatrixLayoutCreate(h, typ, lay.rows, lay.cols, lay.ld))
		},
		layoutDestroy: func(h uintptr) error {
			return l.err("cublasLtMatrixLayoutDestroy", l.cublasLtMatrixLayoutDestroy(h))
		},
		prefCreate: func(p *uintptr) error {
			return l.err("cublasLtMatmulPreferenceCreate", l.cublasLtMatmulPreferenceCreate(p))
		},
		prefSetMaxW: func(p uintptr, bytes uint64) error {
			return l.err("cublasLtMatmulPreferenceSetAttribute", l.cublasLtMatmulPreferenceSetAttribute(p, cublasLtMatmulPrefMaxWorkspaceBytes, unsafe.Pointer(&bytes), unsafe.Sizeof(bytes)))
		},
		prefDestroy: func(p uintptr) error {
			return l.err("cublasLtMatmulPreferenceDestroy", l.cublasLtMatmulPreferenceDestroy(p))
		},
		heuristic: func(h, op, a, b, d, pref uintptr) ([]ltCandidate, error) {
			var res [heuristicRequest]heuristicResult
			var n int32
			if err := l.err("cublasLtMatmulAlgoGetHeuristic", l.cublasLtMatmulAlgoGetHeuristic(h, op, a, b, d, d, pref, heuristicRequest, &res[0], &n)); err != nil {
				return nil, err
			}
			out := make([]ltCandidate, 0, len(res))
			for _, r := range res[:max(0, min(int(n), len(res)))] {
				out = append(out, ltCandidate{algo: ltAlgo(r.algo.data), wsBytes: r.workspaceSize, ok: r.state == cublasStatusSuccess, waves: r.wavesCount})
			}
			return out, nil
		},
		matmul: func(h, op uintptr, alpha, beta *float32, a, aDesc, b, bDesc, c, cDesc, d, dDesc uintptr, algo *ltAlgo, ws, wsBytes, stream uintptr) error {
			return l.err("cublasLtMatmul", l.cublasLtMatmul(h, op, alpha, a, aDesc, b, bDesc, beta, c, cDesc, d, dDesc, (*matmulAlgo)(unsafe.Pointer(algo)), ws, wsBytes, stream))
		},
		notSupported: func(msg string) error {
			e := statusError("cuBLASLt", "cublasLtMatmulAlgoGetHeuristic", "cublasStatus_t", cublasStatusNotSupported, nameIn(cublasStatusNames), nil)
			e.Msg = msg
			return e
		},
		destroy: func(h uintptr) error { return l.err("cublasLtDestroy", l.cublasLtDestroy(h)) },
	}
}
