// Package par spreads independent pieces of host work over every CPU. For
// runs a body for indices 0..n-1 on up to GOMAXPROCS goroutines that take
// the next index as they finish one; results are deterministic when each
// index writes only its own outputs (the callers' contract), whatever the
// order the indices run in. Equal and IndexNot are bytes.Equal and a
// first-mismatch search split the same way, for the large downloads the
// gates compare.
package par

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// For calls body(i) for every i in [0, n) and returns when all calls have
// returned. A panic in a body is raised again in the caller (the first
// one, with the index it happened at) after the other calls finish, so a
// gate's recover sees it as it would a serial loop's.
func For(n int, body func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := 0; i < n; i++ {
			body(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var failure any
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			i := -1
			defer func() {
				if r := recover(); r != nil {
					once.Do(func() { failure = Panic{Index: i, Value: r, Stack: string(debug.Stack())} })
					next.Store(int64(n)) // stop handing out work
				}
			}()
			for {
				i = int(next.Add(1) - 1)
				if i >= n {
					return
				}
				body(i)
			}
		}()
	}
	wg.Wait()
	if failure != nil {
		panic(failure)
	}
}

// Panic is what For raises when a body panicked: the index, the value and
// the panicking goroutine's stack.
type Panic struct {
	Index int
	Value any
	Stack string
}

func (p Panic) String() string {
	return fmt.Sprintf("par.For index %d: %v\n%s", p.Index, p.Value, p.Stack)
}

// chunk is the span one goroutine compares: large enough that the
// handing-out costs nothing next to it.
const chunk = 4 << 20

// Equal reports whether a and b hold the same bytes (bytes.Equal).
func Equal(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) <= chunk {
		return bytes.Equal(a, b)
	}
	n := (len(a) + chunk - 1) / chunk
	var differ atomic.Bool
	For(n, func(i int) {
		lo, hi := i*chunk, min((i+1)*chunk, len(a))
		if !differ.Load() && !bytes.Equal(a[lo:hi], b[lo:hi]) {
			differ.Store(true)
		}
	})
	return !differ.Load()
}

// fills are the blocks IndexNot compares against, one per byte value,
// made on first use.
var fills sync.Map // byte -> []byte

func block(v byte) []byte {
	if b, ok := fills.Load(v); ok {
		return b.([]byte)
	}
	b := bytes.Repeat([]byte{v}, 64<<10)
	fills.Store(v, b)
	return b
}

// IndexNot is the index of the first byte of b that is not v, or -1.
func IndexNot(b []byte, v byte) int {
	if len(b) <= chunk {
		return indexNot(b, v)
	}
	n := (len(b) + chunk - 1) / chunk
	first := make([]int, n)
	For(n, func(i int) {
		lo, hi := i*chunk, min((i+1)*chunk, len(b))
		first[i] = -1
		if j := indexNot(b[lo:hi], v); j >= 0 {
			first[i] = lo + j
		}
	})
	for _, j := range first {
		if j >= 0 {
			return j
		}
	}
	return -1
}

func indexNot(b []byte, v byte) int {
	fill := block(v)
	for lo := 0; lo < len(b); lo += len(fill) {
		hi := min(lo+len(fill), len(b))
		if bytes.Equal(b[lo:hi], fill[:hi-lo]) {
			continue
		}
		for i := lo; i < hi; i++ {
			if b[i] != v {
				return i
			}
		}
	}
	return -1
}
