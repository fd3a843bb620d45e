package producers

import (
	"testing"

	"github.com/parharness/parharness/bench"
	"github.com/parharness/parharness/families/internal/faketest"
)

// A suite's cold rotation is sized by what its variants touch: the bytes it
// counts plus the records it reads, not every buffer the point allocates
// (pass A's outputs are no part of the decode producer's footprint).
func TestProducerFootprintIsWhatTheSuiteTouches(t *testing.T) {
	c, _ := faketest.Ctx(t, fakeTargets[0], tinyShapes(t), nil)
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
		if b.fp != want || b.copies != bench.CopiesFor(want, c.Dev.Info().LLCBytes) {
			t.Errorf("%s: footprint %d copies %d, want %d and %d", name, b.fp, b.copies, want, bench.CopiesFor(want, c.Dev.Info().LLCBytes))
		}
	}
}
