package gpu

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/ebitengine/purego"
)

// Every library under gpu/ (the CUDA driver, the HIP runtime, cuBLASLt,
// hipBLASLt, NVML) is found and bound the same way: its binding describes
// it in a libSpec (name, env override, candidate names and globs or a
// candidate list, a check of the file, symbol table) and calls loadLib,
// which tries each candidate in order until one passes the check, loads
// and has every required symbol. The HIP runtime's search (hip_find.go)
// orders its candidates by version first and binds each with bindLib.

// library is a dlopen'ed vendor library and the path it came from.
type library struct {
	handle uintptr
	path   string // the name or path it was dlopened by
	file   string // the file the dynamic loader mapped, symlinks resolved ("" if unknown)
}

// symbol binds one C function to a Go function variable (a pointer to a
// package variable or a binding struct's field). An optional symbol may be
// missing; the code checks the variable for nil before calling it.
type symbol struct {
	name     string
	fn       any
	optional bool
}

// libSpec says how to find and bind one library.
type libSpec struct {
	lib   string   // the library's name in errors (Error.Lib)
	env   string   // a variable holding a full path, tried first ("": none)
	names []string // names for the dynamic loader's search path, in order
	globs []string // patterns tried last, each one's matches highest version first
	syms  []symbol // the symbol table
	// anyOf lists groups of optional symbols of which the library must
	// have at least one; a group it has none of is reported missing by
	// its last name.
	anyOf [][]string
	// list, when set, replaces env, names and globs: it returns the
	// candidates in order and a note for each place that held none.
	list func() (cands, notes []string)
	// check, when set, may refuse a candidate by the file it is (symlinks
	// resolved), returning why. It runs before dlopen for a candidate
	// given as a path, and after dlopen, before any symbol is bound, for
	// a bare name the dynamic loader resolved.
	check func(file string) string
}

// candidates lists what loadLib tries, in order, and a note for each
// place that held none ("PATTERN: no match" for a glob; see
// libCandidates).
func (s libSpec) candidates() (cands, noMatch []string) {
	if s.list != nil {
		return s.list()
	}
	return libCandidates(s.env, s.names, s.globs)
}

// loadLib loads the first of s's candidates that dlopens and has every
// required symbol, and binds its symbol table. A candidate that loads but
// lacks a symbol is closed again and the search goes on. When none
// qualifies, the error is an *Error with Lib = s.lib and Tried = one
// "PATH: why" per candidate (a missing file, a missing dependency, the
// missing symbols by name, the check's refusal), then the notes for the
// places that held no candidate.
func loadLib(s libSpec) (*library, error) {
	cands, noMatch := s.candidates()
	e := &Error{Lib: s.lib}
	for _, p := range cands {
		l, why := bindLib(p, s)
		if l != nil {
			return l, nil
		}
		e.Tried = append(e.Tried, p+": "+why)
	}
	e.Tried = append(e.Tried, noMatch...)
	return nil, e
}

// bindLib dlopens path (dlopenGlobal) and binds s's symbols, or says why
// not. Every symbol is looked up before any is registered, so a library
// that lacks some is reported by all the names it lacks and leaves no
// function variable half-bound (purego.RegisterLibFunc would panic on the
// first instead); it is closed again, which is safe as nothing in it has
// run, and keeps its exports out of the global namespace the next
// candidate loads into. s.check refuses a path before it is opened, and a
// bare name once the loader has resolved it, before anything is bound.
func bindLib(path string, s libSpec) (*library, string) {
	isPath := strings.Contains(path, "/")
	if isPath && s.check != nil {
		if why := s.check(realPath(path)); why != "" {
			return nil, why
		}
	}
	h, err := dlopenGlobal(path, 0)
	if err != nil {
		// dlerror texts usually start with the path; the caller adds it.
		return nil, "cannot load: " + strings.TrimPrefix(err.Error(), path+": ")
	}
	addrs := make(map[string]uintptr, len(s.syms))
	var missing []string
	for _, sym := range s.syms {
		addr, err := purego.Dlsym(h, sym.name)
		if err != nil || addr == 0 {
			if !sym.optional {
				missing = append(missing, sym.name)
			}
			continue
		}
		addrs[sym.name] = addr
	}
	for _, group := range s.anyOf {
		if !slices.ContainsFunc(group, func(n string) bool { return addrs[n] != 0 }) {
			missing = append(missing, group[len(group)-1])
		}
	}
	switch len(missing) {
	case 0:
	case 1:
		purego.Dlclose(h)
		return nil, "symbol " + missing[0] + " not found"
	default:
		purego.Dlclose(h)
		return nil, "symbols " + strings.Join(missing, ", ") + " not found"
	}
	file := loadedFile(h, path)
	if !isPath && s.check != nil && file != "" {
		if why := s.check(file); why != "" {
			purego.Dlclose(h)
			return nil, why
		}
	}
	for _, sym := range s.syms {
		if addr := addrs[sym.name]; addr != 0 {
			purego.RegisterFunc(sym.fn, addr)
		} else {
			// An optional symbol this library lacks: nil, whatever an
			// earlier load bound there.
			reflect.ValueOf(sym.fn).Elem().SetZero()
		}
	}
	return &library{handle: h, path: path, file: file}, ""
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
// the plain names, then every match of each glob (newest version first by
// versionCompare, so "cuda-12.10" comes before "cuda-12.9" and a bare ".so"
// link last), without repeats; and a "PATTERN: no match" note for each
// glob that matched nothing, so an error can name it too.
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
		newestFirst(m)
		for _, p := range m {
			if !seen[p] {
				seen[p] = true
				cands = append(cands, p)
			}
		}
	}
	return cands, noMatch
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
