package normrot

import (
	"testing"

	"github.com/parharness/parharness/bench"
	"github.com/parharness/parharness/families/internal/faketest"
)

// The bench's output check passes what a correct kernel writes and fails
// a wrong element, a byte past an output, and (the producer alone) a
// residual' it does not own, for both suites' checks.
func TestBenchCheckCatchesWrongOutputs(t *testing.T) {
	c, dev := faketest.Ctx(t, fakeTargets[0], tinyShapes(t), nil)
	for _, tc := range []struct {
		name           string
		perToken, hsIn bool
		op             string
	}{{"fused-group", false, false, OpGroup}, {"fused-token", true, false, OpToken}, {"rotq-token", true, true, OpToken}} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := newBenchBufs(c, 5, 256, 2, tc.perToken)
			if err != nil {
				t.Fatal(err)
			}
			defer c.FreeAll()
			chk := b.check(tc.op, tc.hsIn)
			k := b.copies - 1 // the last set: its own (negated) mirror
			write := func() {
				w := b.wantAt(k)
				codes, scale, rsum := w.GroupCodes, w.GroupScales, w.GroupRSums
				if tc.perToken {
					codes, scale, rsum = w.TokCodesRow, w.TokScales, w.TokRSums
				}
				put := func(s bench.CopySet, data []byte) {
					m, err := dev.Mem(s.At(k), len(data))
					if err != nil {
						t.Fatal(err)
					}
					copy(m, data)
				}
				if !tc.hsIn {
					put(b.hs, w.hs)
					put(b.rout, w.res)
				}
				put(b.codes, codes)
				put(b.scale, scale)
				put(b.rsum, rsum)
			}
			if err := chk.Prepare(k); err != nil {
				t.Fatal(err)
			}
			write()
			if err := chk.Verify(k); err != nil {
				t.Fatalf("the mirror's bytes failed: %v", err)
			}
			for _, bad := range []struct {
				what string
				s    bench.CopySet
				at   func(n int) int
			}{{"one wrong code", b.codes, func(int) int { return 7 }}, {"a byte past the codes", b.codes, func(n int) int { return n - 1 }},
				{"a byte past hs", b.hs, func(n int) int { return n - 1 }}, {"a residual' byte", b.rout, func(int) int { return 3 }}} {
				chk.Prepare(k)
				write()
				m, _ := dev.Mem(bad.s.At(k), bad.s.Size)
				m[bad.at(len(m))] ^= 0x5A
				if err := chk.Verify(k); err == nil {
					t.Errorf("%s passed", bad.what)
				}
			}
		})
	}
}
