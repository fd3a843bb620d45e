package gpu

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fakeTree makes files (empty, or symlinks where target is set) under a
// temporary root and points sysRoot at it for the test.
func fakeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for rel, target := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case strings.HasSuffix(rel, "/"):
			err = os.MkdirAll(p, 0o755)
		case target == "":
			err = writeEmpty(p)
		default:
			err = os.Symlink(target, p)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	old := sysRoot
	sysRoot = root
	t.Cleanup(func() { sysRoot = old })
	return root
}

func TestVersionOrder(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []string
		want []string
	}{
		{"numeric not lexical", []string{"/opt/rocm-6.9.1", "/opt/rocm-6.10.0", "/opt/rocm-6.4"},
			[]string{"/opt/rocm-6.10.0", "/opt/rocm-6.9.1", "/opt/rocm-6.4"}},
		{"longer version first", []string{"libx.so", "libx.so.1", "libx.so.1.2.0", "libx.so.0"},
			[]string{"libx.so.1.2.0", "libx.so.1", "libx.so.0", "libx.so"}},
		{"python dirs", []string{"python3.9", "python3.12", "python3.10"},
			[]string{"python3.12", "python3.10", "python3.9"}},
		{"leading zeros", []string{"a-07", "a-10", "a-8"}, []string{"a-10", "a-8", "a-07"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := append([]string(nil), c.in...)
			newestFirst(got)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("newestFirst(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestSonameAndDirVersion(t *testing.T) {
	for _, c := range []struct {
		name string
		got  []int
		want []int
	}{
		{"full soname", sonameVersion("/opt/rocm-6.4.0/lib/libamdhip64.so.6.4.60400"), []int{6, 4, 60400}},
		{"major only", sonameVersion("libamdhip64.so.5"), []int{5}},
		{"bare so", sonameVersion("/opt/rocm/lib/libamdhip64.so"), nil},
		{"rocm dir", dirVersion("/opt/rocm-6.4.1"), []int{6, 4, 1}},
		{"cuda dir", dirVersion("/usr/local/cuda-12.10"), []int{12, 10}},
		{"no version", dirVersion("/opt/rocm"), nil},
		{"not numeric", dirVersion("/opt/rocm-latest"), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !reflect.DeepEqual(c.got, c.want) {
				t.Errorf("got %v, want %v", c.got, c.want)
			}
		})
	}
	if compareVersions([]int{6}, []int{6, 0}) >= 0 || compareVersions([]int{5, 7}, []int{5, 2, 9}) <= 0 {
		t.Error("compareVersions order")
	}
}

// The file behind a handle, for a bare name the dynamic loader resolved.
func TestLoadedFile(t *testing.T) {
	var strlen func(s *byte) uintptr
	l, err := loadLib(libSpec{lib: "test libc", names: []string{"libc.so.6"}, syms: []symbol{{"strlen", &strlen, false}}})
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(l.file) || !strings.Contains(filepath.Base(l.file), "libc") {
		t.Errorf("libc.so.6 resolved to %q", l.file)
	}
	if _, err := os.Stat(l.file); err != nil {
		t.Error(err)
	}
	t.Logf("libc.so.6 is %s", l.file)
}

// check refuses a path before it is opened and a bare name once resolved,
// and the search goes on.
func TestLoadLibCheck(t *testing.T) {
	var strlen func(s *byte) uintptr
	root := fakeTree(t, map[string]string{"lib/libfake.so.1": ""})
	fake := filepath.Join(root, "lib/libfake.so.1")
	var checked []string
	spec := libSpec{
		lib:   "test libc",
		names: []string{fake, "libc.so.6"},
		syms:  []symbol{{"strlen", &strlen, false}},
		check: func(file string) string {
			checked = append(checked, file)
			return "refused " + filepath.Base(file)
		},
	}
	_, err := loadLib(spec)
	var e *Error
	if !errors.As(err, &e) || len(e.Tried) != 2 {
		t.Fatalf("got %v", err)
	}
	if e.Tried[0] != fake+": refused libfake.so.1" {
		t.Errorf("path entry %q", e.Tried[0])
	}
	if !strings.HasPrefix(e.Tried[1], "libc.so.6: refused libc") {
		t.Errorf("bare-name entry %q", e.Tried[1])
	}
	if strlen != nil {
		t.Error("a refused library bound a variable")
	}
	// Without the check the empty file is a "cannot load" entry.
	spec.check = nil
	spec.names = []string{fake}
	_, err = loadLib(spec)
	if !errors.As(err, &e) || len(e.Tried) != 1 || !strings.HasPrefix(e.Tried[0], fake+": cannot load: ") {
		t.Errorf("empty file: %v", err)
	}
}
