package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/olekukonko/tablewriter/tw"
	"github.com/parharness/parharness/bench"
	"github.com/parharness/parharness/internal/textutil"
	"github.com/parharness/parharness/regret"
	"github.com/parharness/parharness/results"
	"github.com/parharness/parharness/stats"
)

const (
	diffUsage   = "diff OLD NEW [--markdown] [--changed] [--noise PCT] [--metric-noise PCT] [--fail-on-slower PCT]"
	reportUsage = "report RESULTS [--svg DIR] [--png DIR] [--benchfmt]"
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

// runDiff prints per-row ratios and gate metrics with noise-aware
// verdicts. Exit 1 when a gate regressed (PASS to FAIL; PASS to SKIP or
// ERROR on the same device), rows measured different work, a new output
// check failed, or with --fail-on-slower a row got slower beyond the noise
// by more than PCT; 0 otherwise.
func runDiff(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("diff", stderr)
	md := fs.Bool("markdown", false, "print Markdown (for a pull request)")
	changed := fs.Bool("changed", false, "list only rows whose verdict is not ~")
	noise := fs.Float64("noise", 2, "least run-to-run noise in percent a difference must exceed (in-run controls only see in-run noise)")
	metricNoise := fs.Float64("metric-noise", results.DefaultMetricNoisePct, "least change in percent of a gate metric's median per-case ratio that can be a verdict (seeded inputs move it)")
	failSlower := fs.Float64("fail-on-slower", -1, "exit 1 when a bench row got slower by more than PCT percent, beyond the noise and with Mann-Whitney p < 0.05 (for CI; off when negative)")
	pos, err := parsePositional(fs, args, 2, diffUsage)
	if err != nil {
		return ExitUsage, err
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"noise", *noise}, {"metric-noise", *metricNoise}} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return ExitUsage, usagef("--%s %v: a noise floor is a percentage >= 0", f.name, f.v)
		}
	}
	if math.IsNaN(*failSlower) || math.IsInf(*failSlower, 0) {
		return ExitUsage, usagef("--fail-on-slower %v: give a percentage such as 3", *failSlower)
	}
	oldDoc, err := results.Read(pos[0])
	if err != nil {
		return ExitUsage, err
	}
	newDoc, err := results.Read(pos[1])
	if err != nil {
		return ExitUsage, err
	}
	rep, err := results.Diff(oldDoc, newDoc, results.DiffOptions{OnlyChanged: *changed, MinNoisePct: *noise, MetricNoisePct: max(*metricNoise, 1e-9)})
	if err != nil {
		return ExitUsage, err
	}
	rep.Width = textutil.Width(stdout)
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
			fmt.Fprintf(stderr, "parharness diff: gate %s regressed: %s -> %s\n", g.Gate, orAbsent(g.Old), orAbsent(g.New))
			code = ExitFail
		}
	}
	if *failSlower >= 0 {
		if slow := rep.SlowerThan(*failSlower); len(slow) > 0 {
			fmt.Fprintf(stderr, "parharness diff: --fail-on-slower %g: %d rows slower by more than %g%%:\n", *failSlower, len(slow), *failSlower)
			for _, r := range slow {
				fmt.Fprintf(stderr, "\t%s: %+.2f%% (p=%.3g, noise %.1f%%)\n", r.Key(), 100*(r.Ratio-1), r.PValue, r.NoisePct)
			}
			code = ExitFail
		}
	}
	return code, nil
}

func runReport(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("report", stderr)
	svg := fs.String("svg", "", "write one SVG plot per suite into this directory")
	png := fs.String("png", "", "write one PNG plot per suite into this directory")
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
		return writePlots(doc, *svg, *png, stderr)
	}
	printReport(stdout, doc)
	return writePlots(doc, *svg, *png, stdout)
}

// writePlots writes doc's plots as SVG into svgDir and as PNG into pngDir
// ("" for none) and lists them on w. The suites' selection laws mark their
// picks.
func writePlots(doc *results.Document, svgDir, pngDir string, w io.Writer) (int, error) {
	opts := results.PlotOptions{Pick: lawPicks(doc)}
	for _, d := range []struct{ dir, format string }{{svgDir, results.SVG}, {pngDir, results.PNG}} {
		if d.dir == "" {
			continue
		}
		paths, err := results.Plot(doc, d.dir, opts, d.format)
		if err != nil {
			return ExitUsage, err
		}
		for _, p := range paths {
			fmt.Fprintf(w, "wrote %s\n", p)
		}
	}
	return ExitOK, nil
}

// lawPicks is the plots' Pick: what a suite's selection law
// (bench.Suite.Laws) picks for its kernel in each (shape, M) of doc. Where
// several laws score one kernel the suite's last one marks the plots (dec:
// gemm.DecBody, the body and split a call launches).
func lawPicks(doc *results.Document) func(suite, kernel, shape string, M int) (string, string) {
	type key struct{ suite, kernel string }
	laws := map[key]bench.Law{}
	picks := map[key]regret.Law{}
	for _, r := range doc.Records {
		k := key{r.Suite, r.Kernel}
		if _, done := laws[k]; done {
			continue
		}
		s, ok := bench.LookupSuite(r.Suite)
		if !ok {
			continue
		}
		for _, l := range s.Laws {
			if l.Kernel == r.Kernel {
				laws[k] = l
				picks[k] = l.Pick
				if l.PickFrom != nil {
					picks[k] = l.PickFrom(doc, r.Suite)
				}
			}
		}
	}
	return func(suite, kernel, shape string, M int) (string, string) {
		k := key{suite, kernel}
		if picks[k] == nil {
			return "", ""
		}
		return picks[k](regret.Cell{Shape: shape, M: M}), laws[k].Name
	}
}

func orAbsent(s string) string {
	if s == "" {
		return "(absent)"
	}
	return s
}

// printReport renders a results file for a person: the run, its
// ceilings, the gate table and each gate's metrics (per metric name: the
// cases and their smallest, median and largest value), the bench table,
// and the regret table of each suite's selection laws.
func printReport(w io.Writer, doc *results.Document) {
	dev := "no device"
	if d := doc.Device; d != nil {
		dev = fmt.Sprintf("%s (%s, %s, %s)", d.Name, d.Arch, d.Backend, d.Driver)
	}
	fmt.Fprintf(w, "run: %s, commit %s, %s, seed %d\ndevice: %s\n", orDash(doc.Tool), orDash(doc.Commit), orDash(doc.Date), doc.Seed, dev)
	if doc.Partial {
		fmt.Fprintf(w, "PARTIAL: %s\n", doc.PartialReason)
	}
	if len(doc.Ceilings) > 0 {
		fmt.Fprintln(w, "\nceilings (measured in this run):")
		t := newTable(w).Shrink(3).Align(tw.AlignLeft, tw.AlignRight, tw.AlignLeft, tw.AlignLeft)
		t.Header("ceiling", "value", "unit", "how")
		for _, c := range doc.Ceilings {
			t.Append(c.Name, fmt.Sprintf("%.0f", c.Value), c.Unit, c.How)
		}
		t.Render()
	}
	if len(doc.Gates) > 0 {
		fmt.Fprintf(w, "\ngates: %d\n", len(doc.Gates))
		printGateTable(w, doc.Gates, "")
		printGateMetrics(w, doc.Gates)
	}
	if len(doc.Records) > 0 {
		fmt.Fprintln(w)
		printBenchTable(w, doc)
		printRegret(w, doc)
		for _, suite := range docSuites(doc) {
			printBestPeer(w, doc, suite)
		}
	}
}

// docSuites are the suites of doc's records, in first-seen order.
func docSuites(doc *results.Document) []string {
	var suites []string
	for _, r := range doc.Records {
		if !slices.Contains(suites, r.Suite) {
			suites = append(suites, r.Suite)
		}
	}
	return suites
}

// metricsShown bounds the metric names listed per gate.
const metricsShown = 12

// printGateMetrics lists each gate's metrics by name: how many cases, and
// the smallest, median and largest value over them.
func printGateMetrics(w io.Writer, gs []results.GateRecord) {
	t := newTable(w).Align(tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight)
	t.Header("gate", "metric", "cases", "min", "median", "max")
	for _, g := range gs {
		byName := map[string][]float64{}
		var names []string
		for _, k := range sortedKeys(g.Metrics) {
			name, _, err := results.ParseMetricKey(k)
			if err != nil {
				name = k
			}
			if byName[name] == nil {
				names = append(names, name)
			}
			byName[name] = append(byName[name], g.Metrics[k])
		}
		for i, n := range names {
			if i == metricsShown {
				t.Append(g.Gate, fmt.Sprintf("(+%d more metrics in the JSON)", len(names)-metricsShown), "", "", "", "")
				break
			}
			vs := byName[n]
			lo, hi := vs[0], vs[0]
			for _, v := range vs {
				lo, hi = min(lo, v), max(hi, v)
			}
			t.Append(g.Gate, n, len(vs), formatMetric(lo), formatMetric(stats.Median(vs)), formatMetric(hi))
		}
	}
	if t.t.Rows() > 0 {
		fmt.Fprintln(w, "\ngate metrics:")
		t.Render()
	}
}

func sortedKeys(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// printRegret writes the regret table of every selection law of the
// document's suites (bench.Suite.Laws) that its records can score.
func printRegret(w io.Writer, doc *results.Document) {
	for _, name := range docSuites(doc) {
		s, ok := bench.LookupSuite(name)
		if !ok {
			continue
		}
		for _, law := range s.Laws {
			tab, err := law.Regret(doc, name)
			if err != nil {
				fmt.Fprintf(w, "\nregret of %s: %v\n", law.Name, err)
				continue
			}
			fmt.Fprintf(w, "\nselection law %s against the per-cell argmin over %s:\n", law.Name, law.OverText())
			tab.Width = textutil.Width(w)
			if err := tab.WriteText(w); err != nil {
				fmt.Fprintf(w, "(regret table not written: %v)\n", err)
			}
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
