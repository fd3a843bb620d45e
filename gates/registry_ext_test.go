package gates_test

// Tests of the static gates against the kernel registry as the families
// fill it (an external test package: the families import gates).

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/parharness/parharness/families/all"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/kernels"
)

// Every registered gemm kernel on sm_90a is in the clean golden ptxas
// report (real ptxas output for gemm.ptx), without problems.
func TestCleanPtxasReportCoversEveryGEMMKernel(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "ptxas", "clean.txt"))
	if err != nil {
		t.Fatal(err)
	}
	clean, err := gates.ParsePtxas(string(b))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, k := range kernels.Select(kernels.Query{Family: "gemm", Arch: kernels.SM90a, Full: true}) {
		n++
		if p := gates.PtxasProblems(clean, k); len(p) > 0 {
			t.Errorf("clean report: %v", p)
		}
	}
	if n < 10 {
		t.Fatalf("only %d gemm kernels registered for sm_90a", n)
	}
}

// The gate end to end (finding ptxas, running it on every module, parsing,
// judging) with a fake ptxas on PATH that prints a prepared report per
// module: the clean golden report for gemm passes, the C7514 one fails.
func TestGatePtxasWithFakeTool(t *testing.T) {
	build, bin, reports := t.TempDir(), t.TempDir(), t.TempDir()
	byModule := map[string][]string{}
	for _, k := range kernels.All() {
		if k.ForArch("sm_90a") {
			byModule[k.Module] = append(byModule[k.Module], k.Name)
		}
	}
	if err := os.MkdirAll(filepath.Join(build, "sm_90a"), 0o755); err != nil {
		t.Fatal(err)
	}
	for mod, names := range byModule {
		if err := os.WriteFile(kernels.ObjectPath(build, "sm_90a", mod), []byte(".target sm_90a\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, n := range names {
			fmt.Fprintf(&b, "ptxas info    : Compiling entry function '%s' for 'sm_90a'\nptxas info    : Function properties for %s\n    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\nptxas info    : Used 32 registers\n", n, n)
		}
		if err := os.WriteFile(filepath.Join(reports, mod+".txt"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// ptxas -arch=sm_90a -v FILE -o /dev/null: print the report of FILE's module.
	script := "#!/bin/sh\nm=$(basename \"$3\" .ptx)\ncat \"$PTXAS_FAKE_REPORTS/$m.txt\"\n"
	if err := os.WriteFile(filepath.Join(bin, "ptxas"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("PTXAS_FAKE_REPORTS", reports)
	var g gates.Gate
	for _, x := range gates.All() {
		if x.Name == "ptxas-sm90a" {
			g = x
		}
	}
	if g.Run == nil {
		t.Fatal("gate ptxas-sm90a not registered")
	}
	for _, c := range []struct {
		golden string
		status gates.Status
		reason string
	}{{"clean.txt", gates.Pass, ""}, {"serialized-c7514.txt", gates.Fail, "(C7514)"}} {
		b, err := os.ReadFile(filepath.Join("testdata", "ptxas", c.golden))
		if err != nil {
			t.Fatal(err)
		}
		if c.status == gates.Fail {
			// The real C7514 note of that report over the clean report of
			// today's kernels: the gate must flag the note, not a kernel the
			// older report lacks.
			clean, err := os.ReadFile(filepath.Join("testdata", "ptxas", "clean.txt"))
			if err != nil {
				t.Fatal(err)
			}
			var notes []byte
			for _, l := range strings.SplitAfter(string(b), "\n") {
				if strings.Contains(l, c.reason) {
					notes = append(notes, l...)
				}
			}
			if len(notes) == 0 {
				t.Fatalf("%s holds no %s line", c.golden, c.reason)
			}
			b = append(notes, clean...)
		}
		if err := os.WriteFile(filepath.Join(reports, "gemm.txt"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		r := gates.RunGate(&gates.Env{BuildDir: build}, g)
		if r.Status != c.status || !strings.Contains(r.Reason, c.reason) {
			t.Errorf("gemm report %s: %s %q, want %s containing %q", c.golden, r.Status, r.Reason, c.status, c.reason)
		}
	}
}
