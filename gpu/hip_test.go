package gpu

import (
	"errors"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// These tests need no GPU. Where a HIP runtime is installed (Debian's
// libamdhip64-5 is enough) they check the symbol table against it and that
// opening fails cleanly at hipInit; where none is, they check that the
// error lists every library tried.

// hipInstalled binds the first HIP runtime in HIPLibraries that has every
// symbol, or returns nil.
func hipInstalled(t *testing.T) *hipLib {
	t.Helper()
	l, err := loadHIP(HIPLibraries)
	if err != nil {
		t.Logf("not bound: %v", err)
		return nil
	}
	return l
}

func TestHIPSymbolTable(t *testing.T) {
	l := hipInstalled(t)
	if l == nil {
		t.Skip("no HIP runtime installed; TestHIPOpen checks the error lists every library")
	}
	t.Logf("bound %s", l.path)
	for _, s := range l.symbols() {
		bound := !isNilFunc(s.fn)
		switch {
		case !bound && !s.optional:
			t.Errorf("%s: required symbol %s left unbound", l.path, s.name)
		case !bound:
			t.Logf("%s: optional symbol %s absent", l.path, s.name)
		}
	}
	if l.hipGetDevicePropertiesR0600 == nil && l.hipGetDeviceProperties == nil {
		t.Errorf("%s: neither properties entry point is bound", l.path)
	}
}

// isNilFunc reports whether fn (a pointer to a func variable from the
// symbol table) is still nil.
func isNilFunc(fn any) bool { return reflect.ValueOf(fn).Elem().IsNil() }

func TestHIPOpen(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	installed := hipInstalled(t) != nil
	d, err := openHIP(deviceSel{})
	if err == nil {
		// A machine with an AMD GPU: opening must work and say what it is.
		defer d.Close()
		info := d.Info()
		t.Logf("opened: %+v", info)
		if info.Backend != "hip" || !strings.HasPrefix(info.Arch, "gfx") || info.SMs <= 0 || info.TotalMem == 0 {
			t.Errorf("implausible device info: %+v", info)
		}
		return
	}
	t.Logf("openHIP error: %v", err)
	msg := err.Error()
	if installed {
		// No GPU: hipInit is the call that fails (ROCm 5.2 answers
		// hipErrorInvalidDevice), and the error carries the runtime's name
		// for the code. A runtime whose hipInit succeeds without devices
		// reports it at hipGetDeviceCount instead.
		var ae *Error
		if !errors.As(err, &ae) {
			t.Fatalf("error is not an *Error: %T %v", err, err)
		}
		t.Logf("Error: Func=%q Code=%d CodeName=%q Msg=%q", ae.Func, ae.Code, ae.CodeName, ae.Msg)
		if (ae.Func != "hipInit" && ae.Func != "hipGetDeviceCount") || !strings.HasPrefix(ae.CodeName, "hipError") {
			t.Errorf("want hipInit failing with a hipError… name, got Func=%q CodeName=%q", ae.Func, ae.CodeName)
		}
		if !strings.Contains(msg, ae.Func) || !strings.Contains(msg, ae.CodeName) {
			t.Errorf("message does not name %s and %s: %s", ae.Func, ae.CodeName, msg)
		}
		return
	}
	for _, p := range HIPLibraries {
		if !strings.Contains(msg, p+":") {
			t.Errorf("error does not list %s: %s", p, msg)
		}
	}
}

// The not-installed path, taken whatever this machine has installed.
func TestHIPOpenListsEveryPath(t *testing.T) {
	paths := []string{"libamdhip64-absent.so", "libamdhip64-absent.so.7", "libamdhip64-absent.so.6", "/nonexistent/libamdhip64.so.5"}
	_, err := openHIPFrom(paths)
	if err == nil {
		t.Fatal("opened a HIP runtime from paths that do not exist")
	}
	t.Logf("error: %v", err)
	for _, p := range paths {
		if !strings.Contains(err.Error(), p+":") {
			t.Errorf("error does not list %s", p)
		}
	}
}

// A library that loads but is not the HIP runtime: the missing symbols are
// reported by name instead of panicking inside purego.
func TestHIPMissingSymbols(t *testing.T) {
	const libc = "libc.so.6"
	l, err := loadHIP([]string{libc})
	if err == nil {
		t.Fatalf("bound %s as a HIP runtime", l.path)
	}
	t.Logf("error: %v", err)
	var e *Error
	if !errors.As(err, &e) || e.Lib != hipLibName || len(e.Tried) != 1 {
		t.Fatalf("want an *Error of %s with one entry, got %T %v", hipLibName, err, err)
	}
	msg := e.Tried[0]
	if !strings.HasPrefix(msg, libc+": symbols ") || !strings.HasSuffix(msg, " not found") {
		t.Errorf("unexpected message shape: %s", msg)
	}
	for _, want := range []string{"hipInit", "hipGraphInstantiate", "hipModuleLaunchKernel", "hipGetErrorString"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message does not name %s", want)
		}
	}
	if strings.Contains(msg, "R0600") {
		t.Errorf("optional symbol reported missing: %s", msg)
	}
}

func TestHIPGCNArchName(t *testing.T) {
	props := func(name string, at int, arch string) []byte {
		b := make([]byte, hipPropsBufSize)
		copy(b, name)
		b[at-4] = 0xb1 // an int field before gcnArchName, low byte set
		copy(b[at:], arch)
		return b
	}
	for _, c := range []struct {
		props []byte
		want  string
		ok    bool
	}{
		{props("AMD Radeon RX 9070 XT", 1160, "gfx1201:sramecc-:xnack-"), "gfx1201", true},
		{props("AMD Instinct MI300X", 800, "gfx942:sramecc+:xnack-"), "gfx942", true},
		{props("AMD Instinct MI210", 700, "gfx90a"), "gfx90a", true},
		// The name field alone is not the arch, and junk after "gfx" is not one.
		{props("gfx1201", 1000, "no arch here"), "", false},
		{props("Device", 1000, "gfx!?"), "", false},
	} {
		got, ok := gcnArchName(c.props)
		if got != c.want || ok != c.ok {
			t.Errorf("gcnArchName(%q…) = %q, %v; want %q, %v", cBytes(c.props), got, ok, c.want, c.ok)
		}
	}
}

func TestHIPLLCBytes(t *testing.T) {
	if got := hipLLCBytes("gfx1201", 8<<20); got != 64<<20 {
		t.Errorf("gfx1201: %d", got)
	}
	if got := hipLLCBytes("gfx1200", 4<<20); got != 64<<20 {
		t.Errorf("gfx1200: %d", got)
	}
	if got := hipLLCBytes("gfx942", 4<<20); got != 4<<20 {
		t.Errorf("gfx942: %d", got)
	}
}

// The enumerator values are copied from the ROCm headers (see hip_bind.go);
// this pins them so an edit has to be deliberate.
func TestHIPEnumValues(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want int32
	}{
		{"hipDeviceAttributeClockRate", hipAttrClockRate, 5},
		{"hipDeviceAttributeL2CacheSize", hipAttrL2CacheSize, 19},
		{"hipDeviceAttributeMemoryBusWidth", hipAttrMemoryBusWidth, 59},
		{"hipDeviceAttributeMemoryClockRate", hipAttrMemoryClockRate, 60},
		{"hipDeviceAttributeMultiprocessorCount", hipAttrMultiprocessorCount, 63},
		{"hipDeviceAttributeMaxSharedMemoryPerBlock", hipAttrMaxSharedPerBlock, 74},
		{"HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK", hipFuncAttrMaxThreadsPerBlock, 0},
		{"HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES", hipFuncAttrSharedSizeBytes, 1},
		{"HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES", hipFuncAttrLocalSizeBytes, 3},
		{"HIP_FUNC_ATTRIBUTE_NUM_REGS", hipFuncAttrNumRegs, 4},
		{"hipStreamCaptureModeThreadLocal", hipStreamCaptureModeThreadLocal, 1},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
}

// A library that loads but lacks symbols is passed over for the next
// candidate, which binds; the error of the first stays out of the way.
func TestHIPSkipsLibraryWithoutSymbols(t *testing.T) {
	want := hipInstalled(t)
	if want == nil {
		t.Skip("no HIP runtime installed")
	}
	l, err := loadHIP([]string{"libc.so.6", want.path})
	if err != nil {
		t.Fatalf("libc first, then %s: %v", want.path, err)
	}
	if l.path != want.path || l.hipInit == nil {
		t.Errorf("bound %s (hipInit bound: %v), want %s", l.path, l.hipInit != nil, want.path)
	}
}

func TestHIPComputeUnits(t *testing.T) {
	for _, c := range []struct {
		name string
		arch string
		mp   int
		wgp  bool
		want int
	}{
		{"gfx1201 reports WGPs", "gfx1201", 32, true, 64},
		{"gfx1100 reports WGPs", "gfx1100", 48, true, 96},
		{"gfx1030 reports WGPs", "gfx1030", 40, true, 80},
		{"WGP mode off", "gfx1201", 64, false, 64},
		{"gfx942 reports CUs", "gfx942", 304, true, 304},
		{"gfx90a reports CUs", "gfx90a", 104, true, 104},
		{"unknown arch as reported", "", 7, true, 7},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := hipComputeUnits(c.arch, c.mp, c.wgp); got != c.want {
				t.Errorf("hipComputeUnits(%q, %d, %v) = %d, want %d", c.arch, c.mp, c.wgp, got, c.want)
			}
		})
	}
	for arch, want := range map[string]int{"gfx1201": 12, "gfx942": 9, "gfx90a": 9, "gfx1010": 10, "gfx9": -1, "sm_90": -1} {
		if got := gfxMajor(arch); got != want {
			t.Errorf("gfxMajor(%q) = %d, want %d", arch, got, want)
		}
	}
}

// GPU_ENABLE_WGP_MODE read as the runtime reads it.
func TestHIPWGPMode(t *testing.T) {
	for _, c := range []struct {
		value string
		set   bool
		want  bool
	}{
		{"", false, true}, {"0", true, false}, {"1", true, true}, {"true", true, true},
		{"false", true, false}, {"", true, false}, {" 2x", true, true}, {"yes", true, false},
	} {
		t.Run(c.value+"/"+map[bool]string{true: "set", false: "unset"}[c.set], func(t *testing.T) {
			if c.set {
				t.Setenv("GPU_ENABLE_WGP_MODE", c.value)
			} else {
				t.Setenv("GPU_ENABLE_WGP_MODE", "")
				os.Unsetenv("GPU_ENABLE_WGP_MODE")
			}
			if got := hipWGPMode(); got != c.want {
				t.Errorf("GPU_ENABLE_WGP_MODE=%q (set %v): %v, want %v", c.value, c.set, got, c.want)
			}
		})
	}
}

// The event flag is the header's value (hip_runtime_api.h).
func TestHIPEventFlag(t *testing.T) {
	if hipEventDisableSystemFence != 0x20000000 {
		t.Errorf("hipEventDisableSystemFence = %#x", hipEventDisableSystemFence)
	}
}
