// Package faketest builds the gate and bench environments the family
// tests run on a fake device (internal/fakegpu) against the code objects
// `make kernels` built: real gate and bench code paths, real launch-argument
// checks, no GPU.
package faketest

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parharness/parharness/bench"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/internal/fakegpu"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/results"
	"github.com/parharness/parharness/shapes"
)

// BuildDir is the build directory as seen from a family's test (two levels
// below the repository root).
var BuildDir = filepath.Join("..", "..", "build")

// Targets are both code archs' fakes, with a last-level cache of llc bytes.
func Targets(llc int) []gpu.Info { return fakegpu.Targets(llc) }

// device returns a fake for info, skipping the test when the code objects
// are not built.
func device(t testing.TB, info gpu.Info) *fakegpu.Device {
	t.Helper()
	if err := fakegpu.Built(BuildDir, info); err != nil {
		t.Skip(err)
	}
	return fakegpu.New(info)
}

// Env is a gate environment on a fake device (the full suite).
func Env(t testing.TB, info gpu.Info) (*gates.Env, *fakegpu.Device) {
	t.Helper()
	dev := device(t, info)
	return &gates.Env{Seed: 1, Dev: dev, Kernels: kernels.NewLoader(BuildDir, dev), BuildDir: BuildDir, Full: true}, dev
}

// Ctx is a bench context on a fake device with a fast protocol and the
// given shapes; Ms overrides every suite's ladder.
func Ctx(t *testing.T, info gpu.Info, sh *shapes.Set, Ms []int) (*bench.Ctx, *fakegpu.Device) {
	t.Helper()
	dev := device(t, info)
	e, err := bench.NewEngine(dev, bench.Config{MinCalls: 1, MinGraphUS: 0, Warmup: time.Nanosecond, Reps: 4})
	if err != nil {
		t.Fatal(err)
	}
	return &bench.Ctx{Dev: dev, Kernels: kernels.NewLoader(BuildDir, dev), Engine: e, Shapes: sh, Ms: Ms}, dev
}

// ArgumentErrors are a gate result's failures that come from the launch
// check (a launch whose arguments do not match the code object's).
func ArgumentErrors(r gates.Result) []string {
	var out []string
	for _, f := range append([]string{r.Reason}, r.Failures...) {
		if strings.Contains(f, "launched with") || strings.Contains(f, "declares parameter") || strings.Contains(f, "not a kernel argument") {
			out = append(out, f)
		}
	}
	return out
}

// Registered are the names of a family's registered kernels on info's
// code arch, in the given roles (nil: all).
func Registered(family string, info gpu.Info, roles ...kernels.Role) []string {
	var out []string
	for _, k := range kernels.Select(kernels.Query{Family: family, Arch: info.CodeArch(), Full: true, Roles: roles}) {
		out = append(out, k.Name)
	}
	return out
}

// Missing are the names in want that got does not contain.
func Missing(want, got []string) []string {
	have := map[string]bool{}
	for _, g := range got {
		have[g] = true
	}
	var out []string
	for _, w := range want {
		if !have[w] {
			out = append(out, w)
		}
	}
	return out
}

// UndeclaredVariants are the variants of records of suite s that the
// suite's Variants does not list ("suite: variant"): names --variants
// would refuse although the suite runs them.
func UndeclaredVariants(s bench.Suite, recs []results.Record) []string {
	var out []string
	for _, r := range recs {
		if r.Suite != s.Name {
			continue
		}
		if s.Variants == nil {
			return []string{s.Name + ": declares no Variants"}
		}
		if k := s.Name + ": " + r.Variant; !s.VariantKnown(r.Variant) && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}
