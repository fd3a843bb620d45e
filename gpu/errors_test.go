package gpu

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// Each kind of *Error reads as the package's messages always have, and
// survives wrapping for errors.As.
func TestErrorText(t *testing.T) {
	for _, c := range []struct {
		e    *Error
		want string
	}{
		{&Error{Lib: cudaLibName, Func: "cuModuleLoadDataEx", Code: 218, CodeName: "CUDA_ERROR_INVALID_PTX", Msg: "a PTX JIT compilation failed"},
			"cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (218): a PTX JIT compilation failed"},
		{&Error{Lib: "hipBLASLt", Func: "hipblasLtCreate", Code: 7, CodeName: "HIPBLAS_STATUS_NOT_SUPPORTED", Msg: "HIPBLAS_STATUS_NOT_SUPPORTED"},
			"hipblasLtCreate failed: HIPBLAS_STATUS_NOT_SUPPORTED (7)"},
		{&Error{Lib: "NVML", Tried: []string{"libnvidia-ml.so.1: cannot open shared object file", "libnvidia-ml.so: cannot open shared object file"}},
			"NVML not loaded: tried libnvidia-ml.so.1: cannot open shared object file; libnvidia-ml.so: cannot open shared object file"},
		{&Error{Msg: noDevice, Tried: []string{"cuda: x", "hip: y"}}, "no GPU device: tried cuda: x; hip: y"},
		{&Error{Lib: cudaLibName, Func: "cuLaunchKernelEx", Msg: "this driver has no cuLaunchKernelEx"}, "this driver has no cuLaunchKernelEx"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
		var e *Error
		if !errors.As(fmt.Errorf("wrapped: %w", c.e), &e) || e != c.e {
			t.Errorf("errors.As lost %q", c.want)
		}
	}
}

func TestStatusErrorUnknownCode(t *testing.T) {
	e := statusError("NVML", "f", "nvmlReturn_t", nvmlReturn(4242), nameIn(nvmlReturnNames), nil)
	if e.Lib != "NVML" || e.Func != "f" || e.Code != 4242 || e.CodeName != "nvmlReturn_t 4242" || e.Msg != "" {
		t.Errorf("got %#v", e)
	}
}

// Open of backend "none" fails with the package's error, saying so.
func TestOpenNone(t *testing.T) {
	_, err := Open("none")
	var e *Error
	if !errors.As(err, &e) || !strings.HasPrefix(e.Error(), noDevice+": ") || !strings.Contains(e.Error(), `backend "none"`) {
		t.Errorf("Open(none): %v", err)
	}
}
