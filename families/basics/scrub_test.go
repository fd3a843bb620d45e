package basics

import (
	"strings"
	"testing"
)

// The scrub check's verdict on synthetic samples: a scrub that evicts, one
// that leaves part of the data resident (the doubled scrub is slower), and
// one that evicts nothing (the hot copy is no faster).
func TestJudgeScrub(t *testing.T) {
	around := func(us float64) []float64 {
		var xs []float64
		for i := range 12 {
			xs = append(xs, us*(1+0.002*float64(i%4)))
		}
		return xs
	}
	for _, tc := range []struct {
		name                string
		scrub, scrub2x, hot float64
		ok                  bool
		why                 string
	}{
		{"evicts", 10, 10, 6, true, ""},
		{"leaves-data-resident", 10, 11, 6, false, "leaves data resident"},
		{"evicts-nothing", 6, 6, 6, false, "evicts nothing"},
		{"hot-slower", 10, 10, 12, false, "evicts nothing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := map[string][]float64{"scrub": around(tc.scrub), "control": around(tc.scrub), "scrub2x": around(tc.scrub2x), "hot": around(tc.hot)}
			r, err := judgeScrub("test scrub", 16<<20, s)
			if err != nil {
				t.Fatal(err)
			}
			if r.OK != tc.ok || !strings.Contains(r.Why, tc.why) {
				t.Errorf("ok %v why %q; want ok %v, why containing %q (%+v)", r.OK, r.Why, tc.ok, tc.why, r)
			}
		})
	}
	t.Run("missing-arm", func(t *testing.T) {
		if _, err := judgeScrub("test scrub", 16<<20, map[string][]float64{"scrub": around(10)}); err == nil {
			t.Error("no error without the control arm")
		}
	})
}
