package gpu

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
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

// libCandidates lists what to dlopen, in order: the path in env (if set),
// the plain names, then every match of each glob (descending, so the
// newest version comes first and a bare ".so" link last), without
// repeats; and a "PATTERN: no match" note for each glob that matched
// nothing, so an error can name it too.
func libCandidates(env string, names, globs []string) (cands []string, noMatch []string) {
	if p := os.Getenv(env); p != "" {
		cands = append(cands, p)
	}
	cands = append(cands, names...)
	seen := map[string]bool{}
	for _, c := range cands {
		seen[c] = true
	}
	for _, pat := range globs {
		m, _ := filepath.Glob(pat)
		if len(m) == 0 {
			noMatch = append(noMatch, pat+": no match")
			continue
		}
		sort.Sort(sort.Reverse(sort.StringSlice(m)))
		for _, p := range m {
			if !seen[p] {
				seen[p] = true
				cands = append(cands, p)
			}
		}
	}
	return cands, noMatch
}

// loadVendorLib dlopens (RTLD_GLOBAL, with dlopenGlobal's missing-sibling
// retry) the first candidate that loads and whose symbols bind resolves;
// the error is an *Error naming every path tried and why, plus the globs
// that matched nothing.
func loadVendorLib(name string, cands, noMatch []string, bind func(*library) error) (*library, error) {
	le := &Error{Lib: name}
	for _, p := range cands {
		h, err := dlopenGlobal(p, 0)
		if err != nil {
			le.Tried = append(le.Tried, fmt.Sprintf("%s: %v", p, err))
			continue
		}
		l := &library{handle: h, path: p}
		if err := bind(l); err != nil {
			le.Tried = append(le.Tried, err.Error())
			continue
		}
		return l, nil
	}
	le.Tried = append(le.Tried, noMatch...)
	return nil, le
}

// missingDepRE finds the library named in a dlerror text of the form
// "…: libX.so.N: cannot open shared object file: …".
var missingDepRE = regexp.MustCompile(`([^\s:/]+\.so[0-9.]*): cannot open shared object file`)

// missingDependency returns the name of the library whose absence made
// dlopen of self fail, or "" if the message is about self itself (or about
// something else: a bad ELF class, a version mismatch).
func missingDependency(dlerr, self string) string {
	m := missingDepRE.FindStringSubmatch(dlerr)
	if m == nil || m[1] == filepath.Base(self) {
		return ""
	}
	return m[1]
}

// dlopenGlobal dlopens path with RTLD_NOW|RTLD_GLOBAL. When it fails for a
// missing dependency and path is a file in a folder (a Python wheel's lib
// folder, say), the dependency is looked for beside it, loaded globally,
// and the load retried: the wheels' libraries find each other through
// their RPATH, which a copied or re-rooted tree can lose.
func dlopenGlobal(path string, depth int) (uintptr, error) {
	const flags = purego.RTLD_NOW | purego.RTLD_GLOBAL
	h, err := purego.Dlopen(path, flags)
	for tries := 0; err != nil && tries < 8; tries++ {
		dep := missingDependency(err.Error(), path)
		if dep == "" {
			return 0, err
		}
		if !strings.Contains(path, "/") || depth > 4 {
			return 0, fmt.Errorf("missing dependency %s: %v", dep, err)
		}
		sib := filepath.Join(filepath.Dir(path), dep)
		if _, serr := os.Stat(sib); serr != nil {
			return 0, fmt.Errorf("missing dependency %s (none beside it either): %v", dep, err)
		}
		if _, derr := dlopenGlobal(sib, depth+1); derr != nil {
			return 0, fmt.Errorf("missing dependency %s; the one beside it did not load: %v", dep, derr)
		}
		h, err = purego.Dlopen(path, flags)
	}
	return h, err
}
