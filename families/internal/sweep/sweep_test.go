package sweep

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/parharness/parharness/gates"
)

// Every index of the range is in exactly one call, for ranges that do and
// do not divide into the chunks.
func TestChunksCoverEachIndexOnce(t *testing.T) {
	for _, n := range []uint64{0, 1, 7, 1000, 1<<16 + 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			seen := make([]atomic.Int32, n)
			Chunks(n, func(lo, hi uint64) {
				if lo >= hi || hi > n {
					t.Errorf("chunk [%d, %d) of [0, %d)", lo, hi, n)
					return
				}
				for i := lo; i < hi; i++ {
					seen[i].Add(1)
				}
			})
			for i := range seen {
				if c := seen[i].Load(); c != 1 {
					t.Fatalf("index %d visited %d times", i, c)
				}
			}
		})
	}
}

func TestMismatchLog(t *testing.T) {
	var m MismatchLog
	var f gates.Findings
	m.Report(&f, "nothing")
	if f.Err() != nil {
		t.Fatalf("empty log reported: %v", f.Err())
	}
	Chunks(100, func(lo, hi uint64) {
		for i := lo; i < hi; i++ {
			m.Add(1, func() string { return fmt.Sprintf("case %d", i) })
		}
	})
	m.Add(5, nil)
	if m.Count() != 105 || len(m.First()) != 8 {
		t.Fatalf("count %d, %d kept, want 105 and 8", m.Count(), len(m.First()))
	}
	m.Report(&f, "the check")
	if err := f.Err(); err == nil || !strings.Contains(err.Error(), "the check: 105 mismatches") {
		t.Fatalf("report: %v", err)
	}
}
