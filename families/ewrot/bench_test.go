package ewrot

import (
	"strings"
	"testing"

	"github.com/parharness/parharness/bench"
	"github.com/parharness/parharness/families/internal/faketest"
	"github.com/parharness/parharness/results"
	"github.com/parharness/parharness/shapes"
)

// tinyShapes has the three linears the ops feed, small.
func tinyShapes(t *testing.T) *shapes.Set {
	s, err := shapes.Parse("tiny", strings.NewReader("model tiny\ntp 1\n"+
		"linear mlp_down K=256 N=128 kind=w4a8\nlinear attn_o K=384 N=128 kind=w4a8\nlinear gdn_out K=512 N=128 kind=w4a8\n"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The suite times every registered ewrot kernel and the producers' peers
// of the unfused chain, for every op, and on a device that computes
// nothing every record is FAIL and untimed.
func TestBenchTimesEveryRegisteredKernel(t *testing.T) {
	for _, info := range fakeTargets {
		c, dev := faketest.Ctx(t, info, tinyShapes(t), []int{8, 200})
		for _, s := range bench.FamilySuites(Family) {
			if err := s.Run(c); err != nil {
				t.Fatalf("%s suite %s: %v", info.Arch, s.Name, err)
			}
			if u := faketest.UndeclaredVariants(s, c.Records); len(u) > 0 {
				t.Errorf("%s: variants the suite runs but does not declare: %v", info.Arch, u)
			}
		}
		want := append(faketest.Registered(Family, info), "pq_rotq_group", "pq_rotq_token")
		if miss := faketest.Missing(want, dev.Kernels()); len(miss) > 0 {
			t.Errorf("%s: kernels no suite timed: %v", info.Arch, miss)
		}
		shapesSeen := map[string]bool{}
		for _, r := range c.Records {
			shapesSeen[r.Shape] = true
			if r.Check == nil || r.Check.Status != results.CheckFail || len(r.SamplesUS) != 0 || r.Verdict != "" {
				t.Errorf("%s %s: on a device that computes nothing: check %+v, %d samples, verdict %q", info.Arch, r.Key(), r.Check, len(r.SamplesUS), r.Verdict)
			}
		}
		// 3 ops x 2 Ms; per point the fused kernel and the chain (x2 layouts at M=200).
		if len(shapesSeen) != 3 || len(c.Records) < 3*(2+4) {
			t.Errorf("%s: %d records over shapes %v, want every op at both M with fused and chain", info.Arch, len(c.Records), shapesSeen)
		}
	}
}

// The bench's check passes the mirror's bytes and fails a missing write,
// one wrong element and a write into the intermediate rows by the fused
// kernel.
func TestBenchCheckCatchesWrongOutputs(t *testing.T) {
	info := fakeTargets[0]
	c, dev := faketest.Ctx(t, info, tinyShapes(t), nil)
	for _, op := range []string{OpGroup, OpToken} {
		t.Run(op, func(t *testing.T) {
			M := 8
			b, err := newBenchBufs(c, GatedNorm, op, M, 512, 1)
			if err != nil {
				t.Fatal(err)
			}
			w := b.want
			codes, scale, rsum := w.GroupCodes, w.GroupScales, w.GroupRSums
			if op == OpToken {
				codes, scale, rsum = w.TokCodesRow, w.TokScales, w.TokRSums
			}
			write := func(rows bool, codesBytes []byte) {
				for _, s := range []struct {
					set  bench.CopySet
					data []byte
				}{{b.codes, codesBytes}, {b.scale, scale}, {b.rsum, rsum}} {
					if err := dev.HtoD(s.set.At(0), s.data); err != nil {
						t.Fatal(err)
					}
				}
				if rows {
					if err := dev.HtoD(b.rows.At(0), w.Rows); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, c := range []struct {
				name   string
				chain  bool
				rows   bool
				mutate func([]byte) []byte
				ok     bool
			}{
				{"fused right", false, false, nil, true},
				{"chain right", true, true, nil, true},
				{"fused wrote the rows", false, true, nil, false},
				{"chain rows missing", true, false, nil, false},
				{"one code wrong", false, false, func(b []byte) []byte { b = append([]byte{}, b...); b[7] ^= 1; return b }, false},
			} {
				ck := b.check(op, false, c.chain)
				if err := ck.Prepare(0); err != nil {
					t.Fatal(err)
				}
				cb := codes
				if c.mutate != nil {
					cb = c.mutate(codes)
				}
				write(c.rows, cb)
				if err := ck.Verify(0); (err == nil) != c.ok {
					t.Errorf("%s: Verify = %v, want ok=%v", c.name, err, c.ok)
				}
			}
			if err := b.check(op, false, false).Prepare(0); err != nil {
				t.Fatal(err)
			}
			if err := b.check(op, false, false).Verify(0); err == nil {
				t.Error("nothing written: Verify passed")
			}
			c.FreeAll()
		})
	}
}
