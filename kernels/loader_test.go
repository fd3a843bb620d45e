package kernels

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parharness/parharness/gpu"
)

// fakeDevice is a gpu.Device whose modules contain the symbols named in the
// image's ".entry NAME" lines: enough to test the loader's error paths
// without a GPU.
type fakeDevice struct {
	gpu.Device
	info gpu.Info
}

func (d *fakeDevice) Info() gpu.Info { return d.info }

type fakeModule map[string]bool
type fakeFunc string

func (f fakeFunc) Name() string                  { return string(f) }
func (f fakeFunc) Attrs() (gpu.FuncAttrs, error) { return gpu.FuncAttrs{}, nil }
func (m fakeModule) Unload() error               { return nil }
func (m fakeModule) Function(name string) (gpu.Function, error) {
	if !m[name] {
		return nil, &gpu.Error{Func: "cuModuleGetFunction", Code: 500, CodeName: "CUDA_ERROR_NOT_FOUND"}
	}
	return fakeFunc(name), nil
}

func (d *fakeDevice) LoadModule(img []byte) (gpu.Module, error) {
	if strings.Contains(string(img), "CORRUPT") {
		return nil, &gpu.Error{Func: "cuModuleLoadDataEx", Code: 218, CodeName: "CUDA_ERROR_INVALID_PTX"}
	}
	m := fakeModule{}
	for _, l := range strings.Split(string(img), "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == ".entry" {
			m[f[1]] = true
		}
	}
	return m, nil
}

func writePTX(t *testing.T, dir, module, body string) {
	t.Helper()
	p := ObjectPath(dir, "sm_90a", module)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoaderErrors(t *testing.T) {
	dev := &fakeDevice{info: gpu.Info{Arch: "sm_90"}}
	cases := []struct {
		name, body, want string
	}{
		{"missing", "", "is missing: run `make kernels`"},
		{"wrongarch", ".version 8.4\n.target sm_80\n.entry t_sweep\n", "is PTX for sm_80, but this device needs sm_90a"},
		{"corrupt", ".version 8.4\n.target sm_90a\nCORRUPT\n", "the driver refused it"},
		{"nosymbol", ".version 8.4\n.target sm_90a\n.entry other\n", "symbol not found"},
		{"elf", "\x7fELF....", "is an ELF code object, but this device (sm_90a) needs PTX"},
		{"ok", ".version 8.4\n.target sm_90a\n.entry t_sweep\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.name != "missing" {
				writePTX(t, dir, "tmod", c.body)
			}
			l := NewLoader(dir, dev)
			_, err := l.Function("t_sweep")
			if c.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans several lines: %q", err)
			}
			t.Logf("%s: %v", c.name, err)
		})
	}
	if _, err := NewLoader(t.TempDir(), dev).Function("no_such_kernel"); err == nil || !strings.Contains(err.Error(), "not registered") {
		t.Errorf("unregistered kernel: %v", err)
	}
}

// TestCheckArchELF checks the gfx target check against the code objects
// `make kernels` builds, when they exist (CI builds them first).
func TestCheckArchELF(t *testing.T) {
	img, err := os.ReadFile("../build/gfx1201/e4m3.co")
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("build/gfx1201/e4m3.co not built (run `make kernels`)")
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckArch(img, "gfx1201"); err != nil {
		t.Fatalf("gfx1201 object rejected: %v", err)
	}
	if err := CheckArch(img, "gfx1100"); err == nil || !strings.Contains(err.Error(), "is a code object for gfx1201, but this device is gfx1100") {
		t.Fatalf("wrong-arch ELF: %v", err)
	}
	if err := CheckArch(img, "sm_90a"); err == nil || !strings.Contains(err.Error(), "needs PTX") {
		t.Fatalf("ELF for a CUDA device: %v", err)
	}
	if err := CheckArch(img[:40], "gfx1201"); err == nil {
		t.Fatalf("truncated ELF accepted")
	}
}

// Test kernels: the loader and the launch check are tested on these (the
// real kernels register from their families; families/registry_test.go
// tests those).
func init() {
	for _, k := range []Kernel{
		{Name: "t_sweep", Module: "tmod"},
		{Name: "t_both", Module: "tmod"},
		{Name: "t_sm90_only", Module: "tmod", Targets: []string{SM90a}, MatrixOp: map[string]string{SM90a: "wgmma.mma_async"}},
		{Name: "t_readable", Module: "tprod"},
		{Name: "t_unreadable", Module: "tprod"},
		{Name: "t_absent", Module: "tprod"},
	} {
		k.Family, k.Op, k.Tag, k.Role, k.Doc = "test", k.Name, k.Name, Baseline, "a test kernel"
		Register(k)
	}
}

// Register refuses an incomplete contract, naming what is missing.
func TestRegisterValidates(t *testing.T) {
	ok := Kernel{Name: "t_v", Family: "test", Module: "m", Op: "o", Tag: "t", Role: Baseline, Doc: "d"}
	for _, c := range []struct {
		name string
		edit func(*Kernel)
		want string
	}{
		{"no family", func(k *Kernel) { k.Family = "" }, "required"},
		{"no tag", func(k *Kernel) { k.Tag = "" }, "required"},
		{"no role", func(k *Kernel) { k.Role = 0 }, "Role is not set"},
		{"empty M range", func(k *Kernel) { k.MinM, k.MaxM = 9, 8 }, "is empty"},
		{"unknown target", func(k *Kernel) { k.Targets = []string{"sm_80"} }, "not a code arch"},
		{"matrix op off target", func(k *Kernel) { k.Targets, k.MatrixOp = []string{SM90a}, map[string]string{GFX1201: "v_wmma"} }, "does not have it"},
		{"shared without the cap", func(k *Kernel) { k.Shared = 4096 }, "needs the dynshared cap"},
		{"negative shared", func(k *Kernel) { k.Shared, k.Caps = -1, DynShared }, "needs the dynshared cap"},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := ok
			c.edit(&k)
			if err := k.validate(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("validate: %v, want %q", err, c.want)
			}
		})
	}
	if err := ok.validate(); err != nil {
		t.Errorf("a complete row: %v", err)
	}
}

// Select orders baselines first and filters by every field of the query.
func TestSelect(t *testing.T) {
	for _, c := range []struct {
		q    Query
		want []string
	}{
		{Query{Family: "test", Op: "t_sm90_only"}, []string{"t_sm90_only"}},
		{Query{Family: "test", Op: "t_sm90_only", Arch: GFX1201}, nil},
		{Query{Family: "nope"}, nil},
	} {
		var got []string
		for _, k := range Select(c.q) {
			got = append(got, k.Name)
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("Select(%+v) = %v, want %v", c.q, got, c.want)
		}
	}
	if k := (Kernel{MinM: 9, MaxM: 16}); k.ServesM(8) || !k.ServesM(9) || !k.ServesM(16) || k.ServesM(17) {
		t.Errorf("ServesM: wrong range answers")
	}
	if k := (Kernel{Status: Experimental}); k.InSuite(false) || !k.InSuite(true) {
		t.Errorf("InSuite: an experimental kernel runs in the quick suite")
	}
}

// A kernel that exists for one code arch only is a typed, one-line error
// elsewhere (gates and benches SKIP it by errors.Is), before any code
// object is read; on its arch it loads like any other.
func TestLoaderOnlyArch(t *testing.T) {
	k := mustKernel(t, "t_sm90_only")
	if !k.ForArch("sm_90a") || k.ForArch("gfx1201") || !mustKernel(t, "t_both").ForArch("gfx1201") {
		t.Errorf("ForArch: wrong answers")
	}
	amd := &fakeDevice{info: gpu.Info{Arch: "gfx1201"}}
	_, err := NewLoader(t.TempDir(), amd).Function("t_sm90_only") // no code objects at all
	if !errors.Is(err, ErrNotForArch) || !strings.Contains(err.Error(), "exists only for sm_90a") {
		t.Errorf("gfx1201: error %v, want ErrNotForArch naming sm_90a", err)
	}
	dir := t.TempDir()
	writePTX(t, dir, "tmod", ".version 8.4\n.target sm_90a\n.entry t_sm90_only\n")
	if _, err := NewLoader(dir, &fakeDevice{info: gpu.Info{Arch: "sm_90"}}).Function("t_sm90_only"); err != nil {
		t.Errorf("sm_90: %v", err)
	}
}

func mustKernel(t *testing.T, name string) Kernel {
	t.Helper()
	k, ok := kernelRegistry.Get(name)
	if !ok {
		t.Fatalf("kernel %s is not registered", name)
	}
	return k
}
