package mutate

import "strings"

// The operators need the extent of an operand: the right-hand term of a
// '+', the bound after a '<'. This is a C expression recognizer over the
// token stream, precedence climbing with the usual C levels; it only finds
// where an expression ends and returns -1 where the tokens are not one it
// understands, so a site it cannot delimit is left alone.

// Binary operator precedence (C): higher binds tighter.
var binaryPrec = map[string]int{
	"*": 13, "/": 13, "%": 13,
	"+": 12, "-": 12,
	"<<": 11, ">>": 11,
	"<": 10, "<=": 10, ">": 10, ">=": 10,
	"==": 9, "!=": 9,
	"&": 8, "^": 7, "|": 6, "&&": 5, "||": 4,
	"=": 2, "+=": 2, "-=": 2, "*=": 2, "/=": 2, "%=": 2, "&=": 2, "|=": 2, "^=": 2, "<<=": 2, ">>=": 2,
}

const precTernary = 3

// typeNames are the type identifiers of the sources (and C's), for casts.
var typeNames = map[string]bool{"u8": true, "u16": true, "u32": true, "u64": true, "i8": true, "i16": true, "i32": true,
	"i64": true, "float": true, "double": true, "int": true, "unsigned": true, "short": true, "char": true, "long": true,
	"bool": true, "void": true, "const": true, "signed": true, "f4": true, "v4f": true, "v8f": true, "v2i": true,
	"u32x2": true, "u32x4": true, "u32x4v": true, "AFrag": true, "BFrag": true, "W4Step": true, "_Float16": true,
	"size_t": true, "volatile": true, "auto": true}

// isType reports whether an identifier names a type: a known one, or one
// the source declares with typedef or struct.
func (s *Source) isType(name string) bool {
	if typeNames[name] || strings.HasSuffix(name, "_t") {
		return true
	}
	if s.types == nil {
		s.types = map[string]bool{}
		for i, t := range s.Toks {
			if t.Kind != Ident || i+1 >= len(s.Toks) {
				continue
			}
			switch t.Text {
			case "struct", "union", "class":
				// struct [attributes] NAME
				for j := i + 1; j < len(s.Toks) && j < i+12; j++ {
					u := s.Toks[j]
					if u.Text == "__attribute__" && j+1 < len(s.Toks) {
						if m := s.Match(j + 1); m > j {
							j = m
							continue
						}
					}
					if u.Kind == Ident {
						s.types[u.Text] = true
						break
					}
				}
			case "typedef":
				// typedef ... NAME ;  (the identifier before the ';', outside brackets)
				for j := i + 1; j < len(s.Toks); j++ {
					if s.Toks[j].Text == "(" || s.Toks[j].Text == "[" || s.Toks[j].Text == "{" {
						if m := s.Match(j); m > j {
							j = m
						}
						continue
					}
					if s.Toks[j].Text == ";" {
						for k := j - 1; k > i; k-- {
							if s.Toks[k].Kind == Ident && s.Toks[k].Text != "__attribute__" {
								s.types[s.Toks[k].Text] = true
								break
							}
							if s.Toks[k].Text == ")" {
								if m := s.Match(k); m >= 0 && m < k {
									k = m
								}
							}
						}
						break
					}
				}
			}
		}
	}
	return s.types[name]
}

// exprEnd returns the index just past the expression starting at token i
// whose binary operators all bind at least as tightly as minPrec, or -1.
// limit bounds the search (exclusive).
func (s *Source) exprEnd(i, minPrec, limit int) int {
	j := s.unaryEnd(i, limit)
	for j >= 0 && j < limit {
		t := s.Toks[j]
		if t.Kind != Punct {
			return j
		}
		if t.Text == "?" {
			if minPrec > precTernary {
				return j
			}
			k := s.exprEnd(j+1, 1, limit)
			if k < 0 || k >= limit || s.Toks[k].Text != ":" {
				return -1
			}
			j = s.exprEnd(k+1, precTernary, limit)
			continue
		}
		p, ok := binaryPrec[t.Text]
		if !ok || p < minPrec {
			return j
		}
		next := p + 1
		if p == 2 { // assignment: right-associative
			next = 2
		}
		j = s.exprEnd(j+1, next, limit)
	}
	return j
}

// unaryEnd returns the index past a unary expression (prefix operators,
// casts, a primary and its postfix operators), or -1.
func (s *Source) unaryEnd(i, limit int) int {
	if i < 0 || i >= limit {
		return -1
	}
	t := s.Toks[i]
	switch {
	case t.Kind == Punct && (t.Text == "-" || t.Text == "+" || t.Text == "!" || t.Text == "~" || t.Text == "*" ||
		t.Text == "&" || t.Text == "++" || t.Text == "--"):
		return s.unaryEnd(i+1, limit)
	case t.Kind == Punct && t.Text == "(":
		m := s.Match(i)
		if m < 0 || m >= limit {
			return -1
		}
		if s.isCast(i, m) && m+1 < limit && s.startsOperand(m+1) {
			return s.unaryEnd(m+1, limit)
		}
		return s.postfixEnd(m+1, limit)
	case t.Kind == Ident && t.Text == "sizeof":
		if i+1 < limit && s.Toks[i+1].Text == "(" {
			if m := s.Match(i + 1); m > i && m < limit {
				return m + 1
			}
		}
		return s.unaryEnd(i+1, limit)
	case t.Kind == Ident && isKeyword(t.Text):
		return -1
	case t.Kind == Ident:
		j := i + 1
		if k := s.templateArgsEnd(j, limit); k > j {
			j = k
		}
		if j < limit && s.Toks[j].Text == "{" && s.isType(t.Text) { // T{...}
			if m := s.Match(j); m > j && m < limit {
				return s.postfixEnd(m+1, limit)
			}
			return -1
		}
		return s.postfixEnd(j, limit)
	case t.Kind == Number || t.Kind == Str:
		return s.postfixEnd(i+1, limit)
	}
	return -1
}

// templateArgsEnd returns the index past "<...>" at j when it is a
// template argument list of a call (written without a space before the
// '<' and followed by '('), else j.
func (s *Source) templateArgsEnd(j, limit int) int {
	if j >= limit || s.Toks[j].Text != "<" || s.Toks[j].Off != s.Toks[j-1].End() {
		return j
	}
	depth := 0
	for k := j; k < limit && k < j+32; k++ {
		switch s.Toks[k].Text {
		case "<":
			depth++
		case ">":
			depth--
			if depth == 0 {
				if k+1 < limit && s.Toks[k+1].Text == "(" {
					return k + 1
				}
				return j
			}
		case ";", "{", "}":
			return j
		}
	}
	return j
}

// postfixEnd consumes calls, subscripts, member accesses and ++/-- from j.
func (s *Source) postfixEnd(j, limit int) int {
	for j < limit {
		t := s.Toks[j]
		switch {
		case t.Text == "(" || t.Text == "[":
			m := s.Match(j)
			if m < 0 || m >= limit {
				return -1
			}
			j = m + 1
		case t.Text == "." || t.Text == "->" || t.Text == "::":
			if j+1 >= limit || s.Toks[j+1].Kind != Ident {
				return -1
			}
			j += 2
		case t.Text == "++" || t.Text == "--":
			j++
		default:
			return j
		}
	}
	return j
}

// isCast reports whether the parenthesized tokens (open, close) are a type.
func (s *Source) isCast(open, close int) bool {
	if close <= open+1 {
		return false
	}
	first := s.Toks[open+1]
	if first.Kind != Ident || !s.isType(first.Text) {
		return false
	}
	for k := open + 1; k < close; k++ {
		u := s.Toks[k]
		if !(u.Kind == Ident || u.Text == "*" || u.Text == "&") {
			return false
		}
	}
	return true
}

// startsOperand reports whether token j can begin an operand.
func (s *Source) startsOperand(j int) bool {
	t := s.Toks[j]
	switch t.Kind {
	case Ident:
		return !isKeyword(t.Text) || t.Text == "sizeof"
	case Number, Str:
		return true
	}
	switch t.Text {
	case "(", "-", "+", "!", "~", "*", "&", "++", "--":
		return true
	}
	return false
}

// operandEnds reports whether token j can end an operand, so that an
// operator token after it is binary.
func (s *Source) operandEnds(j int) bool {
	if j < 0 {
		return false
	}
	t := s.Toks[j]
	switch t.Kind {
	case Ident:
		return !isKeyword(t.Text) || t.Text == "true" || t.Text == "false"
	case Number, Str:
		return true
	}
	return t.Text == ")" || t.Text == "]"
}

// spaced reports whether token j has a space or tab on both sides, as
// clang-format writes binary operators (and never template brackets).
func (s *Source) spaced(j int) bool {
	t := s.Toks[j]
	if t.Off == 0 || t.End() >= len(s.Text) {
		return false
	}
	b, a := s.Text[t.Off-1], s.Text[t.End()]
	return (b == ' ' || b == '\t') && (a == ' ' || a == '\t' || a == '\n')
}

// binaryAt reports whether token j is the binary operator op, written
// spaced, after an operand.
func (s *Source) binaryAt(j int, ops ...string) bool {
	t := s.Toks[j]
	if t.Kind != Punct || !s.spaced(j) || !s.operandEnds(j-1) {
		return false
	}
	for _, o := range ops {
		if t.Text == o {
			return true
		}
	}
	return false
}

// text returns the source text of tokens [i, j).
func (s *Source) text(i, j int) string {
	if i >= j {
		return ""
	}
	return string(s.Text[s.Toks[i].Off:s.Toks[j-1].End()])
}
