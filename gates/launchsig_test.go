package gates

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/internal/fakegpu"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/refimpl"
)

// The device gates' launch sites, run on a fake device against the code
// objects `make kernels` built: every launch's arguments must match the
// parameters the compiled kernel declares (kernels.Loader.Checked fails
// the gate otherwise), on both targets. The fake runs nothing, so the
// output comparisons fail; only argument errors count here.

var fakeTargets = fakegpu.Targets(50 << 20)

func fakeEnv(t *testing.T, info gpu.Info) (*Env, *fakegpu.Device) {
	t.Helper()
	dir := filepath.Join("..", "build")
	if err := fakegpu.Built(dir, info); err != nil {
		t.Skip(err)
	}
	dev := fakegpu.New(info)
	return &Env{Seed: 1, Dev: dev, Kernels: kernels.NewLoader(dir, dev), BuildDir: dir, Full: true}, dev
}

// argumentErrors are the failures that come from the launch check.
func argumentErrors(r Result) []string {
	var out []string
	for _, f := range append([]string{r.Reason}, r.Failures...) {
		if strings.Contains(f, "launched with") || strings.Contains(f, "declares parameter") || strings.Contains(f, "not a kernel argument") {
			out = append(out, f)
		}
	}
	return out
}

func TestProducerGateLaunchesMatchSignatures(t *testing.T) {
	for _, info := range fakeTargets {
		env, dev := fakeEnv(t, info)
		res := RunGate(env, Gate{Name: "producers-launches", Device: true, Run: func(t *T) {
			rng := rand.New(rand.NewPCG(1, 2))
			c := producerCase{K: 384, P: 2, M: 5, dist: "normal"}
			rots := []*refimpl.Rotation{refimpl.RandomRotation(rng, c.K), refimpl.RandomRotation(rng, c.K)}
			rr, err := refimpl.BuildRotRecords(rots)
			t.Check(err, "records")
			sr, err := refimpl.BuildShuffleRecords(rots)
			t.Check(err, "shuffle records")
			x := randomActivations(rng, c.M, c.K, c.dist)
			runProducerCase(t, c, 1, rr, sr, x, buildMirror(rr, x, c, true, false), true)
		}})
		if bad := argumentErrors(res); len(bad) > 0 {
			t.Errorf("%s: %v", info.Arch, bad)
		}
		if res.Status != Fail {
			t.Errorf("%s: a device that runs nothing got %s from the producer checks", info.Arch, res.Status)
		}
		want := []string{"pq_rotq_group", "pq_rot_bf16", "pq_rot_bf16_lr", "pq_tokq", "pq_rotq_token", "pq_rot_bf16_sh"}
		if got := dev.Kernels(); !slices.Equal(got, want) {
			t.Errorf("%s: launched %v, want %v (status %s: %s)", info.Arch, got, want, res.Status, res.Reason)
		}
	}
}

func TestGEMMGateLaunchesMatchSignatures(t *testing.T) {
	for _, info := range fakeTargets {
		env, dev := fakeEnv(t, info)
		sh := kernels.GemmShape{K: 384, Parts: []int{256, 128}}
		res := RunGate(env, Gate{Name: "gemm-launches", Device: true, Run: func(t *T) {
			w := gemmWeights(rand.New(rand.NewPCG(3, 4)), sh.K, sh.N())
			p, err := refimpl.RepackW4(w)
			t.Check(err, "repack")
			for _, c := range []gemmCase{
				{"fake/dec", sh, 1, "normal", false}, {"fake/dec", sh, 9, "normal", false},
				{"fake/dec", sh, 24, "normal", false}, {"fake/dec", sh, 33, "normal", false}, {"fake/dec", sh, 64, "normal", false},
				{"fake/pre", sh, 200, "normal", true},
			} {
				runGEMMCase(t, c, 5, w, p)
				t.Release()
			}
		}})
		if bad := argumentErrors(res); len(bad) > 0 {
			t.Errorf("%s: %v", info.Arch, bad)
		}
		if res.Status != Fail || !strings.Contains(res.Reason, "unwritten") {
			t.Errorf("%s: a device that runs nothing got %s (%s) from the GEMM checks", info.Arch, res.Status, res.Reason)
		}
		got := dev.Kernels()
		for _, k := range []string{"pq_gemm_dec_m8", "pq_gemm_dec_m16", "pq_gemm_dec_m32", "pq_gemm_dec_m64", "pq_gemm_pre"} {
			if !slices.Contains(got, k) {
				t.Errorf("%s: %s never launched (launched %v; status %s: %s)", info.Arch, k, got, res.Status, res.Reason)
			}
		}
		if wg := slices.Contains(got, kernels.PreWG); wg != (info.Arch == "sm_90") {
			t.Errorf("%s: %s launched = %v", info.Arch, kernels.PreWG, wg)
		}
	}
}

// A device that accepts every launch and runs nothing must fail every
// device gate that checks what kernels compute (all but resources-device,
// which reads attributes): no gate passes on outputs it did not see
// written. The cheap ones run here; producers and gemm are covered by the
// tests above on small cases.
func TestNoOpDeviceFailsGates(t *testing.T) {
	for _, info := range fakeTargets {
		env, _ := fakeEnv(t, info)
		env.Full = false
		for _, name := range []string{"e4m3-device-decode", "e4m3-device-sweep", "e4m3-device-vs-go", "harness-selftest"} {
			var g Gate
			for _, x := range All() {
				if x.Name == name {
					g = x
				}
			}
			if g.Run == nil {
				t.Fatalf("gate %s not registered", name)
			}
			if res := RunGate(env, g); res.Status != Fail || len(argumentErrors(res)) > 0 {
				t.Errorf("%s %s on a no-op device: %s (%s)", info.Arch, name, res.Status, res.Reason)
			}
		}
	}
}
