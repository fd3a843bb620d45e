package gates

import (
	"math/rand/v2"
	"os"
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

var fakeTargets = []gpu.Info{
	{Backend: "cuda", Arch: "sm_90", Name: "fake sm_90", SMs: 132, LLCBytes: 50 << 20},
	{Backend: "hip", Arch: "gfx1201", Name: "fake gfx1201", SMs: 64, LLCBytes: 64 << 20},
}

func fakeEnv(t *testing.T, info gpu.Info) (*Env, *fakegpu.Device) {
	t.Helper()
	dir := filepath.Join("..", "build")
	if _, err := os.Stat(filepath.Join(dir, info.CodeArch())); err != nil {
		t.Skipf("no %s code objects in %s (run make kernels): %v", info.CodeArch(), dir, err)
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
			runProducerCase(t, c, 1, rr, sr, x, buildMirror(rr, x, c, true), true)
		}})
		if bad := argumentErrors(res); len(bad) > 0 {
			t.Errorf("%s: %v", info.Arch, bad)
		}
		want := []string{"pq_rotq_group", "pq_rot_bf16_sh", "pq_rot_bf16", "pq_rot_bf16_lr", "pq_tokq", "pq_rotq_token"}
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
