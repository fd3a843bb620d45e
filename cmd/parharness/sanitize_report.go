package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// compute-sanitizer prefixes every line it prints with "========= " (its
// own lines, between the program's), opens with a "COMPUTE-SANITIZER"
// banner and closes with a summary: "ERROR SUMMARY: N errors" for
// memcheck, initcheck and synccheck, "RACECHECK SUMMARY: N hazards
// displayed (E errors, W warnings)" for racecheck (the formats of NVIDIA's
// Compute Sanitizer user guide, docs.nvidia.com/compute-sanitizer, and of
// this project's H200 runs in results/h200-2026-12-01b/; testdata/sanitizer
// also keeps two H100 racecheck outputs of 2026-12-06: racecheck-ring, the
// head of results/2026-12-06f/call3's probe run, and racecheck-wp3-internal,
// results/2026-12-06e/call4's gemm gate). A report is the lines between:
// "Invalid __global__ write of size 4 bytes" and its "at", "by thread" and
// "Address" lines, "Error: Race reported between Write access ... and
// Read access ...", "Barrier error detected", ...

// sanitizerPrefix starts every line the tool prints.
const sanitizerPrefix = "========="

var (
	errorSummaryRE = regexp.MustCompile(`^ERROR SUMMARY:\s+(\d+)\s+errors?\b`)
	raceSummaryRE  = regexp.MustCompile(`^RACECHECK SUMMARY:\s+(\d+)\s+hazards?\s+displayed\s+\((\d+)\s+errors?,\s+(\d+)\s+warnings?\)`)
	// racecheck's grouped report: "and Read access at KERNEL+0x6c0 [64 hazards]".
	racePairRE = regexp.MustCompile(`^and (?:Read|Write) access at ([^\s(+]+)[^+]*\+0x[0-9a-fA-F]+ \[(\d+) hazards?\]`)
	// racecheck's per-hazard report: a "Potential ... hazard" line, then
	// "Read Thread (...) at KERNEL(ARGS)+0x3e0" and "Write Thread (...) at ...".
	raceEntryRE  = regexp.MustCompile(`^(?:Error|Warning): (?:Race reported|Potential \S+ hazard)`)
	raceThreadRE = regexp.MustCompile(`^(?:Read|Write) Thread \([^)]*\) at ([^\s(+]+)[^+]*\+0x[0-9a-fA-F]+`)
	// racecheck stops recording hazards at a cap and says so.
	raceCapRE = regexp.MustCompile(`Maximum number of hazards reached`)
)

// maxReportLines bounds the report lines kept (the first ones: a report's
// head says what and where).
const maxReportLines = 12

// SanitizerReport is what one compute-sanitizer run printed.
type SanitizerReport struct {
	// Summary is true when a summary line was found: the tool ran the
	// program to its end. Without it the counts mean nothing.
	Summary bool
	// Errors is ERROR SUMMARY's count, or racecheck's error count.
	Errors int
	// Hazards and Warnings are racecheck's (0 for the other tools).
	Hazards, Warnings int
	// Race is true when the summary was racecheck's.
	Race bool
	// Lines are the first report lines (prefix removed, banner and
	// summary left out), at most maxReportLines.
	Lines []string
	// Reports counts every report line, kept or not.
	Reports int
	// RaceKernels are racecheck's hazards by kernel: the counts of its
	// grouped reports, or one per hazard it printed singly.
	RaceKernels map[string]int
	// Unattributed counts racecheck's report entries ("Error: Race
	// reported ...", "Error: Potential ... hazard ...") without a kernel
	// the parser could read.
	Unattributed int
	// Internal is true when the tool reported an internal error of its
	// own: it stopped checking there.
	Internal bool
	// Capped is true when racecheck reached its hazard cap: hazards after
	// it, in any kernel, went unrecorded.
	Capped bool
}

// Found reports whether the tool reported anything: an error, or a
// racecheck hazard of either severity.
func (r SanitizerReport) Found() bool { return r.Errors > 0 || r.Hazards > 0 || r.Warnings > 0 }

// String is the summary in one line.
func (r SanitizerReport) String() string {
	switch {
	case !r.Summary:
		return "no summary line"
	case r.Race:
		return fmt.Sprintf("%d hazards displayed (%d errors, %d warnings)", r.Hazards, r.Errors, r.Warnings)
	}
	return fmt.Sprintf("%d errors", r.Errors)
}

// ParseSanitizer reads compute-sanitizer's output (the program's lines
// mixed in, which it ignores). Several summaries (a tool run over child
// processes) add up.
func ParseSanitizer(out string) SanitizerReport {
	var r SanitizerReport
	pending := false // a race entry without its kernel yet
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimRight(line, "\r")
		rest, ok := strings.CutPrefix(line, sanitizerPrefix)
		if !ok {
			continue
		}
		rest = strings.TrimSpace(rest)
		if rest == "" || strings.HasPrefix(rest, "COMPUTE-SANITIZER") {
			continue
		}
		if m := errorSummaryRE.FindStringSubmatch(rest); m != nil {
			r.Summary = true
			r.Errors += atoiSat(m[1])
			continue
		}
		if m := raceSummaryRE.FindStringSubmatch(rest); m != nil {
			r.Summary, r.Race = true, true
			r.Hazards += atoiSat(m[1])
			r.Errors += atoiSat(m[2])
			r.Warnings += atoiSat(m[3])
			continue
		}
		r.Reports++
		if len(r.Lines) < maxReportLines {
			r.Lines = append(r.Lines, rest)
		}
		if strings.HasPrefix(rest, "Internal Sanitizer Error") {
			r.Internal = true
		}
		if raceEntryRE.MatchString(rest) {
			if pending {
				r.Unattributed++
			}
			pending = true
		}
		if raceCapRE.MatchString(rest) {
			r.Capped = true
		}
		// A grouped pair counts its hazards; a single hazard counts once,
		// on the first thread line naming its kernel.
		if m := racePairRE.FindStringSubmatch(rest); m != nil {
			r.addRace(m[1], atoiSat(m[2]))
			pending = false
		} else if m := raceThreadRE.FindStringSubmatch(rest); m != nil && pending {
			r.addRace(m[1], 1)
			pending = false
		}
	}
	if pending {
		r.Unattributed++
	}
	return r
}

// addRace adds n hazards to kernel k, saturating.
func (r *SanitizerReport) addRace(k string, n int) {
	if r.RaceKernels == nil {
		r.RaceKernels = map[string]int{}
	}
	r.RaceKernels[k] = min(r.RaceKernels[k]+n, 1<<30)
}

// atoiSat parses a count of digits, saturating instead of overflowing.
func atoiSat(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 1 << 30
	}
	return min(n, 1<<30)
}
