package gemm

import (
	"regexp"
	"strconv"
	"strings"
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
		body     string
		class, m int
	}
	var launched []launch
	for _, l := range dev.Launches {
		if l.Captured {
			t.Fatalf("%s captured into a graph under LaunchOnce", l.Kernel)
		}
		if m := matched.FindStringSubmatch(l.Kernel); m != nil {
			class, _ := strconv.Atoi(m[2])
			launched = append(launched, launch{m[1], class, int(l.Args[8].(uint32))}) // (wq, sz, act, asg, rsum, out, ws, sema, M, ...)
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
		if l := launched[i]; l.body != r.body || r.m > l.class || l.class-r.m >= 8 || l.m != r.m {
			t.Errorf("row %d is %s at M=%d, launch %d is %s_m%d with M=%d", i+1, r.body, r.m, i+1, l.body, l.class, l.m)
		}
	}
}

// The wp suite's row check launches the fragment kernel on its own (the
// bit-identity reference): its row stands before the row variant's, so the
// fragment-order and row-layout launches follow the printed rows one to one.
func TestLaunchOnceListsChecksOwnLaunches(t *testing.T) {
	c, dev := faketest.Ctx(t, fakeTargets[0], tinyShapes(t), []int{1, 16})
	c.Engine.LaunchOnce = true
	wp, ok := bench.LookupSuite("wp")
	if !ok {
		t.Fatal("no wp suite")
	}
	if err := wp.Run(c); err != nil {
		t.Fatal(err)
	}
	kernel := regexp.MustCompile(`^pq_gemm_dec_(rl_)?m\d+$`)
	var launched []string
	for _, l := range dev.Launches {
		if kernel.MatchString(l.Kernel) {
			launched = append(launched, map[bool]string{false: WPFragment, true: WPRow}[strings.Contains(l.Kernel, "_rl_")])
		}
	}
	var rows []string
	for _, r := range c.Records {
		switch {
		case r.Variant == WPRow:
			rows = append(rows, WPRow)
		case r.Variant == WPFragment || strings.HasPrefix(r.Variant, WPRow+" check: "):
			rows = append(rows, WPFragment)
		}
	}
	if len(rows) == 0 || strings.Join(rows, ",") != strings.Join(launched, ",") {
		t.Errorf("rows %v\nlaunches %v\nwant one launch a row, in order", rows, launched)
	}
}
