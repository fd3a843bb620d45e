// Package kernels is the registry of GPU kernels and the loader of their
// compiled code objects.
//
// A kernel is declared once, in one registry row, by the family that owns
// it (families/<family>/): its entry symbol, its source module, and the
// contract everything else branches on. Gates, benches, launch-signature
// tests and the static gates read these rows; none of them guesses from a
// kernel's name. `parharness list` prints the registry.
//
// The contract of a row:
//   - Op is what the kernel computes: every kernel of one (Family, Op) has
//     the same output contract and is checked against the same reference.
//     One of them, for each M range, is the Baseline; the others are
//     Variants, run by the family's gate and timed beside the baseline by
//     its bench. An Attribution kernel (a part of another kernel's work, to
//     see where time goes) is timed but has no output to check.
//   - Form is the launch form inside the family: the geometry and argument
//     list. A variant with an existing form needs no launch code.
//   - MinM..MaxM is the M range the kernel serves (0, 0: any M).
//   - Caps are the launch features it supports (programmatic dependent
//     launch, cluster launch, dynamic shared memory).
//   - MatrixOp is the matrix instruction expected inside a loop of the
//     kernel, per code arch; the ISA gates check what is declared.
//   - Targets are the code archs whose objects have it (nil: every target).
//   - Experimental kernels run in the full suite only; a kernel is promoted
//     (Status: Stable) once it has passed its family's gate on a device.
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
	"slices"
	"sort"
	"strings"

	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/internal/amdgpu"
	"github.com/parharness/parharness/internal/registry"
)

// Code archs the build produces (Makefile).
const (
	SM90a   = "sm_90a"
	GFX1201 = "gfx1201"
)

// CodeArchs are every code arch `make kernels` builds.
var CodeArchs = []string{GFX1201, SM90a}

// Role is a kernel's place among the kernels of its Op.
type Role uint8

const (
	Baseline    Role = iota + 1 // the kernel the product launches for its M range
	Variant                     // same output contract, timed against the baseline
	Attribution                 // part of a baseline's work, for attribution; no checked output
)

func (r Role) String() string {
	switch r {
	case Baseline:
		return "baseline"
	case Variant:
		return "variant"
	case Attribution:
		return "attribution"
	}
	return fmt.Sprintf("Role(%d)", r)
}

// Caps are launch features a kernel supports.
type Caps uint8

const (
	PDL       Caps = 1 << iota // programmatic dependent launch (grid_dep_wait before dependent reads)
	Cluster                    // launched as thread block clusters where its family's law says so
	DynShared                  // takes dynamic shared memory at launch
)

func (c Caps) String() string {
	var s []string
	for _, x := range []struct {
		c Caps
		n string
	}{{PDL, "pdl"}, {Cluster, "cluster"}, {DynShared, "dynshared"}} {
		if c&x.c != 0 {
			s = append(s, x.n)
		}
	}
	return strings.Join(s, ",")
}

// Status says which suites run a kernel.
type Status uint8

const (
	Stable       Status = iota // gated in the quick and full suites
	Experimental               // not yet passed on a device: full suite only
)

func (s Status) String() string {
	if s == Experimental {
		return "experimental"
	}
	return "stable"
}

// Kernel is one registered entry point and its contract (see the package doc).
type Kernel struct {
	Name     string // entry symbol, extern "C"
	Family   string // the folder families/<Family> that owns it
	Module   string // source basename families/<Family>/<Module>.hip; one code object per module
	Doc      string
	Op       string
	Form     string
	Tag      string // short name of its bench rows ("passA-lr", "v1"), unique within (Family, Op)
	MinM     int
	MaxM     int
	Role     Role
	Caps     Caps
	MatrixOp map[string]string // code arch -> instruction mnemonic (prefix) expected inside a loop
	Targets  []string          // code archs that have it; nil: all
	Status   Status
	// Shared is the dynamic shared memory (bytes) a launch of the kernel
	// takes when its family's launch contract fixes it per kernel (0:
	// static shared memory, or sized per launch by the contract); it
	// needs the DynShared cap.
	Shared int
	// AllowScratch, when non-empty, is the reason this kernel may use
	// scratch/local memory or spill; the resource gates fail otherwise.
	AllowScratch string
	// AllowWGMMANotes, when non-empty, is the reason ptxas's wgmma
	// performance notes (serialized or injected waits and arrives) are
	// not a failure for this kernel: one that is timed for no product.
	AllowWGMMANotes string
}

// ForArch reports whether codeArch's code objects have k.
func (k Kernel) ForArch(codeArch string) bool {
	return k.Targets == nil || slices.Contains(k.Targets, codeArch)
}

// ServesM reports whether M is in the kernel's M range.
func (k Kernel) ServesM(M int) bool {
	return (k.MinM == 0 || M >= k.MinM) && (k.MaxM == 0 || M <= k.MaxM)
}

// Source is the kernel's source file, relative to the repository root.
func (k Kernel) Source() string {
	return filepath.Join("families", k.Family, k.Module+".hip")
}

// InSuite reports whether a suite runs k: experimental kernels only in the full one.
func (k Kernel) InSuite(full bool) bool { return full || k.Status != Experimental }

// UnavailableError is a kernel that cannot be loaded on this device: its
// code object is missing, unreadable, built for another arch or refused by
// the driver, or lacks the symbol. The kernel could not run, which is not
// a wrong result: gates report it as ERROR, not FAIL.
type UnavailableError struct{ Err error }

func (e *UnavailableError) Error() string { return e.Err.Error() }
func (e *UnavailableError) Unwrap() error { return e.Err }

func unavailable(format string, args ...any) error {
	return &UnavailableError{fmt.Errorf(format, args...)}
}

// ErrNotForArch is returned (wrapped) by Loader.Function for a kernel that
// only exists on another code arch; gates and benches report it as a SKIP.
var ErrNotForArch = errors.New("kernel not built for this arch")

var kernelRegistry = registry.New[Kernel]("kernel")

// Register declares a kernel. It panics on a duplicate or an incomplete
// contract (a programming error, caught at start by every test).
func Register(k Kernel) {
	if err := k.validate(); err != nil {
		panic("kernels: " + err.Error())
	}
	kernelRegistry.Add(k.Name, k)
}

func (k Kernel) validate() error {
	if k.Name == "" || k.Family == "" || k.Module == "" || k.Op == "" || k.Tag == "" || k.Doc == "" {
		return fmt.Errorf("kernel %q: Name, Family, Module, Op, Tag and Doc are required", k.Name)
	}
	if k.Role < Baseline || k.Role > Attribution {
		return fmt.Errorf("kernel %s: Role is not set", k.Name)
	}
	if k.MaxM != 0 && k.MaxM < k.MinM {
		return fmt.Errorf("kernel %s: M range %d..%d is empty", k.Name, k.MinM, k.MaxM)
	}
	for _, a := range k.Targets {
		if !slices.Contains(CodeArchs, a) {
			return fmt.Errorf("kernel %s: target %q is not a code arch the build produces (%v)", k.Name, a, CodeArchs)
		}
	}
	for a := range k.MatrixOp {
		if !k.ForArch(a) {
			return fmt.Errorf("kernel %s: declares a matrix op for %s, which does not have it", k.Name, a)
		}
	}
	if k.Shared < 0 || (k.Shared > 0 && k.Caps&DynShared == 0) {
		return fmt.Errorf("kernel %s: Shared %d bytes needs the dynshared cap and a size >= 0", k.Name, k.Shared)
	}
	return nil
}

// All returns the registry in name order.
func All() []Kernel { return kernelRegistry.All() }

// Lookup returns a registered kernel.
func Lookup(name string) (Kernel, bool) { return kernelRegistry.Get(name) }

// Query selects registered kernels; zero fields match anything.
type Query struct {
	Family, Op, Form string
	M                int    // 0: any M range
	Arch             string // "": any target
	Full             bool   // include experimental kernels
	Roles            []Role // nil: every role
}

// Select returns the kernels matching q: baselines first, then variants,
// then attribution kernels, each in name order. Gates and benches take
// their kernels from here, so a new row is run by both.
func Select(q Query) []Kernel {
	out := kernelRegistry.Filter(func(k Kernel) bool {
		switch {
		case q.Family != "" && k.Family != q.Family,
			q.Op != "" && k.Op != q.Op,
			q.Form != "" && k.Form != q.Form,
			q.M != 0 && !k.ServesM(q.M),
			q.Arch != "" && !k.ForArch(q.Arch),
			!k.InSuite(q.Full),
			q.Roles != nil && !slices.Contains(q.Roles, k.Role):
			return false
		}
		return true
	})
	slices.SortStableFunc(out, func(a, b Kernel) int { return int(a.Role) - int(b.Role) })
	return out
}

// BaselineFor is the baseline of (family, op) serving M on arch.
func BaselineFor(family, op string, M int, arch string) (Kernel, error) {
	ks := Select(Query{Family: family, Op: op, M: M, Arch: arch, Roles: []Role{Baseline}, Full: true})
	switch len(ks) {
	case 1:
		return ks[0], nil
	case 0:
		return Kernel{}, fmt.Errorf("kernels: no baseline of %s/%s serves M=%d on %s", family, op, M, arch)
	}
	return Kernel{}, fmt.Errorf("kernels: %d baselines of %s/%s serve M=%d on %s (%s, %s): the M ranges overlap", len(ks), family, op, M, arch, ks[0].Name, ks[1].Name)
}

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
// registered kernel whose Targets include it).
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

// CheckLaunch refuses a launch that uses a feature the kernel's row does
// not declare: dynamic shared memory, programmatic dependent launch (a
// kernel without grid_dep_wait would race with its predecessor), a
// cluster launch. Gates and benches call it with every launch.
func CheckLaunch(name string, shared int, opts gpu.LaunchOpts) error {
	k, ok := kernelRegistry.Get(name)
	if !ok {
		return fmt.Errorf("kernel %q is not registered (see `parharness list`)", name)
	}
	var missing []string
	if shared > 0 && k.Caps&DynShared == 0 {
		missing = append(missing, fmt.Sprintf("%d bytes of dynamic shared memory (cap dynshared)", shared))
	}
	if opts.PDL && k.Caps&PDL == 0 {
		missing = append(missing, "programmatic dependent launch (cap pdl)")
	}
	if opts.Cluster != (gpu.Dim3{}) && k.Caps&Cluster == 0 {
		missing = append(missing, fmt.Sprintf("a %dx%dx%d cluster launch (cap cluster)", opts.Cluster.X, opts.Cluster.Y, opts.Cluster.Z))
	}
	if len(missing) > 0 {
		return fmt.Errorf("kernel %s launched with %s, which its registry row does not declare (caps %q); declare it in %s's row if the kernel supports it", name, strings.Join(missing, " and "), k.Caps.String(), k.Family)
	}
	return nil
}

// lookupModule is the registered module of a kernel ("" if unregistered).
func lookupModule(name string) string {
	k, _ := kernelRegistry.Get(name)
	return k.Module
}

// MaxActiveBlocks is how many blocks of kernel name (threads a block,
// dynShared bytes of dynamic shared memory) one SM of the device holds at
// once, by the driver; 0 where the backend does not say (gpu.Occupier).
func (l *Loader) MaxActiveBlocks(name string, threads, dynShared int) (int, error) {
	f, err := l.Function(name)
	if err != nil {
		return 0, err
	}
	o, ok := f.(gpu.Occupier)
	if !ok {
		return 0, nil
	}
	return o.MaxActiveBlocks(threads, dynShared)
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
		return nil, fmt.Errorf("kernel %s exists only for %s, this device is %s: %w", k.Name, strings.Join(k.Targets, ", "), ca, ErrNotForArch)
	}
	m, err := l.Module(k.Module)
	if err != nil {
		return nil, err
	}
	f, err := m.Function(k.Name)
	if err != nil {
		return nil, unavailable("kernel %s: symbol not found in module %s (%v); rebuild with `make kernels` and check the extern \"C\" name in %s", k.Name, l.path(k.Module), err, k.Source())
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
			return nil, unavailable("code object %s is missing: run `make kernels` (needs clang-19) or pass --build DIR", path)
		}
		return nil, unavailable("code object %s: %v", path, err)
	}
	if err := CheckArch(img, info.CodeArch()); err != nil {
		return nil, unavailable("code object %s: %v; rebuild with `make kernels`", path, err)
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
		return nil, unavailable("code object %s: the driver refused it: %v; the file may be corrupt, rebuild with `make kernels`", path, err)
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
