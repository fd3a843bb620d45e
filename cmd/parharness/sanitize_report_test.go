package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/internal/golden"
)

// Each sample of compute-sanitizer output in testdata/sanitizer parses to
// the report in its .golden file (go test -update rewrites them).
func TestParseSanitizerGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "sanitizer", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			r := ParseSanitizer(string(b))
			var out strings.Builder
			fmt.Fprintf(&out, "summary=%v race=%v errors=%d hazards=%d warnings=%d found=%v reports=%d\n%s\n", r.Summary, r.Race, r.Errors, r.Hazards, r.Warnings, r.Found(), r.Reports, r)
			for _, l := range r.Lines {
				fmt.Fprintf(&out, "| %s\n", l)
			}
			if r.Race {
				lines, all := raceByKernel(r.RaceKernels, map[string]bool{"ring": true, "pq_gemm_dec_wp3_m8": true})
				fmt.Fprintf(&out, "race kernels (ring and pq_gemm_dec_wp3_m8 taken as mbarrier waiters; all waiters: %v), unattributed=%d internal=%v capped=%v\n", all, r.Unattributed, r.Internal, r.Capped)
				for _, l := range lines {
					fmt.Fprintf(&out, "  %s\n", l)
				}
			}
			golden.Check(t, strings.TrimSuffix(f, ".txt")+".golden", []byte(out.String()))
		})
	}
}

func TestParseSanitizerCounts(t *testing.T) {
	for _, c := range []struct {
		name, text        string
		summary, found    bool
		errors, haz, warn int
	}{
		{"memcheck-clean", "========= ERROR SUMMARY: 0 errors\n", true, false, 0, 0, 0},
		{"one-error", "========= ERROR SUMMARY: 1 error\n", true, true, 1, 0, 0},
		{"race-warnings-only", "========= RACECHECK SUMMARY: 3 hazards displayed (0 errors, 3 warnings)\n", true, true, 0, 3, 3},
		{"program-line-not-summary", "ERROR SUMMARY: 5 errors\n", false, false, 0, 0, 0},
		{"crlf", "========= ERROR SUMMARY: 4 errors\r\n", true, true, 4, 0, 0},
		{"no-summary", "========= COMPUTE-SANITIZER\nsegfault\n", false, false, 0, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := ParseSanitizer(c.text)
			if r.Summary != c.summary || r.Found() != c.found || r.Errors != c.errors || r.Hazards != c.haz || r.Warnings != c.warn {
				t.Errorf("%+v", r)
			}
		})
	}
}

func FuzzParseSanitizer(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "sanitizer", "*.txt"))
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, text string) {
		r := ParseSanitizer(text)
		if r.Errors < 0 || r.Hazards < 0 || r.Warnings < 0 || len(r.Lines) > maxReportLines || len(r.Lines) > r.Reports {
			t.Fatalf("%+v", r)
		}
		if !r.Summary && (r.Found() || r.Race) {
			t.Fatalf("counts without a summary line: %+v", r)
		}
		for k, n := range r.RaceKernels {
			if k == "" || n <= 0 {
				t.Fatalf("race kernel %q with %d hazards: %+v", k, n, r)
			}
		}
		if r.Unattributed < 0 || r.Unattributed > r.Reports {
			t.Fatalf("%d unattributed entries of %d report lines", r.Unattributed, r.Reports)
		}
	})
}

// The racecheck gate record names the kernels its hazards are in, says so
// when every one is in a kernel that waits on mbarriers (which racecheck
// does not take as ordering), and stays FAIL either way.
func TestSanitizerRecordRaceKernels(t *testing.T) {
	if !mbarrierWaiters["pq_gemm_dec_wp3_m8"] || mbarrierWaiters["pq_rot_bf16"] {
		t.Fatalf("mbarrier waiters from the sync inventory: wp3_m8 %v, pq_rot_bf16 %v; want true, false", mbarrierWaiters["pq_gemm_dec_wp3_m8"], mbarrierWaiters["pq_rot_bf16"])
	}
	read := func(name string) SanitizerReport {
		b, err := os.ReadFile(filepath.Join("testdata", "sanitizer", name))
		if err != nil {
			t.Fatal(err)
		}
		return ParseSanitizer(string(b))
	}
	for _, c := range []struct {
		name, sample string
		edit         func(*SanitizerReport)
		ring, intern bool
		first        string
	}{
		{"ring-kernel-only", "racecheck-wp3-internal.txt", nil, true, true, "pq_gemm_dec_wp3_m8: 10000000 hazards (waits on mbarriers"},
		{"plain-kernel", "racecheck-hazards.txt", nil, false, false, "pq_rot_bf16: 96 hazards"},
		{"an-entry-without-its-kernel", "racecheck-wp3-internal.txt", func(r *SanitizerReport) { r.Unattributed = 1 }, false, true, "pq_gemm_dec_wp3_m8:"},
		{"ring-and-plain-kernels", "racecheck-wp3-internal.txt", func(r *SanitizerReport) { r.addRace("pq_rot_bf16", 5) }, false, true, "pq_gemm_dec_wp3_m8:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := read(c.sample)
			if c.edit != nil {
				c.edit(&rep)
			}
			r := sanitizerRecord("racecheck", rep, sanitizerErrorExit, nil, 1)
			if r.Status != gates.Fail {
				t.Errorf("status %s, want FAIL: hazards are never a pass", r.Status)
			}
			if got := strings.Contains(r.Reason, "not by itself evidence of a race"); got != c.ring {
				t.Errorf("reason %q: says the hazards are all in mbarrier kernels: %v, want %v", r.Reason, got, c.ring)
			}
			if got := strings.Contains(r.Reason, "internal error"); got != c.intern {
				t.Errorf("reason %q: names the internal error: %v, want %v", r.Reason, got, c.intern)
			}
			if len(r.Failures) == 0 || !strings.HasPrefix(r.Failures[0], c.first) {
				t.Errorf("failures %q: want the first to start %q", r.Failures, c.first)
			}
		})
	}
}

// An internal sanitizer error with nothing found is an ERROR, not a PASS:
// the launches after it were never checked.
func TestSanitizerRecordInternalError(t *testing.T) {
	rep := ParseSanitizer("========= Internal Sanitizer Error: The Sanitizer failed to handle a hardware exception\n========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n")
	if !rep.Internal || rep.Found() {
		t.Fatalf("parsed %+v; want an internal error and nothing found", rep)
	}
	for _, exit := range []int{0, 1} {
		if r := sanitizerRecord("racecheck", rep, exit, nil, 1); r.Status != gates.Error || !strings.Contains(r.Reason, "internal error") {
			t.Errorf("exit %d: %s %q; want ERROR naming the internal error", exit, r.Status, r.Reason)
		}
	}
}

// A single hazard counts once, whichever of its thread lines name the
// kernel (a write-after-write entry has two write lines).
func TestParseSanitizerSingleHazards(t *testing.T) {
	rep := ParseSanitizer(strings.Join([]string{
		"========= Error: Potential WAW hazard detected at __shared__ 0x10 in block (0,0,0) :",
		"=========     Write Thread (1,0,0) at k(int)+0x10",
		"=========     Write Thread (2,0,0) at k(int)+0x10",
		"========= Error: Potential RAW hazard detected at __shared__ 0x20 in block (0,0,0) :",
		"=========     Read Thread (3,0,0) at k(int)+0x30",
		"=========     Write Thread (4,0,0) at k(int)+0x20",
		"========= RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)",
	}, "\n"))
	if rep.RaceKernels["k"] != 2 || len(rep.RaceKernels) != 1 || rep.Unattributed != 0 {
		t.Errorf("race kernels %v, unattributed %d; want k: 2, none unattributed", rep.RaceKernels, rep.Unattributed)
	}
}
