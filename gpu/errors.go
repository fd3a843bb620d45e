package gpu

import (
	"fmt"
	"strings"
)

// Error is the package's one error type for its vendor libraries:
//
//   - a call that returned an error status: Func, Code and CodeName set
//     ("cuModuleLoadData failed: CUDA_ERROR_INVALID_PTX (218): …");
//   - a library that no candidate could provide: Lib and Tried set
//     ("cuBLASLt not loaded: tried PATH: why; …");
//   - no device opened: Msg "no GPU device" and Tried, one entry per
//     backend ("cuda: …; hip: …");
//   - a device selection a backend cannot serve: Lib and Msg naming the
//     count of its devices ("device 3 is out of range: 2 CUDA devices …"),
//     with Func and Code where the by-bus-id call failed;
//   - an entry point the loaded library lacks: Lib, Func and Msg.
//
// Callers tell them apart with errors.As and the fields. Gates and benches
// print Error() as their SKIP reason.
type Error struct {
	Lib      string   // the library: "CUDA driver library", "HIP runtime library", "cuBLASLt", "hipBLASLt", "NVML"
	Func     string   // the API function or symbol, e.g. "cuModuleLoadDataEx"
	Code     int      // the status the call returned
	CodeName string   // the library's name for Code, e.g. "CUDA_ERROR_INVALID_PTX"
	Msg      string   // the library's description of Code, or what went wrong
	Tried    []string // for a failed search: "PATH: why", one per candidate tried
}

func (e *Error) Error() string {
	if e.CodeName != "" {
		s := fmt.Sprintf("%s failed: %s (%d)", e.Func, e.CodeName, e.Code)
		if e.Msg != "" && e.Msg != e.CodeName {
			s += ": " + e.Msg
		}
		return s
	}
	s := e.Msg
	if s == "" {
		s = e.Lib + " not loaded"
	}
	if len(e.Tried) > 0 {
		s += ": tried " + strings.Join(e.Tried, "; ")
	}
	return s
}

// statusError is the *Error of a call fn into lib that returned code: the
// code's name from name (or "<kind> <code>" where name is nil or has none),
// its description from msg (nil where the library has no describing
// function). Callers return nil themselves on success.
func statusError[C ~int32](lib, fn, kind string, code C, name, msg func(C) string) *Error {
	e := &Error{Lib: lib, Func: fn, Code: int(code)}
	if name != nil {
		e.CodeName = name(code)
	}
	if e.CodeName == "" {
		e.CodeName = fmt.Sprintf("%s %d", kind, code)
	}
	if msg != nil {
		e.Msg = msg(code)
	}
	return e
}

// nameIn looks codes up in a library's table of status names.
func nameIn[C comparable](names map[C]string) func(C) string {
	return func(c C) string { return names[c] }
}
