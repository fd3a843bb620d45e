package gpu

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// These tests need no GPU and no hipBLASLt: they check the loading errors,
// the symbol table, the struct layouts against the sizes hipblaslt.h
// implies, and the enum values against the headers (see the sources at
// the top of hipblaslt.go). The GPU path is TestHipBLASLtGEMMOnDevice,
// which skips where no HIP device or no hipBLASLt is found.

// hipBLASLtInstalled reports (and logs) whether some candidate loads and
// binds. The no-GPU tests then stop short of OpenHipBLASLt: hipblasLtCreate
// exits the process when its hipMalloc fails (CHECK_HIP_ERROR in
// hipblaslt.cpp), which it does on a machine without an AMD GPU.
func hipBLASLtInstalled(t *testing.T) bool {
	t.Helper()
	l, err := openHipBLASLtLib()
	if err != nil {
		return false
	}
	t.Logf("%s loads and binds", l.path)
	return true
}

func TestOpenHipBLASLtErrorListsEverything(t *testing.T) {
	const bogus = "/nonexistent/parharness/libhipblaslt.so.99"
	t.Setenv(HipBLASLtEnv, bogus)
	if hipBLASLtInstalled(t) {
		t.Skip("a hipBLASLt is installed: no loading error to check")
	}
	_, err := OpenHipBLASLt()
	if err == nil {
		t.Fatal("OpenHipBLASLt succeeded where no candidate loads")
	}
	t.Logf("OpenHipBLASLt: %v", err)
	var le *Error
	if !errors.As(err, &le) {
		t.Fatalf("error is not an *Error: %T %v", err, err)
	}
	checkTriedEverything(t, le, "hipBLASLt", bogus, HipBLASLtLibraries, HipBLASLtGlobs)
	// One entry per candidate and per empty pattern, each with its reason.
	cands, noMatch := hipBLASLtCandidates()
	if len(le.Tried) != len(cands)+len(noMatch) {
		t.Errorf("%d entries for %d candidates and %d empty patterns: %q", len(le.Tried), len(cands), len(noMatch), le.Tried)
	}
}

// A library that loads but is not hipBLASLt (libc) is reported by the
// symbols it lacks, the first of the table first, and the search goes on.
func TestOpenHipBLASLtWrongLibrary(t *testing.T) {
	t.Setenv(HipBLASLtEnv, "libc.so.6")
	l, err := openHipBLASLtLib()
	if err == nil {
		t.Skipf("a hipBLASLt is installed (%s); the search did not end at libc", l.path)
	}
	var le *Error
	if !errors.As(err, &le) {
		t.Fatalf("error is not an *Error: %T %v", err, err)
	}
	if len(le.Tried) < 2 || !strings.HasPrefix(le.Tried[0], "libc.so.6: symbols hipblasLtCreate, ") || !strings.HasSuffix(le.Tried[0], " not found") {
		t.Errorf("entries %q, want libc.so.6 lacking hipblasLtCreate first, then the other candidates", le.Tried)
	}
}

func TestHipBLASLtCandidateOrder(t *testing.T) {
	old := hipLoaded.Swap(nil) // no runtime bound: nothing searched beside it
	t.Cleanup(func() { hipLoaded.Store(old) })
	t.Setenv(HipBLASLtEnv, "/x/libhipblaslt.so.77")
	c, _ := hipBLASLtCandidates()
	want := append([]string{"/x/libhipblaslt.so.77"}, HipBLASLtLibraries...)
	if len(c) < len(want) || !reflect.DeepEqual(c[:len(want)], want) {
		t.Fatalf("candidates start %q, want %q", c, want)
	}
	t.Setenv(HipBLASLtEnv, "")
	c, _ = hipBLASLtCandidates()
	if len(c) < len(HipBLASLtLibraries) || !reflect.DeepEqual(c[:len(HipBLASLtLibraries)], HipBLASLtLibraries) {
		t.Fatalf("without %s candidates start %q", HipBLASLtEnv, c)
	}
	// The documented search order (HipBLASLtLibraries, HipBLASLtGlobs).
	if !reflect.DeepEqual(HipBLASLtLibraries, []string{"libhipblaslt.so", "libhipblaslt.so.1", "libhipblaslt.so.0"}) {
		t.Errorf("HipBLASLtLibraries = %q", HipBLASLtLibraries)
	}
	if HipBLASLtGlobs[0] != "/opt/rocm/lib/libhipblaslt.so*" {
		t.Errorf("first glob %q", HipBLASLtGlobs[0])
	}
}

func TestLibCandidatesGlobOrder(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"libx.so", "libx.so.0", "libx.so.1", "libx.so.1.2.0"} {
		if err := writeEmpty(filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PARHARNESS_TEST_LIBX", "")
	c, noMatch := libCandidates("PARHARNESS_TEST_LIBX", []string{"libx.so"},
		[]string{filepath.Join(dir, "libx.so*"), filepath.Join(dir, "nothing*")})
	want := []string{"libx.so",
		filepath.Join(dir, "libx.so.1.2.0"), filepath.Join(dir, "libx.so.1"),
		filepath.Join(dir, "libx.so.0"), filepath.Join(dir, "libx.so")}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("candidates %q, want %q", c, want)
	}
	if len(noMatch) != 1 || noMatch[0] != filepath.Join(dir, "nothing*")+": no match" {
		t.Errorf("noMatch %q", noMatch)
	}
}

func writeEmpty(path string) error { return os.WriteFile(path, nil, 0o644) }

func TestHipBLASLtSymbolTable(t *testing.T) {
	l := &hipBLASLtLib{}
	syms := l.symbols()
	checkSymbolTable(t, "hipBLASLt", l, syms)
	// hipBLASLt's fields carry their symbol's name.
	ty := reflect.TypeOf(*l)
	for i := 0; i < ty.NumField(); i++ {
		if f := ty.Field(i); f.Type.Kind() == reflect.Func && !slices.ContainsFunc(syms, func(s symbol) bool { return s.name == f.Name }) {
			t.Errorf("field %s has no symbol of its name", f.Name)
		}
	}
	for _, s := range syms {
		if !strings.HasPrefix(s.name, "hipblasLt") {
			t.Errorf("symbol %s is not a hipblasLt entry point", s.name)
		}
		if s.optional {
			t.Errorf("symbol %s optional; every entry point is required", s.name)
		}
	}
}

func TestHipHeuristicResultLayout(t *testing.T) {
	// hipblasLtMatmulAlgo_t and hipblasLtMatmulHeuristicResult_t on LP64
	// (hipblaslt.h): uint8_t data[16] + size_t = 24; 24 + 8 + 4 + 4 + 16 = 56.
	var a hipMatmulAlgo
	var r hipHeuristicResult
	checks := []struct {
		what      string
		got, want uintptr
	}{
		{"sizeof(hipblasLtMatmulAlgo_t)", unsafe.Sizeof(a), 24},
		{"offsetof(algo.data)", unsafe.Offsetof(a.data), 0},
		{"offsetof(algo.max_workspace_bytes)", unsafe.Offsetof(a.maxWorkspaceBytes), 16},
		{"alignof(hipblasLtMatmulAlgo_t)", unsafe.Alignof(a), 8},
		{"sizeof(hipblasLtMatmulHeuristicResult_t)", unsafe.Sizeof(r), 56},
		{"offsetof(algo)", unsafe.Offsetof(r.algo), 0},
		{"offsetof(workspaceSize)", unsafe.Offsetof(r.workspaceSize), 24},
		{"offsetof(state)", unsafe.Offsetof(r.state), 32},
		{"offsetof(wavesCount)", unsafe.Offsetof(r.wavesCount), 36},
		{"offsetof(reserved)", unsafe.Offsetof(r.reserved), 40},
		{"sizeof(size_t)", unsafe.Sizeof(r.workspaceSize), 8},
		{"sizeof(hipblasStatus_t)", unsafe.Sizeof(r.state), 4},
		{"alignof(hipblasLtMatmulHeuristicResult_t)", unsafe.Alignof(r), 8},
		// The array hipblasLtMatmulAlgoGetHeuristic fills: 8 results.
		{"sizeof(results[heuristicRequest])", unsafe.Sizeof([heuristicRequest]hipHeuristicResult{}), 8 * 56},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.what, c.got, c.want)
		}
	}
	// Not cuBLASLt's: a copy of the CUDA struct here would overrun.
	if unsafe.Sizeof(r) == unsafe.Sizeof(heuristicResult{}) {
		t.Error("hipBLASLt heuristic result has cuBLASLt's size")
	}
}

func TestHipEnumValues(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"HIP_R_32F", int64(hipR32F), 0},
		{"HIP_R_16BF", int64(hipR16BF), 14},
		{"HIP_R_8F_E4M3", int64(hipR8FE4M3), 28},
		{"HIP_R_8F_E4M3_FNUZ", int64(hipR8FE4M3FNUZ), 1000},
		{"HIPBLAS_COMPUTE_32F", int64(hipblasCompute32F), 2},
		{"HIPBLAS_OP_N", int64(hipblasOpN), 111},
		{"HIPBLAS_OP_T", int64(hipblasOpT), 112},
		{"HIPBLASLT_MATMUL_DESC_TRANSA", int64(hipblasLtMatmulDescTransA), 0},
		{"HIPBLASLT_MATMUL_DESC_TRANSB", int64(hipblasLtMatmulDescTransB), 1},
		{"HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES", int64(hipblasLtMatmulPrefMaxWorkspaceBytes), 1},
		{"HIPBLAS_STATUS_SUCCESS", int64(hipblasStatusSuccess), 0},
		{"HIPBLAS_STATUS_NOT_SUPPORTED", int64(hipblasStatusNotSupported), 7},
		{"HIPBLAS_STATUS_UNKNOWN", int64(hipblasStatusUnknown), 11},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	// The OCP fp8 and bf16 codes are CUDA's (hipDataType mirrors
	// cudaDataType); the operation codes are not.
	if hipR8FE4M3 != cudaR8FE4M3 || hipR16BF != cudaR16BF || hipR32F != cudaR32F {
		t.Error("hipDataType and cudaDataType disagree on the shared codes")
	}
	if hipblasOpN == cublasOpN || hipblasOpT == cublasOpT {
		t.Error("hipblasOperation_t shares cuBLAS's 0/1")
	}
	// Every status 0..11 has its name.
	for s := hipblasStatus(0); s <= hipblasStatusUnknown; s++ {
		if !strings.HasPrefix(hipblasStatusNames[s], "HIPBLAS_STATUS_") {
			t.Errorf("status %d unnamed", s)
		}
	}
}

func TestHipInType(t *testing.T) {
	for _, c := range []struct {
		typ  GemmType
		arch string
		want int32
		fnuz bool
	}{
		{GemmFP8, "gfx942", hipR8FE4M3FNUZ, true},
		{GemmFP8, "gfx940", hipR8FE4M3FNUZ, true},
		{GemmFP8, "gfx941", hipR8FE4M3FNUZ, true},
		{GemmFP8, "gfx950", hipR8FE4M3, false},
		{GemmFP8, "gfx1200", hipR8FE4M3, false},
		{GemmFP8, "gfx1201", hipR8FE4M3, false},
		{GemmBF16, "gfx942", hipR16BF, true},
		{GemmBF16, "gfx1201", hipR16BF, false},
	} {
		got, err := hipInType(c.typ, c.arch)
		if err != nil || got != c.want {
			t.Errorf("hipInType(%v, %s) = %d, %v; want %d", c.typ, c.arch, got, err, c.want)
		}
		if HipFP8IsFNUZ(c.arch) != c.fnuz {
			t.Errorf("HipFP8IsFNUZ(%s) = %v", c.arch, !c.fnuz)
		}
	}
	if _, err := hipInType(GemmType(0), "gfx1201"); err == nil {
		t.Error("GemmType(0) accepted")
	}
	if hipDataTypeName(hipR8FE4M3FNUZ) != "HIP_R_8F_E4M3_FNUZ" || hipDataTypeName(hipR8FE4M3) != "HIP_R_8F_E4M3" ||
		hipDataTypeName(hipR16BF) != "HIP_R_16BF" || hipDataTypeName(99) != "hipDataType 99" {
		t.Error("hipDataTypeName")
	}
}

func TestHipblasStatusError(t *testing.T) {
	if hipblasErr("f", hipblasStatusSuccess) != nil {
		t.Error("success is an error")
	}
	err := hipblasErr("hipblasLtMatmul", hipblasStatusNotSupported)
	var ae *Error
	if !errors.As(err, &ae) || ae.Lib != "hipBLASLt" || ae.Code != 7 || ae.CodeName != "HIPBLAS_STATUS_NOT_SUPPORTED" || ae.Func != "hipblasLtMatmul" {
		t.Errorf("got %#v", err)
	}
	if e := hipblasErr("f", 12345).(*Error); e.CodeName != "hipblasStatus_t 12345" {
		t.Errorf("unknown status named %q", e.CodeName)
	}
}

func TestHipBLASLtVersionString(t *testing.T) {
	for v, want := range map[int]string{100200: "1.2.0", 1201: "0.12.1", 700: "0.7.0", 600: "0.6.0", 100000: "1.0.0"} {
		if got := HipBLASLtVersionString(v); got != want {
			t.Errorf("HipBLASLtVersionString(%d) = %q, want %q", v, got, want)
		}
	}
	if HipBLASLtMinVersion != 700 {
		t.Errorf("HipBLASLtMinVersion = %d", HipBLASLtMinVersion)
	}
}

// ---- on a HIP device with hipBLASLt ----

// fnuzOfOCP re-encodes the small-integer e4m3fn codes of e4m3Int as
// e4m3fnuz (exponent bias 8 instead of 7: one more in the exponent field).
var fnuzOfOCP = map[byte]byte{0xC0: 0xC8, 0xB8: 0xC0, 0x00: 0x00, 0x38: 0x40, 0x40: 0x48}

func TestHipBLASLtGEMMOnDevice(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	d, err := Open("hip")
	if err != nil {
		t.Skipf("no HIP device: %v", err)
	}
	defer d.Close()
	b, err := OpenHipBLASLt()
	if err != nil {
		t.Skipf("no hipBLASLt: %v", err)
	}
	defer b.Close()
	t.Logf("%s: %s, hipBLASLt %s from %s", d.Info().Name, d.Info().Arch, HipBLASLtVersionString(b.Version()), b.Path())

	stream, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer d.DestroyStream(stream)

	// No t.Run: a subtest runs on another goroutine, hence another OS
	// thread, where the HIP device is not current.
	for _, typ := range []GemmType{GemmBF16, GemmFP8} {
		for _, sh := range [][3]int{{40, 64, 128}, {1, 256, 512}, {512, 1024, 2048}} {
			M, N, K := sh[0], sh[1], sh[2]
			if err := vendorGemmCaseOnDevice(t, d, b, stream, typ, M, N, K); err != nil {
				t.Errorf("%v M=%d N=%d K=%d: %v", typ, M, N, K, err)
			}
		}
	}
}

// withHIPRuntime records a HIP runtime with this file as the one findHIP
// bound, for the test.
func withHIPRuntime(t *testing.T, file string) {
	t.Helper()
	old := hipLoaded.Load()
	hipLoaded.Store(&hipLib{library: &library{path: file, file: file}})
	t.Cleanup(func() { hipLoaded.Store(old) })
}

// hipBLASLt is looked for beside the HIP runtime first, and one from
// another ROCm install is refused with a line naming both.
func TestHipBLASLtFollowsTheRuntime(t *testing.T) {
	root := fakeTree(t, map[string]string{
		"opt/rocm-6.4.0/lib/libamdhip64.so.6.4.60400": "",
		"opt/rocm-6.4.0/lib/libhipblaslt.so.0.12.0":   "",
		"opt/rocm-6.4.0/lib/libhipblaslt.so.0":        "libhipblaslt.so.0.12.0",
		"opt/rocm-6.4.0/lib/libhipblaslt.so":          "libhipblaslt.so.0",
		"opt/rocm-6.3.0/lib/libhipblaslt.so.0":        "",
		"usr/lib/x86_64-linux-gnu/libamdhip64.so.5":   "",
	})
	t.Setenv(HipBLASLtEnv, "")
	in64 := root + "/opt/rocm-6.4.0/lib/libhipblaslt.so.0.12.0"
	in63 := root + "/opt/rocm-6.3.0/lib/libhipblaslt.so.0"
	rt64 := root + "/opt/rocm-6.4.0/lib/libamdhip64.so.6.4.60400"
	for _, c := range []struct {
		name, runtime string
		first         []string // the candidates' start
		refused       string   // the entry of in63
		in64OK        bool     // in64 passes the check (and fails to load)
	}{
		{"beside the runtime first", rt64,
			append([]string{in64}, HipBLASLtLibraries...),
			in63 + ": refused: " + in63 + " is from " + root + "/opt/rocm-6.3.0 but the HIP runtime in use, " + rt64 + ", is from " + root + "/opt/rocm-6.4.0", true},
		{"runtime outside a ROCm install, other major", root + "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5",
			append([]string{}, HipBLASLtLibraries...),
			in63 + ": refused: " + in63 + " is from " + root + "/opt/rocm-6.3.0 but the HIP runtime in use, " + root + "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5, is HIP 5", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			withHIPRuntime(t, c.runtime)
			cands, _ := hipBLASLtCandidates()
			if len(cands) < len(c.first) || !reflect.DeepEqual(cands[:len(c.first)], c.first) {
				t.Fatalf("candidates %q, want them to start %q", cands, c.first)
			}
			_, err := openHipBLASLtLib()
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %T %v", err, err)
			}
			if !slices.Contains(e.Tried, c.refused) {
				t.Errorf("no entry %q in %q", c.refused, e.Tried)
			}
			for _, entry := range e.Tried {
				if strings.HasPrefix(entry, in64+": ") && strings.HasPrefix(entry, in64+": cannot load: ") != c.in64OK {
					t.Errorf("entry %q (the runtime's own install passes: %v)", entry, c.in64OK)
				}
			}
		})
	}
	t.Run("the override is not refused", func(t *testing.T) {
		withHIPRuntime(t, rt64)
		t.Setenv(HipBLASLtEnv, in63)
		_, err := openHipBLASLtLib()
		var e *Error
		if !errors.As(err, &e) || len(e.Tried) == 0 || !strings.HasPrefix(e.Tried[0], in63+": cannot load: ") {
			t.Errorf("got %v", err)
		}
	})
}

func TestRocmInstall(t *testing.T) {
	for in, want := range map[string]string{
		"/opt/rocm-6.4.0/lib/libhipblaslt.so.0":  "/opt/rocm-6.4.0",
		"/opt/rocm/lib/libhipblaslt.so":          "",
		"/home/u/rocm-build/lib/libx.so":         "",
		"/usr/lib/x86_64-linux-gnu/libx.so.5":    "",
		"/t/opt/rocm-7.0.1/lib/llvm/lib/libx.so": "/t/opt/rocm-7.0.1",
	} {
		if got := rocmInstall(in); got != want {
			t.Errorf("rocmInstall(%q) = %q, want %q", in, got, want)
		}
	}
}
