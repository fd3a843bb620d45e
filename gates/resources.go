package gates

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/parharness/parharness/internal/amdgpu"
	"github.com/parharness/parharness/kernels"
)

// gfx1201LDSBytes is the LDS a workgroup may allocate on RDNA4 (64 KiB).
const gfx1201LDSBytes = 64 << 10

func init() {
	Register(Gate{Name: "resources-gfx1201", Suites: Quick | Full, Run: gateResourcesGfx1201,
		Proves: "every registered kernel is in its gfx1201 code object with wave32, no scratch and no spills (unless declared), and LDS within 64 KiB, read from the AMDGPU metadata notes"})
	Register(Gate{Name: "resources-device", Suites: Quick | Full, Device: true, Run: gateResourcesDevice,
		Proves: "every registered kernel loads on this device and the driver reports no local (spill/stack) memory unless declared"})
}

// StaticResources reads the gfx1201 metadata of every registered kernel.
// It returns per-kernel figures and the problems found (one line each).
func StaticResources(buildDir string) (rows []amdgpu.Kernel, problems []string, err error) {
	modules, byModule := kernels.ByModule("gfx1201")
	for _, mod := range modules {
		path := kernels.ObjectPath(buildDir, "gfx1201", mod)
		img, rerr := os.ReadFile(path)
		if rerr != nil {
			if errors.Is(rerr, os.ErrNotExist) {
				return nil, nil, fmt.Errorf("code object %s is missing: run `make kernels` (needs clang-19)", path)
			}
			return nil, nil, rerr
		}
		co, perr := amdgpu.ReadKernels(img)
		if perr != nil {
			return nil, nil, fmt.Errorf("%s: %v", path, perr)
		}
		if co.Arch != "gfx1201" {
			problems = append(problems, fmt.Sprintf("%s: built for %s, not gfx1201", path, co.Arch))
		}
		byName := map[string]amdgpu.Kernel{}
		for _, k := range co.Kernels {
			byName[k.Name] = k
		}
		for _, reg := range byModule[mod] {
			k, ok := byName[reg.Name]
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: kernel %s is registered but not in the code object (extern \"C\" name?)", path, reg.Name))
				continue
			}
			rows = append(rows, k)
			for _, p := range k.Problems(reg.AllowScratch != "") {
				problems = append(problems, fmt.Sprintf("%s (gfx1201): %s", reg.Name, p))
			}
			if k.LDSBytes > gfx1201LDSBytes {
				problems = append(problems, fmt.Sprintf("%s (gfx1201): %d bytes of LDS, over the %d-byte budget", reg.Name, k.LDSBytes, gfx1201LDSBytes))
			}
		}
	}
	return rows, problems, nil
}

func gateResourcesGfx1201(t *T) {
	dir := filepath.Join(t.Env().BuildDir, "gfx1201")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no gfx1201 code objects in %s: run `make kernels` (needs clang-19)", dir)
	}
	rows, problems, err := StaticResources(t.Env().BuildDir)
	if err != nil {
		t.Fatalf("%v", err)
	}
	for _, p := range problems {
		t.Failf("%s", p)
	}
	for _, k := range rows {
		t.Metric(NewCase("kernel", k.Name).Key("vgpr"), float64(k.VGPRCount))
		t.Metric(NewCase("kernel", k.Name).Key("lds"), float64(k.LDSBytes))
	}
	t.Logf("%d kernels checked", len(rows))
}

func gateResourcesDevice(t *T) {
	for _, reg := range kernels.All() {
		f, err := t.Env().Kernels.Function(reg.Name)
		if errors.Is(err, kernels.ErrNotForArch) {
			t.Logf("%v", err)
			continue
		}
		if err != nil {
			t.Failf("%v", err)
			continue
		}
		a, err := f.Attrs()
		if err != nil {
			t.Failf("%s: reading attributes: %v", reg.Name, err)
			continue
		}
		t.Metric(NewCase("kernel", reg.Name).Key("regs"), float64(a.Regs))
		if a.LocalBytes > 0 && reg.AllowScratch == "" {
			t.Failf("%s: %d bytes of local memory per thread (spills or stack) on %s", reg.Name, a.LocalBytes, t.Env().Dev.Info().Arch)
		}
	}
}
