package gates

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parharness/parharness/kernels"
)

// The golden reports are real `ptxas -arch=sm_90a -v build/sm_90a/gemm.ptx`
// output from the GPU host. clean: the committed kernels' (gemm.ptx md5
// edae4315, ptxas 13.0 on the H100 image: results/2026-12-06f/call2/
// ptxas.txt; no stack or spill in any function). From the H200 image
// (2026-11-29), one per pq_gemm_pre_wg
// version: serialized-c7514 (temporaries read while a wgmma was in
// flight), outofline-stack (a lambda compiled out of line: 912-byte stack,
// injected warpgroup syncs, C7520), producer-spill (a 232/40 setmaxnreg
// split).
func readPtxasGolden(t *testing.T, name string) map[string]*PtxasFunc {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "ptxas", name))
	if err != nil {
		t.Fatal(err)
	}
	funcs, err := ParsePtxas(string(b))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return funcs
}

// preWG is the kernel the golden reports were made for.
const preWG = "pq_gemm_pre_wg"

func TestParsePtxasGolden(t *testing.T) {
	wg := kernels.Kernel{Name: preWG}

	clean := readPtxasGolden(t, "clean.txt")
	if f := clean[preWG]; f == nil || !f.Entry || f.Regs != 168 || f.StackBytes != 0 || len(f.Notes) != 0 {
		t.Errorf("clean: %+v", f)
	}

	ser := readPtxasGolden(t, "serialized-c7514.txt")
	p := PtxasProblems(ser, wg)
	if len(p) != 1 || !strings.Contains(p[0], "(C7514)") || !strings.Contains(p[0], "serialized") {
		t.Errorf("serialized-c7514: problems %q", p)
	}

	ool := readPtxasGolden(t, "outofline-stack.txt")
	f := ool[preWG]
	if f == nil || f.StackBytes != 912 || len(f.Notes) < 3 {
		t.Fatalf("outofline-stack: %+v", f)
	}
	if p := PtxasProblems(ool, wg); len(p) != 2 || !strings.Contains(p[0], "912 bytes stack frame") || !strings.Contains(p[1], "wgmma notes") {
		t.Errorf("outofline-stack: problems %q", p)
	}
	// A kernel that allows wgmma notes (a measurement probe) fails for
	// its stack only.
	probe := wg
	probe.AllowWGMMANotes = "a probe"
	if p := PtxasProblems(ool, probe); len(p) != 1 || !strings.Contains(p[0], "912 bytes stack frame") {
		t.Errorf("outofline-stack, notes allowed: problems %q", p)
	}
	lambda := 0
	for name, g := range ool {
		if strings.HasPrefix(name, "_ZZ14pq_gemm_pre_wg") && !g.Entry {
			lambda++
		}
	}
	if lambda == 0 {
		t.Errorf("outofline-stack: the out-of-line lambda's \"Function properties\" block was not read")
	}

	// A callee's stack reaches the entry through "cumulative stack size".
	cum, err := ParsePtxas("ptxas info    : Compiling entry function 'k' for 'sm_90a'\nptxas info    : Function properties for k\n    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\nptxas info    : Used 40 registers, used 0 barriers, 96 bytes cumulative stack size\n")
	if err != nil || cum["k"].StackBytes != 96 {
		t.Errorf("cumulative stack: %v %+v", err, cum["k"])
	}

	sp := readPtxasGolden(t, "producer-spill.txt")
	if p := PtxasProblems(sp, wg); len(p) != 1 || !strings.Contains(p[0], "8 bytes spill stores") {
		t.Errorf("producer-spill: problems %q", p)
	}
	allowed := wg
	allowed.AllowScratch = "test"
	if p := PtxasProblems(sp, allowed); len(p) != 0 {
		t.Errorf("producer-spill with AllowScratch: problems %q", p)
	}
	if p := PtxasProblems(clean, kernels.Kernel{Name: "no_such_kernel"}); len(p) != 1 || !strings.Contains(p[0], "not compiled") {
		t.Errorf("missing kernel: problems %q", p)
	}
}

func TestParsePtxasErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"ptxas info    : Used 12 registers", "register count before"},
		{"    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads", "before any \"Function properties\""},
		{"ptxas info    : (C7514) Potential Performance Loss: wgmma serialized", "names no function"},
		{"ptxas info    : Function properties for f\n    99999999999999999999 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads", "line 2"},
	} {
		if _, err := ParsePtxas(c.text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to contain %q", c.text, err, c.want)
		}
	}
}

func FuzzParsePtxas(f *testing.F) {
	for _, name := range []string{"clean.txt", "serialized-c7514.txt", "outofline-stack.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata", "ptxas", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, text string) {
		funcs, err := ParsePtxas(text)
		if err != nil {
			return
		}
		for name, fn := range funcs {
			if fn.Name != name || fn.Regs < 0 || fn.StackBytes < 0 || fn.SpillStores < 0 || fn.SpillLoads < 0 {
				t.Fatalf("%q: %+v", name, fn)
			}
		}
	})
}
