// Package sweep holds what the exhaustive gates share: a range of inputs cut
// into chunks over every CPU, and a mismatch log that keeps the count and
// the first few cases. The codec gates (families/e4m3, families/int5) walk
// all 2^32 inputs with them.
package sweep

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/gpu"
)

// Chunks runs fn over [0, n) split into chunks, on every CPU. fn is called
// concurrently; each index is in exactly one call.
func Chunks(n uint64, fn func(lo, hi uint64)) {
	workers := uint64(runtime.NumCPU())
	chunk := (n + workers*64 - 1) / (workers * 64)
	var next atomic.Uint64
	var wg sync.WaitGroup
	for w := uint64(0); w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				lo := next.Add(chunk) - chunk
				if lo >= n {
					return
				}
				fn(lo, min(lo+chunk, n))
			}
		}()
	}
	wg.Wait()
}

// MismatchLog collects the count of mismatches and the first few, from
// concurrent chunks.
type MismatchLog struct {
	mu    sync.Mutex
	count uint64
	first []string
}

// Add counts n mismatches and keeps describe's text (when describe is
// non-nil) among the first few.
func (m *MismatchLog) Add(n uint64, describe func() string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.count += n
	if describe != nil && len(m.first) < 8 {
		m.first = append(m.first, describe())
	}
}

// Count is the number of mismatches so far.
func (m *MismatchLog) Count() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.count
}

// First are the first few mismatches described.
func (m *MismatchLog) First() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.first...)
}

// Report fails t with the count and the first few when there were any.
func (m *MismatchLog) Report(t gates.Reporter, what string) {
	if c := m.Count(); c > 0 {
		t.Failf("%s: %d mismatches; first: %v", what, c, m.First())
	}
}

// TimedLaunch launches a kernel between two events and returns the
// milliseconds; it checks the arguments against the code object, syncs and
// checks canaries like T.Launch.
func TimedLaunch(t *gates.T, kernel string, grid, block gpu.Dim3, args ...any) float32 {
	dev := t.Device()
	f := t.CheckedFunction(kernel, args)
	start, err := dev.NewEvent()
	t.Check(err, "create event")
	defer dev.DestroyEvent(start)
	end, err := dev.NewEvent()
	t.Check(err, "create event")
	defer dev.DestroyEvent(end)
	t.Check(dev.Record(start, 0), "record event")
	t.Check(dev.Launch(f, grid, block, 0, 0, args...), "launch "+kernel)
	t.Check(dev.Record(end, 0), "record event")
	ms, err := dev.Elapsed(start, end)
	t.Check(err, "run "+kernel)
	t.Check(dev.Synchronize(), "run "+kernel)
	t.CheckCanaries(kernel)
	return ms
}
