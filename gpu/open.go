package gpu

import (
	"errors"
	"fmt"
	"os"
)

// noDevice is the Msg of the *Error Open returns when it opened no device.
const noDevice = "no GPU device"

// Backends are the names Open accepts, in the order "auto" tries them.
var Backends = []string{"cuda", "hip"}

// deviceOpeners and deviceListers are the backends' open and list calls
// (variables so tests can stand in for a backend).
var (
	deviceOpeners = map[string]func(deviceSel) (Device, error){"cuda": openCUDA, "hip": openHIP}
	deviceListers = map[string]func() ([]Info, error){"cuda": listCUDA, "hip": listHIP}
)

// Open opens device 0 of the named backend: OpenDevice(backend, "").
func Open(backend string) (Device, error) { return OpenDevice(backend, "") }

// OpenDevice opens one device of the named backend ("auto", "cuda",
// "hip", "none"). "auto" honours PARHARNESS_BACKEND when set, and
// otherwise tries Backends in order. device is "" (device 0), a decimal
// index into the backend's own enumeration (the one CUDA_VISIBLE_DEVICES
// and HIP_VISIBLE_DEVICES shape), or a PCI bus id ("0000:03:00.0").
//
// When no device opens, the error is an *Error with Msg "no GPU device"
// and one Tried entry per backend ("cuda: why", "hip: why"), except where
// a backend has devices but not the one asked for (an index out of range,
// a bus id it does not know): then it is that backend's one-line *Error,
// naming the count of its devices. The caller must have locked its OS
// thread (runtime.LockOSThread) and keep using the device from it.
func OpenDevice(backend, device string) (Device, error) {
	sel, err := parseDeviceSel(device)
	if err != nil {
		return nil, err
	}
	order, err := backendOrder(backend)
	if err != nil {
		return nil, err
	}
	oe := &Error{Msg: noDevice}
	var selErr *Error
	for _, b := range order {
		d, err := deviceOpeners[b](sel)
		if err == nil {
			return d, nil
		}
		var se selectError
		if errors.As(err, &se) && selErr == nil {
			selErr = se.err
		}
		oe.Tried = append(oe.Tried, b+": "+err.Error())
	}
	if selErr != nil {
		return nil, selErr
	}
	return nil, oe
}

// ListDevices describes every device of the named backend ("auto": of
// each of Backends that has any), without creating a context or making a
// device current. The error, when no backend lists a device, has the shape
// of OpenDevice's.
func ListDevices(backend string) ([]Info, error) {
	order, err := backendOrder(backend)
	if err != nil {
		return nil, err
	}
	oe := &Error{Msg: noDevice}
	var all []Info
	for _, b := range order {
		infos, err := deviceListers[b]()
		all = append(all, infos...)
		if err != nil {
			oe.Tried = append(oe.Tried, b+": "+err.Error())
		}
	}
	if len(all) == 0 {
		return nil, oe
	}
	return all, nil
}

// backendOrder is the backends a backend name stands for, in the order
// they are tried.
func backendOrder(backend string) ([]string, error) {
	if backend == "" || backend == "auto" {
		if env := os.Getenv("PARHARNESS_BACKEND"); env != "" {
			backend = env
		} else {
			backend = "auto"
		}
	}
	switch backend {
	case "auto":
		return Backends, nil
	case "none":
		return nil, &Error{Msg: noDevice + `: backend "none" selected (--backend/PARHARNESS_BACKEND)`}
	case "cuda", "hip":
		return []string{backend}, nil
	}
	return nil, fmt.Errorf("unknown backend %q: use auto, cuda, hip or none", backend)
}
