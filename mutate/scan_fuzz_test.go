package mutate

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzScan feeds the scanner and every operator arbitrary text. Whatever
// the input: no panic; the code view keeps every byte's position and every
// newline; tokens lie in order inside the text, and none but a literal
// covers a blanked byte; brackets match in pairs; and every site is one
// line of code inside a function, whose edit applies and leaves the rest
// of the file as it was.
func FuzzScan(f *testing.F) {
	seeds := []string{
		"",
		"#",
		"/*",
		"\"unterminated",
		"'",
		"#if defined(__NVPTX__)\nx;\n#else\ny;\n#endif",
		"#define A(x) \\\n  (x + 1)\nDEVICE u32 f(u32 a) { return a + 1u < 2u ? a : 0; }",
		"KERNEL void k(u32 *p, u32 n) { for (u32 i = 0; i < n; i++) { p[i] = p[i] + 1u; } }",
		"void f() { if (a) { b[c][d] = -e.x * 4u; } } } { (",
		"void f() { x = a ? b : c ? d : e; y = (u32)(a) << 3; z = g<1>(h, i); }",
		"void f() { /* c */ a = b // d\n + c; }",
		"void f() { a = \"x + y\" + 'z'; }",
		"void f() { a = 0x7FFFFFFFFFFFFFFFu & b; c = 1e-6f * d; e >>= 18446744073709551615u; }",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	if b, err := os.ReadFile(snippetPath); err == nil {
		f.Add(b)
	}
	for _, p := range []string{"../families/*/*.hip", "../hipsrc/*/*.h"} {
		files, _ := filepath.Glob(p)
		for _, file := range files {
			if b, err := os.ReadFile(file); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := Scan("fuzz.hip", data)
		if len(s.Code) != len(data) {
			t.Fatalf("code view is %d bytes, the text %d", len(s.Code), len(data))
		}
		for i := range data {
			if (data[i] == '\n') != (s.Code[i] == '\n') {
				t.Fatalf("byte %d: newline in one view only", i)
			}
			if s.Code[i] != data[i] && s.Code[i] != ' ' {
				t.Fatalf("byte %d: the code view has %q where the text has %q (only blanks may differ)", i, s.Code[i], data[i])
			}
		}
		prev := 0
		for i, tk := range s.Toks {
			if tk.Off < prev || tk.End() > len(data) || tk.Text == "" {
				t.Fatalf("token %d %q at %d..%d is out of order or bounds", i, tk.Text, tk.Off, tk.End())
			}
			if tk.Kind != Str && string(data[tk.Off:tk.End()]) != tk.Text {
				t.Fatalf("token %d %q does not match the text %q", i, tk.Text, data[tk.Off:tk.End()])
			}
			if tk.Kind != Str && !s.IsCode(tk.Off, tk.End()) {
				t.Fatalf("token %d %q covers blanked bytes", i, tk.Text)
			}
			if tk.Line != s.LineOf(tk.Off) {
				t.Fatalf("token %d %q: line %d, LineOf says %d", i, tk.Text, tk.Line, s.LineOf(tk.Off))
			}
			prev = tk.End()
		}
		for i := range s.Toks {
			if m := s.Match(i); m >= 0 && s.Match(m) != i {
				t.Fatalf("bracket %d matches %d, which matches %d", i, m, s.Match(m))
			}
		}
		for _, fn := range s.Funcs {
			if !(fn.Header <= fn.Open && fn.Open < fn.Close && fn.Close < len(s.Toks)) {
				t.Fatalf("function %s has token range %d/%d/%d", fn.Name, fn.Header, fn.Open, fn.Close)
			}
		}
		ms := Sites(s, Options{Targets: ArchAll})
		step := 1 + len(data)/8192 // applying every site of a whole kernel file is quadratic: sample large inputs
		for k, m := range ms {
			e := m.Edit
			if e.Start < 0 || e.End > len(data) || e.Start > e.End {
				t.Fatalf("%s: edit %d..%d out of bounds", m.ID, e.Start, e.End)
			}
			if !s.IsCode(e.Start, e.End) {
				t.Fatalf("%s: edit %d..%d %q is not all code", m.ID, e.Start, e.End, data[e.Start:e.End])
			}
			if strings.Contains(string(data[e.Start:e.End]), "\n") || strings.Contains(e.New, "\n") {
				t.Fatalf("%s: edit spans lines", m.ID)
			}
			if s.ArchOf(m.Line) == 0 {
				t.Fatalf("%s: site on line %d, which is compiled for no target", m.ID, m.Line)
			}
			if k%step == 0 {
				out, err := m.Apply(data)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(out[:e.Start], data[:e.Start]) || !bytes.Equal(out[e.Start+len(e.New):], data[e.End:]) {
					t.Fatalf("%s: the edit changed bytes outside its span", m.ID)
				}
			}
			if m.Func == "" {
				t.Fatalf("%s: site outside a function", m.ID)
			}
		}
		// Deterministic: a second scan gives the same list.
		again := Sites(Scan("fuzz.hip", data), Options{Targets: ArchAll})
		if len(again) != len(ms) {
			t.Fatalf("a second scan found %d sites, the first %d", len(again), len(ms))
		}
		for i := range ms {
			if ms[i].ID != again[i].ID || ms[i].Edit != again[i].Edit {
				t.Fatalf("site %d differs between two scans: %s vs %s", i, ms[i].ID, again[i].ID)
			}
		}
	})
}
