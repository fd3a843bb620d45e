package gpu

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Device selection: which device of a backend OpenDevice opens.

// deviceSel is a parsed device argument: an index into the backend's own
// enumeration, or a PCI bus id.
type deviceSel struct {
	spec  string // as given
	index int
	busID string // normalised "dddd:bb:dd.f" (hex), or "" for an index
}

// busIDRE is a PCI bus id "domain:bus:device.function", all hexadecimal,
// the form cuDeviceGetPCIBusId and hipDeviceGetPCIBusId write.
var busIDRE = regexp.MustCompile(`^([0-9a-fA-F]{1,8}):([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\.([0-7])$`)

// parseDeviceSel parses OpenDevice's device argument: "" (device 0), a
// decimal index, or a PCI bus id ("0000:03:00.0"; NVML's eight-digit
// domain "00000000:03:00.0" too). The bus id is normalised to four domain
// digits and lower case, the form clr's hipDeviceGetByPCIBusId scans
// ("%04x:%02x:%02x.%01x", hipamd/src/hip_device_runtime.cpp) and one of
// those cuDeviceGetByPCIBusId takes (cuda.h).
func parseDeviceSel(s string) (deviceSel, error) {
	sel := deviceSel{spec: s}
	if s == "" {
		return sel, nil
	}
	if n, err := strconv.Atoi(s); err == nil && n >= 0 && strings.Trim(s, "0123456789") == "" {
		sel.index = n
		return sel, nil
	}
	m := busIDRE.FindStringSubmatch(s)
	if m == nil {
		return sel, &Error{Msg: fmt.Sprintf("device %q: not a device index or a PCI bus id (\"0000:03:00.0\")", s)}
	}
	var f [4]uint64
	for i := range f {
		f[i], _ = strconv.ParseUint(m[i+1], 16, 32)
	}
	sel.busID = fmt.Sprintf("%04x:%02x:%02x.%x", f[0], f[1], f[2], f[3])
	return sel, nil
}

// String names the selection in messages: "device 1", "device 0000:03:00.0".
func (s deviceSel) String() string {
	if s.busID != "" {
		return "device " + s.busID
	}
	return "device " + strconv.Itoa(s.index)
}

// rangeError is the error of an index past the n devices a backend
// reports (what: "CUDA", "HIP").
func (s deviceSel) rangeError(lib, what string, n int) error {
	return selectError{&Error{Lib: lib, Msg: fmt.Sprintf("%s is out of range: %s", s, deviceCount(what, n))}}
}

// busError turns the status error of a failed by-bus-id lookup into the
// one-line error OpenDevice returns: the call and its code, then the bus
// id and the count of devices.
func (s deviceSel) busError(err error, what string, n int) error {
	e, ok := err.(*Error)
	if !ok {
		return err
	}
	e.Msg = fmt.Sprintf("no device has PCI bus id %s: %s", s.busID, deviceCount(what, n))
	return selectError{e}
}

// noBusLookup is the error of a library without the by-bus-id call.
func noBusLookup(lib, fn string) error {
	return selectError{&Error{Lib: lib, Func: fn, Msg: "this library has no " + fn + ": select the device by index"}}
}

func deviceCount(what string, n int) string {
	switch n {
	case 0:
		return "no " + what + " device"
	case 1:
		return "1 " + what + " device (index 0)"
	}
	return fmt.Sprintf("%d %s devices (indices 0..%d)", n, what, n-1)
}

// selectError marks an *Error as a failed device selection (an index out
// of range, an unknown bus id, no by-bus-id call): the backend has
// devices, only not the one asked for. OpenDevice returns the *Error
// itself rather than inside "no GPU device".
type selectError struct{ err *Error }

func (s selectError) Error() string { return s.err.Error() }
func (s selectError) Unwrap() error { return s.err }
