package gemm

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/parharness/parharness/bench"
	"github.com/parharness/parharness/families/internal/faketest"
)

// bench2 --launch-once promises that a profiler's IDs, among the kernels
// it matched, follow the printed rows of the variants that launch them:
// on the dec suite, every named variant's row is one launch, eager, of its
// M class's kernel (the class of 8 rows holding M), in row order.
func TestLaunchOnceRowsFollowLaunches(t *testing.T) {
	info := fakeTargets[0] // sm_90: the PDL bodies exist there
	c, dev := faketest.Ctx(t, info, tinyShapes(t), []int{1, 5, 16, 40, 64})
	c.Engine.LaunchOnce = true
	bodies := map[string]string{decPDLName(TagWP3): "wp3", decPDLName(TagWPS): "wps"}
	for v := range bodies {
		c.Variants = append(c.Variants, v)
	}
	dec, ok := bench.LookupSuite("dec")
	if !ok {
		t.Fatal("no dec suite")
	}
	if err := dec.Run(c); err != nil {
		t.Fatal(err)
	}
	matched := regexp.MustCompile(`^pq_gemm_dec_(wp3|wps)_m(\d+)$`)
	type launch struct {
		body  string
		class int
	}
	var launched []launch
	for _, l := range dev.Launches {
		if l.Captured {
			t.Fatalf("%s captured into a graph under LaunchOnce", l.Kernel)
		}
		if m := matched.FindStringSubmatch(l.Kernel); m != nil {
			class, _ := strconv.Atoi(m[2])
			launched = append(launched, launch{m[1], class})
		}
	}
	type row struct {
		body string
		m    int
	}
	var rows []row
	for _, r := range c.Records {
		if body, ok := bodies[r.Variant]; ok {
			rows = append(rows, row{body, r.M})
		}
	}
	if len(rows) == 0 || len(rows) != len(launched) {
		t.Fatalf("%d rows of %v, %d matched launches: want one launch a row", len(rows), c.Variants, len(launched))
	}
	for i, r := range rows {
		if l := launched[i]; l.body != r.body || r.m > l.class || l.class-r.m >= 8 {
			t.Errorf("row %d is %s at M=%d, launch %d is %s_m%d", i+1, r.body, r.m, i+1, l.body, l.class)
		}
	}
}
