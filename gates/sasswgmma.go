package gates

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/parharness/parharness/kernels"
)

// sass-wgmma-hazards: the wgmma-hazards walk repeated on the machine code.
// A PTX program can keep every in-flight wgmma's registers untouched and
// still run wrong: ptxas allocates physical registers, and it has been seen
// to treat a wgmma's A registers as dead right after the issue, giving them
// to whatever the code computes before the wait (H200, 2026-12-02: in
// pq_gemm_dec_wg_m8 and _m64 the next group's address arithmetic, its
// LDS.128 of raw weights and its F2FP conversions were written into the A
// registers of QGMMAs still in flight; the outputs differed between
// launches in whole 16-column tiles, one warp's share of the op). So this gate compiles each sm_90a
// module that has wgmma with ptxas -arch=sm_90a, disassembles it with
// cuobjdump -sass, and walks every path from each GMMA instruction
// (HGMMA, QGMMA, IGMMA, BGMMA) to the WARPGROUP.DEPBAR that retires its
// group, failing on any other instruction on the way that writes the op's
// A registers or reads or writes its accumulators.
//
// Model of the SASS (sm_90): a GMMA's operands are D, A (a register, else
// a gdesc[] descriptor: shared memory), B (a descriptor), C; A from
// registers is 4 consecutive registers; D is 64·N/128 registers of fp32
// (half that for an f16 accumulator) from the shape 64xNxK; the GMMA that
// carries the gsb0 token closes a group (wgmma.commit_group); and
// WARPGROUP.DEPBAR.LE gsb0, n waits until at most n groups are pending. A
// destination is the first operand (the second for SHFL, whose first is
// its predicate); its width is 2 for .64, .WIDE, CS2R and the f64 ops, 4
// for .128, and the count of LDSM's .x suffix.

func init() {
	Register(Gate{Name: "sass-wgmma-hazards", Suites: Quick | Full, Run: gateSASSWGMMA, Headline: []string{"gmma_ops"},
		Proves: "in the machine code ptxas makes of every sm_90a module with wgmma (ptxas -arch=sm_90a, cuobjdump -sass), no instruction on any path between a GMMA and the WARPGROUP.DEPBAR that retires it writes that op's A registers or touches its accumulators (a register allocation that reuses an in-flight op's operands fails)"})
}

// SASSInst is one disassembled instruction.
type SASSInst struct {
	Addr     uint64
	Pred     string // "@P0", "@!P1", or ""
	Op       string // opcode with its modifiers: "QGMMA.64x8x32.F32.E4M3.E4M3"
	Operands []string
}

func (in SASSInst) String() string {
	s := fmt.Sprintf("/*%04x*/ ", in.Addr)
	if in.Pred != "" {
		s += in.Pred + " "
	}
	return s + in.Op + " " + strings.Join(in.Operands, ", ")
}

var (
	sassFunc = regexp.MustCompile(`^\s*Function\s*:\s*(\S+)\s*$`)
	sassInst = regexp.MustCompile(`^\s*/\*([0-9a-fA-F]+)\*/\s+(.*?)\s*;`)
	sassReg  = regexp.MustCompile(`\bR(\d+)\b(\.64)?`)
	sassGMMA = regexp.MustCompile(`^[HQIB]GMMA\.64x(\d+)x\d+\.([A-Z0-9]+)`)
	sassBase = regexp.MustCompile(`^R(\d+)`)
	sassWait = regexp.MustCompile(`^WARPGROUP\.DEPBAR\.LE$`)
)

// ParseSASS reads cuobjdump -sass text: the instructions of each function
// in address order. Encoding-only lines and headers are skipped; an
// instruction before any "Function :" line, or addresses that do not
// increase, are errors with the line number.
func ParseSASS(text string) (map[string][]SASSInst, error) {
	funcs := map[string][]SASSInst{}
	cur := ""
	for i, line := range strings.Split(text, "\n") {
		if m := sassFunc.FindStringSubmatch(line); m != nil {
			cur = m[1]
			if _, dup := funcs[cur]; dup {
				return nil, fmt.Errorf("sass line %d: function %s listed twice", i+1, cur)
			}
			funcs[cur] = nil
			continue
		}
		m := sassInst.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if cur == "" {
			return nil, fmt.Errorf("sass line %d: instruction before any \"Function :\" line", i+1)
		}
		addr, err := strconv.ParseUint(m[1], 16, 64)
		if err != nil {
			return nil, fmt.Errorf("sass line %d: address %q: %v", i+1, m[1], err)
		}
		in := SASSInst{Addr: addr}
		body := strings.TrimSpace(m[2])
		if strings.HasPrefix(body, "@") {
			p, rest, _ := strings.Cut(body, " ")
			in.Pred, body = p, strings.TrimSpace(rest)
		}
		op, rest, _ := strings.Cut(body, " ")
		if op == "" {
			return nil, fmt.Errorf("sass line %d: no opcode", i+1)
		}
		in.Op = op
		for _, o := range strings.Split(rest, ",") {
			if o = strings.TrimSpace(o); o != "" {
				in.Operands = append(in.Operands, o)
			}
		}
		if n := len(funcs[cur]); n > 0 && funcs[cur][n-1].Addr >= addr {
			return nil, fmt.Errorf("sass line %d: address %#x after %#x in %s", i+1, addr, funcs[cur][n-1].Addr, cur)
		}
		funcs[cur] = append(funcs[cur], in)
	}
	return funcs, nil
}

// sassRegRange names registers base..base+n-1 of an operand "R<base>".
func sassRegRange(op string, n int) []int {
	m := sassBase.FindStringSubmatch(op)
	if m == nil {
		return nil
	}
	b, _ := strconv.Atoi(m[1])
	out := make([]int, n)
	for i := range out {
		out[i] = b + i
	}
	return out
}

// sassWrites are the general registers an instruction writes (model in the
// header); stores, branches and barriers write none.
func sassWrites(in SASSInst) []int {
	if len(in.Operands) == 0 {
		return nil
	}
	dst := in.Operands[0]
	if strings.HasPrefix(in.Op, "SHFL") && len(in.Operands) > 1 {
		dst = in.Operands[1]
	}
	n := 1
	switch {
	case strings.Contains(in.Op, ".128"):
		n = 4
	case strings.Contains(in.Op, ".64"), strings.Contains(in.Op, ".WIDE"), strings.Contains(in.Op, ".F64"),
		strings.HasPrefix(in.Op, "CS2R") && !strings.Contains(in.Op, ".32"),
		strings.HasPrefix(in.Op, "DADD"), strings.HasPrefix(in.Op, "DMUL"), strings.HasPrefix(in.Op, "DFMA"):
		n = 2
	case strings.HasPrefix(in.Op, "LDSM"):
		if strings.HasSuffix(in.Op, ".4") {
			n = 4
		} else if strings.HasSuffix(in.Op, ".2") {
			n = 2
		}
	case strings.HasPrefix(in.Op, "HMMA"):
		n = 4
		if strings.Contains(in.Op, ".F16") && !strings.Contains(in.Op, ".F32") {
			n = 2
		}
	}
	return sassRegRange(dst, n)
}

// sassReads are the general registers an instruction's sources name (every
// operand but the destination; a store's first operand is its address, a
// source too); R<n>.64 names two.
func sassReads(in SASSInst) []int {
	ops := in.Operands
	if len(sassWrites(in)) > 0 {
		ops = ops[1:]
		if strings.HasPrefix(in.Op, "SHFL") && len(ops) > 0 {
			ops = ops[1:]
		}
	}
	var out []int
	for _, o := range ops {
		for _, m := range sassReg.FindAllStringSubmatch(o, -1) {
			r, _ := strconv.Atoi(m[1])
			out = append(out, r)
			if m[2] != "" {
				out = append(out, r+1)
			}
		}
	}
	return out
}

// SASSHazard is one access to an in-flight GMMA's registers.
type SASSHazard struct {
	Op, At SASSInst
	Reg    int
	Role   string // "A" (written) or "D" (read or written)
}

func (h SASSHazard) String() string {
	return fmt.Sprintf("%s touches R%d (%s operand of %s) before the WARPGROUP.DEPBAR that retires it", h.At, h.Reg, h.Role, h.Op)
}

// gmmaOperands returns a GMMA's A registers (nil for a descriptor) and D
// registers, and whether it closes a group (gsb0).
func gmmaOperands(in SASSInst) (a, d []int, commit, ok bool) {
	m := sassGMMA.FindStringSubmatch(in.Op)
	if m == nil || len(in.Operands) < 2 {
		return nil, nil, false, false
	}
	n, _ := strconv.Atoi(m[1])
	nd := 64 * n / 128
	if m[2] == "F16" {
		nd /= 2
	}
	d = sassRegRange(in.Operands[0], nd)
	a = sassRegRange(in.Operands[1], 4)
	for _, o := range in.Operands {
		if o == "gsb0" {
			commit = true
		}
	}
	return a, d, commit, true
}

// SASSWGMMAHazards walks fn from each GMMA: every path (branches followed,
// predicated ones both ways, an unpredicated EXIT ends a path) until a
// WARPGROUP.DEPBAR.LE gsb0, n with at most n groups closed after the op's
// own (a branch with a predicate operand, BRA.DIV, is conditional too), reporting the accesses of the header on the way. Other GMMAs are
// skipped (they chain on D by design). An indirect branch ends the path
// and is returned as an error: the walk cannot follow it.
func SASSWGMMAHazards(fn []SASSInst) ([]SASSHazard, error) {
	at := map[uint64]int{}
	for i, in := range fn {
		at[in.Addr] = i
	}
	var hz []SASSHazard
	for i, op := range fn {
		a, d, commit, ok := gmmaOperands(op)
		if !ok {
			continue
		}
		role := map[int]string{}
		for _, r := range d {
			role[r] = "D"
		}
		for _, r := range a {
			role[r] = "A"
		}
		const capNewer = 8
		type state struct {
			i      int
			closed bool // the op's own group is closed
			newer  int  // groups closed after it
		}
		seen := map[state]bool{}
		stack := []state{{i + 1, commit, 0}}
		for len(stack) > 0 {
			s := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for s.i < len(fn) && !seen[s] {
				seen[s] = true
				in := fn[s.i]
				if _, _, c, g := gmmaOperands(in); g {
					if c {
						if s.closed {
							s.newer = min(s.newer+1, capNewer)
						}
						s.closed = true
					}
					s.i++
					continue
				}
				if sassWait.MatchString(in.Op) && len(in.Operands) == 2 && in.Operands[0] == "gsb0" {
					n, err := strconv.ParseUint(strings.TrimPrefix(in.Operands[1], "0x"), 16, 32)
					if err != nil {
						return nil, fmt.Errorf("%s: depth %q: %v", in, in.Operands[1], err)
					}
					if s.closed && s.newer >= int(n) {
						break // retired on this path
					}
				}
				for _, r := range sassWrites(in) {
					if ro, ok := role[r]; ok {
						hz = append(hz, SASSHazard{Op: op, At: in, Reg: r, Role: ro})
					}
				}
				for _, r := range sassReads(in) {
					if role[r] == "D" {
						hz = append(hz, SASSHazard{Op: op, At: in, Reg: r, Role: "D"})
					}
				}
				switch {
				case strings.HasPrefix(in.Op, "BRX"), strings.HasPrefix(in.Op, "JMX"), strings.HasPrefix(in.Op, "RET"):
					return hz, fmt.Errorf("%s: indirect branch after %s: the walk cannot follow it", in, op)
				case in.Op == "EXIT" && in.Pred == "":
					s.i = len(fn)
					continue
				case strings.HasPrefix(in.Op, "BRA") && len(in.Operands) > 0:
					t, err := strconv.ParseUint(strings.TrimPrefix(in.Operands[len(in.Operands)-1], "0x"), 16, 64)
					j, known := at[t]
					if err != nil || !known {
						return hz, fmt.Errorf("%s: branch target not an instruction of the function", in)
					}
					if (in.Pred == "" || in.Pred == "@PT") && len(in.Operands) == 1 { // else a predicate (BRA.DIV UR6, ...) makes it conditional
						s.i = j
						continue
					}
					stack = append(stack, state{j, s.closed, s.newer})
				}
				s.i++
			}
		}
	}
	return hz, nil
}

// findCuobjdump looks for cuobjdump beside ptxas, then on PATH.
func findCuobjdump(ptxas string) (string, error) {
	if p := filepath.Join(filepath.Dir(ptxas), "cuobjdump"); fileExists(p) {
		return p, nil
	}
	if p, err := exec.LookPath("cuobjdump"); err == nil {
		return p, nil
	}
	return "", errors.New("cuobjdump is neither beside ptxas nor on PATH")
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func gateSASSWGMMA(t *T) {
	dir, ptxas := ptxasAndPTX(t)
	cuobjdump, err := findCuobjdump(ptxas)
	if err != nil {
		t.Skipf("%v: the CUDA toolkit's cuobjdump is needed (the H200 image has it)", err)
	}
	tmp, err := os.MkdirTemp("", "parharness-sass-")
	if err != nil {
		t.Failf("temporary directory for the cubins: %v", err)
		return
	}
	defer os.RemoveAll(tmp)
	modules, byModule := kernels.ByModule("sm_90a")
	ops, checked := 0, 0
	for _, mod := range modules {
		path, ptx, ok := ptxModule(t, mod)
		if !ok {
			continue
		}
		// The kernels whose PTX has wgmma, by their op count there.
		want := map[string]int{}
		for _, k := range byModule[mod] {
			for _, in := range ptx[k.Name].Insts {
				if strings.HasPrefix(in.Mnemonic, "wgmma.mma_async") {
					want[k.Name]++
				}
			}
		}
		if len(want) == 0 {
			continue
		}
		cubin := filepath.Join(tmp, mod+".cubin")
		if out, err := exec.Command(ptxas, "-arch=sm_90a", path, "-o", cubin).CombinedOutput(); err != nil {
			t.Failf("%s -arch=sm_90a %s: %v: %s", ptxas, path, err, tail(string(out), 600))
			continue
		}
		out, err := exec.Command(cuobjdump, "-sass", cubin).Output()
		if err != nil {
			t.Failf("%s -sass %s: %v", cuobjdump, cubin, err)
			continue
		}
		funcs, err := ParseSASS(string(out))
		if err != nil {
			t.Failf("%s (cuobjdump of %s): %v", mod, path, err)
			continue
		}
		for _, k := range byModule[mod] {
			if want[k.Name] == 0 {
				continue
			}
			fn, ok := funcs[k.Name]
			if !ok {
				t.Failf("%s: %s is not in the SASS of %s", k.Name, k.Name, filepath.Base(path))
				continue
			}
			n := 0
			for _, in := range fn {
				if _, _, _, g := gmmaOperands(in); g {
					n++
				}
			}
			if n == 0 {
				// The walk would have nothing to check: a pass would say nothing.
				t.Failf("%s (%s): %d wgmma.mma_async in its PTX, no GMMA instruction this gate recognises in its SASS", k.Name, filepath.Base(path), want[k.Name])
				continue
			}
			ops += n
			checked++
			hz, err := SASSWGMMAHazards(fn)
			if err != nil {
				t.Failf("%s (%s): %v", k.Name, filepath.Base(path), err)
			}
			if len(hz) > 0 {
				t.Failf("%s (%s, ptxas %s): %d accesses to in-flight GMMA registers, first: %s (retire each group with wgmma.wait_group before the next group's registers are computed, or make the old operands live until the wait)",
					k.Name, filepath.Base(path), ptxas, len(hz), hz[0])
			}
		}
	}
	if checked == 0 {
		t.Skipf("no registered sm_90a kernel has wgmma.mma_async in its PTX in %s", dir)
	}
	t.Metric("gmma_ops", float64(ops))
	t.Logf("%d kernels with GMMA checked (%d ops) in the SASS of %s", checked, ops, ptxas)
}

// tail is the last n bytes of s, marked when cut.
func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
