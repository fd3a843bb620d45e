package gates

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/parharness/parharness/kernels"
)

// The ISA gate reads the gfx1201 machine code by counting the ISA, which
// stays true where profiler counters read zero: disassemble the code
// object, find each kernel's backward branches structurally and check what
// sits inside them. Here the claim is the one the W4A8 GEMMs rest on: the
// matrix op their registry rows declare (the native fp8 WMMA) is in the
// kernel's hot loop, so an emulated matrix op (a
// call into an out-of-line FMA loop, or no matrix instruction at all)
// cannot pass for it.

// wmmaFP8 is the mnemonic stem of gfx12's fp8 x fp8 -> f32 WMMA
// (v_wmma_f32_16x16x16_fp8_fp8, what
// __builtin_amdgcn_wmma_f32_16x16x16_fp8_fp8_w32_gfx12 compiles to); the
// tests' disassembly fixtures use it.
const wmmaFP8 = "v_wmma_f32_16x16x16_fp8_fp8"

func init() {
	Register(Gate{Name: "isa-gfx1201", Suites: Quick | Full, Run: gateISAGfx1201,
		Proves: "every kernel whose registry row declares a gfx1201 matrix op has that instruction in its gfx1201 machine code (llvm-objdump --mcpu=gfx1201) inside a loop: a backward branch within the kernel whose target dominates it (a natural loop) holds it"})
}

// Inst is one disassembled instruction.
type Inst struct {
	Addr     uint64
	Mnemonic string
	// Target is the branch target of s_branch / s_cbranch_*; HasTarget
	// says whether the instruction is such a branch with a known target.
	Target    uint64
	HasTarget bool
	// Branch marks a direct branch (it ends its basic block); Ends an
	// instruction control never falls through (an unconditional branch,
	// the end of the program). The parsers set both; the CFG reads only
	// these, so one loop analysis serves both instruction sets.
	Branch, Ends bool
	// Operands is a PTX statement's text after its mnemonic (empty for
	// machine code).
	Operands string
}

// IsBranch reports whether the mnemonic is a direct SOPP branch.
func IsBranch(mnemonic string) bool {
	return mnemonic == "s_branch" || strings.HasPrefix(mnemonic, "s_cbranch_")
}

// Symbol is one function of the disassembly: its name, start address and
// instructions in address order.
type Symbol struct {
	Name  string
	Start uint64
	Insts []Inst
	// LocalBytes is the local (stack) memory a PTX entry declares
	// (.local arrays: clang's __local_depot); 0 for machine code.
	LocalBytes int
}

// ParseObjdump reads `llvm-objdump -d --mcpu=gfx1201` output: symbol
// headers ("0000000000002c00 <name>:") and instruction lines
// ("\tmnemonic operands // 000000002C00: ENCODING [<sym+0xoff>]"). A branch
// target is the SOPP rule PC + 4 + 4*simm16 when the operand is an
// immediate, else the "<sym+0xoff>" annotation. Lines it cannot place are
// errors carrying their line number.
func ParseObjdump(text string) ([]Symbol, error) {
	var syms []Symbol
	type pending struct {
		sym, inst int
		ref       string
		line      int
	}
	var unresolved []pending
	for i, line := range strings.Split(text, "\n") {
		ln := i + 1
		trim := strings.TrimSpace(line)
		if trim == "" || strings.HasPrefix(trim, "Disassembly of section") || strings.Contains(trim, "file format") || trim == "..." {
			continue
		}
		if name, addr, ok := symbolHeader(trim); ok {
			syms = append(syms, Symbol{Name: name, Start: addr})
			continue
		}
		code, comment, found := strings.Cut(trim, "//")
		if !found {
			return nil, fmt.Errorf("line %d: not an instruction (no // address comment): %q", ln, trim)
		}
		if len(syms) == 0 {
			return nil, fmt.Errorf("line %d: instruction before any symbol header", ln)
		}
		fields := strings.Fields(code)
		if len(fields) == 0 {
			return nil, fmt.Errorf("line %d: empty instruction", ln)
		}
		addrText, rest, ok := strings.Cut(strings.TrimSpace(comment), ":")
		if !ok {
			return nil, fmt.Errorf("line %d: no address in %q", ln, comment)
		}
		addr, err := strconv.ParseUint(strings.TrimSpace(addrText), 16, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: address %q: %v", ln, addrText, err)
		}
		inst := Inst{Addr: addr, Mnemonic: fields[0], Branch: IsBranch(fields[0]), Ends: endsFlow(fields[0])}
		if inst.Branch {
			if len(fields) > 1 {
				if imm, err := strconv.ParseInt(strings.TrimSuffix(fields[1], ","), 0, 64); err == nil {
					inst.Target = uint64(int64(addr) + 4 + 4*int64(int16(uint16(imm))))
					inst.HasTarget = true
				}
			}
			if !inst.HasTarget {
				ref, ok := annotation(rest)
				if !ok {
					return nil, fmt.Errorf("line %d: branch %q with neither an immediate nor a <symbol+offset> target", ln, trim)
				}
				unresolved = append(unresolved, pending{len(syms) - 1, len(syms[len(syms)-1].Insts), ref, ln})
			}
		}
		s := &syms[len(syms)-1]
		s.Insts = append(s.Insts, inst)
	}
	// Symbolic targets resolve against every header seen.
	starts := map[string]uint64{}
	for _, s := range syms {
		starts[s.Name] = s.Start
	}
	for _, p := range unresolved {
		name, off := p.ref, uint64(0)
		if i := strings.LastIndex(p.ref, "+0x"); i >= 0 {
			v, err := strconv.ParseUint(p.ref[i+3:], 16, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: target <%s>: %v", p.line, p.ref, err)
			}
			name, off = p.ref[:i], v
		}
		base, ok := starts[name]
		if !ok {
			return nil, fmt.Errorf("line %d: target <%s> names no symbol of the disassembly", p.line, p.ref)
		}
		in := &syms[p.sym].Insts[p.inst]
		in.Target, in.HasTarget = base+off, true
	}
	return syms, nil
}

// symbolHeader parses "0000000000002c00 <name>:".
func symbolHeader(s string) (name string, addr uint64, ok bool) {
	hex, rest, found := strings.Cut(s, " ")
	if !found || !strings.HasPrefix(rest, "<") || !strings.HasSuffix(rest, ">:") {
		return "", 0, false
	}
	a, err := strconv.ParseUint(hex, 16, 64)
	if err != nil {
		return "", 0, false
	}
	return rest[1 : len(rest)-2], a, true
}

// annotation returns the text inside the last <...> of s.
func annotation(s string) (string, bool) {
	i, j := strings.LastIndex(s, "<"), strings.LastIndex(s, ">")
	if i < 0 || j <= i+1 {
		return "", false
	}
	return s[i+1 : j], true
}

// Loop is a natural loop closed by one back edge: control goes from the
// instruction at Branch (a branch, or the last instruction of a latch block
// that falls through) to Head, and Head dominates it (every path from the
// kernel entry to it passes Head), so the body, the blocks that reach it
// without passing Head, runs again each time the edge is taken.
type Loop struct {
	Head, Branch uint64
	Insts        int // instructions in the body
	Matrix       int // matrix instructions (the mnemonic checked) in the body
}

// MatrixReport is what AnalyzeMatrixLoops finds in one symbol.
type MatrixReport struct {
	Matrix int    // matrix instructions in the symbol
	Loops  []Loop // every natural loop of the symbol, in block order of the latch
	// Backward counts backward branches into the symbol that close no
	// loop: their target does not dominate them (llvm's block layout
	// threads jumps back into straight-line code, e.g. a chain of ifs;
	// such a span only repeats inside an enclosing loop, if at all).
	Backward int
	// Hot is the innermost loop holding a matrix instruction (the smallest
	// body among those holding one); nil when no loop holds one.
	Hot *Loop
}

// cfg is the basic-block graph of one symbol.
type cfg struct {
	first []int // first instruction of each block
	block []int // block of each instruction
	succ  [][]int
	pred  [][]int
}

// endsFlow reports whether a gfx1201 instruction never falls through.
func endsFlow(mnemonic string) bool {
	return mnemonic == "s_branch" || strings.HasPrefix(mnemonic, "s_endpgm") || mnemonic == "s_setpc_b64"
}

func buildCFG(s Symbol) cfg {
	n := len(s.Insts)
	index := make(map[uint64]int, n)
	for i, in := range s.Insts {
		index[in.Addr] = i
	}
	leader := make([]bool, n)
	if n > 0 {
		leader[0] = true
	}
	for i, in := range s.Insts {
		if in.HasTarget {
			if j, ok := index[in.Target]; ok {
				leader[j] = true
			}
		}
		if (in.Branch || in.Ends) && i+1 < n {
			leader[i+1] = true
		}
	}
	var g cfg
	g.block = make([]int, n)
	for i := range s.Insts {
		if leader[i] {
			g.first = append(g.first, i)
		}
		g.block[i] = len(g.first) - 1
	}
	g.succ = make([][]int, len(g.first))
	g.pred = make([][]int, len(g.first))
	for b := range g.first {
		last := n - 1
		if b+1 < len(g.first) {
			last = g.first[b+1] - 1
		}
		in := s.Insts[last]
		if in.HasTarget {
			if j, ok := index[in.Target]; ok {
				g.succ[b] = append(g.succ[b], g.block[j])
			}
		}
		if !in.Ends && last+1 < n {
			g.succ[b] = append(g.succ[b], g.block[last+1])
		}
		for _, t := range g.succ[b] {
			g.pred[t] = append(g.pred[t], b)
		}
	}
	return g
}

// reachable marks the blocks control can reach from the entry (block 0).
func (g cfg) reachable() []bool {
	r := make([]bool, len(g.first))
	if len(r) == 0 {
		return r
	}
	stack := []int{0}
	r[0] = true
	for len(stack) > 0 {
		b := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, t := range g.succ[b] {
			if !r[t] {
				r[t] = true
				stack = append(stack, t)
			}
		}
	}
	return r
}

// addLoopBody adds to body, which holds a natural loop's head, every live
// block that reaches latch (a block branching back to the head) without
// passing a block already in body: the loop's body.
func (g cfg) addLoopBody(body map[int]bool, latch int, live []bool) {
	stack := []int{latch}
	for len(stack) > 0 {
		b := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if body[b] {
			continue
		}
		body[b] = true
		for _, p := range g.pred[b] {
			if live[p] {
				stack = append(stack, p)
			}
		}
	}
}

// dominators returns, for each block, the set of blocks dominating it
// (bitsets; entry block 0). Blocks unreachable from the entry keep the
// full set (everything "dominates" dead code), so callers must not take a
// backward branch there for a loop: AnalyzeMatrixLoops skips them.
func (g cfg) dominators() [][]uint64 {
	nb := len(g.first)
	words := (nb + 63) / 64
	full := make([]uint64, words)
	for i := 0; i < nb; i++ {
		full[i/64] |= 1 << (i % 64)
	}
	dom := make([][]uint64, nb)
	for b := range dom {
		dom[b] = append([]uint64(nil), full...)
	}
	if nb == 0 {
		return dom
	}
	dom[0] = make([]uint64, words)
	dom[0][0] = 1
	for changed := true; changed; {
		changed = false
		for b := 1; b < nb; b++ {
			nd := append([]uint64(nil), full...)
			for _, p := range g.pred[b] {
				for w := range nd {
					nd[w] &= dom[p][w]
				}
			}
			nd[b/64] |= 1 << (b % 64)
			for w := range nd {
				if nd[w] != dom[b][w] {
					dom[b], changed = nd, true
					break
				}
			}
		}
	}
	return dom
}

// AnalyzeMatrixLoops counts the instructions of s whose mnemonic contains
// stem and finds the natural loops around them: every CFG edge b -> h
// whose head h dominates b (a back edge: a backward branch, or, where the
// compiler placed the latch before the header, a fall-through) closes a
// loop whose body is h plus the blocks that reach b without passing h; a
// matrix instruction in the body is inside the loop. Backward branches
// whose target does not dominate them are counted, not taken for loops.
func AnalyzeMatrixLoops(s Symbol, stem string) MatrixReport {
	var rep MatrixReport
	for _, in := range s.Insts {
		if strings.Contains(in.Mnemonic, stem) {
			rep.Matrix++
		}
	}
	g := buildCFG(s)
	dom, live := g.dominators(), g.reachable()
	dominates := func(a, b int) bool { return dom[b][a/64]&(1<<(a%64)) != 0 }
	for bi, in := range s.Insts {
		if !in.HasTarget || in.Target > in.Addr || in.Target < s.Start {
			continue
		}
		bb := g.block[bi]
		closes := false
		if live[bb] {
			for _, t := range g.succ[bb] {
				if s.Insts[g.first[t]].Addr == in.Target && dominates(t, bb) {
					closes = true
				}
			}
		}
		if !closes { // dead code, or a jump back into straight-line code
			rep.Backward++
		}
	}
	for bb := range g.first {
		if !live[bb] {
			continue
		}
		last := len(s.Insts) - 1
		if bb+1 < len(g.first) {
			last = g.first[bb+1] - 1
		}
		for _, tb := range g.succ[bb] {
			if !dominates(tb, bb) {
				continue
			}
			body := map[int]bool{tb: true}
			g.addLoopBody(body, bb, live)
			l := Loop{Head: s.Insts[g.first[tb]].Addr, Branch: s.Insts[last].Addr}
			for i, x := range s.Insts {
				if body[g.block[i]] {
					l.Insts++
					if strings.Contains(x.Mnemonic, stem) {
						l.Matrix++
					}
				}
			}
			rep.Loops = append(rep.Loops, l)
		}
	}
	for i := range rep.Loops {
		l := &rep.Loops[i]
		if l.Matrix > 0 && (rep.Hot == nil || l.Insts < rep.Hot.Insts) {
			rep.Hot = l
		}
	}
	return rep
}

// matrixMetrics names one ISA gate's metrics: name.<count> (matrix
// instructions in the kernel), name.<loop>insts and name.<loop><op> (in
// its innermost loop holding one); where says what Loop.Head and Branch
// count from the kernel's start.
type matrixMetrics struct{ count, loop, op, where string }

// checkMatrixSymbol analyses one kernel's loops for stem, records its
// metrics and fails the gate (tag names the target and file) unless the
// matrix op is inside a loop.
func checkMatrixSymbol(t *T, s Symbol, stem, tag string, m matrixMetrics) {
	rep := AnalyzeMatrixLoops(s, stem)
	kc := NewCase("kernel", s.Name)
	t.Metric(kc.Key(m.count), float64(rep.Matrix))
	if rep.Hot != nil {
		t.Metric(kc.Key(m.loop+"insts"), float64(rep.Hot.Insts))
		t.Metric(kc.Key(m.loop+m.op), float64(rep.Hot.Matrix))
		t.Logf("%s: %d %s; the innermost loop holding one (head at %s %#x, back edge from %#x) has %d instructions, %d of them %s",
			s.Name, rep.Matrix, stem, m.where, rep.Hot.Head-s.Start, rep.Hot.Branch-s.Start, rep.Hot.Insts, rep.Hot.Matrix, stem)
	}
	if msg := CheckMatrixInLoop(rep, stem); msg != "" {
		t.Failf("%s (%s): %s", s.Name, tag, msg)
	}
}

// CheckMatrixInLoop states what is wrong with a report, or "" when the
// matrix instruction is present and inside a loop.
func CheckMatrixInLoop(rep MatrixReport, stem string) string {
	switch {
	case rep.Matrix == 0:
		return fmt.Sprintf("no %s instruction: the kernel does not use the native matrix op (emulated, or a different op)", stem)
	case rep.Hot == nil:
		return fmt.Sprintf("%d %s instruction(s), none inside a loop (%d loops, %d backward branches closing none): the k loop does not run the matrix op",
			rep.Matrix, stem, len(rep.Loops), rep.Backward)
	}
	return ""
}

// matrixKernels groups by module the kernels an ISA gate checks on
// codeArch: those whose registry row declares a matrix op for it (the
// value is the instruction). No such kernel at all is a gate failure: the
// registry lost its declarations.
func matrixKernels(t *T, codeArch string) (modules []string, byModule map[string][]kernels.Kernel) {
	all, grouped := kernels.ByModule(codeArch)
	byModule = map[string][]kernels.Kernel{}
	for _, mod := range all {
		for _, k := range grouped[mod] {
			if k.MatrixOp[codeArch] != "" {
				byModule[mod] = append(byModule[mod], k)
			}
		}
		if len(byModule[mod]) > 0 {
			modules = append(modules, mod)
		}
	}
	if len(modules) == 0 {
		t.Fatalf("no registered kernel declares a matrix op for %s", codeArch)
	}
	return modules, byModule
}

// objdumpHint is how to get the disassembler.
const objdumpHint = "apt-get install llvm-19"

// findObjdump returns the LLVM disassembler on PATH.
func findObjdump() (string, error) {
	var tried []string
	for _, name := range []string{"llvm-objdump-19", "llvm-objdump"} {
		p, err := exec.LookPath(name)
		if err == nil {
			return p, nil
		}
		tried = append(tried, fmt.Sprintf("%s: %v", name, err))
	}
	return "", errors.New(strings.Join(tried, "; "))
}

func gateISAGfx1201(t *T) {
	dir := filepath.Join(t.Env().BuildDir, "gfx1201")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no gfx1201 code objects in %s: run `make kernels` (needs clang-19)", dir)
	}
	objdump, err := findObjdump()
	if err != nil {
		t.Skipf("no LLVM disassembler on PATH (%v): %s", err, objdumpHint)
	}
	modules, byModule := matrixKernels(t, "gfx1201")
	checked := 0
	for _, mod := range modules {
		path := kernels.ObjectPath(t.Env().BuildDir, "gfx1201", mod)
		if _, err := os.Stat(path); err != nil {
			t.Failf("%s: %v: run `make kernels`", path, err)
			continue
		}
		out, err := exec.Command(objdump, "-d", "--mcpu=gfx1201", path).Output()
		if err != nil {
			msg := err.Error()
			var ee *exec.ExitError
			if errors.As(err, &ee) && len(ee.Stderr) > 0 {
				msg += ": " + strings.TrimSpace(string(ee.Stderr))
			}
			t.Failf("%s -d --mcpu=gfx1201 %s: %s", objdump, path, msg)
			continue
		}
		syms, err := ParseObjdump(string(out))
		if err != nil {
			t.Failf("%s: disassembly: %v", path, err)
			continue
		}
		byName := map[string]Symbol{}
		for _, s := range syms {
			byName[s.Name] = s
		}
		for _, k := range byModule[mod] {
			s, ok := byName[k.Name]
			if !ok {
				t.Failf("%s (gfx1201): no symbol %s in the disassembly of %s", k.Name, k.Name, path)
				continue
			}
			checkMatrixSymbol(t, s, k.MatrixOp["gfx1201"], "gfx1201, "+filepath.Base(path), matrixMetrics{count: "wmma", loop: "loop_", op: "wmma", where: "byte offset"})
			checked++
		}
	}
	t.Logf("%d kernels checked with %s", checked, filepath.Base(objdump))
}
