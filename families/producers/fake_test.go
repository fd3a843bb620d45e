package producers

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/parharness/parharness/bench"
	"github.com/parharness/parharness/families/internal/faketest"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/refimpl"
	"github.com/parharness/parharness/results"
	"github.com/parharness/parharness/shapes"
)

// The producer gate and benches on a fake device (internal/faketest): every
// launch's arguments match the compiled kernel's declared parameters on
// both targets, every registered producer kernel is run by the gate and
// timed by a bench, and a device that computes nothing fails every check.

var fakeTargets = faketest.Targets(1 << 20) // a small cache: few cold copies

// tinyShapes is a shapes set with one producer shape (K=256, P=2).
func tinyShapes(t *testing.T) *shapes.Set {
	s, err := shapes.Parse("tiny", strings.NewReader("model tiny\ntp 1\nlinear qkv K=256 N=(128+128) kind=w4a8\n"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestGateRunsEveryRegisteredKernel(t *testing.T) {
	for _, info := range fakeTargets {
		env, dev := faketest.Env(t, info)
		res := gates.RunGate(env, gates.Gate{Name: "producers-launches", Device: true, Run: func(t *gates.T) {
			for _, M := range []int{5, 200} {
				rng := rand.New(rand.NewPCG(1, uint64(M)))
				c := producerCase{K: 384, P: 2, M: M, dist: "normal"}
				rots := []*refimpl.Rotation{refimpl.RandomRotation(rng, c.K), refimpl.RandomRotation(rng, c.K)}
				x := randomActivations(rng, c.M, c.K, c.dist)
				in, err := newProducerInputs(rots, x, c, M <= GroupMaxM, true)
				t.Check(err, "inputs")
				runProducerCase(t, c, 1, in, &hostBuffers{})
				t.Release()
			}
		}})
		if bad := faketest.ArgumentErrors(res); len(bad) > 0 {
			t.Errorf("%s: %v", info.Arch, bad)
		}
		if res.Status != gates.Fail {
			t.Errorf("%s: a device that runs nothing got %s from the producer checks", info.Arch, res.Status)
		}
		want := faketest.Registered(Family, info, kernels.Baseline, kernels.Variant)
		if miss := faketest.Missing(want, dev.Kernels()); len(miss) > 0 {
			t.Errorf("%s: registered producer kernels the gate never ran: %v (ran %v)", info.Arch, miss, dev.Kernels())
		}
	}
}

// Every registered producer kernel is timed by one of the family's suites
// (experimental ones when --variants names them), and on a device that
// computes nothing every checked record is FAIL and untimed.
func TestBenchTimesEveryRegisteredKernel(t *testing.T) {
	for _, info := range fakeTargets {
		for _, experimental := range []bool{false, true} {
			c, dev := faketest.Ctx(t, info, tinyShapes(t), []int{8, 200})
			var want []string
			for _, k := range kernels.Select(kernels.Query{Family: Family, Arch: info.CodeArch(), Full: true}) {
				if (k.Status == kernels.Experimental) == experimental {
					want = append(want, k.Name)
					if experimental {
						c.Variants = append(c.Variants, k.Tag)
					}
				}
			}
			if experimental && len(want) == 0 {
				continue
			}
			for _, s := range bench.FamilySuites(Family) {
				if err := s.Run(c); err != nil {
					t.Fatalf("%s suite %s: %v", info.Arch, s.Name, err)
				}
			}
			for _, s := range bench.FamilySuites(Family) {
				if u := faketest.UndeclaredVariants(s, c.Records); len(u) > 0 {
					t.Errorf("%s: variants the suite runs but does not declare (--variants would refuse them): %v", info.Arch, u)
				}
			}
			if miss := faketest.Missing(want, dev.Kernels()); len(miss) > 0 {
				t.Errorf("%s (experimental %v): registered producer kernels no suite timed: %v", info.Arch, experimental, miss)
			}
			if len(c.Records) == 0 {
				t.Fatalf("%s: no records", info.Arch)
			}
			for _, r := range c.Records {
				if r.Check == nil || r.Check.Status != results.CheckFail || len(r.SamplesUS) != 0 || r.Verdict != "" {
					t.Errorf("%s %s: on a device that computes nothing: check %+v, %d samples, verdict %q", info.Arch, r.Key(), r.Check, len(r.SamplesUS), r.Verdict)
				}
			}
		}
	}
}

// The bench's output check passes the mirror's bytes and fails a kernel
// that wrote nothing, one wrong element, a byte past the output, or a
// write into another kernel's output, for every producer Op.
func TestBenchCheckCatchesWrongOutputs(t *testing.T) {
	info := fakeTargets[0]
	c, dev := faketest.Ctx(t, info, tinyShapes(t), nil)
	for _, s := range []producerSuite{
		{name: "grpq", op: OpGroup, bytes: func(M, K, P int) int64 { return 1 << 20 }, needs: needs{records: true}},
		{name: "rot", op: OpPassA, bytes: passABytes, needs: needs{records: true}},
		{name: "passc", op: OpPassC, bytes: passABytes, needs: needs{passA: true}},
		{name: "tokq", op: OpToken, bytes: tokBytes, needs: needs{records: true}},
	} {
		b, err := newProducerBufs(c, s, 8, 256, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, tiled := range layouts(s.op) {
			chk := b.check([]string{s.op}, tiled, sameSet)
			// write puts what a correct kernel of the op writes into copy k
			// (from copy from's inputs: a launch reading a fixed copy).
			writeFrom := func(k, from int) {
				put := func(set bench.CopySet, data []byte) {
					m, err := dev.Mem(set.At(k), len(data))
					if err != nil {
						t.Fatal(err)
					}
					copy(m, data)
				}
				w := b.wantAt(from)
				switch s.op {
				case OpGroup:
					put(b.codes, w.GroupCodes)
					put(b.scale, w.GroupScales)
					put(b.rsum, w.GroupRSums)
				case OpPassA:
					put(b.xr, w.xr)
					put(b.gamax, w.gamax)
				default:
					put(b.codes, map[bool][]byte{false: w.TokCodesRow, true: w.TokCodesTiled}[tiled])
					put(b.scale, w.TokScales)
					put(b.rsum, w.TokRSums)
				}
			}
			write := func(k int) { writeFrom(k, k) }
			name := s.name + "/" + layoutName(tiled)
			k := b.copies - 1
			if k == 0 {
				t.Fatalf("%s: one copy: the last copy's own inputs are not tested", name)
			}
			// The last copy written from copy 0's inputs: a launch that ignores
			// its copy index.
			if err := chk.Prepare(k); err != nil {
				t.Fatal(err)
			}
			writeFrom(k, 0)
			if err := chk.Verify(k); err == nil {
				t.Errorf("%s: copy 0's output in the last copy passed", name)
			}
			for _, tc := range []struct {
				what  string
				spoil func(m []byte, n int)
				ok    bool
			}{
				{"correct", nil, true},
				{"nothing written", func(m []byte, n int) { copy(m, slices.Repeat([]byte{0xFF}, n)) }, false},
				{"one element wrong", func(m []byte, n int) { m[n/2] ^= 1 }, false},
			} {
				if err := chk.Prepare(k); err != nil {
					t.Fatal(err)
				}
				write(k)
				if tc.spoil != nil {
					set := map[string]bench.CopySet{OpGroup: b.codes, OpPassA: b.xr, OpPassC: b.codes, OpToken: b.codes}[s.op]
					m, _ := dev.Mem(set.At(k), set.Size)
					n := len(b.want.xr)
					if s.op != OpPassA {
						n = len(map[bool][]byte{false: b.want.TokCodesRow, true: b.want.TokCodesTiled}[tiled])
						if s.op == OpGroup {
							n = len(b.want.GroupCodes)
						}
					}
					tc.spoil(m, n)
				}
				if err := chk.Verify(k); (err == nil) != tc.ok {
					t.Errorf("%s %s: Verify = %v, want ok=%v", name, tc.what, err, tc.ok)
				}
			}
			// A write into an output that is not the op's.
			if err := chk.Prepare(k); err != nil {
				t.Fatal(err)
			}
			write(k)
			other := b.codes
			if s.op != OpPassA {
				other = b.xr
				if s.op != OpGroup {
					other = b.codes // the per-token ops: a byte past the codes (rows past M)
				}
			}
			m, _ := dev.Mem(other.At(k), other.Size)
			m[len(m)-1] = 0
			if s.op == OpPassC || s.op == OpToken {
				if !tiled {
					if err := chk.Verify(k); err == nil {
						t.Errorf("%s: a byte past the codes passed", name)
					}
				}
			} else if err := chk.Verify(k); err == nil {
				t.Errorf("%s: a write into another op's output passed", name)
			}
		}
		c.FreeAll()
	}
}

// --shard I/N measures a deterministic part of the sweep: the parts are
// disjoint, together they are the unsharded sweep's points, and every part
// plans the same points.
func TestShardsPartitionTheSweep(t *testing.T) {
	info := fakeTargets[0]
	Ms := []int{8, 16, 200, 512, 1024}
	s, _ := bench.LookupSuite("rot")
	points := func(shard *results.Shard) (measured map[string]bool, planned []string) {
		c, _ := faketest.Ctx(t, info, tinyShapes(t), Ms)
		c.Suite, c.Shard = "rot", shard
		if err := s.Run(c); err != nil {
			t.Fatal(err)
		}
		measured = map[string]bool{}
		for _, r := range c.Records {
			measured[results.PointKey(r.Suite, r.Shape, r.M)] = true
		}
		return measured, c.Planned
	}
	all, plan := points(nil)
	if len(all) != len(Ms) {
		t.Fatalf("the unsharded sweep measured %d points, want %d", len(all), len(Ms))
	}
	union := map[string]bool{}
	for i := 0; i < 3; i++ {
		got, p := points(&results.Shard{Index: i, Count: 3})
		if !slices.Equal(p, plan) {
			t.Errorf("shard %d planned %v, the whole sweep %v", i, p, plan)
		}
		for k := range got {
			if union[k] {
				t.Errorf("point %s in two shards", k)
			}
			union[k] = true
		}
	}
	if len(union) != len(all) {
		t.Errorf("the shards together measured %d points, the whole sweep %d", len(union), len(all))
	}
	for k := range all {
		if !union[k] {
			t.Errorf("point %s in no shard", k)
		}
	}
}
