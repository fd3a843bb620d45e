package gpu

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Helpers of the library search: where the system directories are, how
// versions in file and directory names compare, and which file a loaded
// handle came from.

// sysRoot is prefixed to every fixed system directory the searches look
// in (/opt/rocm, /usr/local/cuda-*, /usr/lib64, …). It is "" in use; tests
// point it at a fake tree under t.TempDir(). Directories that come from
// the environment ($ROCM_PATH, $CUDA_HOME, $VIRTUAL_ENV, $HOME) are taken
// as they are.
var sysRoot = ""

// sysPath is p (an absolute system path) under sysRoot.
func sysPath(p string) string { return sysRoot + p }

// realPath is p with its symlinks resolved, or p itself where it cannot be
// resolved (it does not exist, or is a bare name for the dynamic loader).
func realPath(p string) string {
	if !strings.Contains(p, "/") {
		return p
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// versionCompare orders names with embedded version numbers: runs of
// digits compare as numbers ("12.10" after "12.9", "python3.12" after
// "python3.9"), everything else byte-wise, and a name that is a prefix of
// another comes first ("libx.so" before "libx.so.1").
func versionCompare(a, b string) int {
	for a != "" && b != "" {
		ra, restA := splitRun(a)
		rb, restB := splitRun(b)
		if c := compareRun(ra, rb); c != 0 {
			return c
		}
		a, b = restA, restB
	}
	switch {
	case a == "" && b == "":
		return 0
	case a == "":
		return -1
	}
	return 1
}

// splitRun splits s after its leading run of digits or of non-digits.
func splitRun(s string) (run, rest string) {
	digit := isDigit(s[0])
	i := 1
	for i < len(s) && isDigit(s[i]) == digit {
		i++
	}
	return s[:i], s[i:]
}

func compareRun(a, b string) int {
	if isDigit(a[0]) && isDigit(b[0]) {
		a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
		if len(a) != len(b) {
			return len(a) - len(b)
		}
	}
	return strings.Compare(a, b)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// newestFirst sorts names by versionCompare, highest first.
func newestFirst(names []string) {
	slices.SortStableFunc(names, func(a, b string) int { return versionCompare(b, a) })
}

// globNewestFirst is filepath.Glob's matches of pattern, newest first.
func globNewestFirst(pattern string) []string {
	m, _ := filepath.Glob(pattern)
	newestFirst(m)
	return m
}

// sonameVersion is the version a shared library's file name carries after
// ".so.": "libamdhip64.so.6.4.60400" → [6 4 60400], "libamdhip64.so.5" →
// [5]; nil for a bare ".so" or a name without a numeric version.
func sonameVersion(name string) []int {
	base := filepath.Base(name)
	i := strings.LastIndex(base, ".so.")
	if i < 0 {
		return nil
	}
	var v []int
	for _, f := range strings.Split(base[i+len(".so."):], ".") {
		n, err := strconv.Atoi(f)
		if err != nil {
			break
		}
		v = append(v, n)
	}
	return v
}

// dirVersion is the version a directory's name carries after its last
// "-": "/opt/rocm-6.4.1" → [6 4 1]; nil where there is none.
func dirVersion(dir string) []int {
	base := filepath.Base(dir)
	i := strings.LastIndexByte(base, '-')
	if i < 0 {
		return nil
	}
	var v []int
	for _, f := range strings.Split(base[i+1:], ".") {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil
		}
		v = append(v, n)
	}
	return v
}

// versionString formats a version as "6.4.60400" ("" for nil).
func versionString(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ".")
}

// compareVersions compares two versions component by component; a missing
// component counts as lower ([6] < [6 0]).
func compareVersions(a, b []int) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] - b[i]
		}
	}
	return len(a) - len(b)
}

// existingDirs keeps the directories of dirs that exist, dropping those
// that resolve (symlinks followed) to one already kept, and notes each
// that does not exist.
func existingDirs(dirs []string) (kept, notes []string) {
	seen := map[string]bool{}
	for _, d := range dirs {
		st, err := os.Stat(d)
		if err != nil || !st.IsDir() {
			notes = append(notes, d+": no such directory")
			continue
		}
		if r := realPath(d); !seen[r] {
			seen[r] = true
			kept = append(kept, d)
		}
	}
	return kept, notes
}

// ---- the file behind a handle ----

// The dynamic loader's own record of a loaded object, read with glibc's
// dlinfo (libc.so.6 from glibc 2.34, libdl.so.2 before). libc is not a
// vendor library and is already loaded, so it is bound directly rather
// than through loadLib, whose callers use loadedFile.
var (
	dlinfoOnce sync.Once
	// int dlinfo(void *handle, int request, void *arg);  (<dlfcn.h>, glibc)
	dlinfo func(handle uintptr, request int32, arg unsafe.Pointer) int32
)

// rtldDILinkmap is RTLD_DI_LINKMAP (<dlfcn.h>): arg is a struct link_map**.
const rtldDILinkmap = 2

// linkMapNameOffset is the offset of l_name in struct link_map (<link.h>:
// ElfW(Addr) l_addr; char *l_name; …), the absolute file name the object
// was found in.
const linkMapNameOffset = unsafe.Sizeof(uintptr(0))

func bindDlinfo() {
	for _, name := range []string{"libc.so.6", "libdl.so.2"} {
		h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			continue
		}
		if addr, err := purego.Dlsym(h, "dlinfo"); err == nil && addr != 0 {
			purego.RegisterFunc(&dlinfo, addr)
			return
		}
	}
}

// loadedFile is the file the dynamic loader mapped for handle h (dlopened
// by path), symlinks resolved: for a bare name, the file its search found.
// The loader records the name an object was first loaded by; where that
// no longer resolves (a link since removed), or dlinfo is unavailable, it
// falls back to path's own resolution.
func loadedFile(h uintptr, path string) string {
	dlinfoOnce.Do(bindDlinfo)
	var name string
	if dlinfo != nil {
		var lm uintptr
		if dlinfo(h, rtldDILinkmap, unsafe.Pointer(&lm)) == 0 && lm != 0 {
			name = cString(*(*uintptr)(ptrAt(lm + linkMapNameOffset)))
		}
	}
	if name != "" {
		if r, err := filepath.EvalSymlinks(name); err == nil {
			return r
		}
	}
	if strings.Contains(path, "/") {
		return realPath(path)
	}
	return name
}
