package mutate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Mutant is one planted bug: one edit of one source line.
type Mutant struct {
	ID       string `json:"id"`
	Operator string `json:"operator"`
	File     string `json:"file"` // relative to the repository root, slash-separated
	Line     int    `json:"line"`
	Col      int    `json:"col"`    // 1-based byte column where the edit starts
	Func     string `json:"func"`   // the function the site is in
	Kernel   bool   `json:"kernel"` // Func is a kernel entry point
	Arch     string `json:"arch"`   // the targets the line is compiled for (all, nvptx, amdgcn)
	Before   string `json:"before"` // the line, before and after the edit (leading whitespace trimmed)
	After    string `json:"after"`
	Edit     Edit   `json:"edit"` // byte offsets into the file
}

// Apply returns the mutated source text.
func (m Mutant) Apply(text []byte) ([]byte, error) {
	e := m.Edit
	if e.Start < 0 || e.End > len(text) || e.Start > e.End {
		return nil, fmt.Errorf("mutant %s: edit %d..%d is outside %s (%d bytes): the source changed since the mutant list was made", m.ID, e.Start, e.End, m.File, len(text))
	}
	out := make([]byte, 0, len(text)+len(e.New))
	out = append(out, text[:e.Start]...)
	out = append(out, e.New...)
	return append(out, text[e.End:]...), nil
}

// Options choose the mutants.
type Options struct {
	// PerOpFile caps the mutants of one operator in one file (0: no cap).
	PerOpFile int
	// Targets keeps only sites on lines compiled for one of these targets.
	Targets Arch
	// Operators restricts the catalogue to these names (nil: all).
	Operators []string
	// SkipFuncs are functions whose bodies get no mutant: kernels no gate
	// runs by design (attribution kernels), whose mutants could only survive.
	SkipFuncs []string
}

// LoadSources reads the sources matching the glob patterns (relative to
// root), in sorted order, each scanned.
func LoadSources(root string, patterns []string) ([]*Source, error) {
	seen := map[string]bool{}
	var paths []string
	for _, p := range patterns {
		ms, err := filepath.Glob(filepath.Join(root, p))
		if err != nil {
			return nil, fmt.Errorf("source pattern %q: %v", p, err)
		}
		if len(ms) == 0 {
			return nil, fmt.Errorf("source pattern %q matches no file under %s", p, root)
		}
		for _, m := range ms {
			rel, err := filepath.Rel(root, m)
			if err != nil {
				return nil, err
			}
			rel = filepath.ToSlash(rel)
			if !seen[rel] {
				seen[rel] = true
				paths = append(paths, rel)
			}
		}
	}
	sort.Strings(paths)
	var out []*Source
	for _, p := range paths {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			return nil, fmt.Errorf("reading source: %v", err)
		}
		out = append(out, Scan(p, b))
	}
	return out, nil
}

// candidate is a site before selection.
type candidate struct {
	m    Mutant
	rank string // the ID's hash: the deterministic tie-break order
}

// Sites returns every mutant the catalogue can make in s (before the cap),
// in source order.
func Sites(s *Source, opt Options) []Mutant {
	var out []Mutant
	for _, c := range sites(s, opt) {
		out = append(out, c.m)
	}
	return out
}

func sites(s *Source, opt Options) []candidate {
	targets := opt.Targets
	if targets == 0 {
		targets = ArchAll
	}
	ops := map[string]bool{}
	for _, o := range opt.Operators {
		ops[o] = true
	}
	type key struct {
		start, end int
		new        string
	}
	seen := map[key]bool{}
	occ := map[string]int{}
	var out []candidate
	skip := map[string]bool{}
	for _, f := range opt.SkipFuncs {
		skip[f] = true
	}
	for _, f := range s.Funcs {
		if skip[f.Name] {
			continue
		}
		c := newFnCtx(s, f)
		for _, op := range Operators {
			if len(ops) > 0 && !ops[op.Name] {
				continue
			}
			for _, e := range op.sites(c) {
				if e.Start < 0 || e.End > len(s.Text) || e.Start > e.End {
					continue
				}
				old := string(s.Text[e.Start:e.End])
				if old == e.New || strings.ContainsAny(old, "\n") || strings.ContainsAny(e.New, "\n") {
					continue
				}
				if !s.IsCode(e.Start, e.End) {
					continue
				}
				line := s.LineOf(e.Start)
				a := s.ArchOf(line)
				if a&targets == 0 {
					continue
				}
				k := key{e.Start, e.End, e.New}
				if seen[k] {
					continue // another operator already makes this exact edit
				}
				seen[k] = true
				lineText := s.LineText(line)
				ls := s.lineOff[line-1]
				after := lineText[:e.Start-ls] + e.New + lineText[e.End-ls:]
				m := Mutant{Operator: op.Name, File: s.Path, Line: line, Col: e.Start - ls + 1, Func: f.Name, Kernel: f.Kernel,
					Arch: a.String(), Before: strings.TrimSpace(lineText), After: strings.TrimSpace(after), Edit: e}
				base := strings.Join([]string{m.File, m.Operator, m.Func, m.Before, m.After}, "\x00")
				n := occ[base]
				occ[base]++
				h := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d", base, n)))
				m.ID = fmt.Sprintf("%s-%s-%s", stem(s.Path), op.Name, hex.EncodeToString(h[:3]))
				out = append(out, candidate{m, hex.EncodeToString(h[:])})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return less(out[i].m, out[j].m) })
	return out
}

func less(a, b Mutant) bool {
	if a.File != b.File {
		return a.File < b.File
	}
	if a.Edit.Start != b.Edit.Start {
		return a.Edit.Start < b.Edit.Start
	}
	return opIndex(a.Operator) < opIndex(b.Operator)
}

func opIndex(name string) int {
	for i, o := range Operators {
		if o.Name == name {
			return i
		}
	}
	return len(Operators)
}

// stem is a file's base name without its extension ("gemm", "e4m3.h" -> "e4m3h").
func stem(path string) string {
	b := filepath.Base(path)
	if ext := filepath.Ext(b); ext == ".hip" {
		return strings.TrimSuffix(b, ext)
	}
	return strings.ReplaceAll(b, ".", "")
}

// Generate returns the mutant list of the sources: for each file and
// operator at most opt.PerOpFile sites, spread across the file's
// functions (each pick goes to the function with the fewest mutants so
// far relative to the square root of its site count, ties broken by the
// site's hash), sorted by file, position and operator. The list depends
// only on the sources and the options.
func Generate(srcs []*Source, opt Options) []Mutant {
	var out []Mutant
	for _, s := range srcs {
		all := sites(s, opt)
		used := map[string]int{}
		size := map[string]int{} // sites per function, over every operator
		for _, c := range all {
			size[c.m.Func]++
		}
		// A function's share grows with the square root of its sites: every
		// function with a site gets a first mutant before any gets a second,
		// and a large body (the decode GEMM's) more than a two-line helper.
		score := func(f string) float64 { return float64(used[f]) / math.Sqrt(float64(size[f])) }
		for _, op := range Operators {
			var cands []candidate
			for _, c := range all {
				if c.m.Operator == op.Name {
					cands = append(cands, c)
				}
			}
			n := len(cands)
			if opt.PerOpFile > 0 && n > opt.PerOpFile {
				n = opt.PerOpFile
			}
			for k := 0; k < n; k++ {
				best := 0
				for i := 1; i < len(cands); i++ {
					si, sb := score(cands[i].m.Func), score(cands[best].m.Func)
					if si < sb || si == sb && cands[i].rank < cands[best].rank {
						best = i
					}
				}
				out = append(out, cands[best].m)
				used[cands[best].m.Func]++
				cands = append(cands[:best], cands[best+1:]...)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return less(out[i], out[j]) })
	return out
}

// WriteList prints a mutant list for people (and the golden test): one
// header line per mutant, then the line before and after.
func WriteList(w io.Writer, ms []Mutant) error {
	for _, m := range ms {
		kind := "device function"
		if m.Kernel {
			kind = "kernel"
		}
		if _, err := fmt.Fprintf(w, "%s  %s  %s:%d:%d  %s (%s)  [%s]\n  - %s\n  + %s\n", m.ID, m.Operator, m.File, m.Line, m.Col,
			m.Func, kind, m.Arch, m.Before, m.After); err != nil {
			return err
		}
	}
	return nil
}

// CountByOperator returns the number of mutants of each operator, in
// catalogue order (operators without a mutant included, as 0).
func CountByOperator(ms []Mutant) []OpCount {
	n := map[string]int{}
	for _, m := range ms {
		n[m.Operator]++
	}
	out := make([]OpCount, 0, len(Operators))
	for _, o := range Operators {
		out = append(out, OpCount{o.Name, n[o.Name]})
	}
	return out
}

// OpCount is one operator's mutant count.
type OpCount struct {
	Operator string
	N        int
}
