package gates

import (
	"bufio"
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/parharness/parharness/kernels"
)

// sync-inventory: a static gate over the built code that closes the bug
// class no value check can: a barrier, fence or wait lost or moved. Such a
// race often computes right on a given device (the H200 run of 2026-12-01
// had two dropped-barrier mutants survive every value gate), so the gate
// does not run anything: it counts, per registered kernel, the
// synchronisation instructions of its code and the natural-loop depth each
// sits at, and compares the counts with a reviewed golden inventory
// (gates/testdata/sync-inventory.txt, embedded). A dropped barrier lowers a
// count, a barrier moved into or out of a loop shifts a count between
// depths, and an intended change is accepted by regenerating the golden
// file, so the diff is seen in review.
//
// The counts are per kernel entry and per instruction, never per source
// line: edits elsewhere in a file, or register renumbering, leave them
// alone. What is counted:
//   - sm_90a (the PTX `make kernels` writes): bar.*/barrier.* (CTA, warp
//     and cluster barriers), membar, fence.*, mbarrier.*, the cp.async
//     group commit/wait and mbarrier arrive, griddepcontrol.*, the wgmma
//     fence/commit/wait, atom.* and red.*, and the loads and stores that
//     carry a memory order (ld/st .acquire, .release, .relaxed,
//     .volatile: a counter read by acquire turned into a plain load is a
//     lost ordering like a lost fence);
//   - gfx1201 (llvm-objdump-19 -d of the code objects): s_barrier*, the
//     cache writeback/invalidate a fence compiles to (global_wb,
//     global_inv, buffer_gl*, buffer_wb*, buffer_inv), and atomics
//     (global_atomic_*, flat_atomic_*, the ds_ read-modify-writes).
//     The s_wait_* counters are left out: the compiler places them for
//     every load's data dependency, so they change with any edit, and the
//     ones a barrier needs come with the barrier counted.
// On gfx1201 warp_sync_all is a compiler-only wave barrier with no
// instruction: the sm_90a count (bar.warp.sync) is what sees it dropped,
// from the same source.

//go:embed testdata/sync-inventory.txt
var syncGolden []byte

// SyncGoldenPath is the golden inventory's path in the repository.
const SyncGoldenPath = "gates/testdata/sync-inventory.txt"

// syncUpdateHint is how an intended change of the inventory is accepted.
const syncUpdateHint = "if the change is intended, run `make kernels && go test ./gates -run TestSyncInventoryGolden -update` and commit " + SyncGoldenPath + " (its diff is reviewed)"

func init() {
	Register(Gate{Name: "sync-inventory", Suites: Quick | Full, Run: gateSyncInventory, Headline: []string{"archs_checked", "archs_unchecked"},
		Proves: "every registered kernel's built code (sm_90a PTX; gfx1201 machine code where llvm-objdump is found) has, per synchronisation instruction and loop depth, the count the reviewed golden inventory holds: no barrier, fence, wait or atomic was lost, added or moved into or out of a loop unreviewed"})
}

var (
	ptxSyncRE = regexp.MustCompile(`^(bar|barrier|membar|fence|mbarrier|griddepcontrol|atom|red)\.|^(membar|bar)$|^cp\.async\.(wait_group|wait_all|commit_group|mbarrier)|^wgmma\.(fence|commit_group|wait_group)|^(ld|st)\.(acquire|release|relaxed|volatile)\.`)
	gfxSyncRE = regexp.MustCompile(`^s_barrier|^global_(wb|inv)$|^buffer_(gl[0-9]_inv|wb|inv)|^(global|flat)_atomic_|^ds_(add|sub|rsub|inc|dec|min|max|and|or|xor|mskor|cmpstore|storexchg|condxchg)`)
)

// SyncKey returns the inventory key of an instruction of codeArch's code
// (its full mnemonic, so a fence's scope or an atomic's type is part of
// it), or "" when it is not a synchronisation instruction.
func SyncKey(codeArch, mnemonic string) string {
	re := ptxSyncRE
	if codeArch != "sm_90a" {
		re = gfxSyncRE
	}
	if re.MatchString(mnemonic) {
		return mnemonic
	}
	return ""
}

// SyncCounts is one kernel's inventory: "mnemonic@loopN" (N natural loops
// around it) -> count.
type SyncCounts map[string]int

// CountSync counts the synchronisation instructions of one kernel.
func CountSync(codeArch string, s Symbol) SyncCounts {
	depth := LoopDepths(s)
	out := SyncCounts{}
	for i, in := range s.Insts {
		if k := SyncKey(codeArch, in.Mnemonic); k != "" {
			out[k+"@loop"+strconv.Itoa(depth[i])]++
		}
	}
	return out
}

// LoopDepths returns, for each instruction of s, the number of natural
// loops whose body holds it (loops sharing a head are one loop); dead
// code is depth 0.
func LoopDepths(s Symbol) []int {
	g := buildCFG(s)
	dom, live := g.dominators(), g.reachable()
	dominates := func(a, b int) bool { return dom[b][a/64]&(1<<(a%64)) != 0 }
	bodies := map[int]map[int]bool{} // loop head block -> body blocks
	for bb := range g.first {
		if !live[bb] {
			continue
		}
		for _, tb := range g.succ[bb] {
			if !dominates(tb, bb) {
				continue
			}
			body := bodies[tb]
			if body == nil {
				body = map[int]bool{tb: true}
				bodies[tb] = body
			}
			g.addLoopBody(body, bb, live)
		}
	}
	blockDepth := make([]int, len(g.first))
	for _, body := range bodies {
		for b := range body {
			blockDepth[b]++
		}
	}
	out := make([]int, len(s.Insts))
	for i := range s.Insts {
		out[i] = blockDepth[g.block[i]]
	}
	return out
}

// SyncInventory is the inventory of a build: code arch -> kernel -> counts.
// A kernel with no synchronisation instruction has an empty (non-nil) map.
type SyncInventory map[string]map[string]SyncCounts

// noSync is the golden file's key for a kernel without any counted
// instruction (so that the kernel is known to the inventory).
const noSync = "(none)"

// Format writes the inventory as the golden file: a header, then one
// "ARCH KERNEL MNEMONIC@loopN COUNT" line per count, sorted.
func (inv SyncInventory) Format() []byte {
	var b bytes.Buffer
	b.WriteString("# Synchronisation instructions per registered kernel, per natural-loop depth: the\n")
	b.WriteString("# sync-inventory gate (gates/syncinv.go) compares the built code with this file.\n")
	b.WriteString("# Regenerate: make kernels && go test ./gates -run TestSyncInventoryGolden -update\n")
	b.WriteString("# ARCH KERNEL MNEMONIC@loopDEPTH COUNT\n")
	var lines []string
	for arch, ks := range inv {
		for k, c := range ks {
			if len(c) == 0 {
				lines = append(lines, fmt.Sprintf("%s %s %s 0", arch, k, noSync))
			}
			for key, n := range c {
				lines = append(lines, fmt.Sprintf("%s %s %s %d", arch, k, key, n))
			}
		}
	}
	sort.Strings(lines)
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// ParseSyncInventory reads a golden file written by Format.
func ParseSyncInventory(text []byte) (SyncInventory, error) {
	inv := SyncInventory{}
	sc := bufio.NewScanner(bytes.NewReader(text))
	for ln := 1; sc.Scan(); ln++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 4 {
			return nil, fmt.Errorf("sync inventory line %d: %q: want ARCH KERNEL MNEMONIC@loopDEPTH COUNT", ln, line)
		}
		n, err := strconv.Atoi(f[3])
		if err != nil || n < 0 {
			return nil, fmt.Errorf("sync inventory line %d: count %q is not a count", ln, f[3])
		}
		if f[2] != noSync && !strings.Contains(f[2], "@loop") {
			return nil, fmt.Errorf("sync inventory line %d: key %q has no @loopDEPTH", ln, f[2])
		}
		if inv[f[0]] == nil {
			inv[f[0]] = map[string]SyncCounts{}
		}
		c := inv[f[0]][f[1]]
		if c == nil {
			c = SyncCounts{}
			inv[f[0]][f[1]] = c
		}
		if f[2] == noSync {
			continue
		}
		if _, dup := c[f[2]]; dup {
			return nil, fmt.Errorf("sync inventory line %d: %s %s %s listed twice", ln, f[0], f[1], f[2])
		}
		c[f[2]] = n
	}
	return inv, sc.Err()
}

// SyncDiff is one count that differs between the golden inventory and a
// build. Old is -1 when the golden file does not know the kernel.
type SyncDiff struct {
	Arch, Kernel, Key string
	Old, New          int
}

func (d SyncDiff) String() string {
	if d.Old < 0 {
		return fmt.Sprintf("%s (%s): not in the golden inventory (a new kernel); %s", d.Kernel, d.Arch, syncUpdateHint)
	}
	return fmt.Sprintf("%s (%s): %s: %d in the golden inventory, %d in the build: a barrier, fence, wait or atomic was lost, added or moved across a loop; %s",
		d.Kernel, d.Arch, d.Key, d.Old, d.New, syncUpdateHint)
}

// CompareSync lists the differences between the golden counts of one
// arch and the counts of the kernels built (every kernel in got is
// compared; golden kernels absent from got are not: the registry decides
// what is checked).
func CompareSync(golden map[string]SyncCounts, got map[string]SyncCounts, arch string) []SyncDiff {
	var out []SyncDiff
	names := make([]string, 0, len(got))
	for k := range got {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		want, known := golden[k]
		if !known {
			out = append(out, SyncDiff{Arch: arch, Kernel: k, Old: -1})
			continue
		}
		keys := map[string]bool{}
		for key := range want {
			keys[key] = true
		}
		for key := range got[k] {
			keys[key] = true
		}
		sorted := make([]string, 0, len(keys))
		for key := range keys {
			sorted = append(sorted, key)
		}
		sort.Strings(sorted)
		for _, key := range sorted {
			if want[key] != got[k][key] {
				out = append(out, SyncDiff{Arch: arch, Kernel: k, Key: key, Old: want[key], New: got[k][key]})
			}
		}
	}
	return out
}

// GoldenSyncInventory is the embedded golden inventory.
func GoldenSyncInventory() (SyncInventory, error) { return ParseSyncInventory(syncGolden) }

// ErrNoCode says a code arch's objects (or its disassembler) are absent:
// the inventory of that arch cannot be taken here.
var ErrNoCode = errors.New("code not available")

// ModuleSymbols reads one module's kernels as Symbols: the PTX's entries
// for sm_90a, llvm-objdump's disassembly for gfx1201 (objdump is its
// path).
func ModuleSymbols(codeArch, path, objdump string) (map[string]Symbol, error) {
	var syms []Symbol
	if codeArch == "sm_90a" {
		text, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if syms, err = ParsePTX(string(text)); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
	} else {
		out, err := exec.Command(objdump, "-d", "--mcpu="+codeArch, path).Output()
		if err != nil {
			msg := err.Error()
			var ee *exec.ExitError
			if errors.As(err, &ee) && len(ee.Stderr) > 0 {
				msg += ": " + strings.TrimSpace(string(ee.Stderr))
			}
			return nil, fmt.Errorf("%s -d --mcpu=%s %s: %s", objdump, codeArch, path, msg)
		}
		if syms, err = ParseObjdump(string(out)); err != nil {
			return nil, fmt.Errorf("%s: disassembly: %v", path, err)
		}
	}
	byName := map[string]Symbol{}
	for _, s := range syms {
		byName[s.Name] = s
	}
	return byName, nil
}

// BuildSyncInventory takes the inventory of every registered kernel of
// codeArch in buildDir. It returns an error wrapping ErrNoCode when the
// arch's objects or disassembler are absent, and a plain error when an
// object cannot be read or lacks a registered kernel.
func BuildSyncInventory(buildDir, codeArch string) (map[string]SyncCounts, error) {
	dir := filepath.Join(buildDir, codeArch)
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("%w: no %s code objects in %s: run `make kernels` (needs clang-19)", ErrNoCode, codeArch, dir)
	}
	objdump := ""
	if codeArch != "sm_90a" {
		p, err := findObjdump()
		if err != nil {
			return nil, fmt.Errorf("%w: no LLVM disassembler on PATH (%v): %s", ErrNoCode, err, objdumpHint)
		}
		objdump = p
	}
	out := map[string]SyncCounts{}
	modules, byModule := kernels.ByModule(codeArch)
	for _, mod := range modules {
		path := kernels.ObjectPath(buildDir, codeArch, mod)
		byName, err := ModuleSymbols(codeArch, path, objdump)
		if err != nil {
			return nil, fmt.Errorf("%v: run `make kernels`", err)
		}
		for _, k := range byModule[mod] {
			s, ok := byName[k.Name]
			if !ok {
				return nil, fmt.Errorf("%s (%s): no kernel %s in %s", k.Name, codeArch, k.Name, path)
			}
			out[k.Name] = CountSync(codeArch, s)
		}
	}
	return out, nil
}

// SyncArchs are the code archs the inventory covers.
var SyncArchs = []string{"sm_90a", "gfx1201"}

func gateSyncInventory(t *T) {
	golden, err := GoldenSyncInventory()
	if err != nil {
		t.Fatalf("%s (embedded): %v", SyncGoldenPath, err)
	}
	checked := 0
	var absent []string
	for _, arch := range SyncArchs {
		got, err := BuildSyncInventory(t.Env().BuildDir, arch)
		if errors.Is(err, ErrNoCode) {
			absent = append(absent, err.Error())
			continue
		}
		if err != nil {
			t.Failf("%v", err)
			continue
		}
		n := 0
		for k, c := range got {
			n += sumCounts(c)
			t.Metric(NewCase("kernel", k).Key(arch+"_sync"), float64(sumCounts(c)))
		}
		for _, d := range CompareSync(golden[arch], got, arch) {
			t.Failf("%s", d)
		}
		t.Logf("%s: %d kernels, %d synchronisation instructions compared with %s", arch, len(got), n, SyncGoldenPath)
		checked++
	}
	if checked == 0 {
		t.Skipf("no code to take the inventory of: %s", strings.Join(absent, "; "))
	}
	// A half left unchecked shows in the gate table and the JSON, not only
	// in the log: a PASS here covers archs_checked targets.
	t.Metric("archs_checked", float64(checked))
	t.Metric("archs_unchecked", float64(len(absent)))
	for _, a := range absent {
		t.Logf("not checked: %s", a)
	}
}

func sumCounts(c SyncCounts) int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}
