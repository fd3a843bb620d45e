package gpu

import (
	"fmt"
	"os"
	"strings"
)

// OpenError says why no device was opened: every backend tried, and why
// each failed. Gates print it as their SKIP reason.
type OpenError struct {
	Tried []string // "cuda: ..." / "hip: ..."
}

func (e *OpenError) Error() string {
	return "no GPU device: " + strings.Join(e.Tried, "; ")
}

// Backends are the names Open accepts, in the order "auto" tries them.
var Backends = []string{"cuda", "hip"}

// Open opens device 0 of the named backend ("auto", "cuda", "hip", "none").
// "auto" honours PARHARNESS_BACKEND when set. The caller must have locked
// its OS thread (runtime.LockOSThread) and keep using the device from it.
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
		return nil, &OpenError{Tried: []string{"backend \"none\" selected (--backend/PARHARNESS_BACKEND)"}}
	default:
		if _, ok := openers[backend]; !ok {
			return nil, fmt.Errorf("unknown backend %q: use auto, cuda, hip or none", backend)
		}
		order = []string{backend}
	}
	oe := &OpenError{}
	for _, b := range order {
		d, err := openers[b]()
		if err == nil {
			return d, nil
		}
		oe.Tried = append(oe.Tried, b+": "+err.Error())
	}
	return nil, oe
}
