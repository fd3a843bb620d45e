package bench

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/internal/fakegpu"
	"github.com/parharness/parharness/kernels"
)

// The bench suites' launch sites, built on a fake device against the code
// objects `make kernels` built: every variant's arguments must match the
// parameters its compiled kernel declares (Ctx.Launcher checks them through
// kernels.Loader.Checked), on both targets.

var fakeTargets = fakegpu.Targets(1 << 20) // a small cache: few cold copies

func fakeCtx(t *testing.T, info gpu.Info) (*Ctx, *fakegpu.Device) {
	t.Helper()
	dir := filepath.Join("..", "build")
	if err := fakegpu.Built(dir, info); err != nil {
		t.Skip(err)
	}
	dev := fakegpu.New(info)
	return &Ctx{Dev: dev, Kernels: kernels.NewLoader(dir, dev)}, dev
}

func TestProducerSuiteLaunchesMatchSignatures(t *testing.T) {
	for _, info := range fakeTargets {
		c, dev := fakeCtx(t, info)
		all := producerSuite{bytes: passABytes, needs: needs{records: true, shuffle: true, passA: true}}
		b, err := newProducerBufs(c, all, 40, 384, 2) // primes pass C: pass A on every copy
		if err != nil {
			t.Fatalf("%s: %v", info.Arch, err)
		}
		var names []string
		vs := []Variant{b.group(), b.groupHot("hot-records", false), b.groupHot("hot", true), b.passA(), b.passALR(), b.passASH(0), b.passASH(64), b.passC(false), b.passC(true), b.fused(false), b.fused(true)}
		v, ok := b.groupPDL()
		if !ok {
			t.Fatalf("%s: group-pdl skipped on a device with extended launch", info.Arch)
		}
		vs = append(vs, v)
		if b.err != nil {
			t.Fatalf("%s: %v", info.Arch, b.err)
		}
		for _, v := range vs {
			names = append(names, v.Name)
			if err := v.Enqueue(0, 1); err != nil {
				t.Errorf("%s %s: %v", info.Arch, v.Name, err)
			}
		}
		for _, k := range []string{"pq_rotq_group", "pq_rot_bf16", "pq_rot_bf16_lr", "pq_rot_bf16_sh", "pq_tokq", "pq_rotq_token"} {
			if !slices.Contains(dev.Kernels(), k) {
				t.Errorf("%s: %s never launched (variants %v)", info.Arch, k, names)
			}
		}
	}
}

func TestGEMMSuiteLaunchesMatchSignatures(t *testing.T) {
	for _, info := range fakeTargets {
		c, dev := fakeCtx(t, info)
		s := kernels.GemmShape{K: 384, Parts: []int{256, 128}}
		for _, M := range []int{1, 9, 24, 33} {
			b, err := newGemmBufs(c, s, M, false, 8)
			if err != nil {
				t.Fatalf("%s M=%d: %v", info.Arch, M, err)
			}
			ks := []string{"", kernels.DecKernel(M)}
			if info.Arch == "sm_90" {
				ks = append(ks, kernels.DecKernelV1(M))
				if M <= 8 {
					ks = append(ks, "pq_gemm_dec_memonly_m8")
				}
			}
			for _, S := range []int{1, 2} {
				for _, k := range ks {
					// plain, the law's options (cluster at S = 2), and PDL where
					// the kernel waits for its predecessor
					for _, o := range []struct{ pdl, plain bool }{{false, true}, {false, false}, {true, false}} {
						if o.pdl && k == kernels.DecKernelV1(M) {
							continue // v1 has no grid_dep_wait; decVariant refuses it
						}
						v, err := b.decVariant(s, M, S, k, "v", o.pdl, o.plain)
						if err == nil {
							err = v.Enqueue(0, 0)
						}
						if err != nil {
							t.Errorf("%s dec M=%d S=%d %q pdl=%v plain=%v: %v", info.Arch, M, S, k, o.pdl, o.plain, err)
						}
					}
				}
			}
		}
		b, err := newGemmBufs(c, s, 200, true, 1)
		if err != nil {
			t.Fatal(err)
		}
		pre := []string{"pq_gemm_pre"}
		if info.Arch == "sm_90" {
			pre = append(pre, kernels.PreWG)
		}
		for _, k := range pre {
			v, err := b.preVariant(s, 200, k, k)
			if err == nil {
				err = v.Enqueue(0, 0)
			}
			if err != nil {
				t.Errorf("%s pre %s: %v", info.Arch, k, err)
			}
		}
		for _, k := range append([]string{"pq_gemm_dec_m8", "pq_gemm_dec_m16", "pq_gemm_dec_m32", "pq_gemm_dec_m64"}, pre...) {
			if !slices.Contains(dev.Kernels(), k) {
				t.Errorf("%s: %s never launched (%v)", info.Arch, k, dev.Kernels())
			}
		}
	}
}

// A suite's cold rotation is sized by what its variants touch: the bytes it
// counts plus the records it reads, not every buffer the point allocates
// (pass A's outputs are no part of the decode producer's footprint).
func TestProducerFootprintIsWhatTheSuiteTouches(t *testing.T) {
	c, _ := fakeCtx(t, fakeTargets[0])
	for _, name := range []string{"grpq", "passc"} {
		var s producerSuite
		switch name {
		case "grpq":
			s = producerSuite{bytes: func(M, K, P int) int64 { return 1000 }, needs: needs{records: true}}
		case "passc":
			s = producerSuite{bytes: func(M, K, P int) int64 { return 1000 }, needs: needs{passA: true}}
		}
		b, err := newProducerBufs(c, s, 8, 256, 2)
		if err != nil {
			t.Fatal(err)
		}
		G := 2
		want := int64(1000)
		if s.needs.records {
			want += int64(4*2*8*G*32 + 16*2*8*G*32 + 4*2*256)
		}
		if b.fp != want || b.copies != CopiesFor(want, c.Dev.Info().LLCBytes) {
			t.Errorf("%s: footprint %d copies %d, want %d and %d", name, b.fp, b.copies, want, CopiesFor(want, c.Dev.Info().LLCBytes))
		}
	}
}
