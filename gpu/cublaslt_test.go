package gpu

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// These tests need no GPU and no cuBLAS: they check the loader's error
// text, the symbol table, the C struct layout and the column-major
// arithmetic of the "TN" GEMM. The GPU paths (Plan, Enqueue, graph capture)
// are exercised by the bench engine on the device, and by
// TestBLASLtGEMMOnDevice, which skips where no CUDA device or no
// libcublasLt is found.

func TestOpenBLASLtErrorListsEverything(t *testing.T) {
	const bogus = "/nonexistent/parharness/libcublasLt.so.99"
	t.Setenv(CUBLASLtEnv, bogus)
	b, err := OpenBLASLt()
	if err == nil {
		// A machine with cuBLASLt (and a CUDA context current, or not:
		// cublasLtCreate needs none): say what loaded.
		t.Logf("loaded %s, cuBLASLt version %d", b.Path(), b.Version())
		if err := b.Close(); err != nil {
			t.Error(err)
		}
		return
	}
	t.Logf("OpenBLASLt: %v", err)
	var le *Error
	if !errors.As(err, &le) || len(le.Tried) == 0 {
		// Loaded but cublasLtCreate failed: nothing more to check here.
		t.Skipf("a libcublasLt loaded but the handle was not created: %v", err)
	}
	checkTriedEverything(t, le, "cuBLASLt", bogus, CUBLASLtLibraries, cublasLtPatterns())
}

func TestCUBLASLtCandidateOrder(t *testing.T) {
	t.Setenv(CUBLASLtEnv, "/x/libcublasLt.so.77")
	c, _ := cublasLtCandidates()
	want := append([]string{"/x/libcublasLt.so.77"}, CUBLASLtLibraries...)
	if len(c) < len(want) || !reflect.DeepEqual(c[:len(want)], want) {
		t.Fatalf("candidates start %q, want %q", c, want)
	}
	t.Setenv(CUBLASLtEnv, "")
	c, _ = cublasLtCandidates()
	if len(c) < len(CUBLASLtLibraries) || !reflect.DeepEqual(c[:len(CUBLASLtLibraries)], CUBLASLtLibraries) {
		t.Fatalf("without %s candidates start %q", CUBLASLtEnv, c)
	}
}

// checkSymbolTable checks a library's symbol table: names unique and
// non-empty, each entry a pointer to a distinct func field of lib (a
// pointer to the binding struct), and every func field of lib in the table.
func checkSymbolTable(t *testing.T, what string, lib any, syms []symbol) {
	t.Helper()
	fields := map[uintptr]string{}
	lv := reflect.ValueOf(lib).Elem()
	for i := 0; i < lv.NumField(); i++ {
		if f := lv.Field(i); f.Kind() == reflect.Func {
			fields[f.Addr().Pointer()] = lv.Type().Field(i).Name
		}
	}
	for _, s := range syms {
		if v := reflect.ValueOf(s.fn); v.Kind() == reflect.Pointer {
			if _, ok := fields[v.Pointer()]; !ok {
				t.Errorf("%s: %s binds a variable that is not a func field of %T", what, s.name, lib)
			}
		}
	}
	if len(fields) != len(syms) {
		t.Errorf("%s: %T has %d func fields, the table %d entries", what, lib, len(fields), len(syms))
	}
	checkSymbolEntries(t, what, syms)
}

// checkSymbolEntries checks that a symbol table's names are unique and
// non-empty and that each entry binds its own func variable.
func checkSymbolEntries(t *testing.T, what string, syms []symbol) {
	t.Helper()
	names := map[string]bool{}
	fns := map[uintptr]string{}
	for _, s := range syms {
		if s.name == "" {
			t.Errorf("%s: empty symbol name", what)
		}
		if names[s.name] {
			t.Errorf("%s: symbol %s listed twice", what, s.name)
		}
		names[s.name] = true
		v := reflect.ValueOf(s.fn)
		if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Func {
			t.Errorf("%s: %s binds a %T, not a pointer to a func variable", what, s.name, s.fn)
			continue
		}
		if prev, ok := fns[v.Pointer()]; ok {
			t.Errorf("%s: %s and %s bind the same variable", what, prev, s.name)
		}
		fns[v.Pointer()] = s.name
	}
}

func TestCUBLASLtSymbolTable(t *testing.T) {
	l := &blasLtLib{}
	checkSymbolTable(t, "cuBLASLt", l, l.symbols())
}

func TestHeuristicResultLayout(t *testing.T) {
	// cublasLtMatmulHeuristicResult_t on LP64 (cublasLt.h).
	var r heuristicResult
	checks := []struct {
		what      string
		got, want uintptr
	}{
		{"sizeof(cublasLtMatmulAlgo_t)", unsafe.Sizeof(matmulAlgo{}), 64},
		{"sizeof(cublasLtMatmulHeuristicResult_t)", unsafe.Sizeof(r), 96},
		{"offsetof(algo)", unsafe.Offsetof(r.algo), 0},
		{"offsetof(workspaceSize)", unsafe.Offsetof(r.workspaceSize), 64},
		{"offsetof(state)", unsafe.Offsetof(r.state), 72},
		{"offsetof(wavesCount)", unsafe.Offsetof(r.wavesCount), 76},
		{"offsetof(reserved)", unsafe.Offsetof(r.reserved), 80},
		{"sizeof(size_t)", unsafe.Sizeof(r.workspaceSize), 8},
		{"sizeof(cublasStatus_t)", unsafe.Sizeof(r.state), 4},
		{"alignof(cublasLtMatmulHeuristicResult_t)", unsafe.Alignof(r), 8},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.what, c.got, c.want)
		}
	}
}

// colMajorGemm is the BLAS definition of D = op(A)·op(B) (alpha 1, beta 0)
// on column-major buffers: D is m×n with leading dimension ldd, op(A) m×k,
// op(B) k×n.
func colMajorGemm(transa, transb bool, m, n, k int, A []float64, lda int, B []float64, ldb int, D []float64, ldd int) {
	for j := 0; j < n; j++ {
		for i := 0; i < m; i++ {
			var s float64
			for l := 0; l < k; l++ {
				var a, b float64
				if transa {
					a = A[l+i*lda] // op(A)(i,l) = A(l,i)
				} else {
					a = A[i+l*lda]
				}
				if transb {
					b = B[j+l*ldb] // op(B)(l,j) = B(j,l)
				} else {
					b = B[l+j*ldb]
				}
				s += a * b
			}
			D[i+j*ldd] = s
		}
	}
}

func TestGemmLayoutsAreRowMajorXWt(t *testing.T) {
	for _, sh := range [][3]int{{1, 1, 1}, {3, 5, 7}, {8, 16, 32}, {5, 2, 9}} {
		M, N, K := sh[0], sh[1], sh[2]
		a, b, d := gemmLayouts(M, N, K)
		// Shapes as cuBLAS checks them, with transa = T, transb = N.
		m, k := int(a.cols), int(a.rows)
		n := int(b.cols)
		if int(b.rows) != k || int(d.rows) != m || int(d.cols) != n {
			t.Fatalf("M=%d N=%d K=%d: inconsistent layouts A %+v B %+v D %+v", M, N, K, a, b, d)
		}
		if m != N || n != M || k != K {
			t.Fatalf("M=%d N=%d K=%d: cuBLAS m,n,k = %d,%d,%d, want N,M,K", M, N, K, m, n, k)
		}
		for _, l := range []matLayout{a, b, d} {
			if l.ld < int64(l.rows) {
				t.Fatalf("ld %d below rows %d", l.ld, l.rows)
			}
		}
		// Row-major buffers, as the harness holds them.
		x := make([]float64, M*K)
		w := make([]float64, N*K)
		for i := range x {
			x[i] = float64((i*7)%11 - 5)
		}
		for i := range w {
			w[i] = float64((i*5)%13 - 6)
		}
		y := make([]float64, M*N)
		colMajorGemm(true, false, m, n, k, w, int(a.ld), x, int(b.ld), y, int(d.ld))
		for i := 0; i < M; i++ {
			for j := 0; j < N; j++ {
				var want float64
				for l := 0; l < K; l++ {
					want += x[i*K+l] * w[j*K+l]
				}
				if y[i*N+j] != want {
					t.Fatalf("M=%d N=%d K=%d: y[%d,%d] = %v, want %v", M, N, K, i, j, y[i*N+j], want)
				}
			}
		}
	}
}

func TestGemmBytes(t *testing.T) {
	x, w, y := GemmBytes(GemmFP8, 3, 5, 7)
	if x != 21 || w != 35 || y != 30 {
		t.Errorf("fp8 bytes %d %d %d", x, w, y)
	}
	x, w, y = GemmBytes(GemmBF16, 3, 5, 7)
	if x != 42 || w != 70 || y != 30 {
		t.Errorf("bf16 bytes %d %d %d", x, w, y)
	}
	if GemmFP8.String() != "fp8e4m3" || GemmBF16.String() != "bf16" {
		t.Errorf("names %v %v", GemmFP8, GemmBF16)
	}
	if _, err := cudaInType(GemmType(0), "sm_90"); err == nil {
		t.Error("GemmType(0) accepted")
	}
	if in, err := cudaInType(GemmFP8, "sm_90"); err != nil || cudaDataTypeName(in) != "CUDA_R_8F_E4M3" {
		t.Errorf("fp8: %s, %v", cudaDataTypeName(in), err)
	}
}

func TestMissingDependency(t *testing.T) {
	for _, c := range []struct{ err, self, want string }{
		{"libcublasLt.so.13: cannot open shared object file: No such file or directory", "libcublasLt.so.13", ""},
		{"/a/b/libcublasLt.so.12: cannot open shared object file: No such file or directory", "/a/b/libcublasLt.so.12", ""},
		{"/a/b/libcublasLt.so.12: libcublas.so.12: cannot open shared object file: No such file or directory", "/a/b/libcublasLt.so.12", "libcublas.so.12"},
		{"libcublasLt.so.13: libnvJitLink.so.13: cannot open shared object file: No such file or directory", "libcublasLt.so.13", "libnvJitLink.so.13"},
		{"/a/libcublasLt.so: wrong ELF class: ELFCLASS32", "/a/libcublasLt.so", ""},
		{"/lib/libstdc++.so.6: version `GLIBCXX_3.4.32' not found (required by /a/libcublasLt.so.13)", "/a/libcublasLt.so.13", ""},
	} {
		if got := missingDependency(c.err, c.self); got != c.want {
			t.Errorf("missingDependency(%q) = %q, want %q", c.err, got, c.want)
		}
	}
}

func TestCublasStatusError(t *testing.T) {
	var l *blasLtLib
	if l.err("f", cublasStatusSuccess) != nil {
		t.Error("success is an error")
	}
	err := l.err("cublasLtMatmul", cublasStatusNotSupported)
	var ae *Error
	if !errors.As(err, &ae) || ae.Lib != "cuBLASLt" || ae.Code != 15 || ae.CodeName != "CUBLAS_STATUS_NOT_SUPPORTED" || ae.Func != "cublasLtMatmul" {
		t.Errorf("got %#v", err)
	}
	if e := l.err("f", 12345).(*Error); e.CodeName != "cublasStatus_t 12345" {
		t.Errorf("unknown status named %q", e.CodeName)
	}
}

// ---- on a CUDA device with cuBLASLt ----

// e4m3 of small integers (sign, 4-bit exponent biased by 7, 3-bit mantissa).
var e4m3Int = map[int]byte{-2: 0xC0, -1: 0xB8, 0: 0x00, 1: 0x38, 2: 0x40}

func bf16Bits(f float32) uint16  { return uint16(math.Float32bits(f) >> 16) } // exact for small integers
func bf16Value(b uint16) float32 { return math.Float32frombits(uint32(b) << 16) }

// gemmOperands builds x[M,K] and w[N,K] of small integers as t's bytes, and
// the exact row-major product.
func gemmOperands(t GemmType, M, N, K int) (xb, wb []byte, want []float64) {
	x := make([]int, M*K)
	w := make([]int, N*K)
	seed := uint32(12345)
	next := func(n int) int {
		seed = seed*1664525 + 1013904223
		return int(seed>>16) % n
	}
	for i := range x {
		x[i] = next(5) - 2 // -2..2
	}
	for i := range w {
		w[i] = next(3) - 1 // -1..1
	}
	enc := func(v []int) []byte {
		out := make([]byte, len(v)*t.InBytes())
		for i, e := range v {
			if t == GemmFP8 {
				out[i] = e4m3Int[e]
			} else {
				b := bf16Bits(float32(e))
				out[2*i], out[2*i+1] = byte(b), byte(b>>8)
			}
		}
		return out
	}
	want = make([]float64, M*N)
	for i := 0; i < M; i++ {
		for j := 0; j < N; j++ {
			var s int
			for l := 0; l < K; l++ {
				s += x[i*K+l] * w[j*K+l]
			}
			want[i*N+j] = float64(s)
		}
	}
	return enc(x), enc(w), want
}

// checkY compares y (bf16 bytes) with want; exact when |want| ≤ 256, else
// within bf16's rounding.
func checkY(y []byte, want []float64, N int) error {
	for i, wv := range want {
		got := float64(bf16Value(uint16(y[2*i]) | uint16(y[2*i+1])<<8))
		tol := 0.0
		if math.Abs(wv) > 256 {
			tol = math.Abs(wv) / 128
		}
		if math.Abs(got-wv) > tol {
			return fmt.Errorf("y[%d,%d] = %v, want %v", i/N, i%N, got, wv)
		}
	}
	return nil
}

// openCUDABLASLt opens the CUDA device, cuBLASLt and a stream on the
// calling (locked) OS thread, or skips saying which is missing; done
// releases them in reverse order, on the same thread.
func openCUDABLASLt(t *testing.T) (d Device, b *BLASLt, s Stream, done func()) {
	t.Helper()
	d, err := Open("cuda")
	if err != nil {
		t.Skipf("no CUDA device: %v", err)
	}
	if b, err = OpenBLASLt(); err != nil {
		d.Close()
		t.Skipf("no cuBLASLt: %v", err)
	}
	if s, err = d.NewStream(); err != nil {
		b.Close()
		d.Close()
		t.Fatal(err)
	}
	return d, b, s, func() {
		d.DestroyStream(s)
		b.Close()
		d.Close()
	}
}

func TestBLASLtGEMMOnDevice(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	d, b, stream, done := openCUDABLASLt(t)
	defer done()
	t.Logf("%s: %s, cuBLASLt %d from %s", d.Info().Name, d.Info().Arch, b.Version(), b.Path())

	// No t.Run: a subtest runs on another goroutine, hence another OS
	// thread, where the CUDA context is not current.
	for _, typ := range []GemmType{GemmBF16, GemmFP8} {
		for _, sh := range [][3]int{{40, 64, 128}, {1, 256, 512}, {512, 1024, 2048}} {
			M, N, K := sh[0], sh[1], sh[2]
			if err := vendorGemmCaseOnDevice(t, d, b, stream, typ, M, N, K); err != nil {
				t.Errorf("%v M=%d N=%d K=%d: %v", typ, M, N, K, err)
			}
		}
	}
}

// TestBLASLtPeakOnDevice times large square GEMMs of both types and logs
// their TFLOP/s: a sanity check that the TN form reaches the fast kernels
// (the H200 gave 642-649 TF/s bf16 and 1221-1248 fp8 at 8192^3 in the
// bench2 ceilings of 2026-11-29, results/h200-2026-11-29/{copy,dec,pre}.json,
// its SM clock power-limited). It runs only where
// PARHARNESS_BLASLT_PEAK=1 and a CUDA device with cuBLASLt is present.
func TestBLASLtPeakOnDevice(t *testing.T) {
	if os.Getenv("PARHARNESS_BLASLT_PEAK") != "1" {
		t.Skip("set PARHARNESS_BLASLT_PEAK=1 to time the peak GEMMs")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	d, b, s, done := openCUDABLASLt(t)
	defer done()
	start, _ := d.NewEvent()
	end, _ := d.NewEvent()
	defer d.DestroyEvent(start)
	defer d.DestroyEvent(end)
	const M, N, K, reps = 8192, 8192, 8192, 20
	for _, typ := range []GemmType{GemmBF16, GemmFP8} {
		nx, nw, ny := GemmBytes(typ, M, N, K)
		x, _ := d.Malloc(nx)
		w, _ := d.Malloc(nw)
		y, _ := d.Malloc(ny)
		// Small random-ish bytes: exponent field kept low so no inf/NaN.
		for _, bf := range []struct {
			p Ptr
			n int
		}{{x, nx}, {w, nw}} {
			d.Memset(bf.p, 0x21, bf.n)
		}
		p, err := b.PlanGEMM(d, typ, M, N, K)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			p.Enqueue(x, w, y, s)
		}
		d.Record(start, s)
		for i := 0; i < reps; i++ {
			if err := p.Enqueue(x, w, y, s); err != nil {
				t.Fatal(err)
			}
		}
		d.Record(end, s)
		ms, err := d.Elapsed(start, end)
		if err != nil {
			t.Fatal(err)
		}
		tf := 2 * float64(M) * N * K * reps / (float64(ms) * 1e-3) / 1e12
		t.Logf("%v %dx%dx%d: %.3f ms each, %.0f TFLOP/s (workspace %d, waves %.2f)", typ, M, N, K, float64(ms)/reps, tf, p.WorkspaceBytes(), p.Waves())
		p.Close()
		d.Free(x)
		d.Free(w)
		d.Free(y)
	}
}

// checkTriedEverything checks a vendor library's loading error: it starts
// with the environment variable's path (bogus), names every library name
// and every glob match (or says the pattern matched nothing), and gives
// each entry its reason.
func checkTriedEverything(t *testing.T, le *Error, lib, bogus string, libs, globs []string) {
	t.Helper()
	if le.Lib != lib {
		t.Errorf("LibraryError.Lib = %q, want %q", le.Lib, lib)
	}
	msg := le.Error()
	if !strings.HasPrefix(msg, lib+" not loaded: tried "+bogus+": ") {
		t.Errorf("error does not start with the environment's path %s: %q", bogus, msg)
	}
	for _, n := range libs {
		if !strings.Contains(msg, n+": ") {
			t.Errorf("error does not name %s: %q", n, msg)
		}
	}
	for _, pat := range globs {
		m, _ := filepath.Glob(pat)
		if len(m) == 0 {
			if !strings.Contains(msg, pat+": no match") {
				t.Errorf("error does not name the pattern %s: %q", pat, msg)
			}
			continue
		}
		for _, p := range m {
			if !strings.Contains(msg, p+": ") {
				t.Errorf("error does not name %s (from %s): %q", p, pat, msg)
			}
		}
	}
	for _, e := range le.Tried {
		if !strings.Contains(e, ": ") {
			t.Errorf("entry without a reason: %q", e)
		}
	}
}

// The cuBLASLt search against a fake tree: today's places first, then
// $CUDA_HOME, the versioned toolkits newest first, and the wheels of the
// active virtual environment and of ~/.local.
func TestCUBLASLtCandidatesFakeTree(t *testing.T) {
	const lt = "libcublasLt.so.12"
	root := fakeTree(t, map[string]string{
		"opt/torch/.venv/lib/python3.11/site-packages/nvidia/cublas/lib/" + lt: "",
		"usr/local/cuda/lib64/" + lt:                                                 "",
		"cudahome/lib64/libcublasLt.so.13":                                           "",
		"usr/local/cuda-12.9/lib64/" + lt:                                            "",
		"usr/local/cuda-12.10/lib64/" + lt:                                           "",
		"usr/local/cuda-12.10/lib64/libcublasLt.so":                                  lt,
		"venv/lib/python3.9/site-packages/nvidia/cublas/lib/" + lt:                   "",
		"venv/lib/python3.12/site-packages/nvidia/cublas/lib/" + lt:                  "",
		"home/.local/lib/python3.12/site-packages/nvidia/cu13/lib/libcublasLt.so.13": "",
	})
	t.Setenv(CUBLASLtEnv, "")
	t.Setenv("CUDA_HOME", root+"/cudahome")
	t.Setenv("VIRTUAL_ENV", root+"/venv")
	t.Setenv("HOME", root+"/home")
	cands, noMatch := cublasLtCandidates()
	want := append(append([]string{}, CUBLASLtLibraries...),
		"/opt/torch/.venv/lib/python3.11/site-packages/nvidia/cublas/lib/"+lt,
		"/usr/local/cuda/lib64/"+lt,
		"/cudahome/lib64/libcublasLt.so.13",
		"/usr/local/cuda-12.10/lib64/"+lt,
		"/usr/local/cuda-12.10/lib64/libcublasLt.so",
		"/usr/local/cuda-12.9/lib64/"+lt,
		"/venv/lib/python3.12/site-packages/nvidia/cublas/lib/"+lt,
		"/venv/lib/python3.9/site-packages/nvidia/cublas/lib/"+lt,
		"/home/.local/lib/python3.12/site-packages/nvidia/cu13/lib/libcublasLt.so.13",
	)
	if got := rel(root, cands); !reflect.DeepEqual(got, want) {
		t.Errorf("candidates\n got %q\nwant %q", got, want)
	}
	// The patterns that matched nothing are named.
	for _, pat := range []string{
		root + "/opt/torch/.venv/lib/python3*/site-packages/nvidia/cu13/lib/libcublasLt.so.*",
		root + "/venv/lib/python3*/site-packages/nvidia/cu13/lib/libcublasLt.so.*",
		root + "/home/.local/lib/python3*/site-packages/nvidia/cublas/lib/libcublasLt.so.*",
	} {
		if !slices.Contains(noMatch, pat+": no match") {
			t.Errorf("no note for %s in %q", pat, noMatch)
		}
	}
	// Every candidate is an entry of the error; the empty files cannot load.
	_, err := openBLASLtLib()
	var e *Error
	if !errors.As(err, &e) {
		t.Skipf("a cuBLASLt loaded: %v", err)
	}
	if len(e.Tried) != len(cands)+len(noMatch) {
		t.Errorf("%d entries for %d candidates and %d notes", len(e.Tried), len(cands), len(noMatch))
	}
	for _, entry := range e.Tried[len(CUBLASLtLibraries):len(cands)] {
		if !strings.Contains(entry, ": cannot load: ") {
			t.Errorf("entry %q", entry)
		}
	}
}

// The CUDA driver: the loader's path first, then the fixed directories.
func TestCUDADriverCandidates(t *testing.T) {
	root := fakeTree(t, map[string]string{
		"usr/lib64/libcuda.so.1":              "",
		"usr/local/nvidia/lib64/libcuda.so.1": "",
	})
	cands, noMatch := cudaSpec().candidates()
	want := append(append([]string{}, CUDALibraries...), "/usr/lib64/libcuda.so.1", "/usr/local/nvidia/lib64/libcuda.so.1")
	if got := rel(root, cands); !reflect.DeepEqual(got, want) {
		t.Errorf("candidates %q, want %q", got, want)
	}
	if !reflect.DeepEqual(noMatch, []string{root + "/usr/lib/x86_64-linux-gnu/libcuda.so.1: no match"}) {
		t.Errorf("notes %q", noMatch)
	}
	if l, err := loadLib(libSpec{lib: cudaLibName, names: cands[len(CUDALibraries):], syms: cudaSymbols}); err == nil {
		t.Fatalf("bound %s", l.path)
	} else {
		var e *Error
		if !errors.As(err, &e) || len(e.Tried) != 2 || !strings.Contains(e.Tried[0], "libcuda.so.1: cannot load: ") {
			t.Errorf("got %v", err)
		}
	}
}
