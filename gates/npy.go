package gates

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"

	"codeberg.org/sbinet/npyio"
)

// npyElem is an element type readNPY returns, with its NumPy descr.
type npyElem interface{ float64 | uint8 }

func npyDescr[T npyElem]() string {
	var zero T
	switch any(zero).(type) {
	case float64:
		return "<f8"
	default:
		return "|u1"
	}
}

// readNPY parses a .npy file held in b (name is used in messages) with
// npyio, stricter than npyio is: format version 1.0, descr '<f8' for
// float64 or '|u1' for uint8, C order, at least one dimension, and exactly
// the data bytes the shape implies (npyio fills a short file with zeros and
// ignores trailing bytes). It returns the shape and the elements in C
// order. No input makes it panic (npyio's dict parser can, on a dict
// missing a key; that becomes an error too).
func readNPY[T npyElem](name string, b []byte) (shape []int, data []T, err error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...))
	}
	defer func() {
		if r := recover(); r != nil {
			shape, data, err = nil, nil, fail("malformed npy header (npyio: %v)", r)
		}
	}()
	// The preamble is checked here, before npyio sees the file: npyio
	// allocates whatever header length a version 2.0 preamble claims.
	const preamble = 10 // magic, version, uint16 header length
	switch {
	case len(b) < preamble || string(b[:6]) != "\x93NUMPY":
		return nil, nil, fail("not an npy file (no \\x93NUMPY magic and version)")
	case b[6] != 1 || b[7] != 0:
		return nil, nil, fail("npy format version %d.%d, want 1.0", b[6], b[7])
	}
	hl := int(binary.LittleEndian.Uint16(b[8:10]))
	if preamble+hl > len(b) || hl == 0 || b[preamble+hl-1] != '\n' {
		return nil, nil, fail("header of %d bytes in a file of %d: want a dict ending in a newline within the file", hl, len(b))
	}
	br := bytes.NewReader(b)
	r, err := npyio.NewReader(br)
	if err != nil {
		return nil, nil, fail("not a readable npy file: %v", err)
	}
	h := r.Header
	if got, want := strings.Trim(h.Descr.Type, `'"`), npyDescr[T](); got != want {
		return nil, nil, fail("descr %s, want %s", h.Descr.Type, want)
	}
	if h.Descr.Fortran {
		return nil, nil, fail("fortran_order is True, want C order")
	}
	shape = h.Descr.Shape
	if len(shape) == 0 {
		return nil, nil, fail("a scalar (shape ()), want an array")
	}
	size := 1 // element size is 1 or 8: count bytes without overflow
	if npyDescr[T]() == "<f8" {
		size = 8
	}
	n := 1
	for _, d := range shape {
		if d < 0 {
			return nil, nil, fail("shape %v has a negative dimension", shape)
		}
		if d != 0 && n > br.Len()/size/d {
			return nil, nil, fail("shape %v needs more than the %d data bytes present", shape, br.Len())
		}
		n *= d
	}
	if br.Len() != n*size {
		return nil, nil, fail("%d data bytes, shape %v of %s needs %d", br.Len(), shape, npyDescr[T](), n*size)
	}
	data = make([]T, n)
	if n == 0 {
		return shape, data, nil
	}
	var elems any = &data
	if err := r.Read(elems); err != nil {
		return nil, nil, fail("reading the data: %v", err)
	}
	return shape, data, nil
}
