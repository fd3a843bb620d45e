package gpu

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
)

// Finding the HIP runtime (libamdhip64).
//
// Order: the file in HIPEnv; then, in each ROCm install's lib directory
// ($ROCM_PATH/lib, /opt/rocm/lib, /opt/rocm-*/lib newest version first),
// the names of HIPLibraries that exist there; then HIPLibraries through
// the dynamic loader's search path. A directory that resolves to one
// already searched (/opt/rocm is usually a link to /opt/rocm-X.Y.Z), and a
// file that resolves to one already listed, is not listed again.
//
// A runtime older than ROCm 6 (its file's soname version, symlinks
// resolved, below hipMinMajor) does not hide a newer one further down the
// list: such candidates are tried only after every other one failed, the
// newest first, and the Device's Info.Driver says so when one is used. A
// bare name is checked once the loader has resolved it, before anything is
// bound. The file in HIPEnv is used whatever its version.
//
// The version comes from the file name, not from hipRuntimeGetVersion:
// that call runs the runtime's one-time initialisation (clr
// hipamd/src/hip_context.cpp: HIP_INIT_API_NO_RETURN, whose HIP_INIT runs
// hip::init once, which initialises the runtime and creates its context
// over every device), which a candidate that may be passed over must not
// do, nor Probe. The runtime's build names its file
// libamdhip64.so.MAJOR.MINOR.PATCH with soname libamdhip64.so.MAJOR, MAJOR
// being HIP_VERSION_MAJOR (clr hipamd/src/CMakeLists.txt: VERSION
// ${HIP_LIB_VERSION_STRING}, SOVERSION ${HIP_LIB_VERSION_MAJOR}).

// HIPEnv names the variable holding a full path to libamdhip64, tried
// before anything else and used whatever its version.
const HIPEnv = "PARHARNESS_AMDHIP64"

// HIPLibraries are the HIP runtime's names in the order tried, in each
// ROCm lib directory and then through the dynamic loader's search path:
// the sonames of ROCm 7 and 6, the unversioned name (a development link to
// whichever is installed), then ROCm 5's soname.
var HIPLibraries = []string{"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so", "libamdhip64.so.5"}

// hipMinMajor is the oldest HIP major version the search prefers.
const hipMinMajor = 6

// hipLoaded is the HIP runtime the last successful search bound (by
// findHIP): hipBLASLt is looked for beside it and must come from the same
// ROCm install.
var hipLoaded atomic.Pointer[hipLib]

// rocmLibDirs lists the ROCm lib directories searched, in order, and a
// note for each that does not exist.
func rocmLibDirs() (dirs, notes []string) {
	var want []string
	if r := os.Getenv("ROCM_PATH"); r != "" {
		want = append(want, filepath.Join(r, "lib"))
	}
	want = append(want, sysPath("/opt/rocm/lib"))
	pat := sysPath("/opt/rocm-*")
	versioned := globNewestFirst(pat)
	for _, d := range versioned {
		want = append(want, filepath.Join(d, "lib"))
	}
	dirs, notes = existingDirs(want)
	if len(versioned) == 0 {
		notes = append(notes, pat+"/lib: no match")
	}
	return dirs, notes
}

// hipCandidates lists the HIP runtime candidates in search order (see the
// top of this file) and a note for each place searched that held none.
func hipCandidates() (cands, notes []string) {
	seen := map[string]bool{}
	add := func(p string) {
		if r := realPath(p); !seen[r] {
			seen[r] = true
			cands = append(cands, p)
		}
	}
	if p := os.Getenv(HIPEnv); p != "" {
		add(p)
	}
	dirs, notes := rocmLibDirs()
	for _, d := range dirs {
		found := false
		for _, name := range HIPLibraries {
			p := filepath.Join(d, name)
			if _, err := os.Lstat(p); err == nil {
				found = true
				add(p)
			}
		}
		if !found {
			notes = append(notes, d+": none of "+strings.Join(HIPLibraries, ", "))
		}
	}
	for _, name := range HIPLibraries {
		add(name)
	}
	return cands, notes
}

// hipCand is one HIP runtime candidate.
type hipCand struct {
	path string
	ver  []int // the version of its file name, symlinks resolved; nil: unknown
	env  bool  // given by HIPEnv: used whatever its version
}

// hipCands describes paths as candidates; envPath marks the one HIPEnv gave.
func hipCands(paths []string, envPath string) []hipCand {
	cs := make([]hipCand, len(paths))
	for i, p := range paths {
		cs[i] = hipCand{path: p, ver: sonameVersion(realPath(p)), env: envPath != "" && p == envPath}
	}
	return cs
}

// older reports whether c's file name says it is older than hipMinMajor.
func (c hipCand) older() bool { return !c.env && len(c.ver) > 0 && c.ver[0] < hipMinMajor }

// hipTryOrder is the order candidates are tried in: first, in list order,
// every one not known to be older than ROCm 6 (the HIPEnv file, ROCm 6 and
// later, and those whose file name has no version); then the older ones,
// newest first (list order among equal versions).
func hipTryOrder(cs []hipCand) (first, older []hipCand) {
	for _, c := range cs {
		if c.older() {
			older = append(older, c)
		} else {
			first = append(first, c)
		}
	}
	sortOlder(older)
	return first, older
}

func sortOlder(cs []hipCand) {
	slices.SortStableFunc(cs, func(a, b hipCand) int { return compareVersions(b.ver, a.ver) })
}

// olderThanNote is the line a runtime older than ROCm 6 carries in
// Info.Driver, the search report and the error entries.
func olderThanNote(ver []int) string {
	return fmt.Sprintf("HIP %s is older than %d", versionString(ver), hipMinMajor)
}

// findHIP searches for the HIP runtime (HIPEnv, the ROCm installs, the
// loader's path) and records what it bound in hipLoaded.
func findHIP() (*hipLib, error) {
	paths, notes := hipCandidates()
	l, err := loadHIPCands(hipCands(paths, os.Getenv(HIPEnv)), notes)
	if err == nil {
		hipLoaded.Store(l)
	}
	return l, err
}

// loadHIP binds the first of names that is a HIP runtime with every
// required symbol, preferring ROCm 6+ as findHIP does.
func loadHIP(names []string) (*hipLib, error) { return loadHIPCands(hipCands(names, ""), nil) }

// loadHIPCands tries cs in hipTryOrder and binds the first that loads with
// every required symbol. A candidate that turns out older than ROCm 6
// once the loader has resolved it is closed again and tried with the older
// ones. The error of a failed search is an *Error with one "PATH: why"
// entry per candidate, in list order, then notes.
func loadHIPCands(cs []hipCand, notes []string) (*hipLib, error) {
	first, older := hipTryOrder(cs)
	outcome := map[string]string{}
	var tried []string
	l := &hipLib{}
	for _, c := range first {
		spec := l.spec()
		var resolved []int
		if !c.env {
			spec.check = func(file string) string {
				if v := sonameVersion(file); len(v) > 0 && v[0] < hipMinMajor {
					resolved = v
					return file + ": " + olderThanNote(v) + "; tried after the others"
				}
				return ""
			}
		}
		lib, why := bindLib(c.path, spec)
		if lib != nil {
			l.library, l.tried = lib, tried
			if v := sonameVersion(lib.file); c.env && len(v) > 0 && v[0] < hipMinMajor {
				l.note = olderThanNote(v) + ", chosen by " + HIPEnv
			}
			return l, nil
		}
		outcome[c.path] = why
		tried = append(tried, c.path+": "+why)
		if resolved != nil {
			older = append(older, hipCand{path: c.path, ver: resolved})
			sortOlder(older)
		}
	}
	for _, c := range older {
		lib, why := bindLib(c.path, l.spec())
		if lib != nil {
			l.library, l.tried = lib, tried
			v := sonameVersion(lib.file)
			if v == nil {
				v = c.ver
			}
			l.note = olderThanNote(v) + ": no HIP " + fmt.Sprint(hipMinMajor) + "+ runtime found"
			return l, nil
		}
		outcome[c.path] = why
		tried = append(tried, c.path+": "+why)
	}
	e := &Error{Lib: hipLibName}
	for _, c := range cs {
		e.Tried = append(e.Tried, c.path+": "+outcome[c.path])
	}
	e.Tried = append(e.Tried, notes...)
	return nil, e
}
