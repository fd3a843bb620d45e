// Package kernels is the registry of GPU kernels and the loader of their
// compiled code objects.
//
// A kernel is declared once, by name, in the registry: its source file under
// hipsrc/, its entry symbol, and the resource exceptions it is allowed (for
// example scratch memory, with the reason). `parharness list` prints the
// registry, so documentation cannot drift from the code.
//
// Code objects are built by `make kernels` into build/<codearch>/<module>.<ext>:
// build/sm_90a/*.ptx (PTX text that the CUDA driver JIT-compiles at load) and
// build/gfx1201/*.co (plain AMDGPU ELF code objects). The Loader picks the
// directory for the device's arch, checks that the object really is for that
// arch before handing it to the driver, and caches loaded modules.
package kernels

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"

	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/internal/amdgpu"
	"github.com/parharness/parharness/internal/registry"
)

// Kernel is one registered entry point.
type Kernel struct {
	Name   string // entry symbol, extern "C"
	Module string // source basename under hipsrc/, without extension
	Doc    string
	// AllowScratch, when non-empty, is the reason this kernel may use
	// scratch/local memory or spill; the resource gate fails otherwise.
	AllowScratch string
	// OnlyArch, when non-empty, is the one code arch ("sm_90a") whose code
	// object has this kernel (an instruction the other target lacks, e.g.
	// wgmma); on other devices Function returns ErrNotForArch.
	OnlyArch string
	// NoMatrixOp, when non-empty, is the code arch on which this kernel has
	// no matrix op by design (an attribution kernel); the ISA gates do not
	// look for one there.
	NoMatrixOp string
}

// ForArch reports whether codeArch's code objects have k.
func (k Kernel) ForArch(codeArch string) bool { return k.OnlyArch == "" || k.OnlyArch == codeArch }

// ErrNotForArch is returned (wrapped) by Loader.Function for a kernel that
// only exists on another code arch; gates and benches report it as a SKIP.
var ErrNotForArch = errors.New("kernel not built for this arch")

var kernelRegistry = registry.New[Kernel]("kernel")

// Register declares a kernel; it panics on a duplicate (a programming error).
func Register(k Kernel) { kernelRegistry.Add(k.Name, k) }

// All returns the registry in name order.
func All() []Kernel { return kernelRegistry.All() }

// ByModule returns the registered kernels that codeArch's code objects
// have, grouped by module (modules sorted, kernels in name order): what a
// static gate walks, one code object at a time.
func ByModule(codeArch string) (modules []string, byModule map[string][]Kernel) {
	byModule = map[string][]Kernel{}
	for _, k := range All() {
		if !k.ForArch(codeArch) {
			continue
		}
		if _, seen := byModule[k.Module]; !seen {
			modules = append(modules, k.Module)
		}
		byModule[k.Module] = append(byModule[k.Module], k)
	}
	sort.Strings(modules)
	return modules, byModule
}

// Ext is the code-object file extension for a code arch.
func Ext(codeArch string) string {
	if len(codeArch) > 3 && codeArch[:3] == "sm_" {
		return ".ptx"
	}
	return ".co"
}

// ObjectPath is where `make kernels` puts a module for an arch.
func ObjectPath(buildDir, codeArch, module string) string {
	return filepath.Join(buildDir, codeArch, module+Ext(codeArch))
}

// Loader loads code objects for one device.
type Loader struct {
	BuildDir string
	Dev      gpu.Device
	modules  map[string]gpu.Module
	funcs    map[string]gpu.Function
	sigs     map[string]Signature // kernel name -> declared parameters, from the loaded code objects
}

// NewLoader returns a loader reading from buildDir.
func NewLoader(buildDir string, dev gpu.Device) *Loader {
	return &Loader{BuildDir: buildDir, Dev: dev, modules: map[string]gpu.Module{}, funcs: map[string]gpu.Function{}, sigs: map[string]Signature{}}
}

// Exists reports whether the device's code arch has kernel name (a
// registered kernel that is not OnlyArch another arch).
func (l *Loader) Exists(name string) bool {
	k, ok := kernelRegistry.Get(name)
	return ok && k.ForArch(l.Dev.Info().CodeArch())
}

// Checked returns a kernel's entry point after checking a launch's
// arguments against the parameters its code object declares (CheckArgs).
// Gates and benches launch through it, so every launch is checked.
func (l *Loader) Checked(name string, args []any) (gpu.Function, error) {
	f, err := l.Function(name)
	if err != nil {
		return nil, err
	}
	sig, ok := l.sigs[name]
	if !ok {
		return nil, fmt.Errorf("kernel %s: its code object %s declares no parameter list for it; rebuild with `make kernels`", name, l.path(lookupModule(name)))
	}
	if sig.Err != nil {
		return nil, fmt.Errorf("kernel %s: %v", name, sig.Err)
	}
	if err := CheckArgs(name, sig.Params, args); err != nil {
		return nil, err
	}
	return f, nil
}

// lookupModule is the registered module of a kernel ("" if unregistered).
func lookupModule(name string) string {
	k, _ := kernelRegistry.Get(name)
	return k.Module
}

// Function returns the loaded entry point of a registered kernel.
func (l *Loader) Function(name string) (gpu.Function, error) {
	if f, ok := l.funcs[name]; ok {
		return f, nil
	}
	k, ok := kernelRegistry.Get(name)
	if !ok {
		return nil, fmt.Errorf("kernel %q is not registered (see `parharness list`)", name)
	}
	if ca := l.Dev.Info().CodeArch(); !k.ForArch(ca) {
		return nil, fmt.Errorf("kernel %s exists only for %s, this device is %s: %w", k.Name, k.OnlyArch, ca, ErrNotForArch)
	}
	m, err := l.Module(k.Module)
	if err != nil {
		return nil, err
	}
	f, err := m.Function(k.Name)
	if err != nil {
		return nil, fmt.Errorf("kernel %s: symbol not found in module %s (%v); rebuild with `make kernels` and check the extern \"C\" name in hipsrc/%s.hip", k.Name, l.path(k.Module), err, k.Module)
	}
	l.funcs[name] = f
	return f, nil
}

func (l *Loader) path(module string) string {
	return ObjectPath(l.BuildDir, l.Dev.Info().CodeArch(), module)
}

// Module loads (once) the code object of a module for the device's arch.
func (l *Loader) Module(module string) (gpu.Module, error) {
	if m, ok := l.modules[module]; ok {
		return m, nil
	}
	info := l.Dev.Info()
	path := l.path(module)
	img, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("code object %s is missing: run `make kernels` (needs clang-19) or pass --build DIR", path)
		}
		return nil, fmt.Errorf("code object %s: %v", path, err)
	}
	if err := CheckArch(img, info.CodeArch()); err != nil {
		return nil, fmt.Errorf("code object %s: %v; rebuild with `make kernels`", path, err)
	}
	sigs, err := Signatures(img, info.CodeArch())
	if err != nil {
		// The driver may still load it; every launch from it then says why
		// its arguments cannot be checked.
		sigs = map[string]Signature{}
		for _, k := range All() {
			if k.Module == module {
				sigs[k.Name] = Signature{Err: fmt.Errorf("code object %s: kernel parameters unreadable: %v; rebuild with `make kernels`", path, err)}
			}
		}
	}
	m, err := l.Dev.LoadModule(img)
	if err != nil {
		return nil, fmt.Errorf("code object %s: the driver refused it: %v; the file may be corrupt, rebuild with `make kernels`", path, err)
	}
	l.modules[module] = m
	for name, sig := range sigs {
		l.sigs[name] = sig
	}
	return m, nil
}

// Close unloads every module.
func (l *Loader) Close() {
	for k, m := range l.modules {
		m.Unload()
		delete(l.modules, k)
	}
	l.funcs = map[string]gpu.Function{}
	l.sigs = map[string]Signature{}
}

var ptxTarget = regexp.MustCompile(`(?m)^\s*\.target\s+(sm_[0-9]+a?)`)

// CheckArch verifies a code object image is for codeArch ("sm_90a",
// "gfx1201") before a driver sees it, so a wrong-arch object is one clear
// error instead of a driver failure at launch.
func CheckArch(img []byte, codeArch string) error {
	isELF := bytes.HasPrefix(img, []byte("\x7fELF"))
	if Ext(codeArch) == ".ptx" {
		if isELF {
			return fmt.Errorf("is an ELF code object, but this device (%s) needs PTX", codeArch)
		}
		m := ptxTarget.FindSubmatch(img)
		if m == nil {
			return fmt.Errorf("is not PTX (no .target directive)")
		}
		if got := string(m[1]); got != codeArch {
			return fmt.Errorf("is PTX for %s, but this device needs %s", got, codeArch)
		}
		return nil
	}
	if !isELF {
		return fmt.Errorf("is not an ELF code object, but this device (%s) needs one", codeArch)
	}
	got, err := amdgpu.Arch(img)
	if err != nil {
		return err
	}
	if got != codeArch {
		return fmt.Errorf("is a code object for %s, but this device is %s", got, codeArch)
	}
	return nil
}
