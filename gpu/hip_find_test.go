package gpu

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/ebitengine/purego"
)

// The HIP runtime search (hip_find.go) against fake ROCm trees made of
// empty files (each a "cannot load" candidate) and, where it is installed,
// Debian's ROCm 5.2 libamdhip64.so.5, the one real runtime here.

const debianHIP = "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5"

// debianHIPInstalled skips a test that needs the real ROCm 5 runtime. It
// loads it once by its own path, so the loader's record of it is that
// path and not a fake tree's link to it, and holds it loaded.
func debianHIPInstalled(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(debianHIP); err != nil {
		t.Skipf("%s not installed", debianHIP)
	}
	debianHIPOnce.Do(func() { _, debianHIPErr = purego.Dlopen(debianHIP, purego.RTLD_NOW|purego.RTLD_GLOBAL) })
	if debianHIPErr != nil {
		t.Skipf("%s: %v", debianHIP, debianHIPErr)
	}
}

var (
	debianHIPOnce sync.Once
	debianHIPErr  error
)

// rel strips root from every path of ps (for comparing lists).
func rel(root string, ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = strings.TrimPrefix(p, root)
	}
	return out
}

func TestHIPCandidates(t *testing.T) {
	root := fakeTree(t, map[string]string{
		"env/lib/libamdhip64.so.6":              "",
		"env/lib/libamdhip64.so.5":              "",
		"opt/rocm-6.10.0/lib/libamdhip64.so.7":  "",
		"opt/rocm-6.10.0/lib/libamdhip64.so":    "libamdhip64.so.7", // the same file: listed once
		"opt/rocm-6.10.0/lib/libamdhip64.so.5":  "",
		"opt/rocm-6.9.1/lib/libamdhip64.so.6":   "",
		"opt/rocm-6.4.0/lib/":                   "",
		"opt/rocm-5.7.1/lib/libamdhip64.so.5":   "",
		"opt/rocm-5.7.1/lib/libamdhip64.so.6.x": "", // not a name searched for
	})
	// /opt/rocm is a link to the newest install: searched once, by that name.
	if err := os.Symlink(filepath.Join(root, "opt/rocm-6.10.0"), filepath.Join(root, "opt/rocm")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, env, rocmPath string
		want                []string
	}{
		{"ROCM_PATH, /opt/rocm, then /opt/rocm-* newest first, then the loader", "", "/env", []string{
			"/env/lib/libamdhip64.so.6", "/env/lib/libamdhip64.so.5",
			"/opt/rocm/lib/libamdhip64.so.7", "/opt/rocm/lib/libamdhip64.so.5",
			"/opt/rocm-6.9.1/lib/libamdhip64.so.6",
			"/opt/rocm-5.7.1/lib/libamdhip64.so.5",
			"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so", "libamdhip64.so.5",
		}},
		{"the override first", "/x/libamdhip64.so.9", "", []string{
			"/x/libamdhip64.so.9",
			"/opt/rocm/lib/libamdhip64.so.7", "/opt/rocm/lib/libamdhip64.so.5",
			"/opt/rocm-6.9.1/lib/libamdhip64.so.6",
			"/opt/rocm-5.7.1/lib/libamdhip64.so.5",
			"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so", "libamdhip64.so.5",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(HIPEnv, c.env)
			rp := ""
			if c.rocmPath != "" {
				rp = root + c.rocmPath
			}
			t.Setenv("ROCM_PATH", rp)
			cands, notes := hipCandidates()
			if got := rel(root, cands); !reflect.DeepEqual(got, c.want) {
				t.Errorf("candidates\n got %q\nwant %q", got, c.want)
			}
			wantNote := root + "/opt/rocm-6.4.0/lib: none of libamdhip64.so.7, libamdhip64.so.6, libamdhip64.so, libamdhip64.so.5"
			if !reflect.DeepEqual(notes, []string{wantNote}) {
				t.Errorf("notes %q", notes)
			}
		})
	}
	t.Run("no ROCm install", func(t *testing.T) {
		fakeTree(t, nil)
		t.Setenv(HIPEnv, "")
		t.Setenv("ROCM_PATH", "")
		cands, notes := hipCandidates()
		if !reflect.DeepEqual(cands, HIPLibraries) {
			t.Errorf("candidates %q", cands)
		}
		if len(notes) != 2 || !strings.HasSuffix(notes[0], "/opt/rocm/lib: no such directory") || !strings.HasSuffix(notes[1], "/opt/rocm-*/lib: no match") {
			t.Errorf("notes %q", notes)
		}
	})
}

// The choice of order over candidate paths and their versions.
func TestHIPTryOrder(t *testing.T) {
	v := func(n ...int) []int { return n }
	paths := func(cs []hipCand) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.path)
		}
		return out
	}
	for _, c := range []struct {
		name        string
		in          []hipCand
		first, rest []string
	}{
		{"stale ROCm 5 ahead of .6", []hipCand{
			{path: "/opt/rocm-5.7.1/lib/libamdhip64.so.5", ver: v(5, 7, 31921)},
			{path: "/opt/rocm-6.4.0/lib/libamdhip64.so.6", ver: v(6, 4, 60400)},
		}, []string{"/opt/rocm-6.4.0/lib/libamdhip64.so.6"}, []string{"/opt/rocm-5.7.1/lib/libamdhip64.so.5"}},
		{"only older ones: newest first", []hipCand{
			{path: "a/libamdhip64.so.5", ver: v(5, 2, 21153)},
			{path: "b/libamdhip64.so.5", ver: v(5, 7, 31921)},
			{path: "libamdhip64.so.5", ver: v(5)},
		}, nil, []string{"b/libamdhip64.so.5", "a/libamdhip64.so.5", "libamdhip64.so.5"}},
		{"unknown version keeps its place", []hipCand{
			{path: "libamdhip64.so.7", ver: v(7)},
			{path: "libamdhip64.so", ver: nil},
			{path: "libamdhip64.so.5", ver: v(5)},
		}, []string{"libamdhip64.so.7", "libamdhip64.so"}, []string{"libamdhip64.so.5"}},
		{"the override is not deferred", []hipCand{
			{path: "/x/libamdhip64.so.5", ver: v(5, 2), env: true},
			{path: "libamdhip64.so.6", ver: v(6)},
		}, []string{"/x/libamdhip64.so.5", "libamdhip64.so.6"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			first, rest := hipTryOrder(c.in)
			if !reflect.DeepEqual(paths(first), c.first) || !reflect.DeepEqual(paths(rest), c.rest) {
				t.Errorf("got %q then %q, want %q then %q", paths(first), paths(rest), c.first, c.rest)
			}
		})
	}
}

// Every candidate fails: the error has one entry per candidate, in list
// order, each with its reason, then the notes.
func TestHIPSearchErrorListsEveryCandidate(t *testing.T) {
	root := fakeTree(t, map[string]string{
		"opt/rocm-5.7.1/lib/libamdhip64.so.5": "",
		"opt/rocm-6.4.0/lib/libamdhip64.so.6": "",
		"opt/rocm-6.4.0/lib/libamdhip64.so":   "libamdhip64.so.6",
	})
	t.Setenv("ROCM_PATH", "")
	t.Setenv(HIPEnv, "")
	cands, notes := hipCandidates()
	cands = slicesWithout(cands, HIPLibraries) // the loader's path would find Debian's runtime
	_, err := loadHIPCands(hipCands(cands, ""), notes)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got %T %v", err, err)
	}
	t.Logf("%v", err)
	want := []string{
		root + "/opt/rocm-6.4.0/lib/libamdhip64.so.6: cannot load: ",
		root + "/opt/rocm-5.7.1/lib/libamdhip64.so.5: cannot load: ",
		root + "/opt/rocm/lib: no such directory",
	}
	if e.Lib != hipLibName || len(e.Tried) != len(want) {
		t.Fatalf("Lib %q, entries %q", e.Lib, e.Tried)
	}
	for i, w := range want {
		if !strings.HasPrefix(e.Tried[i], w) {
			t.Errorf("entry %d = %q, want %q…", i, e.Tried[i], w)
		}
	}
}

func slicesWithout(ps, drop []string) []string {
	var out []string
	for _, p := range ps {
		if !strings.Contains(strings.Join(drop, "\x00")+"\x00", p+"\x00") {
			out = append(out, p)
		}
	}
	return out
}

// A real ROCm 5 runtime ahead of a ROCm 6 candidate: the ROCm 6 one is
// tried first; when it fails, the ROCm 5 one is used and says why.
func TestHIPStaleRuntimeDoesNotHideNewer(t *testing.T) {
	debianHIPInstalled(t)
	root := fakeTree(t, map[string]string{
		"rocm5/lib/libamdhip64.so.5":          debianHIP,
		"opt/rocm-6.4.0/lib/libamdhip64.so.6": "",
	})
	t.Setenv("ROCM_PATH", root+"/rocm5")
	t.Setenv(HIPEnv, "")
	cands, notes := hipCandidates()
	if len(cands) < 2 || cands[0] != root+"/rocm5/lib/libamdhip64.so.5" || cands[1] != root+"/opt/rocm-6.4.0/lib/libamdhip64.so.6" {
		t.Fatalf("candidates %q", cands)
	}
	l, err := loadHIPCands(hipCands(cands, ""), notes)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("bound %s (%s); tried before: %q; note: %s", l.path, l.file, l.tried, l.note)
	if len(l.tried) == 0 || !strings.HasPrefix(l.tried[0], root+"/opt/rocm-6.4.0/lib/libamdhip64.so.6: cannot load: ") {
		t.Errorf("the ROCm 6 candidate was not tried first: %q", l.tried)
	}
	if !strings.HasSuffix(l.path, "libamdhip64.so.5") || !strings.Contains(l.note, "older than 6") {
		t.Errorf("bound %s, note %q", l.path, l.note)
	}
	if v := sonameVersion(l.file); len(v) == 0 || v[0] != 5 {
		t.Errorf("file %q", l.file)
	}
}

// A bare name whose file turns out older than ROCm 6 once the loader has
// resolved it is passed over for the rest, then used when nothing newer
// loads.
func TestHIPResolvedStaleIsRequeued(t *testing.T) {
	debianHIPInstalled(t)
	fakeTree(t, map[string]string{"opt/rocm-6.4.0/lib/libamdhip64.so.6": ""})
	six := sysRoot + "/opt/rocm-6.4.0/lib/libamdhip64.so.6"
	// The bare name's version is unknown until it is loaded (as for
	// "libamdhip64.so" through the loader's path).
	l, err := loadHIPCands([]hipCand{{path: "libamdhip64.so.5"}, {path: six, ver: []int{6}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tried %q, then bound %s: %s", l.tried, l.path, l.note)
	if len(l.tried) != 2 || !strings.Contains(l.tried[0], "older than 6; tried after the others") || !strings.HasPrefix(l.tried[1], six+": cannot load") {
		t.Errorf("tried %q", l.tried)
	}
	if l.path != "libamdhip64.so.5" || l.hipInit == nil {
		t.Errorf("bound %s", l.path)
	}
}

// The override is used even when it is older than ROCm 6, and says so.
func TestHIPOverride(t *testing.T) {
	debianHIPInstalled(t)
	fakeTree(t, map[string]string{"opt/rocm-6.4.0/lib/libamdhip64.so.6": ""})
	t.Setenv(HIPEnv, debianHIP)
	t.Setenv("ROCM_PATH", "")
	l, err := findHIP()
	if err != nil {
		t.Fatal(err)
	}
	if l.path != debianHIP || len(l.tried) != 0 || !strings.Contains(l.note, "chosen by "+HIPEnv) {
		t.Errorf("bound %s, tried %q, note %q", l.path, l.tried, l.note)
	}
	if hipLoaded.Load() != l {
		t.Error("findHIP did not record the runtime it bound")
	}
}
