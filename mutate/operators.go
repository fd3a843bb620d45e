package mutate

import (
	"math"
	"math/bits"
	"regexp"
	"strconv"
	"strings"
)

// Edit replaces Text[Start:End] with New (Start == End: an insertion).
type Edit struct {
	Start, End int
	New        string
}

// Operator is one mutation rule of the catalogue: its name, the bug it
// plants (Doc) and the exact textual rule (Rule). Sites returns every edit
// the rule makes inside the body of one function; Generate then keeps the
// single-line edits of code (not comments, literals or preprocessor lines)
// compiled for a chosen target.
type Operator struct {
	Name  string
	Doc   string
	Rule  string
	sites func(c *fnCtx) []Edit
}

// fnCtx is one function being scanned: its tokens are s.Toks[lo:hi] (the
// body, between the braces); idents holds every identifier of its header
// and body.
type fnCtx struct {
	s      *Source
	f      Func
	lo, hi int
	idents map[string]bool
}

func newFnCtx(s *Source, f Func) *fnCtx {
	c := &fnCtx{s: s, f: f, lo: f.Open + 1, hi: f.Close, idents: map[string]bool{}}
	for i := f.Header; i < f.Close; i++ {
		if s.Toks[i].Kind == Ident {
			c.idents[s.Toks[i].Text] = true
		}
	}
	return c
}

func (c *fnCtx) tok(i int) Token { return c.s.Toks[i] }

// replaceTok is the edit replacing token i's text.
func (c *fnCtx) replaceTok(i int, with string) Edit {
	t := c.tok(i)
	return Edit{t.Off, t.End(), with}
}

// replaceRange is the edit replacing tokens [i, j).
func (c *fnCtx) replaceRange(i, j int, with string) Edit {
	return Edit{c.tok(i).Off, c.tok(j - 1).End(), with}
}

// each calls fn for every body token index.
func (c *fnCtx) each(fn func(i int) []Edit) []Edit {
	var out []Edit
	for i := c.lo; i < c.hi; i++ {
		out = append(out, fn(i)...)
	}
	return out
}

// opSwap is an operator that rewrites one spaced binary operator token.
func opSwap(pairs map[string]string) func(c *fnCtx) []Edit {
	return func(c *fnCtx) []Edit {
		return c.each(func(i int) []Edit {
			t := c.tok(i)
			if to, ok := pairs[t.Text]; ok && t.Kind == Punct && c.s.binaryAt(i, t.Text) {
				return []Edit{c.replaceTok(i, to)}
			}
			return nil
		})
	}
}

// rightTermDropped deletes ` op B` for a spaced binary op of ops, B its
// right operand (at the operator's precedence), unless skip(c, i, e) says
// the site is not one (i the operator's token, e the end of B).
func rightTermDropped(ops []string, skip func(c *fnCtx, i, e int) bool) func(c *fnCtx) []Edit {
	return func(c *fnCtx) []Edit {
		return c.each(func(i int) []Edit {
			if !c.s.binaryAt(i, ops...) {
				return nil
			}
			e := c.rightOperand(i)
			if e < 0 || e <= i+1 || (skip != nil && skip(c, i, e)) {
				return nil
			}
			return []Edit{{c.tok(i - 1).End(), c.tok(e - 1).End(), ""}}
		})
	}
}

// rightOperand returns the end of the right operand of the binary operator
// at i (operators binding tighter than it), or -1.
func (c *fnCtx) rightOperand(i int) int {
	p := binaryPrec[c.tok(i).Text]
	return c.s.exprEnd(i+1, p+1, c.hi)
}

// hasSideEffect reports whether tokens [i, j) contain ++, -- or an assignment.
func (c *fnCtx) hasSideEffect(i, j int) bool {
	for k := i; k < j; k++ {
		t := c.tok(k)
		if t.Kind == Punct && (t.Text == "++" || t.Text == "--" || binaryPrec[t.Text] == 2) {
			return true
		}
	}
	return false
}

// intLit is an integer literal split into its parts.
type intLit struct {
	v      uint64
	hex    bool
	digits string
	suffix string
}

var intLitRE = regexp.MustCompile(`^(0[xX])?([0-9a-fA-F]+?)([uUlL]*)$`)

// parseInt reads an integer literal (decimal or hex, with u/l suffixes).
func parseInt(text string) (intLit, bool) {
	m := intLitRE.FindStringSubmatch(text)
	if m == nil {
		return intLit{}, false
	}
	l := intLit{hex: m[1] != "", digits: m[2], suffix: m[3]}
	base := 10
	if l.hex {
		base = 16
	}
	v, err := strconv.ParseUint(l.digits, base, 64)
	if err != nil {
		return intLit{}, false
	}
	l.v = v
	return l, true
}

// format writes v in the literal's base and suffix (hex keeps its width
// and letter case).
func (l intLit) format(v uint64) string {
	if !l.hex {
		return strconv.FormatUint(v, 10) + l.suffix
	}
	d := strconv.FormatUint(v, 16)
	if strings.ToLower(l.digits) != l.digits || strings.ToUpper(l.digits) == l.digits {
		d = strings.ToUpper(d)
	}
	for len(d) < len(l.digits) {
		d = "0" + d
	}
	return "0x" + d + l.suffix
}

// isFloatLit reports whether a number token is a floating literal.
func isFloatLit(text string) bool {
	if strings.HasPrefix(text, "0x") || strings.HasPrefix(text, "0X") {
		return false
	}
	return strings.ContainsAny(text, ".eE") || strings.HasSuffix(text, "f") || strings.HasSuffix(text, "F")
}

// parseFloat reads a floating literal's value and suffix.
func parseFloat(text string) (float64, string, bool) {
	suffix := ""
	body := text
	if n := len(body); n > 0 && (body[n-1] == 'f' || body[n-1] == 'F' || body[n-1] == 'l' || body[n-1] == 'L') {
		suffix, body = body[n-1:], body[:n-1]
	}
	v, err := strconv.ParseFloat(body, 64)
	if err != nil {
		return 0, "", false
	}
	return v, suffix, true
}

// formatFloat writes v as a literal that stays floating.
func formatFloat(v float64, suffix string) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s + suffix
}

// bindsTighter reports whether token j continues an operand ending before
// it at a level above additive: a multiplicative operator or a postfix.
func (c *fnCtx) bindsTighter(j int) bool {
	if j >= c.hi {
		return false
	}
	switch c.tok(j).Text {
	case "*", "/", "%", "(", "[", ".", "->", "++", "--":
		return true
	}
	return false
}

// oneLiteral drops " OP 1" where 1 is a whole additive term.
func oneLiteral(op string) func(c *fnCtx) []Edit {
	return func(c *fnCtx) []Edit {
		return c.each(func(i int) []Edit {
			if !c.s.binaryAt(i, op) || i+1 >= c.hi {
				return nil
			}
			n := c.tok(i + 1)
			l, ok := parseInt(n.Text)
			if n.Kind != Number || !ok || l.v != 1 || c.bindsTighter(i+2) {
				return nil
			}
			return []Edit{{c.tok(i - 1).End(), n.End(), ""}}
		})
	}
}

// relaxedForms maps the ordered memory helpers of hipsrc/arch/mma.h to
// their relaxed forms.
var relaxedForms = map[string]string{"atomic_add_acq_rel_u32_gpu": "atomic_add_u32_gpu", "ld_acquire_u32_gpu": "ld_relaxed_u32_gpu"}

// syncNames are the barrier, fence and wait primitives of hipsrc/arch.
var syncNames = map[string]bool{"block_sync": true, "warp_sync_all": true, "cluster_sync": true, "__syncthreads": true,
	"__syncwarp": true, "fence_gpu": true, "fence_proxy_async": true, "cp_async_wait": true, "wg_fence": true,
	"wg_wait": true, "mbar_wait": true, "grid_dep_wait": true}

// commutative calls whose first two arguments swapped give the same value.
var commutative = map[string]bool{"__builtin_fmaf": true, "__builtin_fmaxf": true, "__builtin_fminf": true,
	"fmaxf": true, "fminf": true, "max": true, "min": true}

// scaleNames are the scale and zero-point variables with numbered
// siblings (gemm.hip's sc0/sc1, zs0/zs1 for columns n and n+8).
var scaleNameRE = regexp.MustCompile(`^(sc|zs)([0-3])$`)

// scaleArrays are the arrays and pointers of per-group scales, zero points
// and row sums; groupIndex the identifiers that index their group.
var scaleArrays = map[string]bool{"asg": true, "asp": true, "rsp": true, "rsum": true, "gscale": true, "tscale": true,
	"gamax": true, "gam": true, "sam": true, "sz": true, "szp": true, "znx": true, "s_ar": true, "chs": true, "rs": true,
	"schs": true}
var groupIndex = map[string]bool{"g": true, "gp": true, "gl": true}

// siblingRE is a variable with a numbered sibling: w0/w1, i2/i3, X0/X1.
var siblingRE = regexp.MustCompile(`^([A-Za-z_]*[A-Za-z_])([0-3])$`)

var dimCycle = []string{"M", "N", "K", "G"}

// Operators is the catalogue, in the order mutants are listed.
var Operators = []Operator{
	{Name: "lt-to-le", Doc: "a strict bound made inclusive (one element too many)",
		Rule:  "a spaced binary ` < ` becomes ` <= `",
		sites: opSwap(map[string]string{"<": "<="})},
	{Name: "le-to-lt", Doc: "an inclusive bound made strict (the last element dropped)",
		Rule:  "a spaced binary ` <= ` becomes ` < `",
		sites: opSwap(map[string]string{"<=": "<"})},
	{Name: "gt-to-ge", Doc: "a strict lower test made inclusive",
		Rule:  "a spaced binary ` > ` becomes ` >= `",
		sites: opSwap(map[string]string{">": ">="})},
	{Name: "ge-to-gt", Doc: "an inclusive lower test made strict",
		Rule:  "a spaced binary ` >= ` becomes ` > `",
		sites: opSwap(map[string]string{">=": ">"})},
	{Name: "eq-ne-swap", Doc: "an equality test inverted",
		Rule:  "a spaced binary ` == ` becomes ` != ` and ` != ` becomes ` == `",
		sites: opSwap(map[string]string{"==": "!=", "!=": "=="})},
	{Name: "and-or-swap", Doc: "a conjunction made a disjunction or the reverse",
		Rule:  "a spaced ` && ` becomes ` || ` and ` || ` becomes ` && `",
		sites: opSwap(map[string]string{"&&": "||", "||": "&&"})},
	{Name: "bound-minus-one", Doc: "a loop or guard bound one short",
		Rule: "the right operand X of a spaced ` < ` or ` <= ` (its shift-level expression) becomes `X - 1`, or `(X) - 1` when X is more than one token",
		sites: func(c *fnCtx) []Edit {
			return c.each(func(i int) []Edit {
				if !c.s.binaryAt(i, "<", "<=") {
					return nil
				}
				e := c.rightOperand(i)
				if e < 0 || e <= i+1 {
					return nil
				}
				x := c.s.text(i+1, e)
				if e == i+2 {
					return []Edit{c.replaceRange(i+1, e, x+" - 1")}
				}
				return []Edit{c.replaceRange(i+1, e, "("+x+") - 1")}
			})
		}},
	{Name: "plus-one-dropped", Doc: "an off-by-one: a + 1 forgotten",
		Rule:  "` + 1` (the literal 1 with any u/l suffix, a whole additive term) is deleted",
		sites: oneLiteral("+")},
	{Name: "minus-one-dropped", Doc: "an off-by-one: a - 1 forgotten",
		Rule:  "` - 1` (the literal 1 with any u/l suffix, a whole additive term) is deleted",
		sites: oneLiteral("-")},
	{Name: "term-dropped", Doc: "a summand dropped (a + b computes a)",
		Rule: "` + B` is deleted, B the right operand of a spaced binary `+` (its multiplicative-level expression), unless B is the literal 1",
		sites: rightTermDropped([]string{"+"}, func(c *fnCtx, i, e int) bool {
			l, ok := parseInt(c.tok(i + 1).Text)
			return ok && l.v == 1 && e == i+2
		})},
	{Name: "term-doubled", Doc: "a summand counted twice (a + b computes a + 2b)",
		Rule: "` + B` becomes ` + B + B`, B the right operand of a spaced binary `+`, when B has no ++, -- or assignment",
		sites: func(c *fnCtx) []Edit {
			return c.each(func(i int) []Edit {
				if !c.s.binaryAt(i, "+") {
					return nil
				}
				e := c.rightOperand(i)
				if e < 0 || e <= i+1 || c.hasSideEffect(i+1, e) {
					return nil
				}
				b := c.s.text(i+1, e)
				return []Edit{c.replaceRange(i+1, e, b+" + "+b)}
			})
		}},
	{Name: "or-term-dropped", Doc: "a bit field or swizzle term dropped (a | b, a ^ b compute a)",
		Rule:  "` | B` or ` ^ B` is deleted, B the right operand of a spaced binary `|` or `^`",
		sites: rightTermDropped([]string{"|", "^"}, nil)},
	{Name: "add-to-sub", Doc: "a sign flip: a + b computes a - b",
		Rule:  "a spaced binary ` + ` becomes ` - `",
		sites: opSwap(map[string]string{"+": "-"})},
	{Name: "sub-to-add", Doc: "a sign flip: a - b computes a + b",
		Rule:  "a spaced binary ` - ` becomes ` + `",
		sites: opSwap(map[string]string{"-": "+"})},
	{Name: "compound-flip", Doc: "an accumulation or step reversed",
		Rule:  "a spaced ` += ` becomes ` -= ` and ` -= ` becomes ` += `",
		sites: opSwap(map[string]string{"+=": "-=", "-=": "+="})},
	{Name: "negation-dropped", Doc: "a negated operand used with the wrong sign",
		Rule: "a unary `-` (one not after an operand) is deleted",
		sites: func(c *fnCtx) []Edit {
			return c.each(func(i int) []Edit {
				t := c.tok(i)
				if t.Kind != Punct || t.Text != "-" || c.s.operandEnds(i-1) || i+1 >= c.hi || !c.s.startsOperand(i+1) {
					return nil
				}
				return []Edit{c.replaceTok(i, "")}
			})
		}},
	{Name: "stride-halved", Doc: "a wrong stride: an index multiplier changed",
		Rule: "an integer literal n >= 2 that is an operand of a spaced binary `*` becomes n/2 (n even) or n-1 (n odd), same base and suffix",
		sites: func(c *fnCtx) []Edit {
			return c.each(func(i int) []Edit {
				t := c.tok(i)
				if t.Kind != Number {
					return nil
				}
				l, ok := parseInt(t.Text)
				if !ok || l.v < 2 {
					return nil
				}
				left := i+1 < c.hi && c.s.binaryAt(i+1, "*")
				right := i-1 > c.lo && c.s.binaryAt(i-1, "*")
				if !left && !right {
					return nil
				}
				v := l.v / 2
				if l.v%2 == 1 {
					v = l.v - 1
				}
				return []Edit{c.replaceTok(i, l.format(v))}
			})
		}},
	{Name: "stride-dim-swap", Doc: "a wrong stride: a row pitch taken from another dimension",
		Rule: "an identifier M, N, K or G that is an operand of a spaced binary `*` becomes the next of M, N, K, G (cyclically) that the function names",
		sites: func(c *fnCtx) []Edit {
			return c.each(func(i int) []Edit {
				t := c.tok(i)
				k := -1
				for j, d := range dimCycle {
					if t.Kind == Ident && t.Text == d {
						k = j
					}
				}
				if k < 0 {
					return nil
				}
				if !(i+1 < c.hi && c.s.binaryAt(i+1, "*")) && !(i-1 > c.lo && c.s.binaryAt(i-1, "*")) {
					return nil
				}
				for n := 1; n < len(dimCycle); n++ {
					if d := dimCycle[(k+n)%len(dimCycle)]; c.idents[d] {
						return []Edit{c.replaceTok(i, d)}
					}
				}
				return nil
			})
		}},
	{Name: "guard-true", Doc: "a guard removed: the branch always taken",
		Rule: "the condition C of `if (C)` becomes `true`",
		sites: func(c *fnCtx) []Edit {
			return c.ifConds(func(i, j int) *Edit {
				if c.s.text(i, j) == "true" {
					return nil
				}
				e := c.replaceRange(i, j, "true")
				return &e
			})
		}},
	{Name: "guard-inverted", Doc: "a guard inverted: the branch taken exactly when it should not be",
		Rule: "the condition C of `if (C)` becomes `!(C)`",
		sites: func(c *fnCtx) []Edit {
			return c.ifConds(func(i, j int) *Edit {
				e := c.replaceRange(i, j, "!("+c.s.text(i, j)+")")
				return &e
			})
		}},
	{Name: "stale-scale", Doc: "a stale scale: a neighbouring column's or group's scale used",
		Rule: "an identifier sc<d> or zs<d> becomes its sibling (digit 0<->1, 2<->3) when the function names it; and the first group index g, gp or gl in the additive expression that starts at a scale array (asg, asp, rsp, rsum, gscale, tscale, gamax, gam, sam, sz, szp, znx, s_ar, chs, schs, rs) becomes `(g ^ 1u)`, the neighbouring group",
		sites: func(c *fnCtx) []Edit {
			return c.each(func(i int) []Edit {
				t := c.tok(i)
				if t.Kind != Ident {
					return nil
				}
				if m := scaleNameRE.FindStringSubmatch(t.Text); m != nil {
					if sib := m[1] + siblingDigit(m[2]); c.idents[sib] {
						return []Edit{c.replaceTok(i, sib)}
					}
					return nil
				}
				if !scaleArrays[t.Text] || (i+1 < c.hi && c.tok(i+1).Text == "(") {
					return nil
				}
				// The postfix chain containing the name (sm.sz[gp] starts at sm).
				start := i
				for start-2 >= c.lo && (c.tok(start-1).Text == "." || c.tok(start-1).Text == "->") && c.tok(start-2).Kind == Ident {
					start -= 2
				}
				e := c.s.exprEnd(start, binaryPrec["+"], c.hi)
				if e < 0 {
					return nil
				}
				for k := i + 1; k < e; k++ {
					u := c.tok(k)
					if u.Kind == Ident && groupIndex[u.Text] && c.tok(k-1).Text != "." && c.tok(k-1).Text != "->" &&
						!(k+1 < c.hi && c.tok(k+1).Text == "(") {
						return []Edit{c.replaceTok(k, "("+u.Text+" ^ 1u)")}
					}
				}
				return nil
			})
		}},
	{Name: "neighbour-var", Doc: "a neighbouring variable used (w1 for w0, the other pair's index)",
		Rule: "a use of an identifier <name><d>, d in 0..3, other than sc<d>/zs<d> and not a call or a declaration, becomes its sibling (0<->1, 2<->3) when the function names it",
		sites: func(c *fnCtx) []Edit {
			return c.each(func(i int) []Edit {
				t := c.tok(i)
				if t.Kind != Ident || scaleNameRE.MatchString(t.Text) || c.s.isType(t.Text) {
					return nil
				}
				m := siblingRE.FindStringSubmatch(t.Text)
				if m == nil || (i+1 < c.hi && (c.tok(i+1).Text == "(" || c.tok(i+1).Text == "<")) || c.isDeclared(i) {
					return nil
				}
				if p := c.tok(i - 1).Text; p == "." || p == "->" {
					return nil
				}
				if sib := m[1] + siblingDigit(m[2]); c.idents[sib] {
					return []Edit{c.replaceTok(i, sib)}
				}
				return nil
			})
		}},
	{Name: "component-swap", Doc: "the wrong vector component (cos for sin, the other word)",
		Rule: "a member `.x` becomes `.y`, `.y` `.x`, `.z` `.w` and `.w` `.z`",
		sites: func(c *fnCtx) []Edit {
			swap := map[string]string{"x": "y", "y": "x", "z": "w", "w": "z"}
			return c.each(func(i int) []Edit {
				if c.tok(i).Text != "." || i+1 >= c.hi {
					return nil
				}
				if to, ok := swap[c.tok(i+1).Text]; ok && c.tok(i+1).Kind == Ident {
					return []Edit{c.replaceTok(i+1, to)}
				}
				return nil
			})
		}},
	{Name: "index-swap", Doc: "swapped indices: a[i][j] read as a[j][i]",
		Rule: "two adjacent subscripts `[A][B]` whose contents differ and hold no brackets become `[B][A]`",
		sites: func(c *fnCtx) []Edit {
			return c.each(func(i int) []Edit {
				if c.tok(i).Text != "[" || (i > c.lo && c.tok(i-1).Text == "]") {
					return nil
				}
				if i > c.lo && c.tok(i-1).Kind == Ident && c.isDeclared(i-1) {
					return nil // an array declaration's dimensions
				}
				a := c.s.Match(i)
				if a < 0 || a+1 >= c.hi || c.tok(a+1).Text != "[" {
					return nil
				}
				b := c.s.Match(a + 1)
				if b < 0 || b >= c.hi || hasBracket(c, i+1, a) || hasBracket(c, a+2, b) {
					return nil
				}
				x, y := c.s.text(i+1, a), c.s.text(a+2, b)
				if x == "" || y == "" || x == y {
					return nil
				}
				return []Edit{c.replaceRange(i, b+1, "["+y+"]["+x+"]")}
			})
		}},
	{Name: "args-swapped", Doc: "swapped arguments of a call",
		Rule: "the first two arguments of a call `f(A, B, ...)` are exchanged when they differ, have no ++, -- or assignment, and f is not commutative (fmaf, fmaxf, fminf)",
		sites: func(c *fnCtx) []Edit {
			return c.each(func(i int) []Edit {
				t := c.tok(i)
				if t.Kind != Ident || isKeyword(t.Text) || commutative[t.Text] || headerSkip[t.Text] || c.s.isType(t.Text) {
					return nil
				}
				open := c.s.templateArgsEnd(i+1, c.hi)
				if open >= c.hi || c.tok(open).Text != "(" {
					return nil
				}
				close := c.s.Match(open)
				if close < 0 || close >= c.hi {
					return nil
				}
				args := c.splitArgs(open+1, close)
				if len(args) < 2 {
					return nil
				}
				a, b := args[0], args[1]
				x, y := c.s.text(a[0], a[1]), c.s.text(b[0], b[1])
				if x == y || x == "" || y == "" || c.hasSideEffect(a[0], a[1]) || c.hasSideEffect(b[0], b[1]) {
					return nil
				}
				return []Edit{c.replaceRange(a[0], b[1], y+", "+x)}
			})
		}},
	{Name: "shift-perturbed", Doc: "a wrong shift amount (field offset or step)",
		Rule: "an integer literal n >= 1 right of a spaced `<<`, `>>`, `<<=` or `>>=` becomes n-1 (n >= 2) or 2 (n = 1)",
		sites: func(c *fnCtx) []Edit {
			return c.each(func(i int) []Edit {
				if !c.s.binaryAt(i, "<<", ">>", "<<=", ">>=") || i+1 >= c.hi {
					return nil
				}
				l, ok := parseInt(c.tok(i + 1).Text)
				if c.tok(i+1).Kind != Number || !ok || l.v == 0 || c.bindsTighter(i+2) {
					return nil
				}
				v := l.v - 1
				if l.v == 1 {
					v = 2
				}
				return []Edit{c.replaceTok(i+1, l.format(v))}
			})
		}},
	{Name: "mask-narrowed", Doc: "a mask one bit short (0xFF -> 0x7F, 15u -> 7u)",
		Rule: "an integer literal operand of a spaced binary `&` loses its highest set bit",
		sites: func(c *fnCtx) []Edit {
			return c.each(func(i int) []Edit {
				t := c.tok(i)
				if t.Kind != Number {
					return nil
				}
				l, ok := parseInt(t.Text)
				if !ok || l.v == 0 {
					return nil
				}
				if !(i+1 < c.hi && c.s.binaryAt(i+1, "&")) && !(i-1 > c.lo && c.s.binaryAt(i-1, "&") && !c.bindsTighter(i+1)) {
					return nil
				}
				top := uint64(1) << (63 - bits.LeadingZeros64(l.v))
				return []Edit{c.replaceTok(i, l.format(l.v&^top))}
			})
		}},
	{Name: "threshold-nudged", Doc: "a threshold or sentinel constant off by one",
		Rule: "an integer literal n that is the whole right operand of a spaced comparison (<, <=, >, >=, ==, !=) becomes n+1",
		sites: func(c *fnCtx) []Edit {
			return c.each(func(i int) []Edit {
				if !c.s.binaryAt(i, "<", "<=", ">", ">=", "==", "!=") || i+1 >= c.hi {
					return nil
				}
				n := c.tok(i + 1)
				l, ok := parseInt(n.Text)
				if n.Kind != Number || !ok || c.rightOperand(i) != i+2 || l.v == math.MaxUint64 {
					return nil
				}
				return []Edit{c.replaceTok(i+1, l.format(l.v+1))}
			})
		}},
	{Name: "float-const-doubled", Doc: "a wrong floating constant (a format maximum, a scale factor)",
		Rule: "a floating literal other than 0 and 1 becomes twice its value, same suffix",
		sites: func(c *fnCtx) []Edit {
			return c.each(func(i int) []Edit {
				t := c.tok(i)
				if t.Kind != Number || !isFloatLit(t.Text) {
					return nil
				}
				v, suf, ok := parseFloat(t.Text)
				if !ok || v == 0 || v == 1 {
					return nil
				}
				return []Edit{c.replaceTok(i, formatFloat(2*v, suf))}
			})
		}},
	{Name: "loop-early-exit", Doc: "a loop that stops after its first iteration",
		Rule: "the closing `}` of a braced `for` or `while` body becomes `break; }`",
		sites: func(c *fnCtx) []Edit {
			return c.each(func(i int) []Edit {
				t := c.tok(i)
				if t.Kind != Ident || (t.Text != "for" && t.Text != "while") || i+1 >= c.hi || c.tok(i+1).Text != "(" {
					return nil
				}
				h := c.s.Match(i + 1)
				if h < 0 || h+1 >= c.hi || c.tok(h+1).Text != "{" {
					return nil
				}
				end := c.s.Match(h + 1)
				if end < 0 || end >= c.hi || end == h+2 {
					return nil
				}
				return []Edit{c.replaceTok(end, "break; }")}
			})
		}},
	{Name: "round-truncated", Doc: "wrong rounding: round-to-nearest-even replaced by truncation",
		Rule: "`bf16_rne(E)` becomes `(f32_bits(E) >> 16)` and `pack_bf16x2(A, B)` becomes `((f32_bits(A) >> 16) | ((f32_bits(B) >> 16) << 16))`",
		sites: func(c *fnCtx) []Edit {
			return c.calls(func(name string, i, close int, args [][2]int) *Edit {
				switch {
				case name == "bf16_rne" && len(args) == 1:
					e := c.replaceRange(i, close+1, "(f32_bits("+c.s.text(args[0][0], args[0][1])+") >> 16)")
					return &e
				case name == "pack_bf16x2" && len(args) == 2:
					a, b := c.s.text(args[0][0], args[0][1]), c.s.text(args[1][0], args[1][1])
					e := c.replaceRange(i, close+1, "((f32_bits("+a+") >> 16) | ((f32_bits("+b+") >> 16) << 16))")
					return &e
				}
				return nil
			})
		}},
	{Name: "fma-unfused", Doc: "wrong rounding: a fused multiply-add split into a rounded product and a sum",
		Rule: "`__builtin_fmaf(A, B, C)` becomes `((A) * (B) + (C))` (the build's -ffp-contract=off keeps the two roundings)",
		sites: func(c *fnCtx) []Edit {
			return c.calls(func(name string, i, close int, args [][2]int) *Edit {
				if name != "__builtin_fmaf" || len(args) != 3 {
					return nil
				}
				a, b, d := c.s.text(args[0][0], args[0][1]), c.s.text(args[1][0], args[1][1]), c.s.text(args[2][0], args[2][1])
				e := c.replaceRange(i, close+1, "(("+a+") * ("+b+") + ("+d+"))")
				return &e
			})
		}},
	{Name: "sync-dropped", Doc: "a dropped synchronisation (barrier, fence or wait)",
		Rule: "a call statement of block_sync, warp_sync_all, cluster_sync, __syncthreads, __syncwarp, fence_gpu, fence_proxy_async, cp_async_wait<N>, wg_fence, wg_wait<N>, mbar_wait or grid_dep_wait becomes `(void)0`",
		sites: func(c *fnCtx) []Edit {
			return c.calls(func(name string, i, close int, args [][2]int) *Edit {
				if !syncNames[name] || close+1 >= c.hi || c.tok(close+1).Text != ";" {
					return nil
				}
				e := c.replaceRange(i, close+1, "(void)0")
				return &e
			})
		}},
	{Name: "order-relaxed", Doc: "a memory order lost (an acquire or acq_rel made relaxed: the other blocks' partials read before their release is seen)",
		Rule: "a call of `atomic_add_acq_rel_u32_gpu` becomes `atomic_add_u32_gpu`, and of `ld_acquire_u32_gpu` becomes `ld_relaxed_u32_gpu`",
		sites: func(c *fnCtx) []Edit {
			return c.calls(func(name string, i, close int, args [][2]int) *Edit {
				to, ok := relaxedForms[name]
				if !ok {
					return nil
				}
				e := c.replaceTok(i, to)
				return &e
			})
		}},
	{Name: "wrapper-dropped", Doc: "the e4m3 contract wrapper bypassed (NaN and negative zero not fixed up)",
		Rule:  "a call of `e4m3_encode2_hw` becomes a call of `hw_e4m3x2_raw`",
		sites: renameCall("e4m3_encode2_hw", "hw_e4m3x2_raw")},
	{Name: "abs-dropped", Doc: "a magnitude taken with its sign (amax of signed values)",
		Rule: "`__builtin_fabsf(E)` becomes `(E)`",
		sites: func(c *fnCtx) []Edit {
			return c.calls(func(name string, i, close int, args [][2]int) *Edit {
				if name != "__builtin_fabsf" || len(args) != 1 {
					return nil
				}
				e := c.replaceRange(i, close+1, "("+c.s.text(args[0][0], args[0][1])+")")
				return &e
			})
		}},
	{Name: "max-to-min", Doc: "a maximum computed as a minimum",
		Rule:  "a call of `__builtin_fmaxf` becomes `__builtin_fminf`",
		sites: renameCall("__builtin_fmaxf", "__builtin_fminf")},
}

// renameCall replaces the callee of every call of from.
func renameCall(from, to string) func(c *fnCtx) []Edit {
	return func(c *fnCtx) []Edit {
		return c.calls(func(name string, i, close int, args [][2]int) *Edit {
			if name != from {
				return nil
			}
			e := c.replaceTok(i, to)
			return &e
		})
	}
}

// calls visits every call `name(args)` (or `name<...>(args)`) in the body.
func (c *fnCtx) calls(fn func(name string, i, close int, args [][2]int) *Edit) []Edit {
	return c.each(func(i int) []Edit {
		t := c.tok(i)
		if t.Kind != Ident || isKeyword(t.Text) {
			return nil
		}
		if i > c.lo && (c.tok(i-1).Text == "." || c.tok(i-1).Text == "->") {
			return nil
		}
		open := c.s.templateArgsEnd(i+1, c.hi)
		if open >= c.hi || c.tok(open).Text != "(" {
			return nil
		}
		close := c.s.Match(open)
		if close < 0 || close >= c.hi {
			return nil
		}
		if e := fn(t.Text, i, close, c.splitArgs(open+1, close)); e != nil {
			return []Edit{*e}
		}
		return nil
	})
}

// ifConds visits the condition tokens [i, j) of every `if (...)`.
func (c *fnCtx) ifConds(fn func(i, j int) *Edit) []Edit {
	return c.each(func(i int) []Edit {
		t := c.tok(i)
		if t.Kind != Ident || t.Text != "if" || i+1 >= c.hi || c.tok(i+1).Text != "(" {
			return nil
		}
		close := c.s.Match(i + 1)
		if close < 0 || close >= c.hi || close == i+2 {
			return nil
		}
		if e := fn(i+2, close); e != nil {
			return []Edit{*e}
		}
		return nil
	})
}

// splitArgs splits tokens [i, j) at depth-0 commas.
func (c *fnCtx) splitArgs(i, j int) [][2]int {
	if i >= j {
		return nil
	}
	var out [][2]int
	start := i
	for k := i; k < j; k++ {
		switch c.tok(k).Text {
		case "(", "[", "{":
			if m := c.s.Match(k); m > k && m < j {
				k = m
			}
		case ",":
			out = append(out, [2]int{start, k})
			start = k + 1
		}
	}
	return append(out, [2]int{start, j})
}

// isDeclared reports whether identifier i is being declared: it follows a
// type name (or a '*'/'&' after one), or it follows a ',' in a statement
// that starts with a type name.
func (c *fnCtx) isDeclared(i int) bool {
	p := c.tok(i - 1)
	if p.Kind == Ident && c.s.isType(p.Text) {
		return true
	}
	if (p.Text == "*" || p.Text == "&") && i-2 >= c.lo && c.tok(i-2).Kind == Ident && c.s.isType(c.tok(i-2).Text) {
		return true
	}
	if p.Text != "," {
		return false
	}
	// Walk back to the statement's start at the same bracket depth.
	for k := i - 1; k >= c.lo; k-- {
		switch c.tok(k).Text {
		case ")", "]", "}": // a bracketed group (a braced initializer too): skip it
			if m := c.s.Match(k); m >= 0 && m < k {
				k = m
				continue
			}
		case "(", "[":
			return false
		case ";", "{":
			n := k + 1
			for n < i && (c.tok(n).Text == "const" || c.tok(n).Text == "static" || c.tok(n).Text == "constexpr") {
				n++
			}
			return n < i && c.tok(n).Kind == Ident && c.s.isType(c.tok(n).Text)
		}
	}
	return false
}

func hasBracket(c *fnCtx, i, j int) bool {
	for k := i; k < j; k++ {
		switch c.tok(k).Text {
		case "[", "]", "(", ")":
			return true
		}
	}
	return false
}

func siblingDigit(d string) string {
	return string("1032"[d[0]-'0'])
}
