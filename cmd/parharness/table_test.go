package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olekukonko/tablewriter/pkg/twwidth"

	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/internal/golden"
)

// The gate table of a CPU run (no device: the device gates SKIP), as a
// pipe or a log sees it: at most 100 columns, long reasons and figures
// wrapped, a failure's long message cut after three lines. The seconds
// are fixed so the golden file does not move with the machine.
func TestGateTableFits100Columns(t *testing.T) {
	build := filepath.Join("..", "..", "build")
	if _, err := os.Stat(filepath.Join(build, "sm_90a")); err != nil {
		t.Skipf("no code objects (run make kernels): %v", err)
	}
	t.Setenv("COLUMNS", "")
	noDevice := `no GPU device: backend "none" selected (--backend/PARHARNESS_BACKEND)`
	env := &gates.Env{Seed: 1, BuildDir: build, DevErr: errString(noDevice)}
	var res []gates.Result
	for _, g := range gates.All() {
		switch g.Name {
		// (gates whose figures do not count the registry's kernels: a new
		// kernel must not move this golden file)
		case "e4m3-decode", "e4m3-device-sweep", "gemm", "identity", "producers-semantics":
			r := gates.RunGate(env, g)
			r.Seconds = 0.25
			res = append(res, r)
		}
	}
	res = append(res, gates.Result{Gate: "resources-planted", Status: gates.Pass, Seconds: 0.2, Metrics: map[string]float64{
		"ptx_local_bytes{kernel=a}": 0, "ptx_local_bytes{kernel=b}": 0, "ptx_local_bytes{kernel=c}": 0, "regs{kernel=a}": 40, "regs{kernel=b}": 96}})
	res = append(res, gates.Result{Gate: "gemm-planted", Status: gates.Fail, Seconds: 40.5,
		Reason:   "qkv decode M=9 normal seed=1504454448422521356 pq_gemm_dec_m16 S=2 cluster (law): rel 4.1e-3 > 1.5 x floor 2.7e-3 (12 elements off by > 8 floor x max|ref|: m=3 n=17 got 1.5 want 1.25; m=4 n=2 got -3 want 0.5)",
		Failures: []string{"first failure", "second failure"}, Metrics: map[string]float64{"worst_rel_over_floor": 1.52, "cases": 42}})
	var b bytes.Buffer
	printGateTable(&b, res, noDevice)
	golden.Check(t, filepath.Join("testdata", "gate-table-100.txt"), b.Bytes())
	for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if w := twwidth.Width(l); w > 100 {
			t.Errorf("%d columns: %q", w, l)
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// unwrapTables returns s with each boxed table's rows joined back into one
// line ("cell | cell | ..."), a wrapped cell's lines joined by spaces, so a
// test can look for a phrase the width made the table wrap. Lines outside
// tables are kept.
func unwrapTables(s string) string {
	var out []string
	var row []string
	flush := func() {
		if row != nil {
			out = append(out, strings.Join(row, " | "))
			row = nil
		}
	}
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "│") {
			flush()
			out = append(out, l)
			continue
		}
		cells := strings.Split(strings.Trim(l, "│"), "│")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if row == nil || cells[0] != "" {
			flush()
			row = cells
			continue
		}
		for i, c := range cells {
			if c != "" && i < len(row) {
				row[i] = strings.TrimSpace(row[i] + " " + c)
			}
		}
	}
	flush()
	return strings.Join(out, "\n")
}

// Every line the gate command prints to a pipe fits 100 columns: the
// per-gate lines as they finish (their long reasons cut), the table and
// the summary.
func TestGateOutputFits100Columns(t *testing.T) {
	build := filepath.Join("..", "..", "build")
	if _, err := os.Stat(filepath.Join(build, "sm_90a")); err != nil {
		t.Skipf("no code objects (run make kernels): %v", err)
	}
	t.Setenv("COLUMNS", "")
	_, out, _ := run(t, "gate", "--backend", "none", "--build", build, "--only", "^(e4m3-device-sweep|gemm|e4m3-decode)$")
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if w := twwidth.Width(l); w > 100 {
			t.Errorf("%d columns: %q", w, l)
		}
	}
}
