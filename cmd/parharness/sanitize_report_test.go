package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	})
}
