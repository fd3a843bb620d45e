package gpu

import (
	"fmt"
	"os"
)

// noDevice is the Msg of the *Error Open returns when it opened no device.
const noDevice = "no GPU device"

// Backends are the names Open accepts, in the order "auto" tries them.
var Backends = []string{"cuda", "hip"}

// Open opens device 0 of the named backend ("auto", "cuda", "hip", "none").
// "auto" honours PARHARNESS_BACKEND when set. When no device opens, the
// error is an *Error with Msg "no GPU device" and one Tried entry per
// backend ("cuda: why", "hip: why"). The caller must have locked its OS
// thread (runtime.LockOSThread) and keep using the device from it.
func Open(backend string) (Device, error) {
	if backend == "" || backend == "auto" {
		if env := os.Getenv("PARHARNESS_BACKEND"); env != "" {
			backend = env
		} else {
			backend = "auto"
		}
	}
	openers := map[string]func() (Device, error){"cuda": openCUDA, "hip": openHIP}
	var order []string
	switch backend {
	case "auto":
		order = Backends
	case "none":
		return nil, &Error{Msg: noDevice + `: backend "none" selected (--backend/PARHARNESS_BACKEND)`}
	default:
		if _, ok := openers[backend]; !ok {
			return nil, fmt.Errorf("unknown backend %q: use auto, cuda, hip or none", backend)
		}
		order = []string{backend}
	}
	oe := &Error{Msg: noDevice}
	for _, b := range order {
		d, err := openers[b]()
		if err == nil {
			return d, nil
		}
		oe.Tried = append(oe.Tried, b+": "+err.Error())
	}
	return nil, oe
}
