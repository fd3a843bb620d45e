package e4m3

import (
	"strings"
	"testing"

	"github.com/parharness/parharness/families/internal/faketest"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/kernels"
)

// The codec's device gates on a fake device that accepts every launch and
// computes nothing: each must fail (no gate passes on outputs it did not
// see written; the full suite, which holds the exhaustive
// comparisons), no launch may mismatch its kernel's declared parameters,
// and together they run every registered e4m3 kernel.
func TestNoOpDeviceFailsGatesAndRunsEveryKernel(t *testing.T) {
	for _, info := range faketest.Targets(50 << 20) {
		env, dev := faketest.Env(t, info)
		ran := 0
		for _, g := range gates.All() {
			if g.Family != Family || !g.Device {
				continue
			}
			ran++
			if res := gates.RunGate(env, g); res.Status != gates.Fail || len(faketest.ArgumentErrors(res)) > 0 {
				t.Errorf("%s %s on a no-op device: %s (%s)", info.Arch, g.Name, res.Status, res.Reason)
			}
		}
		if ran == 0 {
			t.Fatalf("no device gate of family %s", Family)
		}
		if miss := faketest.Missing(faketest.Registered(Family, info), dev.Kernels()); len(miss) > 0 {
			t.Errorf("%s: registered e4m3 kernels no gate ran: %v", info.Arch, miss)
		}
	}
}

// A device gate whose code object is missing could not run: ERROR, not FAIL.
func TestMissingCodeObjectIsError(t *testing.T) {
	env, dev := faketest.Env(t, faketest.Targets(50 << 20)[0])
	env.Kernels = kernels.NewLoader(t.TempDir(), dev)
	for _, g := range gates.All() {
		if g.Name == "e4m3-device-decode" {
			if r := gates.RunGate(env, g); r.Status != gates.Error || !strings.Contains(r.Reason, "is missing") {
				t.Errorf("%s without its code object: %s %q", g.Name, r.Status, r.Reason)
			}
			return
		}
	}
	t.Fatal("gate e4m3-device-decode not registered")
}
