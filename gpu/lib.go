package gpu

import (
	"fmt"
	"strings"

	"github.com/ebitengine/purego"
)

// library is a dlopen'ed driver library and the path it came from.
type library struct {
	handle uintptr
	path   string
}

// openFirst dlopens the first of names that loads; the error lists every
// path tried and why each failed.
func openFirst(names []string) (*library, error) {
	var why []string
	for _, n := range names {
		h, err := purego.Dlopen(n, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err == nil {
			return &library{handle: h, path: n}, nil
		}
		why = append(why, fmt.Sprintf("%s: %v", n, err))
	}
	return nil, fmt.Errorf("tried %s", strings.Join(why, "; "))
}

// symbol binds one C function to a Go function variable. A missing symbol
// is an error naming it (purego.RegisterLibFunc would panic instead).
type symbol struct {
	name     string
	fn       any
	optional bool
}

func (l *library) bind(syms []symbol) error {
	for _, s := range syms {
		addr, err := purego.Dlsym(l.handle, s.name)
		if err != nil || addr == 0 {
			if s.optional {
				continue
			}
			return fmt.Errorf("%s: symbol %s not found (driver too old?)", l.path, s.name)
		}
		purego.RegisterFunc(s.fn, addr)
	}
	return nil
}

// cString reads a NUL-terminated C string.
func cString(p uintptr) string {
	if p == 0 {
		return ""
	}
	var b []byte
	for i := uintptr(0); i < 4096; i++ {
		c := *(*byte)(ptrAt(p + i))
		if c == 0 {
			break
		}
		b = append(b, c)
	}
	return string(b)
}
