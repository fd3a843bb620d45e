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
		{"wrongarch", ".version 8.4\n.target sm_80\n.entry e4m3_sweep\n", "is PTX for sm_80, but this device needs sm_90a"},
		{"corrupt", ".version 8.4\n.target sm_90a\nCORRUPT\n", "the driver refused it"},
		{"nosymbol", ".version 8.4\n.target sm_90a\n.entry other\n", "symbol not found"},
		{"elf", "\x7fELF....", "is an ELF code object, but this device (sm_90a) needs PTX"},
		{"ok", ".version 8.4\n.target sm_90a\n.entry e4m3_sweep\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.name != "missing" {
				writePTX(t, dir, "e4m3", c.body)
			}
			l := NewLoader(dir, dev)
			_, err := l.Function("e4m3_sweep")
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

func TestRegistry(t *testing.T) {
	for _, k := range All() {
		if _, err := os.Stat(filepath.Join("..", "hipsrc", k.Module+".hip")); err != nil {
			t.Errorf("kernel %s: source hipsrc/%s.hip: %v", k.Name, k.Module, err)
		}
	}
}

// A kernel that exists for one code arch only is a typed, one-line error
// elsewhere (gates and benches SKIP it by errors.Is), before any code
// object is read; on its arch it loads like any other.
func TestLoaderOnlyArch(t *testing.T) {
	k, ok := kernelRegistry.Get(PreWG)
	if !ok || k.OnlyArch != "sm_90a" {
		t.Fatalf("%s: registered %v with OnlyArch %q, want sm_90a", PreWG, ok, k.OnlyArch)
	}
	if !k.ForArch("sm_90a") || k.ForArch("gfx1201") || !mustKernel(t, "pq_gemm_pre").ForArch("gfx1201") {
		t.Errorf("ForArch: wrong answers")
	}
	amd := &fakeDevice{info: gpu.Info{Arch: "gfx1201"}}
	_, err := NewLoader(t.TempDir(), amd).Function(PreWG) // no code objects at all
	if !errors.Is(err, ErrNotForArch) || !strings.Contains(err.Error(), "exists only for sm_90a") {
		t.Errorf("gfx1201: error %v, want ErrNotForArch naming sm_90a", err)
	}
	dir := t.TempDir()
	writePTX(t, dir, "gemm", ".version 8.4\n.target sm_90a\n.entry "+PreWG+"\n")
	if _, err := NewLoader(dir, &fakeDevice{info: gpu.Info{Arch: "sm_90"}}).Function(PreWG); err != nil {
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
