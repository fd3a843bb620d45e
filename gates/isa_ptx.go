package gates

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/parharness/parharness/kernels"
)

// isa-sm90a: the sm_90a counterpart of isa-gfx1201, read from the PTX that
// `make kernels` writes (what the driver JIT-compiles), so it runs wherever
// the kernels build, CI included. The claim is the same: each W4A8 GEMM's
// tensor-core instruction sits inside a natural loop of the kernel, so a
// kernel whose matrix op fell out of the k loop, or that lost it (an
// emulation), cannot pass. On sm_90 the mma.sync kernels run
// mma.sync.aligned.m16n8k16 on f16 (their e4m3 operands converted in
// registers: Hopper has no native fp8 mma.sync) and pq_gemm_pre_wg runs
// wgmma.mma_async on e4m3. PTX is not the final machine code (ptxas
// schedules and may unroll), but ptxas does not move an instruction out of
// a loop it stays in; the ptxas-sm90a gate covers what ptxas does.

func init() {
	Register(Gate{Name: "isa-sm90a", Suites: Quick | Full, Run: gateISASm90a,
		Proves: "every kernel whose registry row declares an sm_90a matrix op (mma.sync.aligned, wgmma.mma_async) runs that instruction in its sm_90a PTX (what the driver compiles) inside a natural loop of the kernel"})
	Register(Gate{Name: "resources-ptx", Suites: Quick | Full, Run: gateResourcesPTX,
		Proves: "every registered sm_90a kernel's PTX declares no local (stack) memory unless its registry entry allows scratch, and calls no function (everything inlined): what clang decided, checked where the kernels build; ptxas-sm90a checks what ptxas adds"})
}

// ptxResourceProblems says what is wrong with one kernel's PTX entry: a
// .local array (clang's stack depot: a private array it could not keep in
// registers) or a call (a function left out of line, like the lambda that
// once gave pq_gemm_pre_wg a 912-byte stack: the ptxas-sm90a gate's
// comment has what that build measured).
func ptxResourceProblems(k kernels.Kernel, s Symbol) []string {
	var out []string
	if s.LocalBytes > 0 && k.AllowScratch == "" {
		out = append(out, fmt.Sprintf("%d bytes of local memory declared (a private array not kept in registers); make its indices compile-time constants or declare AllowScratch with the reason", s.LocalBytes))
	}
	calls := 0
	for _, in := range s.Insts {
		if in.Mnemonic == "call" || strings.HasPrefix(in.Mnemonic, "call.") {
			calls++
		}
	}
	if calls > 0 {
		out = append(out, fmt.Sprintf("%d call(s): a function was not inlined (mark it always_inline: DEVICE in hipsrc/arch/arch.h)", calls))
	}
	return out
}

// ptxModule reads and parses one module's sm_90a PTX, its entries by
// name; false (after a gate failure saying why) when it cannot.
func ptxModule(t *T, mod string) (path string, byName map[string]Symbol, ok bool) {
	path = kernels.ObjectPath(t.Env().BuildDir, "sm_90a", mod)
	text, err := os.ReadFile(path)
	if err != nil {
		t.Failf("%s: %v: run `make kernels`", path, err)
		return path, nil, false
	}
	syms, err := ParsePTX(string(text))
	if err != nil {
		t.Failf("%s: %v", path, err)
		return path, nil, false
	}
	byName = map[string]Symbol{}
	for _, s := range syms {
		byName[s.Name] = s
	}
	return path, byName, true
}

// skipWithoutPTX skips a static gate when there is no sm_90a build.
func skipWithoutPTX(t *T) {
	dir := filepath.Join(t.Env().BuildDir, "sm_90a")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no sm_90a code objects in %s: run `make kernels` (needs clang-19)", dir)
	}
}

// forEachPTXEntry calls fn with every kernel of byModule and its parsed
// sm_90a PTX entry (and the module's path); an unreadable module or a
// missing entry fails t.
func forEachPTXEntry(t *T, modules []string, byModule map[string][]kernels.Kernel, fn func(k kernels.Kernel, s Symbol, path string)) {
	for _, mod := range modules {
		path, byName, ok := ptxModule(t, mod)
		if !ok {
			continue
		}
		for _, k := range byModule[mod] {
			s, ok := byName[k.Name]
			if !ok {
				t.Failf("%s (sm_90a): no .entry %s in %s", k.Name, k.Name, path)
				continue
			}
			fn(k, s, path)
		}
	}
}

// gateResourcesPTX runs ptxResourceProblems on every registered sm_90a
// kernel's PTX entry.
func gateResourcesPTX(t *T) {
	skipWithoutPTX(t)
	checked := 0
	modules, byModule := kernels.ByModule("sm_90a")
	forEachPTXEntry(t, modules, byModule, func(k kernels.Kernel, s Symbol, path string) {
		t.Metric(NewCase("kernel", k.Name).Key("ptx_local_bytes"), float64(s.LocalBytes))
		for _, p := range ptxResourceProblems(k, s) {
			t.Failf("%s (sm_90a, %s): %s", k.Name, filepath.Base(path), p)
		}
		checked++
	})
	t.Logf("%d kernels' PTX checked for local memory and calls", checked)
}

var (
	// ptxEntryAt finds an entry header after module directives that have
	// no ';' of their own (.version, .target, .address_size).
	ptxEntryAt      = regexp.MustCompile(`(?:^|\s)(?:\.(?:visible|weak)\s+)?\.entry\s+([A-Za-z_$][\w$]*)\s*\(`)
	ptxBlockComment = regexp.MustCompile(`(?s)/\*.*?\*/`)
	ptxLocal        = regexp.MustCompile(`^\.local\b.*\[(\d+)\]$`)
	ptxLabel        = regexp.MustCompile(`^([A-Za-z_$%][\w$]*):\s*`)
	ptxGuard        = regexp.MustCompile(`^@!?%?[\w$]+\s+`)
)

// ParsePTX reads the .entry functions of a PTX module as Symbols: every
// statement of a body is one Inst at a sequential address (inline-asm
// statements included), labels name the next statement, "bra" is a
// branch (unconditional, unless guarded by a predicate, ends the block)
// and ret/exit/trap end control. Directives (.reg, .shared, ...) are not
// instructions. A branch to an unknown label is an error.
func ParsePTX(text string) ([]Symbol, error) {
	// Statements: comments and line-info directives (.loc, .file: no ';'
	// of their own) out, then split at ';', '{' and '}'.
	text = ptxBlockComment.ReplaceAllString(text, " ")
	var clean strings.Builder
	for _, line := range strings.Split(text, "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		if f := strings.Fields(line); len(f) > 0 && (f[0] == ".loc" || f[0] == ".file") {
			continue
		}
		clean.WriteString(line)
		clean.WriteByte('\n')
	}
	src := clean.String()
	var syms []Symbol
	depth, inEntry := 0, false
	var labels map[string]uint64
	type ref struct {
		inst  int
		label string
	}
	var refs []ref
	finish := func() error {
		if !inEntry {
			return nil
		}
		s := &syms[len(syms)-1]
		for _, r := range refs {
			a, ok := labels[r.label]
			if !ok {
				return fmt.Errorf("entry %s: branch to unknown label %s", s.Name, r.label)
			}
			s.Insts[r.inst].Target, s.Insts[r.inst].HasTarget = a, true
		}
		inEntry, refs = false, nil
		return nil
	}
	stmt := strings.Builder{}
	operand := 0 // depth of vector-operand braces ({%f1, %f2}) inside a statement
	for i := 0; i < len(src); i++ {
		c := src[i]
		// Inside a body, a brace in a statement that has begun (an opcode is
		// written) is a vector operand, not a scope.
		if c == '{' && depth > 0 && opcodeWritten(stmt.String()) {
			operand++
			stmt.WriteByte(c)
			continue
		}
		if c == '}' && operand > 0 {
			operand--
			stmt.WriteByte(c)
			continue
		}
		if c != ';' && c != '{' && c != '}' {
			stmt.WriteByte(c)
			continue
		}
		st := strings.Join(strings.Fields(stmt.String()), " ")
		stmt.Reset()
		operand = 0
		if m := ptxEntryAt.FindStringSubmatch(st); m != nil && c == '{' && depth == 0 {
			syms = append(syms, Symbol{Name: m[1]})
			inEntry, labels = true, map[string]uint64{}
			depth = 1
			continue
		}
		if inEntry && depth >= 1 {
			s := &syms[len(syms)-1]
			for {
				m := ptxLabel.FindStringSubmatch(st)
				if m == nil {
					break
				}
				if _, dup := labels[m[1]]; dup {
					// Valid PTX when the two sit in different { } scopes (an
					// inline-asm label without %=), but this reader keeps one
					// label space per entry: refuse rather than mis-wire.
					return nil, fmt.Errorf("entry %s: label %s defined twice (scoped labels are not supported; give inline-asm labels a %%= suffix)", s.Name, m[1])
				}
				labels[m[1]] = uint64(len(s.Insts))
				st = st[len(m[0]):]
			}
			if m := ptxLocal.FindStringSubmatch(st); m != nil {
				n, _ := strconv.Atoi(m[1])
				s.LocalBytes += n
			}
			if st != "" && !strings.HasPrefix(st, ".") {
				guarded := ptxGuard.MatchString(st)
				body := ptxGuard.ReplaceAllString(st, "")
				fields := strings.Fields(body)
				in := Inst{Addr: uint64(len(s.Insts)), Mnemonic: fields[0], Operands: strings.TrimSpace(strings.TrimPrefix(body, fields[0]))}
				op := strings.SplitN(fields[0], ".", 2)[0]
				switch op {
				case "bra":
					if len(fields) < 2 {
						return nil, fmt.Errorf("entry %s: bra without a target: %q", s.Name, st)
					}
					in.Branch, in.Ends = true, !guarded
					refs = append(refs, ref{len(s.Insts), strings.TrimSuffix(fields[len(fields)-1], ",")})
				case "ret", "exit", "trap":
					in.Ends = !guarded
				}
				s.Insts = append(s.Insts, in)
			}
		}
		switch c {
		case '{':
			depth++
		case '}':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("unbalanced '}' in the PTX")
			}
			if depth == 0 {
				if err := finish(); err != nil {
					return nil, err
				}
			}
		}
	}
	if depth != 0 || inEntry {
		return nil, fmt.Errorf("the PTX ends inside a body (unbalanced braces)")
	}
	return syms, nil
}

// opcodeWritten reports whether a statement in progress (inside a body)
// has more than labels in it, so that a '{' now opens a vector operand,
// not a scope.
func opcodeWritten(st string) bool {
	st = strings.TrimSpace(st)
	for {
		m := ptxLabel.FindStringSubmatch(st)
		if m == nil {
			break
		}
		st = strings.TrimSpace(st[len(m[0]):])
	}
	return st != ""
}

func gateISASm90a(t *T) {
	skipWithoutPTX(t)
	modules, byModule := matrixKernels(t, "sm_90a")
	checked := 0
	forEachPTXEntry(t, modules, byModule, func(k kernels.Kernel, s Symbol, path string) {
		checkMatrixSymbol(t, s, k.MatrixOp["sm_90a"], "sm_90a, "+filepath.Base(path), matrixMetrics{count: "ptx_mma", loop: "ptx_loop_", op: "mma", where: "statement"})
		checked++
	})
	t.Logf("%d kernels checked in their PTX", checked)
}
