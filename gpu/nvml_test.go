package gpu

import (
	"errors"
	"strings"
	"testing"
)

// These tests need no GPU and no driver: they check the loader's error text
// and the symbol table. Sample is exercised by the bench engine on the
// device, and by TestNVMLSampleOnDevice where libnvidia-ml is installed.

func TestOpenNVMLErrorListsEverything(t *testing.T) {
	n, err := OpenNVML()
	if err == nil {
		t.Logf("loaded %s", n.Path())
		if err := n.Close(); err != nil {
			t.Error(err)
		}
		return
	}
	t.Logf("OpenNVML: %v", err)
	var le *Error
	if !errors.As(err, &le) || len(le.Tried) == 0 {
		t.Skipf("a libnvidia-ml loaded but NVML did not start: %v", err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "NVML not loaded: tried ") {
		t.Errorf("error text %q", msg)
	}
	for _, name := range NVMLLibraries {
		if !strings.Contains(msg, name+": ") {
			t.Errorf("error does not name %s: %q", name, msg)
		}
	}
}

func TestNVMLSymbolTable(t *testing.T) {
	l := &nvmlLib{}
	checkSymbolTable(t, "NVML", l, l.symbols())
}

func TestNVMLReturnError(t *testing.T) {
	var l *nvmlLib
	if l.err("f", nvmlSuccess) != nil {
		t.Error("success is an error")
	}
	var ae *Error
	if err := l.err("nvmlDeviceGetPowerUsage", nvmlErrNotSupported); !errors.As(err, &ae) || ae.Lib != "NVML" || ae.CodeName != "NVML_ERROR_NOT_SUPPORTED" || ae.Code != 3 {
		t.Errorf("got %#v", err)
	}
	if e := l.err("f", 4242).(*Error); e.CodeName != "nvmlReturn_t 4242" {
		t.Errorf("unknown return named %q", e.CodeName)
	}
}

func TestNVMLSampleOnDevice(t *testing.T) {
	n, err := OpenNVML()
	if err != nil {
		t.Skipf("no NVML: %v", err)
	}
	defer n.Close()
	s, err := n.Sample(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("device 0: %+v", s)
	if s.SMMHz <= 0 || s.MemMHz <= 0 {
		t.Errorf("implausible clocks: %+v", s)
	}
	if s.TempC < -1 || s.TempC > 150 || (s.PowerW != -1 && (s.PowerW < 0 || s.PowerW > 5000)) {
		t.Errorf("implausible temperature or power: %+v", s)
	}
	if _, err := n.Sample(1 << 20); err == nil {
		t.Error("device index 1<<20 sampled without error")
	}
}
