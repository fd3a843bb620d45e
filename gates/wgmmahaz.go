package gates

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/parharness/parharness/kernels"
)

// wgmma-hazards: a static gate over the sm_90a PTX. A wgmma.mma_async runs
// asynchronously: until a wgmma.wait_group retires it, it may still read
// its register A operand and write its accumulators, and the PTX ISA makes
// any other access to those registers in that window undefined
// ("Accessing the accumulator register or the input register containing
// the fragments of matrix A of a wgmma.mma_async instruction without first
// performing a wgmma.wait_group instruction that waits on a wgmma-group
// including that wgmma.mma_async instruction is undefined behavior", PTX
// ISA, wgmma.wait_group). ptxas does not repair a PTX program that breaks
// the rule; and a PTX program that keeps it can still break it in the
// machine code, which sass-wgmma-hazards checks (the H200 failures of the
// wgmma decode kernel came from there). The gate
// walks every control-flow path from each wgmma.mma_async to the
// wgmma.wait_group that retires it and fails on any instruction on it,
// other than a wgmma.mma_async (which accumulates into D by design), that
// writes one of the op's A or D registers. A wait_group N retires the op
// only where N or more groups were committed after the op's own on that
// path (counted per path: a block reached with different counts is walked
// once for each).

func init() {
	Register(Gate{Name: "wgmma-hazards", Suites: Quick | Full, Run: gateWGMMAHazards, Headline: []string{"wgmma_ops"},
		Proves: "no sm_90a kernel writes a register that an in-flight wgmma.mma_async reads (register A operand) or writes (accumulators) before a wgmma.wait_group retires it (wait_group N: N groups committed after the op's own), on any control-flow path of its PTX"})
}

// WGMMAHazard is one write to an in-flight wgmma's register.
type WGMMAHazard struct {
	Op, Write int    // statement indices of the wgmma and of the write
	Reg, Role string // the register and its role in the op ("A" or "D")
	Inst      string // the writing statement
}

func (h WGMMAHazard) String() string {
	return fmt.Sprintf("statement %d writes %s (%s operand of the wgmma at statement %d) before a wgmma.wait_group retires it: %s", h.Write, h.Reg, h.Role, h.Op, h.Inst)
}

// ptxTopOperands splits a PTX operand list at its top-level commas.
func ptxTopOperands(ops string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range ops {
		switch c {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(ops[start:i]))
				start = i + 1
			}
		}
	}
	if rest := strings.TrimSpace(ops[start:]); rest != "" {
		out = append(out, rest)
	}
	return out
}

// ptxRegs are the registers an operand names: %r1, or {%r1, %r2}.
func ptxRegs(op string) []string {
	op = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(op), "{"), "}")
	var out []string
	for _, f := range strings.Split(op, ",") {
		if f = strings.TrimSpace(f); strings.HasPrefix(f, "%") {
			out = append(out, f)
		}
	}
	return out
}

// ptxWrites are the registers a statement writes: its first operand when
// that is a register or a vector of them (stores, copies, barriers and
// branches name an address, a number or a label there).
func ptxWrites(in Inst) []string {
	ops := ptxTopOperands(in.Operands)
	if len(ops) == 0 || !(strings.HasPrefix(ops[0], "%") || strings.HasPrefix(ops[0], "{")) {
		return nil
	}
	return ptxRegs(ops[0])
}

// WGMMAHazards returns the writes to in-flight wgmma registers in s: from
// each wgmma.mma_async, the rest of its basic block and then every block
// reachable in the control-flow graph (buildCFG, the loop analysis's), each
// scanned up to the wgmma.wait_group that retires the op on that path.
func WGMMAHazards(s Symbol) []WGMMAHazard {
	g := buildCFG(s)
	last := func(b int) int { // the block's last instruction
		if b+1 < len(g.first) {
			return g.first[b+1] - 1
		}
		return len(s.Insts) - 1
	}
	var hz []WGMMAHazard
	reported := map[WGMMAHazard]bool{} // a write reached in several path states counts once
	for i, in := range s.Insts {
		if !strings.HasPrefix(in.Mnemonic, "wgmma.mma_async") {
			continue
		}
		ops := ptxTopOperands(in.Operands)
		if len(ops) < 2 {
			continue
		}
		role := map[string]string{}
		for _, r := range ptxRegs(ops[0]) {
			role[r] = "D"
		}
		if strings.HasPrefix(ops[1], "{") { // A from registers (else a descriptor)
			for _, r := range ptxRegs(ops[1]) {
				role[r] = "A"
			}
		}
		// scan checks instructions from..to starting in state st and
		// reports whether the op is still in flight after them, and the
		// state there.
		scan := func(from, to int, st wgFlight) (bool, wgFlight) {
			for j := from; j <= to; j++ {
				w := s.Insts[j]
				switch {
				case strings.HasPrefix(w.Mnemonic, "wgmma.commit_group"):
					st = st.commit()
					continue
				case strings.HasPrefix(w.Mnemonic, "wgmma.wait_group"):
					if n, err := strconv.Atoi(strings.TrimSpace(w.Operands)); err == nil && st.retiredBy(n) {
						return false, st
					}
					continue
				case strings.HasPrefix(w.Mnemonic, "wgmma.mma_async"):
					continue
				}
				for _, r := range ptxWrites(w) {
					if ro, ok := role[r]; ok {
						h := WGMMAHazard{Op: i, Write: j, Reg: r, Role: ro, Inst: w.Mnemonic + " " + w.Operands}
						if !reported[h] {
							reported[h] = true
							hz = append(hz, h)
						}
					}
				}
			}
			return true, st
		}
		live, st := scan(i+1, last(g.block[i]), wgFlight{})
		if !live {
			continue
		}
		// Every reachable (block, state) once: a block entered with the op
		// committed k groups back is scanned apart from one entered with it
		// uncommitted.
		type at struct {
			b  int
			st wgFlight
		}
		seen := map[at]bool{}
		var stack []at
		for _, b := range g.succ[g.block[i]] {
			stack = append(stack, at{b, st})
		}
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[x] {
				continue
			}
			seen[x] = true
			if live, st := scan(g.first[x.b], last(x.b), x.st); live {
				for _, b := range g.succ[x.b] {
					stack = append(stack, at{b, st})
				}
			}
		}
	}
	return hz
}

// wgFlight is where a wgmma stands on a path: whether a commit_group has
// closed its group yet, and how many groups were committed after its own
// (capped: no wait_group names more than wgMaxDepth).
type wgFlight struct {
	committed bool
	later     int
}

const wgMaxDepth = 8

func (f wgFlight) commit() wgFlight {
	if !f.committed {
		return wgFlight{committed: true}
	}
	f.later = min(f.later+1, wgMaxDepth)
	return f
}

// retiredBy reports whether wgmma.wait_group n retires the op: it waits
// until at most n of the most recent groups are pending, and the op's
// group is the (later+1)-th most recent. An op not yet committed is in no
// group a wait covers.
func (f wgFlight) retiredBy(n int) bool { return f.committed && f.later >= n }

func gateWGMMAHazards(t *T) {
	skipWithoutPTX(t)
	modules, byModule := kernels.ByModule("sm_90a") // every kernel: a wgmma in one that declares no matrix op counts too
	ops, kernelsWith := 0, 0
	forEachPTXEntry(t, modules, byModule, func(k kernels.Kernel, s Symbol, path string) {
		n := 0
		for _, in := range s.Insts {
			if strings.HasPrefix(in.Mnemonic, "wgmma.mma_async") {
				n++
			}
		}
		if n == 0 {
			return
		}
		ops += n
		kernelsWith++
		if hz := WGMMAHazards(s); len(hz) > 0 {
			t.Failf("%s (%s): %d writes to in-flight wgmma registers, first: %s (keep the op's A fragments and accumulators untouched until a wgmma.wait_group retires it: separate register sets per group in flight, or wait first)", k.Name, filepath.Base(path), len(hz), hz[0])
		}
	})
	t.Metric("wgmma_ops", float64(ops))
	t.Logf("%d kernels with wgmma checked (%d ops)", kernelsWith, ops)
}
