// Package progress reports how far a long loop has got, one line at a
// time, to a writer of its own (stderr), never into the results a command
// prints on stdout. A loop that ends within Quiet (10 s) prints nothing.
// After that, on a terminal one line is redrawn in place at most once a
// second and erased when the loop ends; elsewhere (a log file, CI) a new
// line is printed at most every 10 s, and a last one when the loop ends:
//
//	producers: 37/120 cases, 14 s, ~31 s left
//
// Reports are printed from the loop's own calls (Step, Set), so a line
// appears when an item finishes, never from a timer in between. The time
// left is the elapsed time scaled by the work still to do, counted in
// items or, when the items differ in size, in the work units SetWork and
// Step give (a case's element count).
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// Options say how a Meter prints. The zero value is a log (not a
// terminal) with the default intervals and the real clock.
type Options struct {
	TTY   bool             // redraw one line in place (a terminal)
	Quiet time.Duration    // print nothing until this long after New (0: 10 s)
	Every time.Duration    // least time between two reports (0: 1 s on a terminal, 10 s otherwise)
	Now   func() time.Time // the clock (nil: time.Now); tests pass a fake
}

// ForWriter are the options for w: a terminal when w is one.
func ForWriter(w io.Writer) Options {
	f, ok := w.(*os.File)
	return Options{TTY: ok && term.IsTerminal(int(f.Fd()))}
}

// Meter reports one loop. A nil *Meter reports nothing, so code can take
// one whether or not anyone is watching.
type Meter struct {
	mu          sync.Mutex
	w           io.Writer
	label, unit string
	o           Options
	total, done int
	work, doneW float64 // total and finished work units (items unless SetWork)
	weighted    bool
	detail      string
	start, last time.Time
	shown, over bool
}

// New starts a meter for total items of unit ("cases"), labelled label
// ("producers"); the clock starts now.
func New(w io.Writer, label, unit string, total int, o Options) *Meter {
	if o.Quiet == 0 {
		o.Quiet = 10 * time.Second
	}
	if o.Every == 0 {
		o.Every = 10 * time.Second
		if o.TTY {
			o.Every = time.Second
		}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Meter{w: w, label: label, unit: unit, o: o, total: total, work: float64(total), start: o.Now()}
}

// SetWork makes the estimate of the time left proportional to work units
// instead of items: total is the whole loop's work, and each Step says how
// much it finished.
func (m *Meter) SetWork(total float64) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.work, m.weighted = total, true
}

// Step records that n more items, of work units of work together, are
// done (work is ignored unless SetWork was called), and prints a report
// if one is due.
func (m *Meter) Step(n int, work float64) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done += n
	if m.weighted {
		m.doneW += work
	} else {
		m.doneW += float64(n)
	}
	m.report()
}

// Set records that done of total items are done and that detail is what
// runs now (shown at the end of the line), for loops that know their
// position rather than count steps; the work is counted in items.
func (m *Meter) Set(done, total int, detail string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done, m.total, m.detail = done, total, detail
	m.work, m.doneW, m.weighted = float64(total), float64(done), false
	m.report()
}

// Done ends the meter: a terminal's line is erased, a log gets a last
// line (if it got any), and later calls print nothing.
func (m *Meter) Done() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.over {
		return
	}
	m.over = true
	if !m.shown {
		return
	}
	if m.o.TTY {
		fmt.Fprint(m.w, "\r\x1b[K")
		return
	}
	fmt.Fprintf(m.w, "%s: %d/%d %s, %s\n", m.label, m.done, m.total, m.unit, seconds(m.o.Now().Sub(m.start)))
}

func (m *Meter) report() {
	now := m.o.Now()
	if m.over || now.Sub(m.start) < m.o.Quiet || (m.shown && now.Sub(m.last) < m.o.Every) {
		return
	}
	m.shown, m.last = true, now
	line := m.line(now)
	if m.o.TTY {
		fmt.Fprintf(m.w, "\r%s\x1b[K", line)
		return
	}
	fmt.Fprintln(m.w, line)
}

// line is one report: the items done, the time so far, the estimate of
// the time left (once some work is done) and the detail.
func (m *Meter) line(now time.Time) string {
	elapsed := now.Sub(m.start)
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d/%d %s, %s", m.label, m.done, m.total, m.unit, seconds(elapsed))
	if m.doneW > 0 && m.doneW < m.work {
		left := time.Duration(float64(elapsed) * (m.work - m.doneW) / m.doneW)
		fmt.Fprintf(&b, ", ~%s left", seconds(left))
	}
	if m.detail != "" {
		fmt.Fprintf(&b, " (%s)", m.detail)
	}
	return b.String()
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.0f s", d.Seconds()) }
