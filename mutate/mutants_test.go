package mutate

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/parharness/parharness/internal/golden"
)

const snippetPath = "testdata/snippet.hip"

func loadSnippet(t testing.TB) *Source {
	t.Helper()
	b, err := os.ReadFile(snippetPath)
	if err != nil {
		t.Fatal(err)
	}
	return Scan("mutate/"+snippetPath, b)
}

// TestMutantListGolden is the mutant list of the snippet, one per operator
// (spread over its functions), as `parharness mutate list` prints it.
func TestMutantListGolden(t *testing.T) {
	ms := Generate([]*Source{loadSnippet(t)}, Options{PerOpFile: 1, Targets: ArchAll})
	var b bytes.Buffer
	if err := WriteList(&b, ms); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/mutants.golden", b.Bytes())
}

func TestEveryOperatorFires(t *testing.T) {
	all := Sites(loadSnippet(t), Options{Targets: ArchAll})
	for _, c := range CountByOperator(all) {
		t.Run(c.Operator, func(t *testing.T) {
			if c.N == 0 {
				t.Errorf("operator %s has no site in %s", c.Operator, snippetPath)
			}
		})
	}
}

// TestSitesAreCode checks that no mutant touches a comment, a literal or a
// preprocessor line: the snippet holds operator text in all three, inside
// function bodies too.
func TestSitesAreCode(t *testing.T) {
	s := loadSnippet(t)
	lines := strings.Split(string(s.Text), "\n")
	for _, m := range Sites(s, Options{Targets: ArchAll}) {
		line := lines[m.Line-1]
		trimmed := strings.TrimSpace(line)
		t.Run(m.ID, func(t *testing.T) {
			if strings.HasPrefix(trimmed, "#") || strings.HasPrefix(trimmed, "//") || strings.HasPrefix(trimmed, "/*") {
				t.Errorf("mutant on a preprocessor or comment line %d: %q", m.Line, line)
			}
			ls := s.lineOff[m.Line-1]
			col := m.Edit.Start - ls
			if c := strings.Index(line, "//"); c >= 0 && col >= c {
				t.Errorf("edit at column %d is inside the comment of line %d: %q", col+1, m.Line, line)
			}
			if c := strings.Index(line, "/*"); c >= 0 && col >= c {
				t.Errorf("edit at column %d is inside the comment of line %d: %q", col+1, m.Line, line)
			}
			if q := strings.Index(line, `"`); q >= 0 && col > q && col < strings.LastIndex(line, `"`) {
				t.Errorf("edit at column %d is inside the string literal of line %d: %q", col+1, m.Line, line)
			}
			if m.Func == "" {
				t.Errorf("mutant outside a function: %+v", m)
			}
		})
	}
}

// TestNoMutantOutsideCode is the negative check on the snippet's traps:
// the lines that hold only comment, literal or preprocessor text with
// operators in it get no mutant at all.
func TestNoMutantOutsideCode(t *testing.T) {
	s := loadSnippet(t)
	traps := map[int]bool{}
	for i, l := range strings.Split(string(s.Text), "\n") {
		tl := strings.TrimSpace(l)
		if strings.HasPrefix(tl, "#") || strings.HasPrefix(tl, "//") || strings.HasPrefix(tl, "/*") || strings.HasPrefix(tl, "spanning") ||
			strings.Contains(tl, `"a + b < c && d"`) || strings.Contains(tl, "asm volatile") {
			traps[i+1] = true
		}
	}
	if len(traps) < 10 {
		t.Fatalf("the snippet has %d trap lines, want at least 10 (was it edited?)", len(traps))
	}
	for _, m := range Sites(s, Options{Targets: ArchAll}) {
		if traps[m.Line] {
			t.Errorf("%s mutates trap line %d: %q -> %q", m.ID, m.Line, m.Before, m.After)
		}
	}
}

func TestArchFilter(t *testing.T) {
	s := loadSnippet(t)
	nvOnly := regexp.MustCompile(`y\[m \+ 1u\] = -acc;`)
	amdOnly := regexp.MustCompile(`y\[m \+ 2u\] = acc \* 2\.0f;`)
	for _, c := range []struct {
		name            string
		targets         Arch
		wantNV, wantAMD bool
	}{
		{"nvptx", ArchNV, true, false},
		{"amdgcn", ArchAMD, false, true},
		{"all", ArchAll, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var nv, amd bool
			for _, m := range Sites(s, Options{Targets: c.targets}) {
				nv = nv || nvOnly.MatchString(m.Before)
				amd = amd || amdOnly.MatchString(m.Before)
				if c.targets == ArchNV && m.Arch == "amdgcn" || c.targets == ArchAMD && m.Arch == "nvptx" {
					t.Errorf("%s: site compiled only for %s kept for targets %s", m.ID, m.Arch, c.targets)
				}
			}
			if nv != c.wantNV || amd != c.wantAMD {
				t.Errorf("targets %s: sites on the nvptx-only line %v (want %v), on the amdgcn-only line %v (want %v)", c.targets, nv, c.wantNV, amd, c.wantAMD)
			}
		})
	}
}

func TestLineArch(t *testing.T) {
	src := "a;\n#if defined(__NVPTX__)\nb;\n#elif defined(__AMDGCN__)\nc;\n#else\nd;\n#endif\n#ifndef __AMDGCN__\ne;\n#endif\n#if FOO\nf;\n#else\ng;\n#endif\n"
	s := Scan("x.hip", []byte(src))
	want := map[int]Arch{1: ArchAll, 2: 0, 3: ArchNV, 4: 0, 5: ArchAMD, 6: 0, 7: 0, 8: 0, 10: ArchNV, 13: ArchAll, 15: ArchAll}
	for line, a := range want {
		t.Run(s.LineText(line), func(t *testing.T) {
			if got := s.ArchOf(line); got != a {
				t.Errorf("line %d %q: arch %s, want %s", line, s.LineText(line), got, a)
			}
		})
	}
}

func TestFunctions(t *testing.T) {
	s := loadSnippet(t)
	var got []string
	for _, f := range s.Funcs {
		n := f.Name
		if f.Kernel {
			n += "*"
		}
		got = append(got, n)
	}
	want := "pick unused_helper fold pack snippet_kernel*"
	if strings.Join(got, " ") != want {
		t.Errorf("functions %q, want %q", strings.Join(got, " "), want)
	}
}

// TestGenerateDeterministic: the list depends only on the sources and the
// options, and IDs are unique.
func TestGenerateDeterministic(t *testing.T) {
	a := Generate([]*Source{loadSnippet(t)}, Options{PerOpFile: 2, Targets: ArchAll})
	b := Generate([]*Source{loadSnippet(t)}, Options{PerOpFile: 2, Targets: ArchAll})
	var wa, wb bytes.Buffer
	WriteList(&wa, a)
	WriteList(&wb, b)
	if wa.String() != wb.String() {
		t.Fatal("two generations of the same sources differ")
	}
	seen := map[string]bool{}
	for _, m := range a {
		if seen[m.ID] {
			t.Errorf("duplicate ID %s", m.ID)
		}
		seen[m.ID] = true
	}
}

// TestCapSpreadsFunctions: with a cap of 1 per operator, an operator with
// sites in several functions does not always pick the same function.
func TestCapSpreadsFunctions(t *testing.T) {
	ms := Generate([]*Source{loadSnippet(t)}, Options{PerOpFile: 1, Targets: ArchAll})
	per := map[string]int{}
	for _, m := range ms {
		per[m.Func]++
	}
	if len(per) < 4 {
		t.Errorf("mutants fall in %d functions (%v), want them spread over at least 4", len(per), per)
	}
	n := map[string]int{}
	for _, m := range ms {
		n[m.Operator]++
		if n[m.Operator] > 1 {
			t.Errorf("operator %s has %d mutants over the cap of 1", m.Operator, n[m.Operator])
		}
	}
}

// TestIDStableAcrossUnrelatedEdits: an edit elsewhere in the file keeps
// the IDs of the other mutants.
func TestIDStableAcrossUnrelatedEdits(t *testing.T) {
	s := loadSnippet(t)
	edited := Scan(s.Path, append([]byte("// a new first line\n"), s.Text...))
	ids := func(src *Source) map[string]bool {
		out := map[string]bool{}
		for _, m := range Sites(src, Options{Targets: ArchAll}) {
			out[m.ID] = true
		}
		return out
	}
	a, b := ids(s), ids(edited)
	for id := range a {
		if !b[id] {
			t.Errorf("mutant %s lost its ID when a line was added above it", id)
		}
	}
}

func TestApply(t *testing.T) {
	s := loadSnippet(t)
	for _, m := range Sites(s, Options{Targets: ArchAll}) {
		out, err := m.Apply(s.Text)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(out), "\n")
		if got := strings.TrimSpace(lines[m.Line-1]); got != m.After {
			t.Errorf("%s: line %d after the edit is %q, the mutant says %q", m.ID, m.Line, got, m.After)
		}
	}
	_, err := Mutant{ID: "x", Edit: Edit{Start: 10, End: 5}}.Apply([]byte("short"))
	if err == nil {
		t.Error("an edit outside the file applied without an error")
	}
}
