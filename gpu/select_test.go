package gpu

import (
	"errors"
	"runtime"
	"strings"
	"testing"
)

func TestParseDeviceSel(t *testing.T) {
	for _, c := range []struct {
		name, in string
		index    int
		busID    string
		bad      bool
	}{
		{"empty is device 0", "", 0, "", false},
		{"index", "3", 3, "", false},
		{"bus id", "0000:03:00.0", 0, "0000:03:00.0", false},
		{"bus id upper case", "0000:C3:00.1", 0, "0000:c3:00.1", false},
		{"NVML's eight-digit domain", "00000000:03:00.0", 0, "0000:03:00.0", false},
		{"negative", "-1", 0, "", true},
		{"sign", "+1", 0, "", true},
		{"no domain", "03:00.0", 0, "", true},
		{"function past 7", "0000:03:00.8", 0, "", true},
		{"a name", "gpu0", 0, "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			sel, err := parseDeviceSel(c.in)
			if c.bad {
				var e *Error
				if !errors.As(err, &e) || !strings.Contains(e.Msg, "not a device index or a PCI bus id") {
					t.Errorf("parseDeviceSel(%q) = %+v, %v; want an *Error", c.in, sel, err)
				}
				return
			}
			if err != nil || sel.index != c.index || sel.busID != c.busID {
				t.Errorf("parseDeviceSel(%q) = %+v, %v", c.in, sel, err)
			}
		})
	}
}

// fakeBackends stands in for the backends' open calls for the test.
func fakeBackends(t *testing.T, open map[string]func(deviceSel) (Device, error)) {
	t.Helper()
	old := deviceOpeners
	deviceOpeners = open
	t.Cleanup(func() { deviceOpeners = old })
}

func TestOpenDeviceSelection(t *testing.T) {
	noHIP := func(deviceSel) (Device, error) { return nil, errors.New("no HIP runtime") }
	twoCUDA := func(sel deviceSel) (Device, error) {
		if sel.busID != "" {
			e := statusError(cudaLibName, "cuDeviceGetByPCIBusId", "CUresult", cuResult(1), func(cuResult) string { return "CUDA_ERROR_INVALID_VALUE" }, nil)
			return nil, sel.busError(e, "CUDA", 2)
		}
		return nil, sel.rangeError(cudaLibName, "CUDA", 2)
	}
	for _, c := range []struct {
		name, backend, device string
		want                  string
		lib, fn               string
	}{
		{"index out of range", "auto", "5", "device 5 is out of range: 2 CUDA devices (indices 0..1)", cudaLibName, ""},
		{"unknown bus id", "cuda", "0000:03:00.0",
			"cuDeviceGetByPCIBusId failed: CUDA_ERROR_INVALID_VALUE (1): no device has PCI bus id 0000:03:00.0: 2 CUDA devices (indices 0..1)", cudaLibName, "cuDeviceGetByPCIBusId"},
		{"no device anywhere", "hip", "1", "no GPU device: tried hip: no HIP runtime", "", ""},
		{"bad argument", "auto", "first", `device "first": not a device index or a PCI bus id ("0000:03:00.0")`, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			fakeBackends(t, map[string]func(deviceSel) (Device, error){"cuda": twoCUDA, "hip": noHIP})
			t.Setenv("PARHARNESS_BACKEND", "")
			_, err := OpenDevice(c.backend, c.device)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %T %v", err, err)
			}
			if e.Error() != c.want || e.Lib != c.lib || e.Func != c.fn {
				t.Errorf("got %q (Lib %q, Func %q), want %q (Lib %q, Func %q)", e.Error(), e.Lib, e.Func, c.want, c.lib, c.fn)
			}
			if strings.Contains(e.Error(), "\n") {
				t.Errorf("not one line: %q", e.Error())
			}
		})
	}
}

// A selection the first backend cannot serve is still looked for in the
// next.
func TestOpenDeviceFallsThrough(t *testing.T) {
	var got deviceSel
	fakeBackends(t, map[string]func(deviceSel) (Device, error){
		"cuda": func(sel deviceSel) (Device, error) { return nil, sel.rangeError(cudaLibName, "CUDA", 1) },
		"hip":  func(sel deviceSel) (Device, error) { got = sel; return nil, errors.New("stop") },
	})
	t.Setenv("PARHARNESS_BACKEND", "")
	_, err := OpenDevice("auto", "0000:0a:00.0")
	if got.busID != "0000:0a:00.0" {
		t.Errorf("hip was asked for %+v", got)
	}
	var e *Error
	if !errors.As(err, &e) || e.Lib != cudaLibName {
		t.Errorf("got %v", err)
	}
}

// The HIP runtime's by-bus-id call, bound from the installed runtime: with
// no GPU it fails, and the error names the call, its code and the count.
func TestHIPPickByBusID(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	l := hipInstalled(t)
	if l == nil {
		t.Skip("no HIP runtime installed")
	}
	if l.hipDeviceGetByPCIBusId == nil {
		t.Skipf("%s has no hipDeviceGetByPCIBusId", l.path)
	}
	sel, _ := parseDeviceSel("0000:03:00.0")
	_, err := l.pick(sel, 2)
	if err == nil {
		t.Skip("a device at 0000:03:00.0")
	}
	var e *Error
	if !errors.As(err, &e) || e.Func != "hipDeviceGetByPCIBusId" || !strings.HasPrefix(e.CodeName, "hipError") ||
		!strings.HasSuffix(e.Error(), ": no device has PCI bus id 0000:03:00.0: 2 HIP devices (indices 0..1)") {
		t.Errorf("got %v", err)
	}
	t.Logf("%v", err)
	sel, _ = parseDeviceSel("2")
	if _, err := l.pick(sel, 2); !errors.As(err, &e) || e.Msg != "device 2 is out of range: 2 HIP devices (indices 0..1)" {
		t.Errorf("got %v", err)
	}
}

// ListDevices without a GPU: the error of Open's shape.
func TestListDevicesNoGPU(t *testing.T) {
	t.Setenv("PARHARNESS_BACKEND", "")
	infos, err := ListDevices("auto")
	if err == nil {
		t.Logf("devices: %+v", infos)
		return
	}
	var e *Error
	if !errors.As(err, &e) || e.Msg != noDevice || len(e.Tried) != len(Backends) {
		t.Errorf("got %v", err)
	}
	t.Logf("%v", err)
	if _, err := ListDevices("none"); !errors.As(err, &e) || !strings.Contains(e.Msg, `backend "none"`) {
		t.Errorf("none: %v", err)
	}
}
