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

// The ptxas gate compiles the sm_90a PTX as the CUDA driver's JIT does (the
// same back end: ptxas -arch=sm_90a -v) and reads its report. Two failures
// it catches are silent at run time:
//   - stack or spills (a lambda compiled out of line, a register split
//     that does not fit), which also shows as local memory in
//     resources-device, but only on a GPU;
//   - ptxas's performance notes on wgmma: C7514 and C7520 mean it
//     serialized every wgmma of the kernel (each waits for the previous
//     one), C7517 and C7519 that it injected warpgroup waits or arrives.
//     The kernel stays correct and loses its pipeline: a serialized
//     version of pq_gemm_pre_wg lost most of its rate (docs/history.md
//     has the figures).
// It needs ptxas (the CUDA toolkit's; the H200 image has it) and no GPU.

func init() {
	Register(Gate{Name: "ptxas-sm90a", Suites: Quick | Full, Run: gatePtxas,
		Proves: "every registered sm_90a kernel compiles with ptxas -arch=sm_90a (what the driver JIT runs) with no stack frame or spills unless its registry entry allows scratch, and with no ptxas note that it serialized wgmma or injected warpgroup synchronization (C75xx on wgmma/GMMA/warpgroup)"})
}

// PtxasFunc is what `ptxas -v` reported for one function.
type PtxasFunc struct {
	Name                                string
	Entry                               bool // compiled as an entry function
	Regs                                int
	StackBytes, SpillStores, SpillLoads int
	Notes                               []string // "(C7514) ..." notes that name this function
}

var (
	ptxasEntry = regexp.MustCompile(`^Compiling entry function '([^']+)' for '([^']+)'`)
	ptxasProps = regexp.MustCompile(`^Function properties for (\S+)`)
	ptxasStack = regexp.MustCompile(`^(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads`)
	ptxasRegs  = regexp.MustCompile(`^Used (\d+) registers`)
	ptxasCum   = regexp.MustCompile(`(\d+) bytes cumulative stack size`)
	ptxasNote  = regexp.MustCompile(`^\((C\d{4})\)`)
	ptxasNamed = regexp.MustCompile(`function '([^']+)'`)
)

// ParsePtxas reads the report of `ptxas -v` (stdout and stderr together):
// per function, registers (entry functions), stack and spills, and the
// "(Cnnnn)" notes, which name their function anywhere on the line (ptxas
// prints them before or after the function's own block). Lines it does not
// know are skipped; a known line it cannot read, or figures with no
// function to belong to, are errors with the line number.
func ParsePtxas(text string) (map[string]*PtxasFunc, error) {
	funcs := map[string]*PtxasFunc{}
	get := func(name string) *PtxasFunc {
		f := funcs[name]
		if f == nil {
			f = &PtxasFunc{Name: name}
			funcs[name] = f
		}
		return f
	}
	atoi := func(s string, ln int) (int, error) {
		v, err := strconv.Atoi(s)
		if err != nil {
			return 0, fmt.Errorf("ptxas report line %d: %q: %v", ln, s, err)
		}
		return v, nil
	}
	entry, props := "", ""
	for i, line := range strings.Split(text, "\n") {
		ln := i + 1
		s := strings.TrimSpace(line)
		if _, rest, ok := strings.Cut(s, " : "); ok && strings.HasPrefix(s, "ptxas") {
			s = strings.TrimSpace(rest)
		}
		switch {
		case ptxasNote.MatchString(s):
			m := ptxasNamed.FindStringSubmatch(s)
			if m == nil {
				return nil, fmt.Errorf("ptxas report line %d: note names no function: %q", ln, s)
			}
			f := get(m[1])
			f.Notes = append(f.Notes, s)
		case ptxasEntry.MatchString(s):
			entry = ptxasEntry.FindStringSubmatch(s)[1]
			get(entry).Entry = true
		case ptxasProps.MatchString(s):
			props = ptxasProps.FindStringSubmatch(s)[1]
			get(props)
		case ptxasStack.MatchString(s):
			if props == "" {
				return nil, fmt.Errorf("ptxas report line %d: stack and spill figures before any \"Function properties\" line", ln)
			}
			m := ptxasStack.FindStringSubmatch(s)
			f := get(props)
			var err error
			if f.StackBytes, err = atoi(m[1], ln); err != nil {
				return nil, err
			}
			if f.SpillStores, err = atoi(m[2], ln); err != nil {
				return nil, err
			}
			if f.SpillLoads, err = atoi(m[3], ln); err != nil {
				return nil, err
			}
		case ptxasRegs.MatchString(s):
			if entry == "" {
				return nil, fmt.Errorf("ptxas report line %d: a register count before any \"Compiling entry function\" line", ln)
			}
			v, err := atoi(ptxasRegs.FindStringSubmatch(s)[1], ln)
			if err != nil {
				return nil, err
			}
			f := get(entry)
			f.Regs = v
			// The stack of the functions the entry calls (out of line)
			// counts as its own.
			if m := ptxasCum.FindStringSubmatch(s); m != nil {
				c, err := atoi(m[1], ln)
				if err != nil {
					return nil, err
				}
				f.StackBytes = max(f.StackBytes, c)
			}
		}
	}
	return funcs, nil
}

// wgmmaNote reports whether a ptxas note is about wgmma pipelining
// (serialization, injected warpgroup waits or arrives).
func wgmmaNote(note string) bool {
	l := strings.ToLower(note)
	return strings.Contains(l, "wgmma") || strings.Contains(l, "gmma") || strings.Contains(l, "warpgroup")
}

// PtxasProblems lists what the gate fails for kernel k in a parsed report:
// missing from it, stack or spills without AllowScratch, wgmma notes
// without AllowWGMMANotes.
func PtxasProblems(funcs map[string]*PtxasFunc, k kernels.Kernel) []string {
	f, ok := funcs[k.Name]
	if !ok || !f.Entry {
		return []string{fmt.Sprintf("%s: not compiled as an entry function (extern \"C\" name?)", k.Name)}
	}
	var out []string
	if (f.StackBytes > 0 || f.SpillStores > 0 || f.SpillLoads > 0) && k.AllowScratch == "" {
		out = append(out, fmt.Sprintf("%s: %d bytes stack frame, %d bytes spill stores, %d bytes spill loads (an out-of-line call or a register budget that does not fit)",
			k.Name, f.StackBytes, f.SpillStores, f.SpillLoads))
	}
	var notes []string
	for _, n := range f.Notes {
		if wgmmaNote(n) {
			notes = append(notes, n)
		}
	}
	if len(notes) > 0 && k.AllowWGMMANotes == "" {
		out = append(out, fmt.Sprintf("%s: %d ptxas wgmma notes, first: %s", k.Name, len(notes), notes[0]))
	}
	return out
}

// findPtxas looks for ptxas on PATH, then in the toolkit's default place.
func findPtxas() (string, error) {
	if p, err := exec.LookPath("ptxas"); err == nil {
		return p, nil
	}
	const def = "/usr/local/cuda/bin/ptxas"
	if _, err := os.Stat(def); err == nil {
		return def, nil
	}
	return "", errors.New("ptxas is neither on PATH nor at /usr/local/cuda/bin/ptxas")
}

// ptxasAndPTX is the build's sm_90a PTX directory and the toolkit's ptxas;
// the gate SKIPs (with the reason) where either is missing.
func ptxasAndPTX(t *T) (dir, ptxas string) {
	dir = filepath.Join(t.Env().BuildDir, "sm_90a")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no sm_90a PTX in %s: run `make kernels` (needs clang-19)", dir)
	}
	ptxas, err := findPtxas()
	if err != nil {
		t.Skipf("%v: the CUDA toolkit's ptxas is needed (the H200 image has it)", err)
	}
	return dir, ptxas
}

func gatePtxas(t *T) {
	dir, ptxas := ptxasAndPTX(t)
	modules, byModule := kernels.ByModule("sm_90a")
	checked := 0
	for _, mod := range modules {
		path := kernels.ObjectPath(t.Env().BuildDir, "sm_90a", mod)
		if _, err := os.Stat(path); err != nil {
			t.Failf("%s: %v: run `make kernels`", path, err)
			continue
		}
		out, err := exec.Command(ptxas, "-arch=sm_90a", "-v", path, "-o", os.DevNull).CombinedOutput()
		if err != nil {
			t.Failf("%s -arch=sm_90a -v %s: %v: %s", ptxas, path, err, tail(string(out), 600))
			continue
		}
		funcs, err := ParsePtxas(string(out))
		if err != nil {
			t.Failf("%s: %v", path, err)
			continue
		}
		for _, k := range byModule[mod] {
			for _, p := range PtxasProblems(funcs, k) {
				t.Failf("%s (%s): %s", filepath.Base(path), ptxas, p)
			}
			if f := funcs[k.Name]; f != nil {
				t.Metric(NewCase("kernel", k.Name).Key("regs"), float64(f.Regs))
			}
			checked++
		}
	}
	if checked == 0 {
		t.Failf("no registered kernel was checked in %s", dir)
	}
	t.Logf("%d kernels compiled by %s", checked, ptxas)
}
