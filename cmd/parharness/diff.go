package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/parharness/parharness/results"
)

const (
	diffUsage   = "diff OLD NEW [--markdown] [--changed] [--noise PCT]"
	reportUsage = "report RESULTS [--svg DIR] [--benchfmt]"
)

func init() {
	register(command{name: "diff", usage: "compare two results files: " + diffUsage, run: runDiff})
	register(command{name: "report", usage: "render a results file: " + reportUsage, run: runReport})
}

// parsePositional parses fs from args in any order of flags and paths and
// returns the n positional arguments, or a usage error naming usage.
func parsePositional(fs *flag.FlagSet, args []string, n int, usage string) ([]string, error) {
	pos, flags := splitArgs(fs, args)
	if err := parse(fs, flags); err != nil {
		return nil, err
	}
	if len(pos) != n {
		return nil, usagef("usage: parharness %s", usage)
	}
	return pos, nil
}

// splitArgs separates positional arguments from flags so both orders work.
// Whether a flag takes the next argument as its value is read off fs (a
// boolean flag does not), so a flag added to fs never swallows a path.
func splitArgs(fs *flag.FlagSet, args []string) (pos, flags []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) > 1 && a[0] == '-' {
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if f := fs.Lookup(name); f != nil && !isBoolFlag(f) && i+1 < len(args) && !strings.Contains(a, "=") {
				flags = append(flags, args[i+1])
				i++
			}
			continue
		}
		pos = append(pos, a)
	}
	return
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// runDiff prints per-row ratios with noise-aware verdicts. Exit 1 when a
// gate regressed or rows measured different work; 0 otherwise.
func runDiff(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("diff", stderr)
	md := fs.Bool("markdown", false, "print Markdown (for a pull request)")
	changed := fs.Bool("changed", false, "list only rows whose verdict is not ~")
	noise := fs.Float64("noise", 2, "least run-to-run noise in percent a difference must exceed (in-run controls only see in-run noise)")
	pos, err := parsePositional(fs, args, 2, diffUsage)
	if err != nil {
		return ExitUsage, err
	}
	oldDoc, err := results.Read(pos[0])
	if err != nil {
		return ExitUsage, err
	}
	newDoc, err := results.Read(pos[1])
	if err != nil {
		return ExitUsage, err
	}
	rep, err := results.Diff(oldDoc, newDoc, results.DiffOptions{OnlyChanged: *changed, MinNoisePct: *noise})
	if err != nil {
		return ExitUsage, err
	}
	if *md {
		err = rep.WriteMarkdown(stdout)
	} else {
		err = rep.WriteText(stdout)
	}
	if err != nil {
		return ExitUsage, err
	}
	code := ExitOK
	for _, err := range []error{rep.Mismatches(), rep.CheckFailures()} {
		if err != nil {
			fmt.Fprintf(stderr, "parharness diff: %v\n", err)
			code = ExitFail
		}
	}
	for _, g := range rep.GateChanges {
		if g.Regression() {
			code = ExitFail
		}
	}
	return code, nil
}

func runReport(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("report", stderr)
	svg := fs.String("svg", "", "write one SVG plot per (suite, kernel) into this directory")
	bf := fs.Bool("benchfmt", false, "print only Go benchmark format lines (for benchstat), no tables")
	pos, err := parsePositional(fs, args, 1, reportUsage)
	if err != nil {
		return ExitUsage, err
	}
	doc, err := results.Read(pos[0])
	if err != nil {
		return ExitUsage, err
	}
	if *bf {
		// stdout is for benchstat alone: no tables; the plots' paths, if
		// any, go to stderr.
		if err := results.WriteBenchfmt(stdout, doc); err != nil {
			return ExitUsage, err
		}
		return writePlots(doc, *svg, stderr)
	}
	if len(doc.Gates) > 0 {
		fmt.Fprintf(stdout, "gates: %d\n", len(doc.Gates))
		for _, g := range doc.Gates {
			fmt.Fprintf(stdout, "  %-4s %s %s\n", g.Status, g.Gate, oneLine(g.Reason))
		}
	}
	if len(doc.Records) > 0 {
		printBenchTable(stdout, doc)
	}
	return writePlots(doc, *svg, stdout)
}

// writePlots writes doc's plots into dir ("" for none) and lists them on w.
func writePlots(doc *results.Document, dir string, w io.Writer) (int, error) {
	if dir == "" {
		return ExitOK, nil
	}
	paths, err := results.Plot(doc, dir)
	if err != nil {
		return ExitUsage, err
	}
	for _, p := range paths {
		fmt.Fprintf(w, "wrote %s\n", p)
	}
	return ExitOK, nil
}
