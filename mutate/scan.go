package mutate

import (
	"bytes"
	"strings"
)

// Arch is the set of compile targets a line of a source is compiled for,
// as its #if defined(__NVPTX__) / defined(__AMDGCN__) nesting says.
type Arch uint8

const (
	ArchNV  Arch = 1 << iota // compiled for sm_90a (__NVPTX__)
	ArchAMD                  // compiled for gfx1201 (__AMDGCN__)
	ArchAll = ArchNV | ArchAMD
)

func (a Arch) String() string {
	switch a {
	case ArchAll:
		return "all"
	case ArchNV:
		return "nvptx"
	case ArchAMD:
		return "amdgcn"
	}
	return "none"
}

// TokKind is a token's lexical class.
type TokKind uint8

const (
	Ident TokKind = iota + 1
	Number
	Punct
	Str // a string or character literal (never mutated)
)

// Token is one lexical token of a source's code view.
type Token struct {
	Kind TokKind
	Text string
	Off  int // byte offset in the source
	Line int // 1-based
}

// End is the byte offset just past the token.
func (t Token) End() int { return t.Off + len(t.Text) }

// Func is one function definition at file scope: its name, whether it is a
// kernel entry point, and the token range of its header and body.
type Func struct {
	Name   string
	Kernel bool // declared KERNEL (or __global__): an entry point
	Header int  // index of the header's first token
	Open   int  // index of the body's '{'
	Close  int  // index of the body's matching '}'
	Line   int  // line of the name
}

// Source is a scanned kernel source: its text, a code view in which every
// comment, every string and character literal body and every preprocessor
// line (with its continuation lines) is blanked to spaces, the tokens of
// that view, the file-scope functions, and the compile targets of each line.
type Source struct {
	Path     string
	Text     []byte
	Code     []byte
	Toks     []Token
	Funcs    []Func
	Includes []string // the quoted #include paths, in order
	match    []int    // token index of the matching bracket, -1 if none
	lineArch []Arch   // index line-1
	lineOff  []int    // byte offset of each line's start
	blankSet []bool   // bytes blanked in the code view
	types    map[string]bool
}

// Scan lexes a source. It never fails: an unterminated comment or literal
// runs to the end of the file, unbalanced brackets leave functions out.
func Scan(path string, text []byte) *Source {
	s := &Source{Path: path, Text: text, Code: bytes.Clone(text)}
	s.lineOff = append(s.lineOff, 0)
	for i, c := range text {
		if c == '\n' {
			s.lineOff = append(s.lineOff, i+1)
		}
	}
	s.blank()
	s.lex()
	s.matchBrackets()
	s.findFuncs()
	return s
}

// LineOf returns the 1-based line of byte offset off.
func (s *Source) LineOf(off int) int {
	lo, hi := 0, len(s.lineOff)
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if s.lineOff[mid] <= off {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo + 1
}

// LineText returns line n (1-based) without its newline.
func (s *Source) LineText(n int) string {
	if n < 1 || n > len(s.lineOff) {
		return ""
	}
	start := s.lineOff[n-1]
	end := len(s.Text)
	if n < len(s.lineOff) {
		end = s.lineOff[n] - 1
	}
	return string(s.Text[start:end])
}

// ArchOf returns the targets line n is compiled for.
func (s *Source) ArchOf(n int) Arch {
	if n < 1 || n > len(s.lineArch) {
		return ArchAll
	}
	return s.lineArch[n-1]
}

// IsCode reports whether every byte of [start, end) is code: not part of
// a comment, a literal's body or a preprocessor line.
func (s *Source) IsCode(start, end int) bool {
	if start < 0 || end > len(s.Text) || start > end {
		return false
	}
	for i := start; i < end; i++ {
		if s.blanked(i) {
			return false
		}
	}
	return true
}

func (s *Source) blanked(i int) bool { return s.blankSet[i] }

// condFrame is one #if level: the targets of the enclosing code, those of
// the branches taken so far, and those of the current branch.
type condFrame struct{ parent, taken, cur Arch }

// directiveSpan is one preprocessor directive: its lines and its text with
// comments removed and continuations joined.
type directiveSpan struct {
	first, last int // 1-based lines
	text        string
}

// blank fills the code view, then the per-line targets.
func (s *Source) blank() {
	t, c := s.Text, s.Code
	s.blankSet = make([]bool, len(t))
	mark := func(i int) {
		if t[i] != '\n' {
			c[i] = ' '
			s.blankSet[i] = true
		}
	}
	var dirs []directiveSpan
	atLineStart := true
	for i := 0; i < len(t); {
		ch := t[i]
		switch {
		case ch == '\n':
			atLineStart = true
			i++
		case atLineStart && (ch == ' ' || ch == '\t' || ch == '\r'):
			i++
		case atLineStart && ch == '#':
			end, text := s.directive(i)
			for j := i; j < end; j++ {
				mark(j)
			}
			last := end
			if last > i {
				last--
			}
			dirs = append(dirs, directiveSpan{s.LineOf(i), s.LineOf(last), text})
			if f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(text), "#")); len(f) == 2 && f[0] == "include" &&
				len(f[1]) > 2 && f[1][0] == '"' && f[1][len(f[1])-1] == '"' {
				s.Includes = append(s.Includes, f[1][1:len(f[1])-1])
			}
			i = end
			atLineStart = false
		case ch == '/' && i+1 < len(t) && t[i+1] == '/':
			for i < len(t) && t[i] != '\n' {
				mark(i)
				i++
			}
			atLineStart = false
		case ch == '/' && i+1 < len(t) && t[i+1] == '*':
			j := bytes.Index(t[i+2:], []byte("*/"))
			end := len(t)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			for k := i; k < end; k++ {
				mark(k)
			}
			i = end
			atLineStart = false
		case ch == '"' || ch == '\'':
			end := literalEnd(t, i)
			for k := i + 1; k < end-1; k++ {
				mark(k)
			}
			i = end
			atLineStart = false
		default:
			i++
			atLineStart = false
		}
	}
	// Targets per line: directive lines are compiled nowhere; other lines
	// take the state of the #if stack after the directives above them.
	s.lineArch = make([]Arch, len(s.lineOff))
	var stack []condFrame
	d := 0
	for l := 1; l <= len(s.lineOff); l++ {
		if d < len(dirs) && dirs[d].first == l {
			stack = applyDirective(stack, dirs[d].text)
			l = dirs[d].last
			d++
			continue
		}
		a := ArchAll
		if len(stack) > 0 {
			a = stack[len(stack)-1].cur
		}
		s.lineArch[l-1] = a
	}
}

// literalEnd returns the offset past the string or character literal that
// starts at i (its quote): up to the closing quote or the end of the line.
func literalEnd(t []byte, i int) int {
	q := t[i]
	for j := i + 1; j < len(t); j++ {
		switch t[j] {
		case '\\':
			j++
		case q:
			return j + 1
		case '\n':
			return j
		}
	}
	return len(t)
}

// directive reads the preprocessor directive starting at '#' at offset i:
// its extent (through continuation lines and block comments that span
// lines) and its text with comments removed.
func (s *Source) directive(i int) (end int, text string) {
	t := s.Text
	var b strings.Builder
	j := i
	for j < len(t) {
		switch {
		case t[j] == '\\' && j+1 < len(t) && t[j+1] == '\n':
			b.WriteByte(' ')
			j += 2
		case t[j] == '\\' && j+2 < len(t) && t[j+1] == '\r' && t[j+2] == '\n':
			b.WriteByte(' ')
			j += 3
		case t[j] == '\n':
			return j, b.String()
		case t[j] == '/' && j+1 < len(t) && t[j+1] == '/':
			for j < len(t) && t[j] != '\n' {
				j++
			}
		case t[j] == '/' && j+1 < len(t) && t[j+1] == '*':
			k := bytes.Index(t[j+2:], []byte("*/"))
			if k < 0 {
				return len(t), b.String()
			}
			b.WriteByte(' ')
			j += 2 + k + 2
		case t[j] == '"':
			e := literalEnd(t, j)
			b.Write(t[j:e])
			j = e
		default:
			b.WriteByte(t[j])
			j++
		}
	}
	return len(t), b.String()
}

// applyDirective updates the #if stack for one directive.
func applyDirective(stack []condFrame, dir string) []condFrame {
	f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(dir), "#"))
	if len(f) == 0 {
		return stack
	}
	parent := ArchAll
	if len(stack) > 0 {
		parent = stack[len(stack)-1].cur
	}
	rest := strings.Join(f[1:], " ")
	switch f[0] {
	case "if", "ifdef", "ifndef":
		a, known := condArch(f[0], rest)
		fr := condFrame{parent: parent, cur: parent}
		if known {
			fr.cur, fr.taken = parent&a, a
		}
		return append(stack, fr)
	case "elif":
		if len(stack) == 0 {
			return stack
		}
		fr := &stack[len(stack)-1]
		a, known := condArch("if", rest)
		if known {
			fr.cur = fr.parent & a &^ fr.taken
			fr.taken |= a
		} else {
			fr.cur = fr.parent &^ fr.taken
		}
	case "else":
		if len(stack) == 0 {
			return stack
		}
		fr := &stack[len(stack)-1]
		fr.cur = fr.parent &^ fr.taken
	case "endif":
		if len(stack) > 0 {
			stack = stack[:len(stack)-1]
		}
	}
	return stack
}

// condArch reads a condition that names one target macro; known is false
// for any other condition (its branches count as compiled everywhere).
func condArch(kw, cond string) (a Arch, known bool) {
	c := strings.ReplaceAll(cond, " ", "")
	nv, amd := strings.Contains(c, "__NVPTX__"), strings.Contains(c, "__AMDGCN__")
	if nv == amd || strings.ContainsAny(c, "&|") {
		return ArchAll, false
	}
	a = ArchNV
	if amd {
		a = ArchAMD
	}
	neg := kw == "ifndef" || strings.HasPrefix(c, "!")
	if neg {
		a = ArchAll &^ a
	}
	return a, true
}

// puncts are the multi-character punctuators, longest first.
var puncts = []string{"<<=", ">>=", "...", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "::"}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdentChar(c byte) bool  { return isIdentStart(c) || c >= '0' && c <= '9' }
func isDigit(c byte) bool      { return c >= '0' && c <= '9' }

// lex tokenizes the code view.
func (s *Source) lex() {
	c := s.Code
	line := 1
	for i := 0; i < len(c); {
		ch := c[i]
		switch {
		case ch == '\n':
			line++
			i++
		case ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v':
			i++
		case isIdentStart(ch):
			j := i + 1
			for j < len(c) && isIdentChar(c[j]) {
				j++
			}
			s.Toks = append(s.Toks, Token{Ident, string(c[i:j]), i, line})
			i = j
		case isDigit(ch) || ch == '.' && i+1 < len(c) && isDigit(c[i+1]):
			j := i + 1
			hex := ch == '0' && j < len(c) && (c[j] == 'x' || c[j] == 'X')
			for j < len(c) {
				d := c[j]
				if isIdentChar(d) || d == '.' {
					j++
					continue
				}
				if (d == '+' || d == '-') && !hex && (c[j-1] == 'e' || c[j-1] == 'E') {
					j++
					continue
				}
				break
			}
			s.Toks = append(s.Toks, Token{Number, string(c[i:j]), i, line})
			i = j
		case ch == '"' || ch == '\'':
			j := literalEnd(c, i)
			s.Toks = append(s.Toks, Token{Str, string(s.Text[i:j]), i, line})
			i = j
		default:
			n := 1
			for _, p := range puncts {
				if bytes.HasPrefix(c[i:], []byte(p)) {
					n = len(p)
					break
				}
			}
			s.Toks = append(s.Toks, Token{Punct, string(c[i : i+n]), i, line})
			i += n
		}
	}
}

// matchBrackets pairs (), [] and {} tokens.
func (s *Source) matchBrackets() {
	s.match = make([]int, len(s.Toks))
	var stack []int
	open := map[string]string{")": "(", "]": "[", "}": "{"}
	for i, t := range s.Toks {
		s.match[i] = -1
		if t.Kind != Punct {
			continue
		}
		switch t.Text {
		case "(", "[", "{":
			stack = append(stack, i)
		case ")", "]", "}":
			// Pop to the nearest opener of the same kind; unmatched closers stay -1.
			for k := len(stack) - 1; k >= 0; k-- {
				if s.Toks[stack[k]].Text == open[t.Text] {
					s.match[i], s.match[stack[k]] = stack[k], i
					stack = stack[:k]
					break
				}
			}
		}
	}
}

// Match returns the index of the bracket matching token i, or -1.
func (s *Source) Match(i int) int {
	if i < 0 || i >= len(s.match) {
		return -1
	}
	return s.match[i]
}

// headerSkip are identifiers followed by '(' in a function header that do
// not name the function.
var headerSkip = map[string]bool{"__attribute__": true, "LAUNCH_BOUNDS": true, "__launch_bounds__": true,
	"alignas": true, "__declspec": true, "decltype": true, "__align__": true}

// findFuncs finds the file-scope function definitions: a '{' at depth 0
// whose header (the tokens since the previous ';' or '}' at depth 0) has an
// identifier followed by '(' at paren depth 0; the last such identifier that
// is not an attribute names the function (macro invocations before it, such
// as DEC_ENTRY(...) lines, come earlier).
func (s *Source) findFuncs() {
	start := 0
	for i := 0; i < len(s.Toks); i++ {
		t := s.Toks[i]
		if t.Kind != Punct {
			continue
		}
		switch t.Text {
		case ";":
			start = i + 1
		case "(", "[":
			if m := s.match[i]; m > i {
				i = m
			}
		case "}":
			start = i + 1
		case "{":
			end := s.match[i]
			if end < 0 {
				return
			}
			name, kernel, line := "", false, 0
			for j := start; j < i; j++ {
				u := s.Toks[j]
				if u.Kind == Ident && (u.Text == "KERNEL" || u.Text == "__global__") {
					kernel = true
				}
				if u.Kind == Ident && j+1 < i && s.Toks[j+1].Text == "(" && !headerSkip[u.Text] {
					name, line = u.Text, u.Line
				}
				if s.Toks[j].Text == "(" && s.match[j] > j {
					j = s.match[j]
				}
			}
			if name != "" && !isKeyword(name) {
				s.Funcs = append(s.Funcs, Func{Name: name, Kernel: kernel, Header: start, Open: i, Close: end, Line: line})
			}
			i = end
			start = end + 1
			// A struct's closing "};" ends the statement at the ';'.
		}
	}
}

// keywords that look like calls.
var keywords = map[string]bool{"if": true, "for": true, "while": true, "switch": true, "return": true, "sizeof": true,
	"do": true, "else": true, "case": true, "default": true, "break": true, "continue": true, "goto": true,
	"static_assert": true, "alignof": true, "constexpr": true, "template": true, "typedef": true, "struct": true,
	"asm": true, "volatile": true, "new": true, "delete": true}

func isKeyword(s string) bool { return keywords[s] }
