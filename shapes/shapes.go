// Package shapes holds the deployed GEMM shapes: the per-rank linears of a
// model at a tensor-parallel degree, and the M ladders the gates and benches
// sweep. The data lives in small text files embedded in the binary
// (qwen38-27b-tp1.txt, qwen38-27b-tp2.txt), so a reviewer reads the shapes,
// not code, and a sweep of a new model is a new file.
//
// # File format
//
// One directive per line; '#' starts a comment; blank lines are ignored.
//
//	model qwen38-27b                      the model's name (once)
//	tp 2                                  tensor-parallel degree (once)
//	linear NAME K=5120 N=6144+512+512 [kind=w4a8|bf16] [proj=a,b,c]
//	m NAME 1 2 5 8                        an M ladder, strictly increasing
//
// N lists the partitions along the output, separated by '+'. Each W4A8
// partition carries its own rotation; a partition that is itself several
// blocks sharing one rotation is parenthesized: N=(1024+1024+3072)+3072 is
// two partitions, the first of three blocks. kind defaults to w4a8; a bf16
// linear (GDN in_proj_ba) is listed for completeness and is not a W4A8
// GEMM. proj names, per partition, the checkpoint tensor-name suffix of the
// projection (self_attn.q_proj, ...), so a gate can find it in a real
// checkpoint. W4A8 linears need K a multiple of 128, every partition a
// multiple of 8 wide and at most 3 partitions (distinct rotations per
// launch).
//
// Errors say where and what: "qwen38-27b-tp2.txt:7: N: partition 2: \"51x\"
// is not a positive integer" (*Error).
package shapes

import (
	"bufio"
	"embed"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/parharness/parharness/refimpl"
)

//go:embed qwen38-27b-tp1.txt qwen38-27b-tp2.txt
var builtin embed.FS

// Kind is the arithmetic of a linear.
type Kind string

const (
	W4A8 Kind = "w4a8" // ParoQuant int4/int5 weights, fp8 or int8 activations
	BF16 Kind = "bf16" // plain bf16 GEMM (not a rotated linear)
)

// Set is one parsed shapes file.
type Set struct {
	Name    string // the file's base name without ".txt", e.g. "qwen38-27b-tp2"
	Model   string
	TP      int
	Linears []Linear
	Ladders []Ladder
}

// Linear is one per-rank linear.
type Linear struct {
	Name  string
	K     int
	Parts []Part
	Kind  Kind
	Line  int // where it was declared
}

// Part is one partition along N: one rotation for a W4A8 linear.
type Part struct {
	Blocks []int  // widths of the blocks that share the partition (one for a plain partition)
	Proj   string // checkpoint tensor-name suffix, "" when not given
}

// Ladder is a named list of M values.
type Ladder struct {
	Name string
	M    []int
}

// N is the partition's width.
func (p Part) N() int {
	n := 0
	for _, b := range p.Blocks {
		n += b
	}
	return n
}

// N is the linear's total output width.
func (l Linear) N() int {
	n := 0
	for _, p := range l.Parts {
		n += p.N()
	}
	return n
}

// P is the number of partitions.
func (l Linear) P() int { return len(l.Parts) }

// Widths lists the partition widths.
func (l Linear) Widths() []int {
	w := make([]int, len(l.Parts))
	for i, p := range l.Parts {
		w[i] = p.N()
	}
	return w
}

// Groups is K / 128 (the number of quantization groups).
func (l Linear) Groups() int { return l.K / refimpl.GroupSize }

// IsW4A8 reports whether the linear is a ParoQuant GEMM.
func (l Linear) IsW4A8() bool { return l.Kind == W4A8 }

// NString renders the partitions as in the file: 6144+512+512, (1024+1024+3072)+3072.
func (l Linear) NString() string {
	parts := make([]string, len(l.Parts))
	for i, p := range l.Parts {
		bs := make([]string, len(p.Blocks))
		for j, b := range p.Blocks {
			bs[j] = strconv.Itoa(b)
		}
		parts[i] = strings.Join(bs, "+")
		if len(bs) > 1 {
			parts[i] = "(" + parts[i] + ")"
		}
	}
	return strings.Join(parts, "+")
}

// W4A8 returns the W4A8 linears in file order.
func (s *Set) W4A8() []Linear {
	var out []Linear
	for _, l := range s.Linears {
		if l.IsW4A8() {
			out = append(out, l)
		}
	}
	return out
}

// Linear finds a linear by name.
func (s *Set) Linear(name string) (Linear, bool) {
	for _, l := range s.Linears {
		if l.Name == name {
			return l, true
		}
	}
	return Linear{}, false
}

// Ladder returns the M values of a ladder, nil if there is none.
func (s *Set) Ladder(name string) []int {
	for _, l := range s.Ladders {
		if l.Name == name {
			return l.M
		}
	}
	return nil
}

// Error is a malformed line.
type Error struct {
	File  string
	Line  int
	Field string // the directive or key at fault ("N", "K", "m", ...)
	Msg   string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s: %s", e.File, e.Field, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Field, e.Msg)
}

// Builtins lists the embedded sets.
func Builtins() []string {
	ents, _ := builtin.ReadDir(".")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".txt"))
	}
	sort.Strings(out)
	return out
}

// Builtin parses an embedded set by name ("qwen38-27b-tp2").
func Builtin(name string) (*Set, error) {
	f, err := builtin.Open(name + ".txt")
	if err != nil {
		return nil, fmt.Errorf("shapes: no built-in set %q (have %s)", name, strings.Join(Builtins(), ", "))
	}
	defer f.Close()
	return Parse(name+".txt", f)
}

// MustBuiltin is Builtin for the sets shipped with the binary, which the
// tests prove parse; it panics otherwise.
func MustBuiltin(name string) *Set {
	s, err := Builtin(name)
	if err != nil {
		panic(err)
	}
	return s
}

// Load parses a shapes file from disk.
func Load(path string) (*Set, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("shapes: %w", err)
	}
	defer f.Close()
	return Parse(filepath.Base(path), f)
}

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
var projRE = regexp.MustCompile(`^[A-Za-z0-9_.]+$`)

// Parse reads a shapes file; name (the file's base name) goes into error
// messages and, without ".txt", into Set.Name.
func Parse(name string, r io.Reader) (*Set, error) {
	s := &Set{Name: strings.TrimSuffix(name, ".txt")}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	line := 0
	fail := func(field, format string, args ...any) error {
		return &Error{File: name, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	seenLinear, seenLadder := map[string]int{}, map[string]int{}
	modelLine, tpLine := 0, 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "model":
			if modelLine != 0 {
				return nil, fail("model", "given twice (first on line %d)", modelLine)
			}
			if len(f) != 2 || !nameRE.MatchString(strings.ReplaceAll(f[1], "-", "_")) {
				return nil, fail("model", "want \"model NAME\" (lower-case letters, digits, '-', '_')")
			}
			s.Model, modelLine = f[1], line
		case "tp":
			if tpLine != 0 {
				return nil, fail("tp", "given twice (first on line %d)", tpLine)
			}
			if len(f) != 2 {
				return nil, fail("tp", "want \"tp N\"")
			}
			n, err := positive(f[1])
			if err != nil {
				return nil, fail("tp", "%v", err)
			}
			s.TP, tpLine = n, line
		case "linear":
			l, err := parseLinear(f[1:], line, fail)
			if err != nil {
				return nil, err
			}
			if first, dup := seenLinear[l.Name]; dup {
				return nil, fail("linear", "%s is already declared on line %d", l.Name, first)
			}
			seenLinear[l.Name] = line
			s.Linears = append(s.Linears, l)
		case "m":
			if len(f) < 3 || !nameRE.MatchString(f[1]) {
				return nil, fail("m", "want \"m NAME M1 M2 ...\" with a lower-case name and at least one M")
			}
			if first, dup := seenLadder[f[1]]; dup {
				return nil, fail("m", "ladder %s is already declared on line %d", f[1], first)
			}
			seenLadder[f[1]] = line
			lad := Ladder{Name: f[1]}
			for i, v := range f[2:] {
				m, err := positive(v)
				if err != nil {
					return nil, fail("m", "%s: value %d: %v", f[1], i+1, err)
				}
				if len(lad.M) > 0 && m <= lad.M[len(lad.M)-1] {
					return nil, fail("m", "%s: %d after %d: the ladder must increase", f[1], m, lad.M[len(lad.M)-1])
				}
				lad.M = append(lad.M, m)
			}
			s.Ladders = append(s.Ladders, lad)
		default:
			return nil, fail("directive", "unknown %q (want model, tp, linear or m)", f[0])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fail("read", "%v", err)
	}
	line = 0
	switch {
	case modelLine == 0:
		return nil, fail("model", "missing \"model NAME\" line")
	case tpLine == 0:
		return nil, fail("tp", "missing \"tp N\" line")
	case len(s.Linears) == 0:
		return nil, fail("linear", "no linears declared")
	}
	return s, nil
}

func positive(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 || n > 1<<30 || strconv.Itoa(n) != v {
		return 0, fmt.Errorf("%q is not a positive integer", v)
	}
	return n, nil
}

func parseLinear(f []string, line int, fail func(field, format string, args ...any) error) (Linear, error) {
	l := Linear{Kind: W4A8, Line: line}
	if len(f) == 0 || !nameRE.MatchString(f[0]) {
		return l, fail("linear", "want \"linear NAME K=... N=...\" with a lower-case name")
	}
	l.Name = f[0]
	kv := map[string]string{}
	for _, a := range f[1:] {
		k, v, ok := strings.Cut(a, "=")
		if !ok || v == "" {
			return l, fail("linear", "%s: %q is not key=value", l.Name, a)
		}
		switch k {
		case "K", "N", "kind", "proj":
		default:
			return l, fail("linear", "%s: unknown key %q (want K, N, kind or proj)", l.Name, k)
		}
		if _, dup := kv[k]; dup {
			return l, fail(k, "%s: given twice", l.Name)
		}
		kv[k] = v
	}
	for _, k := range []string{"K", "N"} {
		if _, ok := kv[k]; !ok {
			return l, fail(k, "%s: missing", l.Name)
		}
	}
	var err error
	if l.K, err = positive(kv["K"]); err != nil {
		return l, fail("K", "%s: %v", l.Name, err)
	}
	if l.Parts, err = parseN(kv["N"]); err != nil {
		return l, fail("N", "%s: %v", l.Name, err)
	}
	if k, ok := kv["kind"]; ok {
		switch Kind(k) {
		case W4A8, BF16:
			l.Kind = Kind(k)
		default:
			return l, fail("kind", "%s: %q, want w4a8 or bf16", l.Name, k)
		}
	}
	if p, ok := kv["proj"]; ok {
		projs := strings.Split(p, ",")
		if len(projs) != len(l.Parts) {
			return l, fail("proj", "%s: %d names for %d partitions", l.Name, len(projs), len(l.Parts))
		}
		for i, pr := range projs {
			if !projRE.MatchString(pr) {
				return l, fail("proj", "%s: partition %d: %q is not a tensor-name suffix", l.Name, i+1, pr)
			}
			l.Parts[i].Proj = pr
		}
	}
	if l.IsW4A8() {
		if l.K%refimpl.GroupSize != 0 {
			return l, fail("K", "%s: %d is not a multiple of %d (the W4A8 group)", l.Name, l.K, refimpl.GroupSize)
		}
		if l.P() > refimpl.MaxRotationsPerLaunch {
			return l, fail("N", "%s: %d partitions, a W4A8 launch takes at most %d rotations", l.Name, l.P(), refimpl.MaxRotationsPerLaunch)
		}
		for i, p := range l.Parts {
			if p.N()%8 != 0 {
				return l, fail("N", "%s: partition %d is %d wide, not a multiple of 8 (one packed word)", l.Name, i+1, p.N())
			}
		}
	}
	return l, nil
}

// parseN reads "a+b", "(a+b+c)+d": partitions of blocks.
func parseN(v string) ([]Part, error) {
	var parts []Part
	rest := v
	for i := 1; ; i++ {
		var p Part
		var tok string
		if strings.HasPrefix(rest, "(") {
			end := strings.IndexByte(rest, ')')
			if end < 0 {
				return nil, fmt.Errorf("partition %d: unclosed '('", i)
			}
			inner := rest[1:end]
			rest = rest[end+1:]
			for j, b := range strings.Split(inner, "+") {
				n, err := positive(b)
				if err != nil {
					return nil, fmt.Errorf("partition %d block %d: %v", i, j+1, err)
				}
				p.Blocks = append(p.Blocks, n)
			}
		} else {
			var after string
			var more bool
			tok, after, more = strings.Cut(rest, "+")
			rest = ""
			if more {
				rest = "+" + after
			}
			n, err := positive(tok)
			if err != nil {
				return nil, fmt.Errorf("partition %d: %v", i, err)
			}
			p.Blocks = []int{n}
		}
		parts = append(parts, p)
		if rest == "" {
			return parts, nil
		}
		if !strings.HasPrefix(rest, "+") || rest == "+" {
			return nil, fmt.Errorf("after partition %d: want '+' and another partition, got %q", i, rest)
		}
		rest = rest[1:]
	}
}

// Format writes a set in the canonical file form (aligned columns, no
// comments); Parse(Format(s)) gives s back.
func Format(w io.Writer, s *Set) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "model %s\ntp %d\n", s.Model, s.TP)
	for _, l := range s.Linears {
		fmt.Fprintf(bw, "linear %-14s K=%-5d N=%s", l.Name, l.K, l.NString())
		if l.Kind != W4A8 {
			fmt.Fprintf(bw, " kind=%s", l.Kind)
		}
		var projs []string
		for _, p := range l.Parts {
			projs = append(projs, p.Proj)
		}
		if strings.Join(projs, "") != "" {
			fmt.Fprintf(bw, " proj=%s", strings.Join(projs, ","))
		}
		fmt.Fprintln(bw)
	}
	for _, lad := range s.Ladders {
		fmt.Fprintf(bw, "m %s", lad.Name)
		for _, m := range lad.M {
			fmt.Fprintf(bw, " %d", m)
		}
		fmt.Fprintln(bw)
	}
	return bw.Flush()
}

// KP is one (K, partitions) pair: what a rotate-and-quantize producer sees
// of a W4A8 linear.
type KP struct{ K, P int }

// ProducerShapes returns the distinct (K, P) pairs of the set's W4A8
// linears, in file order.
func (s *Set) ProducerShapes() []KP {
	return distinctKPs(s)
}

// BuiltinProducerShapes returns the distinct (K, P) pairs of the named
// built-in sets' W4A8 linears, set by set in file order. It panics on a
// name Builtin does not know (the names are the caller's constants).
func BuiltinProducerShapes(names ...string) []KP {
	sets := make([]*Set, len(names))
	for i, name := range names {
		sets[i] = MustBuiltin(name)
	}
	return distinctKPs(sets...)
}

func distinctKPs(sets ...*Set) []KP {
	var out []KP
	seen := map[KP]bool{}
	for _, s := range sets {
		for _, l := range s.W4A8() {
			kp := KP{l.K, l.P()}
			if !seen[kp] {
				seen[kp] = true
				out = append(out, kp)
			}
		}
	}
	return out
}
