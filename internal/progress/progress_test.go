package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/parharness/parharness/internal/golden"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// visible shows a terminal's control sequences as text, so golden files
// stay readable: carriage return and erase-to-end-of-line.
func visible(s string) string {
	return strings.NewReplacer("\r", "<CR>", "\x1b[K", "<EL>").Replace(s)
}

// run drives a meter through a loop of 12 cases of uneven size (the
// second half twice as big), one every 3 s, a 25 s case in the middle,
// and returns what it printed.
func run(tty bool) string {
	clock := &fakeClock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	var out bytes.Buffer
	m := New(&out, "producers", "cases", 12, Options{TTY: tty, Now: clock.now})
	m.SetWork(18) // 6 cases of 1 unit, 6 of 2
	for i := 0; i < 12; i++ {
		clock.advance(3 * time.Second)
		if i == 6 {
			clock.advance(25 * time.Second)
		}
		w := 1.0
		if i >= 6 {
			w = 2
		}
		m.Step(1, w)
	}
	m.Done()
	m.Step(1, 1) // after Done: nothing
	return visible(out.String())
}

func TestGoldenLog(t *testing.T) { golden.Check(t, "testdata/log.golden", []byte(run(false))) }

func TestGoldenTTY(t *testing.T) { golden.Check(t, "testdata/tty.golden", []byte(run(true))) }

// A loop that ends within the quiet period prints nothing, on a terminal
// or not; a nil meter does nothing at all.
func TestShortLoopIsQuiet(t *testing.T) {
	for _, tty := range []bool{false, true} {
		clock := &fakeClock{t: time.Unix(0, 0)}
		var out bytes.Buffer
		m := New(&out, "gemm", "cases", 5, Options{TTY: tty, Now: clock.now})
		for i := 0; i < 5; i++ {
			clock.advance(1900 * time.Millisecond)
			m.Step(1, 0)
		}
		m.Done()
		if out.Len() != 0 {
			t.Errorf("tty=%v: a 9.5 s loop printed %q", tty, out.String())
		}
	}
	var m *Meter
	m.SetWork(1)
	m.Step(1, 1)
	m.Set(1, 2, "x")
	m.Done()
}

// The estimate follows the work, not the item count: after one item that
// holds a tenth of the work, in 20 s, 180 s are left.
func TestEstimateIsWeighted(t *testing.T) {
	clock := &fakeClock{t: time.Unix(0, 0)}
	var out bytes.Buffer
	m := New(&out, "producers", "cases", 2, Options{Now: clock.now})
	m.SetWork(10)
	clock.advance(20 * time.Second)
	m.Step(1, 1)
	if got, want := out.String(), "producers: 1/2 cases, 20 s, ~180 s left\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// Set (a bench's point loop) reports the position and what runs now, at
// most every 10 s in a log.
func TestSetShowsDetail(t *testing.T) {
	clock := &fakeClock{t: time.Unix(0, 0)}
	var out bytes.Buffer
	m := New(&out, "rot", "points", 0, Options{Now: clock.now})
	for i, d := range []time.Duration{4, 4, 4, 4, 4, 4} {
		clock.advance(d * time.Second)
		m.Set(i, 6, "K=5120 P=3 M="+string(rune('1'+i)))
	}
	m.Done()
	want := "rot: 2/6 points, 12 s, ~24 s left (K=5120 P=3 M=3)\nrot: 5/6 points, 24 s, ~5 s left (K=5120 P=3 M=6)\nrot: 5/6 points, 24 s\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}
