package producers

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/parharness/parharness/refimpl"
)

// mirrorInputs draws a case's rotations, records and activations as the
// gate does (prepareCase), from seed.
func mirrorInputs(t testing.TB, c producerCase, seed uint64) (*refimpl.RotRecords, []uint16) {
	rng := rand.New(rand.NewPCG(seed, 0x9e))
	rots := make([]*refimpl.Rotation, c.P)
	for p := range rots {
		rots[p] = refimpl.RandomRotation(rng, c.K)
	}
	x := randomActivations(rng, c.M, c.K, c.dist)
	rr, err := refimpl.BuildRotRecords(rots)
	if err != nil {
		t.Fatal(err)
	}
	return rr, x
}

// wantFields names a producerWant's outputs for comparisons.
func wantFields(w producerWant) map[string][]byte {
	return map[string][]byte{"group codes": w.GroupCodes, "group scales": w.GroupScales, "group row sums": w.GroupRSums,
		"xr buffer": w.xrBuf, "gamax buffer": w.gamaxBuf, "xr": w.xr, "gamax": w.gamax, "token codes": w.TokCodesRow,
		"tiled codes": w.TokCodesTiled, "token scales": w.TokScales, "token row sums": w.TokRSums}
}

func sameWant(t *testing.T, what string, got, want producerWant) {
	t.Helper()
	g, w := wantFields(got), wantFields(want)
	for name := range w {
		if !bytes.Equal(g[name], w[name]) {
			i := 0
			for i < min(len(g[name]), len(w[name])) && g[name][i] == w[name][i] {
				i++
			}
			t.Errorf("%s: %s differ (%d and %d bytes, first difference at byte %d)", what, name, len(g[name]), len(w[name]), i)
		}
	}
}

// The parallel mirror (row blocks on every CPU, written in place) equals
// the serial composition of refimpl's whole-matrix functions byte for
// byte: M below, at, between and past whole 16-row tiles, P = 1..3, the
// deployed K, every distribution, with and without the per-group outputs.
// Run it with -race: the tasks write disjoint rows of shared outputs.
func TestParallelMirrorEqualsSerial(t *testing.T) {
	cases := []producerCase{
		{K: 5120, P: 3, M: 1, dist: "normal"},
		{K: 3072, P: 1, M: 5, dist: "subnormal"},
		{K: 8704, P: 1, M: 16, dist: "outlier"},
		{K: 5120, P: 2, M: 17, dist: "subnormal"},
		{K: 17408, P: 1, M: 40, dist: "normal"},
		{K: 6144, P: 1, M: 129, dist: "outlier"},
		{K: 5120, P: 3, M: 200, dist: "subnormal"},
	}
	for i, c := range cases {
		for _, withGroup := range []bool{c.M <= GroupMaxM, false} {
			name := fmt.Sprintf("K=%d/P=%d/M=%d/%s/group=%v", c.K, c.P, c.M, c.dist, withGroup)
			t.Run(name, func(t *testing.T) {
				rr, x := mirrorInputs(t, c, uint64(i))
				sameWant(t, name, buildMirror(rr, x, c, withGroup), buildSerialMirror(rr, x, c, withGroup).want())
			})
		}
	}
}

// The inputs and the mirror do not depend on the CPU count: one CPU and
// several draw the same activations and build the same bytes.
func TestMirrorIndependentOfCPUs(t *testing.T) {
	c := producerCase{K: 3072, P: 2, M: 75, dist: "outlier"}
	build := func(procs int) ([]uint16, producerWant) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		rr, x := mirrorInputs(t, c, 42)
		return x, buildMirror(rr, x, c, true)
	}
	x1, w1 := build(1)
	x4, w4 := build(4)
	if fmt.Sprint(x1) != fmt.Sprint(x4) {
		t.Fatal("the activations differ between 1 and 4 CPUs")
	}
	sameWant(t, "1 vs 4 CPUs", w4, w1)
}

// BenchmarkMirror is the host side of one prefill gate case before its
// launches: draw the activations, build the records and the mirror
// (K=5120, P=3, M=512; bytes counted are the activations').
func BenchmarkMirror(b *testing.B) {
	c := producerCase{K: 5120, P: 3, M: 512, dist: "normal"}
	b.SetBytes(int64(2 * c.M * c.K))
	for i := 0; b.Loop(); i++ {
		pc := prepareCase(uint64(i), c, casePlan{withShuffle: true})
		if pc.err != nil {
			b.Fatal(pc.err)
		}
	}
}

// BenchmarkMirrorSerial is the same case's mirror built serially
// (buildSerialMirror), for comparison.
func BenchmarkMirrorSerial(b *testing.B) {
	c := producerCase{K: 5120, P: 3, M: 512, dist: "normal"}
	rr, x := mirrorInputs(b, c, 1)
	b.SetBytes(int64(2 * c.M * c.K))
	for b.Loop() {
		buildSerialMirror(rr, x, c, false).want()
	}
}
