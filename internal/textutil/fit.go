package textutil

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/tw"
	"golang.org/x/term"
)

// MaxPipeWidth is the widest a table gets when its output is not a
// terminal (a log, a file, a pipe to less or to a CI page).
const MaxPipeWidth = 100

// Width is how many columns output to w may use: the terminal's width when
// w is a terminal (else $COLUMNS, else 80); otherwise $COLUMNS when it is
// set and narrower than MaxPipeWidth, else MaxPipeWidth.
func Width(w io.Writer) int {
	cols := 0
	if v, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && v > 0 {
		cols = v
	}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if tw, _, err := term.GetSize(int(f.Fd())); err == nil && tw > 0 {
			return tw
		}
		if cols > 0 {
			return cols
		}
		return 80
	}
	if cols > 0 && cols < MaxPipeWidth {
		return cols
	}
	return MaxPipeWidth
}

// Table is a table that fits a width. Cells that do not fit are wrapped at
// spaces (a word longer than its column is split, after a '/', ',', '=' or
// '_' where it has one), and a cell that would take more than MaxLines
// lines is cut with "…". Columns shrink widest first, the Shrink columns
// (free text: reasons, notes, figures) before any other, none below its
// header's longest word or 8 columns. Headers wrap at spaces, never cut.
// When even the narrowest layout is too wide, the table is printed as
// narrow as it goes.
type Table struct {
	Header   []string
	Align    []tw.Align // per column; nil: left
	Plain    bool       // borderless, a line under the header (NewPlainTable); else boxed
	Shrink   []int      // columns to narrow first
	MaxLines int        // lines a cell may wrap to before it is cut (0: 3; negative: no limit)
	rows     [][]string
}

// Append adds a row; each cell is printed with fmt.Sprint.
func (t *Table) Append(cells ...any) {
	row := make([]string, len(cells))
	for i, c := range cells {
		row[i] = fmt.Sprint(c)
	}
	t.rows = append(t.rows, row)
}

// Rows is the number of rows appended.
func (t *Table) Rows() int { return len(t.rows) }

// Render writes the table, fitted to width columns (0: as wide as the
// cells), without trailing spaces.
func (t *Table) Render(w io.Writer, width int) error {
	n := len(t.Header)
	for _, r := range t.rows {
		n = max(n, len(r))
	}
	if n == 0 {
		return nil
	}
	header := pad(t.Header, n)
	rows := make([][]string, len(t.rows))
	for i, r := range t.rows {
		rows[i] = pad(r, n)
	}
	widths := t.widths(header, rows, width)
	maxLines := t.MaxLines
	if maxLines == 0 {
		maxLines = 3
	}
	var buf bytes.Buffer
	tb := t.newWriter(&buf, n)
	hdr := make([]string, n)
	for i, h := range header {
		hdr[i] = strings.Join(wrap(h, widths[i], 0), "\n")
	}
	tb.Header(hdr)
	for _, r := range rows {
		cells := make([]string, n)
		for i, c := range r {
			cells[i] = strings.Join(wrap(c, widths[i], maxLines), "\n")
		}
		if err := tb.Append(cells); err != nil {
			return fmt.Errorf("textutil: table: %w", err)
		}
	}
	if err := tb.Render(); err != nil {
		return fmt.Errorf("textutil: table: %w", err)
	}
	_, err := w.Write(TrimTrailingSpace(buf.Bytes()))
	return err
}

func (t *Table) newWriter(w io.Writer, n int) *tablewriter.Table {
	align := t.Align
	if len(align) != n {
		align = make([]tw.Align, n)
		for i := range align {
			align[i] = tw.AlignLeft
			if i < len(t.Align) {
				align[i] = t.Align[i]
			}
		}
	}
	if t.Plain {
		return NewPlainTable(w, align)
	}
	return tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
	)
}

// overhead is how many columns the borders and padding of an n-column
// table take, measured by rendering one.
func (t *Table) overhead(n int) int {
	var buf bytes.Buffer
	tb := t.newWriter(&buf, n)
	cells := make([]string, n)
	for i := range cells {
		cells[i] = "x"
	}
	tb.Header(cells)
	tb.Append(cells)
	tb.Render()
	most := 0
	for _, l := range strings.Split(string(TrimTrailingSpace(buf.Bytes())), "\n") {
		most = max(most, twwidth.Width(l))
	}
	return most - n
}

// widths picks each column's width: its widest line, narrowed (widest
// first, the Shrink columns first) until the table fits width.
func (t *Table) widths(header []string, rows [][]string, width int) []int {
	n := len(header)
	want := make([]int, n)
	floor := make([]int, n)
	for i, h := range header {
		for _, word := range strings.Fields(h) {
			floor[i] = max(floor[i], twwidth.Width(word))
		}
		want[i] = twwidth.Width(h) // a header wraps only where its column must narrow
		for _, r := range rows {
			for _, l := range strings.Split(r[i], "\n") {
				want[i] = max(want[i], twwidth.Width(l))
			}
		}
		floor[i] = max(floor[i], min(want[i], 8))
	}
	if width <= 0 {
		return want
	}
	avail := width - t.overhead(n)
	got := slices.Clone(want)
	total := 0
	for _, g := range got {
		total += g
	}
	narrow := func(cols []int) {
		for total > avail {
			widest := -1
			for _, i := range cols {
				if got[i] > floor[i] && (widest < 0 || got[i] > got[widest]) {
					widest = i
				}
			}
			if widest < 0 {
				return
			}
			got[widest]--
			total--
		}
	}
	var shrink, all []int
	for i := 0; i < n; i++ {
		if slices.Contains(t.Shrink, i) {
			shrink = append(shrink, i)
		}
		all = append(all, i)
	}
	narrow(shrink)
	narrow(all)
	return got
}

func pad(r []string, n int) []string {
	out := make([]string, n)
	copy(out, r)
	return out
}

// wrap breaks s into lines of at most width columns: at spaces, and a word
// longer than width after its last '/', ',', '=' or '_' that fits, else
// at width. maxLines > 0 keeps that many lines, the last cut with "…".
func wrap(s string, width, maxLines int) []string {
	var lines []string
	for _, para := range strings.Split(s, "\n") {
		cur := ""
		for _, word := range strings.Fields(para) {
			if cur != "" && twwidth.Width(cur)+1+twwidth.Width(word) <= width {
				cur += " " + word
				continue
			}
			if cur != "" {
				lines = append(lines, cur)
				cur = ""
			}
			for twwidth.Width(word) > width {
				head, rest := splitWord(word, width)
				lines = append(lines, head)
				word = rest
			}
			cur = word
		}
		lines = append(lines, cur)
	}
	if maxLines > 0 && len(lines) > maxLines {
		last := lines[maxLines-1]
		lines = lines[:maxLines]
		if twwidth.Width(last)+1 > width {
			last = twwidth.Truncate(last, width-1)
		}
		lines[maxLines-1] = last + "…"
	}
	return lines
}

// splitWord splits a word wider than width into a head of at most width
// columns and the rest.
func splitWord(word string, width int) (head, rest string) {
	runes := []rune(word)
	cut, w := 0, 0
	for cut < len(runes) {
		rw := twwidth.Width(string(runes[cut]))
		if w+rw > width {
			break
		}
		w += rw
		cut++
	}
	cut = max(cut, 1)
	for i := cut - 1; i > 0; i-- {
		if strings.ContainsRune("/,=_", runes[i]) {
			cut = i + 1
			break
		}
	}
	return string(runes[:cut]), string(runes[cut:])
}
