package gemm

import (
	"strings"
	"testing"

	"github.com/parharness/parharness/families/basics"
	"github.com/parharness/parharness/families/internal/faketest"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/internal/fakegpu"
)

// The read roof's check passes a device that runs read_v4x4 on each
// buffer set's weights and fails one that drops a block's store, reads
// the weights 16 bytes off, or runs nothing; every launch reads the
// weights of the buffer set it was enqueued for (the sets' words are the
// same, so only the launch's argument tells a fixed set apart, and a
// fixed set would be read from cache in the stream regime).
func TestDecReadVariantCheck(t *testing.T) {
	c, dev := faketest.Ctx(t, fakeTargets[0], tinyShapes(t), nil)
	s := GemmShape{K: 384, Parts: []int{256, 128}}
	bw, err := newBenchWeights(s)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newGemmBufs(c, "tiny", s, 1, false, false, 4, bw)
	if err != nil {
		t.Fatal(err)
	}
	v, err := b.decReadVariant(bw.pk.words)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Roof || v.Bytes != int64(len(bw.pk.words)) {
		t.Errorf("read roof: Roof %v, %d bytes, want a roof of %d bytes", v.Roof, v.Bytes, len(bw.pk.words))
	}
	set := -1 // the buffer set being enqueued
	run := func(skip int, src func(l fakegpu.Launch) gpu.Ptr) func(d *fakegpu.Device, l fakegpu.Launch) error {
		return func(d *fakegpu.Device, l fakegpu.Launch) error {
			if l.Kernel != basics.RoofKernel {
				return nil
			}
			if got := l.Args[0].(gpu.Ptr); got != b.w.At(set) {
				t.Errorf("buffer set %d: the read roof reads %#x, want that set's weights at %#x", set, got, b.w.At(set))
			}
			n := int(l.Args[2].(uint64))
			// One resident wave: 8 blocks an SM where the fake device
			// reports no occupancy, fewer where n needs fewer.
			if want := min((n+255)/256, 8*d.Info().SMs); int(l.Grid.X) != want || l.Block.X != 256 {
				t.Errorf("read roof over %d vectors: grid %d x %d, want one wave of %d x 256", n, l.Grid.X, l.Block.X, want)
			}
			in, err := d.Mem(src(l), 16*n)
			if err != nil {
				return err
			}
			out, err := d.Mem(l.Args[1].(gpu.Ptr), 4*int(l.Grid.X))
			if err != nil {
				return err
			}
			want := faketest.ReadKernel(in, n, int(l.Grid.X), skip)
			for i := range out {
				if skip < 0 || i/4 != skip {
					out[i] = want[i]
				}
			}
			return nil
		}
	}
	own := func(l fakegpu.Launch) gpu.Ptr { return l.Args[0].(gpu.Ptr) }
	for _, tc := range []struct {
		name string
		exec func(d *fakegpu.Device, l fakegpu.Launch) error
		want string // "" passes
	}{
		{"kernel", run(-1, own), ""},
		{"block_dropped", run(0, own), "block 0 of"},
		{"shifted_source", run(-1, func(l fakegpu.Launch) gpu.Ptr { return b.w.At(0).Add(16) }), "the XOR of its share"},
		{"nothing", nil, "stored 0xffffffff"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dev.Exec = tc.exec
			for k := 0; k < b.copies; k++ {
				if err := v.Check.Prepare(k); err != nil {
					t.Fatal(err)
				}
				set = k
				if err := v.Enqueue(0, k); err != nil {
					t.Fatal(err)
				}
				err := v.Check.Verify(k)
				switch {
				case tc.want == "" && err != nil:
					t.Errorf("buffer set %d: %v", k, err)
				case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
					t.Errorf("buffer set %d: got %v, want an error with %q", k, err, tc.want)
				}
			}
		})
	}
}
