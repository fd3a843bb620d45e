package skinny

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/parharness/parharness/bench"
	"github.com/parharness/parharness/families/internal/faketest"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/internal/fakegpu"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/refimpl"
	"github.com/parharness/parharness/results"
	"github.com/parharness/parharness/shapes"
)

// The skinny gate and bench on a fake device (internal/faketest): every
// launch's arguments match the compiled kernels' declared parameters on
// both targets, every registered kernel is run by the gate and timed by
// the bench, a device that computes nothing fails every check, and a Go
// emulation of the kernels' block protocol passes the gate while each
// planted bug in it (reduce order, a lost slice or reduce batch, a counter
// left set, a write past its extent) fails it with the message naming the
// bug.

var fakeTargets = faketest.Targets(1 << 20)

// fakeShape is a small deployed-like shape: N = 48 (both n-tiles fit), 4 slices.
var fakeShape = Shape{"fake/N48", 48, 4 * Slice}

// gateOn runs the gate's case runner on cases over env (a fake device).
func gateOn(env *gates.Env, cases []gateCase) gates.Result {
	return gates.RunGate(env, gates.Gate{Name: "skinny-fake", Device: true, Run: func(t *gates.T) {
		for i, c := range cases {
			w := genWeights(rand.New(rand.NewPCG(3, 4)), c.shape.N, c.shape.K)
			if c.dist == "order" {
				w = orderWeights(w, c.shape.N, c.shape.K)
			}
			runCase(t, c, uint64(5+i), w)
			t.Release()
		}
	}})
}

func TestGateRunsEveryRegisteredKernel(t *testing.T) {
	for _, info := range fakeTargets {
		env, dev := faketest.Env(t, info)
		res := gateOn(env, []gateCase{{fakeShape, 1, "normal"}, {fakeShape, 9, "order"}, {fakeShape, 64, "wide"}})
		if bad := faketest.ArgumentErrors(res); len(bad) > 0 {
			t.Errorf("%s: %v", info.Arch, bad)
		}
		all := strings.Join(append([]string{res.Reason}, res.Failures...), "\n")
		for _, want := range []string{"NaN or unwritten", "the workspace was never written"} {
			if res.Status != gates.Fail || !strings.Contains(all, want) {
				t.Errorf("%s: a device that runs nothing got %s from the skinny checks, without %q: %s", info.Arch, res.Status, want, all)
			}
		}
		if miss := faketest.Missing(faketest.Registered(Family, info), dev.Kernels()); len(miss) > 0 {
			t.Errorf("%s: registered skinny kernels the gate never ran: %v (ran %v)", info.Arch, miss, dev.Kernels())
		}
		for _, l := range dev.Launches {
			k, _ := kernels.Lookup(l.Kernel)
			if k.Family != Family {
				continue // the gates' shared-memory poison before each launch
			}
			M := int(l.Args[5].(uint32))
			S, J, _ := Splits(k, fakeShape)
			cluster := l.Opts != nil && l.Opts.Cluster != (gpu.Dim3{})
			if l.SharedBytes != SharedBytes(M, J) || int(l.Block.X) != BlockThreads(k) || int(l.Grid.Y) != S {
				t.Errorf("%s %s M=%d: launched %v x %v with %d bytes of shared memory", info.Arch, l.Kernel, M, l.Grid, l.Block, l.SharedBytes)
			}
			if want := k.Form == FormCluster; cluster != want || (want && int(l.Opts.Cluster.Y) != S) {
				t.Errorf("%s %s M=%d: launch options %+v, want a 1 x %d cluster: %t", info.Arch, l.Kernel, M, l.Opts, S, want)
			}
		}
	}
}

func TestBenchTimesEveryRegisteredKernel(t *testing.T) {
	for _, info := range fakeTargets {
		c, dev := faketest.Ctx(t, info, shapes.MustBuiltin("qwen38-27b-tp2"), []int{1, 3})
		c.Variants = []string{"n16", "cl"} // the variants, by name
		for _, s := range bench.FamilySuites(Family) {
			if err := s.Run(c); err != nil {
				t.Fatalf("%s suite %s: %v", info.Arch, s.Name, err)
			}
		}
		if miss := faketest.Missing(faketest.Registered(Family, info), dev.Kernels()); len(miss) > 0 {
			t.Errorf("%s: registered skinny kernels no suite timed: %v", info.Arch, miss)
		}
		n := 0
		for _, r := range c.Records {
			n++
			if r.Check == nil || r.Check.Status != results.CheckFail {
				t.Errorf("%s %s: check %+v on a device that computes nothing", info.Arch, r.Key(), r.Check)
				continue
			}
			if len(r.SamplesUS) != 0 || r.Verdict != "" {
				t.Errorf("%s %s: a failed variant was timed (%d samples, verdict %q)", info.Arch, r.Key(), len(r.SamplesUS), r.Verdict)
			}
		}
		shs, _ := Shapes()
		want := 2 * 2 * len(shs) // (n8, n16) x 2 M x shapes
		if info.CodeArch() == kernels.SM90a {
			want += 2 * len(shs) // the cluster form's, on every shape (K = 5120)
		}
		if n != want {
			t.Errorf("%s: %d records, want %d", info.Arch, n, want)
		}
	}
}

// emulate is a fakegpu Exec that runs the skinny kernels' block protocol
// in Go: the blocks of a launch arrive in a seeded order that differs from
// launch to launch, each writes its slice's partials (Mirror's
// slicePartial) to ws and counts in its n-tile's counter, and the block
// that completes the count sums the partials into bf16 and resets the
// counter. bug plants one defect ("": none).
func emulate(bug string) func(d *fakegpu.Device, l fakegpu.Launch) error {
	launches := uint64(0)
	return func(d *fakegpu.Device, l fakegpu.Launch) error {
		launches++
		k, _ := kernels.Lookup(l.Kernel)
		nt := NTile(k)
		ptr := func(i int) gpu.Ptr { return l.Args[i].(gpu.Ptr) }
		M, N, K := int(l.Args[5].(uint32)), int(l.Args[6].(uint32)), int(l.Args[7].(uint32))
		S, tiles := K/Slice, N/nt
		if k.Form == FormCluster {
			return emulateCluster(d, l, bug, M, N, K)
		}
		mem := func(i, n int) []byte {
			b, err := d.Mem(ptr(i), n)
			if err != nil {
				panic(err)
			}
			return b
		}
		xb, wb, out, ws, cnt := mem(0, 2*M*K), mem(1, 2*N*K), mem(2, 2*(M+1)*N), mem(3, 4*(S*M*N+1)), mem(4, 4*tiles)
		xf, wf := make([]float32, M*K), make([]float32, N*K)
		for i := range xf {
			xf[i] = refimpl.BF16ToF32(binary.LittleEndian.Uint16(xb[2*i:]))
		}
		for i := range wf {
			wf[i] = refimpl.BF16ToF32(binary.LittleEndian.Uint16(wb[2*i:]))
		}
		put32 := func(b []byte, i int, v uint32) { binary.LittleEndian.PutUint32(b[4*i:], v) }
		arrived := make([][]int, tiles) // slices of each n-tile in arrival order
		for _, blk := range rand.New(rand.NewPCG(launches, 9)).Perm(tiles * S) {
			tile, s := blk%tiles, blk/tiles
			for n := tile * nt; n < (tile+1)*nt; n++ {
				for m := 0; m < M; m++ {
					p := splitPartial(xf[m*K+s*Slice:m*K+(s+1)*Slice], wf[n*K+s*Slice:n*K+(s+1)*Slice], 1)
					put32(ws, (s*M+m)*N+n, math.Float32bits(p))
				}
			}
			if bug == "ws-past" {
				put32(ws, S*M*N, 0)
			}
			arrived[tile] = append(arrived[tile], s)
			c := binary.LittleEndian.Uint32(cnt[4*tile:]) + 1
			put32(cnt, tile, c)
			if int(c) != S {
				continue
			}
			order := make([]int, S)
			for i := range order {
				order[i] = i
			}
			switch bug {
			case "reversed":
				for i := range order {
					order[i] = S - 1 - i
				}
			case "arrival":
				order = arrived[tile]
			case "dropped":
				order = order[:S-1]
			case "one-batch": // the reduce's first batch of 32 slices only
				order = order[:min(S, 32)]
			}
			for n := tile * nt; n < (tile+1)*nt; n++ {
				for m := 0; m < M; m++ {
					sum := float32(0)
					for _, s := range order {
						sum = sum + math.Float32frombits(binary.LittleEndian.Uint32(ws[4*((s*M+m)*N+n):]))
					}
					binary.LittleEndian.PutUint16(out[2*(m*N+n):], refimpl.F32ToBF16(sum))
				}
			}
			if bug == "row-past" {
				binary.LittleEndian.PutUint16(out[2*M*N:], 0)
			}
			if bug != "no-reset" {
				put32(cnt, tile, 0)
			}
		}
		return nil
	}
}

// emulateCluster runs the cluster form: each CTA's partial over its J
// slices, rank 0 summing ranks 0..S-1; no workspace or counters. The
// order bugs apply to the rank sum.
func emulateCluster(d *fakegpu.Device, l fakegpu.Launch, bug string, M, N, K int) error {
	S, J, ok := ClusterSplits(K)
	if !ok || int(l.Grid.Y) != S || l.Opts == nil || int(l.Opts.Cluster.Y) != S {
		return nil // a launch the kernel's rank arithmetic would get wrong: computes nothing
	}
	xb, err := d.Mem(l.Args[0].(gpu.Ptr), 2*M*K)
	if err != nil {
		return err
	}
	wb, err := d.Mem(l.Args[1].(gpu.Ptr), 2*N*K)
	if err != nil {
		return err
	}
	out, err := d.Mem(l.Args[2].(gpu.Ptr), 2*M*N)
	if err != nil {
		return err
	}
	x, w := make([]uint16, M*K), make([]uint16, N*K)
	for i := range x {
		x[i] = binary.LittleEndian.Uint16(xb[2*i:])
	}
	for i := range w {
		w[i] = binary.LittleEndian.Uint16(wb[2*i:])
	}
	parts := SplitPartials(x, w, M, N, K, J)
	var order []int
	switch bug {
	case "reversed":
		for r := S - 1; r >= 0; r-- {
			order = append(order, r)
		}
	case "dropped":
		for r := 0; r < S-1; r++ {
			order = append(order, r)
		}
	}
	for i, b := range ReduceOrder(parts, S, M, N, order) {
		binary.LittleEndian.PutUint16(out[2*i:], b)
	}
	if bug == "cluster-ws" { // a partial parked in the workspace this form must not touch
		ws, err := d.Mem(l.Args[3].(gpu.Ptr), 4)
		if err != nil {
			return err
		}
		binary.LittleEndian.PutUint32(ws, math.Float32bits(parts[0]))
	}
	return nil
}

// The cluster form (sm_90a) must leave the workspace untouched: an
// emulation that parks a partial there fails the gate, naming it.
func TestGateClusterFormLeavesTheWorkspace(t *testing.T) {
	for _, info := range fakeTargets {
		if info.CodeArch() != kernels.SM90a {
			continue
		}
		env, dev := faketest.Env(t, info)
		dev.Exec = emulate("cluster-ws")
		res := gateOn(env, []gateCase{{fakeShape, 3, "normal"}})
		all := strings.Join(append([]string{res.Reason}, res.Failures...), "\n")
		if res.Status != gates.Fail || !strings.Contains(all, "skinny_bf16_cl_n8 launch 1: ws byte 0 was written: this form reduces in distributed shared memory") {
			t.Errorf("%s: got %s: %s", info.Arch, res.Status, all)
		}
	}
}

func TestGateOnAnEmulatedKernel(t *testing.T) {
	cases := []gateCase{{fakeShape, 1, "normal"}, {fakeShape, 9, "order"}, {fakeShape, 17, "wide"},
		{edgeShapes[0], 3, "order"}, {edgeShapes[2], 9, "order"}} // one slice; 33 (two reduce batches)
	for _, tc := range []struct {
		bug  string
		want string // a failure must contain it ("": the gate passes)
	}{
		{"", ""},
		{"reversed", "differ from the mirror"},
		{"arrival", "differ from the mirror"},
		{"dropped", "off the fp64 reference"},
		{"one-batch", "synthetic/K8448 (N=48 K=8448) M=9 order seed=9 skinny_bf16_n8 launch 1: rel"},
		{"no-reset", "the split-K counters must be back at 0"},
		{"row-past", "(past M=1) was written"},
		{"ws-past", "was written, past the"},
	} {
		t.Run("bug="+tc.bug, func(t *testing.T) {
			for _, info := range fakeTargets {
				env, dev := faketest.Env(t, info)
				dev.Exec = emulate(tc.bug)
				res := gateOn(env, cases)
				all := strings.Join(append([]string{res.Reason}, res.Failures...), "\n")
				if tc.want == "" {
					if res.Status != gates.Pass {
						t.Errorf("%s: the emulated kernel got %s: %s", info.Arch, res.Status, all)
					}
					continue
				}
				if res.Status != gates.Fail || !strings.Contains(all, tc.want) {
					t.Errorf("%s: got %s, want a failure containing %q: %s", info.Arch, res.Status, tc.want, all)
				}
			}
		})
	}
}
