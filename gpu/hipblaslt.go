package gpu

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unsafe"
)

// hipBLASLt (libhipblaslt) through purego: the AMD counterpart of the
// cuBLASLt binding in cublaslt.go, with the same plan shapes and semantics,
// used by the bench engine as the peer GEMM and the matrix-peak ceiling
// when the device is on the HIP backend.
//
// Threads: hipBLASLt works on the HIP device that is current on the calling
// OS thread; the HIP backend made its device current on the thread that
// opened it (hipSetDevice), so OpenHipBLASLt, Plan, Enqueue and Close must
// be called from that same locked OS thread.
//
// The GEMM is the one of cublaslt.go, derived there:
//
//	y[M,N] = x[M,K] · w[N,K]ᵀ      (x, w: K contiguous; y: N contiguous, bf16)
//
// hipBLASLt, like cuBLASLt, is column-major, so the row-major buffers are
// passed as A = w's bytes (K×N, ld K) with transa = T, B = x's bytes (K×M,
// ld K) with transb = N, and C = D = y's bytes (N×M, ld N): hipBLASLt's
// (m, n, k) = (N, M, K). gemmLayouts (blaslt.go) computes the three
// layouts for both libraries. C is y itself (beta = 0, never read).
//
// Sources of every value and layout below (all read through the public
// source index, not from an installed SDK; there is no hipBLASLt on the
// build machine):
//
//   - hipblaslt.h: github.com/ROCm/hipBLASLt library/include/hipblaslt.h at
//     commits 592518e7cb9a8215f0f091c9a2a646d0320d306d (hipBLASLt 0.6; its
//     version tweak "592518e" is the one ROCm 6.0.2 ships) and
//     007c1b57d117047ca837a07196edc373655bcfe4 (later 0.x), and the ROCm 7
//     monorepo copy github.com/ROCm/rocm-libraries
//     projects/hipblaslt/library/include/hipblaslt/hipblaslt.h at
//     2cace84f1ad818590b7195bc0e67fe04b0416dcd. The attribute values,
//     prototypes and the two structs used here are identical in all three.
//   - hipblasStatus_t, hipblasOperation_t, hipblasComputeType_t:
//     github.com/ROCm/hipBLAS-common library/include/hipblas-common.h at
//     6b7748e2fd2d902b45258887856db0085fb51b63 (hipblaslt.h includes it;
//     before hipblas-common existed the same enums, same values, came from
//     hipblas.h).
//   - hipDataType: HIP's include/hip/library_types.h. HIP_R_32F = 0,
//     HIP_R_16BF = 14 and HIP_R_8F_E4M3_FNUZ = 1000 are in the ROCm 6.0–6.2
//     header (HIP docs-6.2.0 library_types.h reference); HIP_R_8F_E4M3 = 28
//     was added with the OCP fp8 types in ROCm 6.3 and is taken from AMD's
//     hipfort enum module generated from that header (hipfort docs-10.x,
//     hipfort_enums: hip_r_8f_e4m3 = 28) and agrees with CUDA's
//     CUDA_R_8F_E4M3 = 28, which hipDataType mirrors value for value.
//   - hipblasLtGetVersion's encoding: the hipBLASLt implementation
//     (library/src/amd_detail/hipblaslt.cpp): major*100000 + minor*100 + patch.
//
// Supported libraries: hipBLASLt 0.7 (ROCm 6.1) and later, the releases
// whose API takes hipDataType and hipblasComputeType_t. hipBLASLt of ROCm
// 5.x took its own hipblasltDatatype_t / hipblasLtComputeType_t
// (HIPBLASLT_COMPUTE_F32 = 300) and had a 16-byte hipblasLtMatmulAlgo_t
// {uint32_t solutionIdx; size_t max_workspace_bytes}; it also lacks
// hipblasLtGetVersion, so it fails the symbol check. OpenHipBLASLt refuses
// a library that reports a version below HipBLASLtMinVersion.
//
// The GPU paths (Plan, Enqueue) are exercised by the bench engine on an AMD
// device and by TestHipBLASLtGEMMOnDevice where a HIP device and hipBLASLt
// are present; without them (CI, the build machine) the tests check the
// loading errors, the symbol table and the layout arithmetic.

// hipblasStatus is hipblasStatus_t (hipblas-common.h), a C enum (int).
type hipblasStatus int32

// hipblasStatus_t values (hipblas-common.h).
const (
	hipblasStatusSuccess         hipblasStatus = 0  // HIPBLAS_STATUS_SUCCESS
	hipblasStatusNotInitialized  hipblasStatus = 1  // HIPBLAS_STATUS_NOT_INITIALIZED
	hipblasStatusAllocFailed     hipblasStatus = 2  // HIPBLAS_STATUS_ALLOC_FAILED
	hipblasStatusInvalidValue    hipblasStatus = 3  // HIPBLAS_STATUS_INVALID_VALUE
	hipblasStatusMappingError    hipblasStatus = 4  // HIPBLAS_STATUS_MAPPING_ERROR
	hipblasStatusExecutionFailed hipblasStatus = 5  // HIPBLAS_STATUS_EXECUTION_FAILED
	hipblasStatusInternalError   hipblasStatus = 6  // HIPBLAS_STATUS_INTERNAL_ERROR
	hipblasStatusNotSupported    hipblasStatus = 7  // HIPBLAS_STATUS_NOT_SUPPORTED
	hipblasStatusArchMismatch    hipblasStatus = 8  // HIPBLAS_STATUS_ARCH_MISMATCH
	hipblasStatusHandleIsNullptr hipblasStatus = 9  // HIPBLAS_STATUS_HANDLE_IS_NULLPTR
	hipblasStatusInvalidEnum     hipblasStatus = 10 // HIPBLAS_STATUS_INVALID_ENUM
	hipblasStatusUnknown         hipblasStatus = 11 // HIPBLAS_STATUS_UNKNOWN
)

var hipblasStatusNames = map[hipblasStatus]string{
	hipblasStatusSuccess:         "HIPBLAS_STATUS_SUCCESS",
	hipblasStatusNotInitialized:  "HIPBLAS_STATUS_NOT_INITIALIZED",
	hipblasStatusAllocFailed:     "HIPBLAS_STATUS_ALLOC_FAILED",
	hipblasStatusInvalidValue:    "HIPBLAS_STATUS_INVALID_VALUE",
	hipblasStatusMappingError:    "HIPBLAS_STATUS_MAPPING_ERROR",
	hipblasStatusExecutionFailed: "HIPBLAS_STATUS_EXECUTION_FAILED",
	hipblasStatusInternalError:   "HIPBLAS_STATUS_INTERNAL_ERROR",
	hipblasStatusNotSupported:    "HIPBLAS_STATUS_NOT_SUPPORTED",
	hipblasStatusArchMismatch:    "HIPBLAS_STATUS_ARCH_MISMATCH",
	hipblasStatusHandleIsNullptr: "HIPBLAS_STATUS_HANDLE_IS_NULLPTR",
	hipblasStatusInvalidEnum:     "HIPBLAS_STATUS_INVALID_ENUM",
	hipblasStatusUnknown:         "HIPBLAS_STATUS_UNKNOWN",
}

// hipDataType values (hip/library_types.h).
const (
	hipR32F        int32 = 0    // HIP_R_32F: float
	hipR16BF       int32 = 14   // HIP_R_16BF: bfloat16
	hipR8FE4M3     int32 = 28   // HIP_R_8F_E4M3: OCP e4m3fn (bias 7, ±448, NaN 0x7F/0xFF), ROCm 6.3+
	hipR8FE4M3FNUZ int32 = 1000 // HIP_R_8F_E4M3_FNUZ: e4m3fnuz (bias 8, ±240, NaN 0x80 only)
)

// hipblasComputeType_t (hipblas-common.h).
const hipblasCompute32F int32 = 2 // HIPBLAS_COMPUTE_32F

// hipblasOperation_t (hipblas-common.h; the same in hipblas.h before it).
// Not 0/1 as in cuBLAS: hipBLAS numbers its enums from 111 like rocBLAS.
const (
	hipblasOpN int32 = 111 // HIPBLAS_OP_N
	hipblasOpT int32 = 112 // HIPBLAS_OP_T
)

// hipblasLtMatmulDescAttributes_t (hipblaslt.h). Both take an int32_t
// holding a hipblasOperation_t. (cuBLASLt numbers these 3 and 4.)
const (
	hipblasLtMatmulDescTransA int32 = 0 // HIPBLASLT_MATMUL_DESC_TRANSA
	hipblasLtMatmulDescTransB int32 = 1 // HIPBLASLT_MATMUL_DESC_TRANSB
)

// hipblasLtMatmulPreferenceAttributes_t (hipblaslt.h); takes a uint64_t.
const hipblasLtMatmulPrefMaxWorkspaceBytes int32 = 1 // HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES

// HipBLASLtMinVersion is the oldest hipBLASLt OpenHipBLASLt accepts, in
// hipblasLtGetVersion's encoding: 0.7.0 (ROCm 6.1), the first release
// documented with the hipDataType / hipblasComputeType_t API bound here.
const HipBLASLtMinVersion = 700

// hipMatmulAlgo is hipblasLtMatmulAlgo_t (hipblaslt.h), 24 bytes on LP64:
//
//	typedef struct _hipblasLtMatmulAlgo_t {
//	  uint8_t data[16];            // offset  0, 16 bytes
//	  size_t  max_workspace_bytes; // offset 16,  8 bytes
//	} hipblasLtMatmulAlgo_t;
//
// (cuBLASLt's is uint64_t data[8], 64 bytes.)
type hipMatmulAlgo struct {
	data              [16]uint8
	maxWorkspaceBytes uintptr
}

// hipHeuristicResult is hipblasLtMatmulHeuristicResult_t (hipblaslt.h),
// 56 bytes on LP64:
//
//	typedef struct _hipblasLtMatmulHeuristicResult_t {
//	  hipblasLtMatmulAlgo_t algo;  // offset  0, 24 bytes
//	  size_t workspaceSize;        // offset 24,  8 bytes
//	  hipblasStatus_t state;       // offset 32,  4 bytes (C enum)
//	  float wavesCount;            // offset 36,  4 bytes
//	  int reserved[4];             // offset 40, 16 bytes
//	} hipblasLtMatmulHeuristicResult_t;
//
// (The C++ default member initialisers in the header do not change the
// layout.)
type hipHeuristicResult struct {
	algo          hipMatmulAlgo
	workspaceSize uintptr
	state         hipblasStatus
	wavesCount    float32
	reserved      [4]int32
}

// hipBLASLtLib is one loaded libhipblaslt and its bound entry points.
// Handles (hipblasLtHandle_t, hipblasLtMatmulDesc_t, hipblasLtMatrixLayout_t,
// hipblasLtMatmulPreference_t, hipStream_t) are opaque pointers and travel
// as uintptr; device pointers are uintptr; enums are int32; size_t is
// uintptr.
type hipBLASLtLib struct {
	*library

	// hipblasStatus_t hipblasLtCreate(hipblasLtHandle_t* handle);
	hipblasLtCreate func(h *uintptr) hipblasStatus
	// hipblasStatus_t hipblasLtDestroy(const hipblasLtHandle_t handle);
	hipblasLtDestroy func(h uintptr) hipblasStatus
	// hipblasStatus_t hipblasLtGetVersion(hipblasLtHandle_t handle, int* version);
	hipblasLtGetVersion func(h uintptr, v *int32) hipblasStatus

	// hipblasStatus_t hipblasLtMatmulDescCreate(hipblasLtMatmulDesc_t* matmulDesc,
	//     hipblasComputeType_t computeType, hipDataType scaleType);
	hipblasLtMatmulDescCreate func(d *uintptr, computeType int32, scaleType int32) hipblasStatus
	// hipblasStatus_t hipblasLtMatmulDescDestroy(const hipblasLtMatmulDesc_t matmulDesc);
	hipblasLtMatmulDescDestroy func(d uintptr) hipblasStatus
	// hipblasStatus_t hipblasLtMatmulDescSetAttribute(hipblasLtMatmulDesc_t matmulDesc,
	//     hipblasLtMatmulDescAttributes_t attr, const void* buf, size_t sizeInBytes);
	hipblasLtMatmulDescSetAttribute func(d uintptr, attr int32, buf unsafe.Pointer, size uintptr) hipblasStatus

	// hipblasStatus_t hipblasLtMatrixLayoutCreate(hipblasLtMatrixLayout_t* matLayout,
	//     hipDataType type, uint64_t rows, uint64_t cols, int64_t ld);
	hipblasLtMatrixLayoutCreate func(l *uintptr, typ int32, rows, cols uint64, ld int64) hipblasStatus
	// hipblasStatus_t hipblasLtMatrixLayoutDestroy(const hipblasLtMatrixLayout_t matLayout);
	hipblasLtMatrixLayoutDestroy func(l uintptr) hipblasStatus

	// hipblasStatus_t hipblasLtMatmulPreferenceCreate(hipblasLtMatmulPreference_t* pref);
	hipblasLtMatmulPreferenceCreate func(p *uintptr) hipblasStatus
	// hipblasStatus_t hipblasLtMatmulPreferenceSetAttribute(hipblasLtMatmulPreference_t pref,
	//     hipblasLtMatmulPreferenceAttributes_t attr, const void* buf, size_t sizeInBytes);
	hipblasLtMatmulPreferenceSetAttribute func(p uintptr, attr int32, buf unsafe.Pointer, size uintptr) hipblasStatus
	// hipblasStatus_t hipblasLtMatmulPreferenceDestroy(const hipblasLtMatmulPreference_t pref);
	hipblasLtMatmulPreferenceDestroy func(p uintptr) hipblasStatus

	// hipblasStatus_t hipblasLtMatmulAlgoGetHeuristic(hipblasLtHandle_t handle,
	//     hipblasLtMatmulDesc_t matmulDesc,
	//     hipblasLtMatrixLayout_t Adesc, hipblasLtMatrixLayout_t Bdesc,
	//     hipblasLtMatrixLayout_t Cdesc, hipblasLtMatrixLayout_t Ddesc,
	//     hipblasLtMatmulPreference_t pref, int requestedAlgoCount,
	//     hipblasLtMatmulHeuristicResult_t heuristicResultsArray[], int* returnAlgoCount);
	hipblasLtMatmulAlgoGetHeuristic func(h, op, a, b, c, d, pref uintptr, requested int32, results *hipHeuristicResult, returned *int32) hipblasStatus

	// hipblasStatus_t hipblasLtMatmul(hipblasLtHandle_t handle, hipblasLtMatmulDesc_t matmulDesc,
	//     const void* alpha, const void* A, hipblasLtMatrixLayout_t Adesc,
	//     const void* B, hipblasLtMatrixLayout_t Bdesc, const void* beta,
	//     const void* C, hipblasLtMatrixLayout_t Cdesc, void* D, hipblasLtMatrixLayout_t Ddesc,
	//     const hipblasLtMatmulAlgo_t* algo, void* workspace, size_t workspaceSizeInBytes,
	//     hipStream_t stream);
	hipblasLtMatmul func(h, op uintptr, alpha *float32, a, aDesc, b, bDesc uintptr, beta *float32,
		c, cDesc, d, dDesc uintptr, algo *hipMatmulAlgo, workspace, workspaceSize uintptr, stream uintptr) hipblasStatus
}

// symbols is the table of every entry point, in the order of the struct.
// All are required: hipblasLtGetVersion doubles as the check that the
// library is not a ROCm 5 hipBLASLt with a different ABI.
func (l *hipBLASLtLib) symbols() []symbol {
	return []symbol{
		{"hipblasLtCreate", &l.hipblasLtCreate, false},
		{"hipblasLtDestroy", &l.hipblasLtDestroy, false},
		{"hipblasLtGetVersion", &l.hipblasLtGetVersion, false},
		{"hipblasLtMatmulDescCreate", &l.hipblasLtMatmulDescCreate, false},
		{"hipblasLtMatmulDescDestroy", &l.hipblasLtMatmulDescDestroy, false},
		{"hipblasLtMatmulDescSetAttribute", &l.hipblasLtMatmulDescSetAttribute, false},
		{"hipblasLtMatrixLayoutCreate", &l.hipblasLtMatrixLayoutCreate, false},
		{"hipblasLtMatrixLayoutDestroy", &l.hipblasLtMatrixLayoutDestroy, false},
		{"hipblasLtMatmulPreferenceCreate", &l.hipblasLtMatmulPreferenceCreate, false},
		{"hipblasLtMatmulPreferenceSetAttribute", &l.hipblasLtMatmulPreferenceSetAttribute, false},
		{"hipblasLtMatmulPreferenceDestroy", &l.hipblasLtMatmulPreferenceDestroy, false},
		{"hipblasLtMatmulAlgoGetHeuristic", &l.hipblasLtMatmulAlgoGetHeuristic, false},
		{"hipblasLtMatmul", &l.hipblasLtMatmul, false},
	}
}

// hipblasErr turns a hipblasStatus_t into an *Error (nil on success).
// hipBLASLt exports no status-string function, so the name is the message.
func hipblasErr(fn string, s hipblasStatus) error {
	if s == hipblasStatusSuccess {
		return nil
	}
	return statusError("hipBLASLt", fn, "hipblasStatus_t", s, nameIn(hipblasStatusNames), nil)
}

// HipBLASLtEnv names the variable holding a full path to libhipblaslt,
// tried before anything else.
const HipBLASLtEnv = "PARHARNESS_HIPBLASLT"

// HipBLASLtLibraries are the names tried through the dynamic loader's
// normal search path, after HipBLASLtEnv and the HIP runtime's own
// directory: the unversioned name (a ROCm install's lib directory or
// LD_LIBRARY_PATH), then the sonames of hipBLASLt 1.x (ROCm 7) and 0.x
// (ROCm 6).
var HipBLASLtLibraries = []string{"libhipblaslt.so", "libhipblaslt.so.1", "libhipblaslt.so.0"}

// HipBLASLtGlobs are the patterns tried last: the ROCm install folder and
// versioned ROCm installs beside it. Within a pattern the matches are tried
// highest version first.
var HipBLASLtGlobs = []string{
	"/opt/rocm/lib/libhipblaslt.so*",
	"/opt/rocm-*/lib/libhipblaslt.so*",
}

// spec is how OpenHipBLASLt finds libhipblaslt, bound to l's table:
// HipBLASLtEnv; then the libhipblaslt.so* files in the directory of the
// HIP runtime findHIP bound (hipLoaded), newest first; then
// HipBLASLtLibraries; then HipBLASLtGlobs. A candidate from a different
// ROCm install than the runtime is refused (hipBLASLtMismatch), unless
// HipBLASLtEnv names it.
func (l *hipBLASLtLib) spec() libSpec {
	rt := hipLoaded.Load()
	return libSpec{
		lib:  "hipBLASLt",
		syms: l.symbols(),
		list: func() ([]string, []string) {
			var names, notes []string
			if dir := hipRuntimeDir(rt); dir != "" {
				pat := filepath.Join(dir, "libhipblaslt.so*")
				seen := map[string]bool{}
				for _, p := range globNewestFirst(pat) {
					if r := realPath(p); !seen[r] {
						seen[r] = true
						names = append(names, p)
					}
				}
				if len(names) == 0 {
					notes = append(notes, pat+": no match")
				}
			}
			globs := make([]string, len(HipBLASLtGlobs))
			for i, g := range HipBLASLtGlobs {
				globs[i] = sysPath(g)
			}
			cands, noMatch := libCandidates(HipBLASLtEnv, append(names, HipBLASLtLibraries...), globs)
			return cands, append(notes, noMatch...)
		},
		check: func(file string) string {
			if env := os.Getenv(HipBLASLtEnv); env != "" && file == realPath(env) {
				return "" // the override is used as given
			}
			return hipBLASLtMismatch(file, rt)
		},
	}
}

// hipRuntimeFile is the file of a bound HIP runtime ("" for none).
func hipRuntimeFile(rt *hipLib) string {
	if rt == nil || rt.library == nil {
		return ""
	}
	if rt.file != "" {
		return rt.file
	}
	return realPath(rt.path)
}

// hipRuntimeDir is the directory of a bound HIP runtime's file, where its
// ROCm install keeps hipBLASLt ("" for none or an unknown file).
func hipRuntimeDir(rt *hipLib) string {
	if f := hipRuntimeFile(rt); strings.Contains(f, "/") {
		return filepath.Dir(f)
	}
	return ""
}

// rocmInstall is the versioned ROCm install directory a file lives in: the
// path up to its last "rocm-<digit>…" component ("/opt/rocm-6.4.0" for
// "/opt/rocm-6.4.0/lib/libhipblaslt.so.0"), or "" for none.
func rocmInstall(file string) string {
	parts := strings.Split(file, "/")
	for i := len(parts) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(parts[i], "rocm-"); ok && v != "" && isDigit(v[0]) {
			return strings.Join(parts[:i+1], "/")
		}
	}
	return ""
}

// hipBLASLtMismatch says why a hipBLASLt file (symlinks resolved) does not
// go with the HIP runtime rt, or "": a hipBLASLt of one versioned ROCm
// install does not run on the runtime of another (each install's
// libhipblaslt needs its own libamdhip64 soname, and loading it would pull
// that second runtime into the process). With the runtime outside any
// versioned install, the install's major version must match the
// runtime's soname major. Nothing is known, so nothing is refused, where
// the hipBLASLt is not in a versioned install or no runtime is bound.
func hipBLASLtMismatch(file string, rt *hipLib) string {
	rtFile := hipRuntimeFile(rt)
	bl := rocmInstall(file)
	if rtFile == "" || bl == "" {
		return ""
	}
	if ri := rocmInstall(rtFile); ri != "" {
		if ri != bl {
			return fmt.Sprintf("refused: %s is from %s but the HIP runtime in use, %s, is from %s", file, bl, rtFile, ri)
		}
		return ""
	}
	if bv, rv := dirVersion(bl), sonameVersion(rtFile); len(bv) > 0 && len(rv) > 0 && bv[0] != rv[0] {
		return fmt.Sprintf("refused: %s is from %s but the HIP runtime in use, %s, is HIP %d", file, bl, rtFile, rv[0])
	}
	return ""
}

// hipBLASLtCandidates lists what OpenHipBLASLt tries.
func hipBLASLtCandidates() (cands []string, noMatch []string) {
	return (&hipBLASLtLib{}).spec().candidates()
}

// openHipBLASLtLib loads the first libhipblaslt that loads and has every
// symbol. The error is an *Error naming every path tried and why.
func openHipBLASLtLib() (*hipBLASLtLib, error) {
	l := &hipBLASLtLib{}
	lib, err := loadLib(l.spec())
	if err != nil {
		return nil, err
	}
	l.library = lib
	return l, nil
}

// HipBLASLt is an open hipBLASLt handle.
type HipBLASLt struct {
	ltHandle
	lib     *hipBLASLtLib
	version int
}

// OpenHipBLASLt loads libhipblaslt (see hipBLASLtLib.spec for the order:
// HipBLASLtEnv, the HIP runtime's directory, HipBLASLtLibraries,
// HipBLASLtGlobs), creates a handle and checks the library's version
// against HipBLASLtMinVersion. On failure to load, the error is an *Error
// naming every path tried and why. Call it only with a HIP
// device open, on the OS thread that opened it: hipblasLtCreate binds the
// current device, and it allocates device memory with a check that exits
// the process on failure (CHECK_HIP_ERROR in hipblaslt.cpp), as happens
// on a machine without an AMD GPU.
func OpenHipBLASLt() (*HipBLASLt, error) {
	l, err := openHipBLASLtLib()
	if err != nil {
		return nil, err
	}
	b := &HipBLASLt{ltHandle: ltHandle{calls: l.calls()}, lib: l}
	if err := hipblasErr("hipblasLtCreate", l.hipblasLtCreate(&b.handle)); err != nil {
		return nil, fmt.Errorf("%s loaded: %w", l.path, err)
	}
	var v int32
	if err := hipblasErr("hipblasLtGetVersion", l.hipblasLtGetVersion(b.handle, &v)); err != nil {
		b.Close()
		return nil, fmt.Errorf("%s loaded: %w", l.path, err)
	}
	b.version = int(v)
	if b.version < HipBLASLtMinVersion {
		b.Close()
		return nil, fmt.Errorf("%s: hipBLASLt %s is older than %s (ROCm 6.1), the first with the hipDataType/hipblasComputeType_t API this binding uses",
			l.path, HipBLASLtVersionString(b.version), HipBLASLtVersionString(HipBLASLtMinVersion))
	}
	return b, nil
}

// Version is hipblasLtGetVersion(): major*100000 + minor*100 + patch
// (e.g. 100200 for hipBLASLt 1.2.0, ROCm 7.2; 1200 for 0.12.0, ROCm 6.4).
func (b *HipBLASLt) Version() int { return b.version }

// HipBLASLtVersionString formats a hipblasLtGetVersion value as
// "major.minor.patch".
func HipBLASLtVersionString(v int) string {
	return fmt.Sprintf("%d.%d.%d", v/100000, v/100%1000, v%100)
}

// Path is the library path or name that was loaded.
func (b *HipBLASLt) Path() string { return b.lib.path }

// HipFP8IsFNUZ reports whether GemmFP8 on this gfx arch is the FNUZ e4m3
// variant (HIP_R_8F_E4M3_FNUZ: exponent bias 8, no infinities, one NaN
// 0x80, max 240) rather than OCP e4m3fn (HIP_R_8F_E4M3: bias 7, max 448),
// the format CUDA_R_8F_E4M3 is. hipBLASLt documents its FNUZ fp8 types
// (hipblaslt_f8_fnuz) as supported on gfx94x only (docs/reference/
// data-type-support.rst): MI300's gfx940/941/942 matrix cores take FNUZ
// only (HIP's fp8 docs list them as FNUZ-yes, OCP-no). gfx950 and RDNA4
// (gfx1200, gfx1201) take the OCP format, so everything else gets
// HIP_R_8F_E4M3. Arches without fp8 matrix instructions fail at the
// heuristic whichever type is asked for.
func HipFP8IsFNUZ(arch string) bool {
	switch arch {
	case "gfx940", "gfx941", "gfx942":
		return true
	}
	return false
}

// hipInType is the hipDataType of x and w for t on arch.
func hipInType(t GemmType, arch string) (int32, error) {
	switch t {
	case GemmFP8:
		if HipFP8IsFNUZ(arch) {
			return hipR8FE4M3FNUZ, nil
		}
		return hipR8FE4M3, nil
	case GemmBF16:
		return hipR16BF, nil
	}
	return 0, fmt.Errorf("gpu: unknown GEMM type %v", t)
}

// hipDataTypeName names the hipDataType values this file uses.
func hipDataTypeName(t int32) string {
	switch t {
	case hipR32F:
		return "HIP_R_32F"
	case hipR16BF:
		return "HIP_R_16BF"
	case hipR8FE4M3:
		return "HIP_R_8F_E4M3"
	case hipR8FE4M3FNUZ:
		return "HIP_R_8F_E4M3_FNUZ"
	}
	return fmt.Sprintf("hipDataType %d", t)
}

// hipAlgo views the shared plan's algorithm storage as hipBLASLt's struct.
func hipAlgo(a *ltAlgo) *hipMatmulAlgo { return (*hipMatmulAlgo)(unsafe.Pointer(a)) }

// calls binds hipBLASLt's entry points and enum values into the shared
// plan's table (blaslt.go).
func (l *hipBLASLtLib) calls() *ltCalls {
	return &ltCalls{
		lib: "hipBLASLt", backend: "hip",
		inType: hipInType, outType: hipR16BF, typeName: hipDataTypeName,
		descCreateTN: func(op *uintptr) error {
			if err := hipblasErr("hipblasLtMatmulDescCreate", l.hipblasLtMatmulDescCreate(op, hipblasCompute32F, hipR32F)); err != nil {
				return err
			}
			for _, at := range [][2]int32{{hipblasLtMatmulDescTransA, hipblasOpT}, {hipblasLtMatmulDescTransB, hipblasOpN}} {
				v := at[1]
				if err := hipblasErr("hipblasLtMatmulDescSetAttribute", l.hipblasLtMatmulDescSetAttribute(*op, at[0], unsafe.Pointer(&v), unsafe.Sizeof(v))); err != nil {
					return err
				}
			}
			return nil
		},
		descDestroy: func(op uintptr) error {
			return hipblasErr("hipblasLtMatmulDescDestroy", l.hipblasLtMatmulDescDestroy(op))
		},
		layoutCreate: func(h *uintptr, typ int32, lay matLayout) error {
			return hipblasErr("hipblasLtMatrixLayoutCreate", l.hipblasLtMatrixLayoutCreate(h, typ, lay.rows, lay.cols, lay.ld))
		},
		layoutDestroy: func(h uintptr) error {
			return hipblasErr("hipblasLtMatrixLayoutDestroy", l.hipblasLtMatrixLayoutDestroy(h))
		},
		prefCreate: func(p *uintptr) error {
			return hipblasErr("hipblasLtMatmulPreferenceCreate", l.hipblasLtMatmulPreferenceCreate(p))
		},
		prefSetMaxW: func(p uintptr, bytes uint64) error {
			return hipblasErr("hipblasLtMatmulPreferenceSetAttribute", l.hipblasLtMatmulPreferenceSetAttribute(p, hipblasLtMatmulPrefMaxWorkspaceBytes, unsafe.Pointer(&bytes), unsafe.Sizeof(bytes)))
		},
		prefDestroy: func(p uintptr) error {
			return hipblasErr("hipblasLtMatmulPreferenceDestroy", l.hipblasLtMatmulPreferenceDestroy(p))
		},
		heuristic: func(h, op, a, b, d, pref uintptr) ([]ltCandidate, error) {
			var res [heuristicRequest]hipHeuristicResult
			var n int32
			if err := hipblasErr("hipblasLtMatmulAlgoGetHeuristic", l.hipblasLtMatmulAlgoGetHeuristic(h, op, a, b, d, d, pref, heuristicRequest, &res[0], &n)); err != nil {
				return nil, err
			}
			out := make([]ltCandidate, 0, len(res))
			for _, r := range res[:max(0, min(int(n), len(res)))] {
				c := ltCandidate{wsBytes: r.workspaceSize, ok: r.state == hipblasStatusSuccess, waves: r.wavesCount}
				*hipAlgo(&c.algo) = r.algo
				out = append(out, c)
			}
			return out, nil
		},
		matmul: func(h, op uintptr, alpha, beta *float32, a, aDesc, b, bDesc, c, cDesc, d, dDesc uintptr, algo *ltAlgo, ws, wsBytes, stream uintptr) error {
			return hipblasErr("hipblasLtMatmul", l.hipblasLtMatmul(h, op, alpha, a, aDesc, b, bDesc, beta, c, cDesc, d, dDesc, hipAlgo(algo), ws, wsBytes, stream))
		},
		notSupported: func(msg string) error {
			e := statusError("hipBLASLt", "hipblasLtMatmulAlgoGetHeuristic", "hipblasStatus_t", hipblasStatusNotSupported, nameIn(hipblasStatusNames), nil)
			e.Msg = msg
			return e
		},
		destroy: func(h uintptr) error { return hipblasErr("hipblasLtDestroy", l.hipblasLtDestroy(h)) },
	}
}

// The shared plan stores either library's algorithm struct in an ltAlgo.
var (
	_ [unsafe.Sizeof(ltAlgo{}) - unsafe.Sizeof(hipMatmulAlgo{})]byte
	_ [unsafe.Sizeof(ltAlgo{}) - unsafe.Sizeof(matmulAlgo{})]byte
	_ [unsafe.Sizeof(matmulAlgo{}) - unsafe.Sizeof(ltAlgo{})]byte
)
