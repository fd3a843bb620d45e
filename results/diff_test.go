package results

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parharness/parharness/internal/golden"
)

// diffPair returns two runs covering every kind of diff row.
func diffPair() (old, new *Document) {
	base := func(commit string) *Document {
		return &Document{Schema: SchemaVersion, Tool: "parharness v0.1.0-test", Commit: commit,
			Date: "2026-11-30T12:00:00Z", Device: &Device{Backend: "cuda", Name: "NVIDIA H200", Arch: "sm_90"},
			Ceilings: []Ceiling{{Name: CeilingCopyGBps, Value: 4150, Unit: "GB/s"}}}
	}
	old, new = base("aaaaaaa"), base("bbbbbbb")
	const mb = 1_000_000
	old.Gates = []GateRecord{
		{Gate: "e4m3-encode", Status: Pass},
		{Gate: "w4a8-gemm", Status: Pass},
		{Gate: "identity", Status: Skip, Reason: "no checkpoint"},
		{Gate: "old-only", Status: Pass},
	}
	new.Gates = []GateRecord{
		{Gate: "e4m3-encode", Status: Pass},
		{Gate: "w4a8-gemm", Status: Fail, Reason: "mlp_down M=8 v3 seed 7: 12 of 5120 elements, rel 3.1e-3 > 1.5x floor"},
		{Gate: "identity", Status: Pass},
		{Gate: "new-gate", Status: Pass},
	}
	r := func(shape string, m int, variant, regime string, bytes int64, xs []float64) Record {
		return record("decode", "w4a8_gemm", shape, m, variant, regime, bytes, xs)
	}
	// 5% slower, tight samples: "slower".
	old.Records = append(old.Records, r("mlp_down", 8, "v3", Cold, 22*mb, samples(8, 10, 0.003, 0)))
	new.Records = append(new.Records, r("mlp_down", 8, "v3", Cold, 22*mb, samples(8, 10.5, 0.003, 1)))
	// Identical code, ±1% jitter: "~".
	old.Records = append(old.Records, r("mlp_down", 16, "v3", Cold, 22*mb, samples(8, 11, 0.01, 2)))
	new.Records = append(new.Records, r("mlp_down", 16, "v3", Cold, 22*mb, samples(8, 11, 0.01, 5)))
	// 10% faster: "faster".
	old.Records = append(old.Records, r("mlp_gate_up", 8, "v3", Cold, 47*mb, samples(8, 13.2, 0.003, 3)))
	new.Records = append(new.Records, r("mlp_gate_up", 8, "v3", Cold, 47*mb, samples(8, 12, 0.003, 4)))
	// 2% slower and significant, but the control beside the rung spread 3%: "~".
	oc := r("mlp_gate_up", 16, "v3", Cold, 47*mb, samples(8, 14, 0.002, 0))
	nc := r("mlp_gate_up", 16, "v3", Cold, 47*mb, samples(8, 14.28, 0.002, 1))
	nc.Control = &Control{Of: "v3", ASamplesUS: samples(4, 14, 0.01, 0), BSamplesUS: samples(4, 14.4, 0.01, 1), Ratio: 1.03, SpreadPct: 3}
	old.Records = append(old.Records, oc)
	new.Records = append(new.Records, nc)
	// Only in one run.
	old.Records = append(old.Records, r("mlp_down", 8, "v1", Cold, 22*mb, samples(6, 15, 0.01, 0)))
	new.Records = append(new.Records, r("mlp_down", 8, "v4", Cold, 22*mb, samples(6, 9, 0.01, 0)))
	// Same key, different bytes: the shape changed under the same name.
	old.Records = append(old.Records, r("attn_o", 8, "v3", Cold, 16*mb, samples(6, 6, 0.01, 0)))
	new.Records = append(new.Records, r("attn_o", 8, "v3", Cold, 8*mb, samples(6, 3, 0.01, 0)))
	// Same row, different regime.
	old.Records = append(old.Records, r("attn_qkv", 1, "v3", Cold, 30*mb, samples(6, 9, 0.01, 0)))
	new.Records = append(new.Records, r("attn_qkv", 1, "v3", Hot, 30*mb, samples(6, 4, 0.01, 0)))
	// Too few samples in the old run.
	few := r("attn_qkv", 8, "v3", Cold, 30*mb, samples(4, 9, 0.01, 0))
	few.SamplesUS = few.SamplesUS[:3]
	old.Records = append(old.Records, few)
	new.Records = append(new.Records, r("attn_qkv", 8, "v3", Cold, 30*mb, samples(6, 9.1, 0.01, 0)))
	new.Records[len(new.Records)-1].Flags = []string{FlagAboveRoofline}
	return old, new
}

func TestDiff(t *testing.T) {
	old, new := diffPair()
	rep, err := Diff(old, new, DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"decode/w4a8_gemm/shape=mlp_down/M=8/variant=v3/regime=cold":     VerdictSlower,
		"decode/w4a8_gemm/shape=mlp_down/M=16/variant=v3/regime=cold":    VerdictSame,
		"decode/w4a8_gemm/shape=mlp_gate_up/M=8/variant=v3/regime=cold":  VerdictFaster,
		"decode/w4a8_gemm/shape=mlp_gate_up/M=16/variant=v3/regime=cold": VerdictSame,
		"decode/w4a8_gemm/shape=mlp_down/M=8/variant=v1/regime=cold":     VerdictRemoved,
		"decode/w4a8_gemm/shape=mlp_down/M=8/variant=v4/regime=cold":     VerdictAdded,
		"decode/w4a8_gemm/shape=attn_o/M=8/variant=v3/regime=cold":       VerdictMismatch,
		"decode/w4a8_gemm/shape=attn_qkv/M=1/variant=v3/regime=hot":      VerdictMismatch,
		"decode/w4a8_gemm/shape=attn_qkv/M=8/variant=v3/regime=cold":     VerdictUnknown,
	}
	if len(rep.Rows) != len(want) {
		t.Errorf("%d rows, want %d", len(rep.Rows), len(want))
	}
	for _, r := range rep.Rows {
		if w, ok := want[r.Key()]; !ok || r.Verdict != w {
			t.Errorf("%s: verdict %q (ratio %.3f p %.3f noise %.2f%%), want %q", r.Key(), r.Verdict, r.Ratio, r.PValue, r.NoisePct, w)
		}
	}
	if g := rep.GateChanges; len(g) != 4 || g[0].Gate != "w4a8-gemm" || !g[0].Regression() {
		t.Errorf("gate changes %+v: want 4, the PASS->FAIL first", g)
	}
	if rep.Slower != 1 || rep.Faster != 1 || rep.Same != 2 || rep.Added != 1 || rep.Removed != 1 || rep.Mismatched != 2 || rep.Unknown != 1 {
		t.Errorf("counts %+v", rep)
	}
	err = rep.Mismatches()
	if err == nil || !strings.Contains(err.Error(), "bytes 16000000 -> 8000000") || !strings.Contains(err.Error(), "regime cold -> hot") {
		t.Errorf("Mismatches() = %v", err)
	}

	var text, md bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "diff.txt"), text.Bytes())
	golden.Check(t, filepath.Join("testdata", "diff.md"), md.Bytes())

	// The gate regression comes before any row.
	if i, j := strings.Index(text.String(), "w4a8-gemm: PASS -> FAIL"), strings.Index(text.String(), "suite/kernel"); i < 0 || i > j {
		t.Error("gate regression not listed before the rows")
	}
}

func TestDiffOnlyChanged(t *testing.T) {
	old, new := diffPair()
	rep, err := Diff(old, new, DiffOptions{OnlyChanged: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Rows {
		if r.Verdict == VerdictSame {
			t.Errorf("OnlyChanged kept %s", r.Key())
		}
	}
	if rep.Same != 2 {
		t.Errorf("Same = %d: the counts should cover every row", rep.Same)
	}
}

func TestDiffSelf(t *testing.T) {
	doc := synthetic()
	rep, err := Diff(doc, doc, DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Rows {
		if r.Verdict != VerdictSame {
			t.Errorf("%s against itself: %s", r.Key(), r.Verdict)
		}
	}
	if rep.Geomean != 1 || len(rep.GateChanges) != 0 || rep.Mismatches() != nil || len(rep.Warnings) != 0 {
		t.Errorf("self diff: %+v", rep)
	}
}

func TestDiffInvalid(t *testing.T) {
	old, new := diffPair()
	new.Records = append(new.Records, new.Records[0])
	if _, err := Diff(old, new, DiffOptions{}); err == nil || !strings.Contains(err.Error(), "new run") || !strings.Contains(err.Error(), "duplicate key") {
		t.Errorf("duplicate record in the new run: err = %v", err)
	}
	if _, err := Diff(nil, new, DiffOptions{}); err == nil {
		t.Error("nil document: no error")
	}
}

func TestDiffWarnings(t *testing.T) {
	old, new := diffPair()
	new.Device.Name = "NVIDIA H100"
	new.Partial, new.PartialReason = true, "SIGINT"
	rep, err := Diff(old, new, DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(rep.Warnings, "\n")
	if !strings.Contains(all, "devices differ") || !strings.Contains(all, "new run is partial (SIGINT)") {
		t.Errorf("warnings: %q", all)
	}
}

// A noise floor must only ever raise the threshold: noisy samples (±8%)
// 6% apart are "~" with or without --noise 2, and a variant without a
// control of its own is judged against its rung's control.
func TestDiffNoiseFloorNeverLowers(t *testing.T) {
	mk := func(variant string, center float64, phase int) Record {
		return record("dec", "k", "s", 1, variant, Cold, 1_000_000, samples(12, center, 0.08, phase))
	}
	for _, floor := range []float64{0, 2} {
		rows := diffRecords([]Record{mk("v", 10, 0)}, []Record{mk("v", 10.6, 1)}, floor)
		if len(rows) != 1 || rows[0].Verdict != VerdictSame {
			t.Errorf("floor %v: verdict %q for a 6%% change inside ±8%% samples, want %q", floor, rows[0].Verdict, VerdictSame)
		}
	}
	tight := func(variant string, center float64, phase int) Record {
		return record("dec", "k", "s", 1, variant, Cold, 1_000_000, samples(8, center, 0.002, phase))
	}
	ob, nb := tight("base", 10, 0), tight("base", 10, 1)
	nb.Control = &Control{Of: "base", ASamplesUS: samples(4, 10, 0.01, 0), BSamplesUS: samples(4, 10.4, 0.01, 1), Ratio: 1.04, SpreadPct: 4}
	ov, nv := tight("other", 10, 2), tight("other", 10.3, 3) // 3% slower, tight, but the rung's control spread 4%
	// A hot attribution variant of the same cold rung is judged against
	// that rung's control too.
	oh, nh := tight("hot", 10, 2), tight("hot", 10.3, 3)
	oh.Regime, nh.Regime = Hot, Hot
	rows := diffRecords([]Record{ob, ov, oh}, []Record{nb, nv, nh}, 0)
	for _, r := range rows {
		if (r.Variant == "other" || r.Variant == "hot") && r.Verdict != VerdictSame {
			t.Errorf("variant %s without its own control: verdict %q, want %q (the rung's control spread 4%%)", r.Variant, r.Verdict, VerdictSame)
		}
	}
}

// A gate that passed and now skips or cannot run is a regression on the
// same device, not on another (a GPU run against a CPU-only one).
func TestGateChangeRegression(t *testing.T) {
	for _, tc := range []struct {
		old, new string
		same     bool
		want     bool
	}{
		{Pass, Fail, false, true},
		{"", Fail, true, true},
		{Pass, Skip, true, true},
		{Pass, Skip, false, false},
		{Pass, Error, true, true},
		{Pass, Error, false, false},
		{Skip, Pass, true, false},
		{Skip, Error, true, false},
		{Fail, Fail, true, false},
		{Pass, "", true, false}, // not run this time (--only)
	} {
		t.Run(fmt.Sprintf("%s->%s/same=%v", gateStatus(tc.old), gateStatus(tc.new), tc.same), func(t *testing.T) {
			if got := (GateChange{Old: tc.old, New: tc.new, SameDevice: tc.same}).Regression(); got != tc.want {
				t.Errorf("Regression() = %v, want %v", got, tc.want)
			}
		})
	}
	// Diff sets SameDevice from the runs' devices.
	old, new := diffPair()
	old.Gates = []GateRecord{{Gate: "gemm", Status: Pass}}
	new.Gates = []GateRecord{{Gate: "gemm", Status: Skip, Reason: "no device"}}
	for _, same := range []bool{true, false} {
		if !same {
			new.Device = &Device{Name: "AMD Radeon AI PRO R9700", Arch: "gfx1201"}
		}
		rep, err := Diff(old, new, DiffOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.GateChanges) != 1 || rep.GateChanges[0].Regression() != same {
			t.Errorf("same device %v: %+v", same, rep.GateChanges)
		}
	}
}

// A copy file against a dec file, or gates against a bench, warns.
func TestDiffWarnsSuitesDiffer(t *testing.T) {
	old, new := diffPair()
	for i := range new.Records {
		new.Records[i].Suite = "copy"
	}
	rep, err := Diff(old, new, DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if all := strings.Join(rep.Warnings, "\n"); !strings.Contains(all, "suites differ: old decode+gates, new copy+gates") {
		t.Errorf("warnings %q", all)
	}
	old, _ = diffPair()
	rep, _ = Diff(old, old, DiffOptions{})
	for _, w := range rep.Warnings {
		if strings.Contains(w, "suites differ") {
			t.Errorf("a run against itself: %s", w)
		}
	}
}

// SlowerThan lists the rows slower beyond the noise by more than pct.
func TestSlowerThan(t *testing.T) {
	old, new := diffPair()
	rep, err := Diff(old, new, DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.SlowerThan(3); len(got) != 1 || got[0].Shape != "mlp_down" || got[0].M != 8 {
		t.Errorf("SlowerThan(3) = %v, want the 5%% slower mlp_down M=8 row", got)
	}
	if got := rep.SlowerThan(6); len(got) != 0 {
		t.Errorf("SlowerThan(6) = %v, want none", got)
	}
	// The same slower row as a roof (a reference, not code under review):
	// shown, but neither failed on nor in the geomean.
	for _, d := range []*Document{old, new} {
		for i := range d.Records {
			if r := &d.Records[i]; r.Shape == "mlp_down" && r.M == 8 {
				r.AddFlag(FlagRoof)
			}
		}
	}
	roofRep, err := Diff(old, new, DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := roofRep.SlowerThan(3); len(got) != 0 {
		t.Errorf("SlowerThan(3) with the slower row a roof = %v, want none", got)
	}
	logSum, n, shown := 0.0, 0, false
	for _, r := range roofRep.Rows {
		if r.Roof() {
			shown = shown || r.Verdict == VerdictSlower
			continue
		}
		if r.Ratio > 0 && r.Verdict != VerdictMismatch {
			logSum += math.Log(r.Ratio)
			n++
		}
	}
	if !shown || n == 0 || math.Abs(roofRep.Geomean-math.Exp(logSum/float64(n))) > 1e-12 || roofRep.Geomean == rep.Geomean {
		t.Errorf("roof row shown slower: %v; geomean %.6f (with it as a kernel %.6f), want %.6f over the %d other rows", shown, roofRep.Geomean, rep.Geomean, math.Exp(logSum/float64(max(n, 1))), n)
	}
}

// gateMetricPair is two gate runs whose metrics move in every way a diff
// tells apart: reseeded scatter (~), errors up by a third (higher), a
// count that changed, a metric only in one run, cases only in one run.
func gateMetricPair() (old, new *Document) {
	old, new = diffPair()
	old.Records, new.Records = nil, nil
	gate := func(phase int, relScale, marginScale float64, regs float64, extra bool) []GateRecord {
		m := map[string]float64{"cases": 40, "worst_rel_over_floor": 1.1 * relScale}
		for i := 0; i < 40; i++ {
			c := NewCase("shape", "qkv", "M", i+1, "dist", []string{"normal", "outlier"}[i%2])
			jitter := 1 + 0.03*math.Sin(float64(7*i+phase))
			m[c.Key("rel")] = 1e-3 * relScale * jitter
			m[c.Key("elem_margin")] = 0.4 * marginScale * jitter
		}
		n := 3
		if extra {
			n = 4
		}
		for i := 0; i < n; i++ {
			m[NewCase("kernel", fmt.Sprintf("k%d", i)).Key("regs")] = 128
		}
		m[NewCase("kernel", "k1").Key("regs")] = regs
		if extra {
			m[NewCase("kernel", "k0").Key("spills")] = 0
		} else {
			m["sweep_ms"] = 12.5
		}
		return []GateRecord{{Gate: "gemm", Status: Pass, Metrics: m}}
	}
	old.Gates = gate(0, 1, 1, 128, false)
	new.Gates = gate(3, 1, 1.35, 140, true)
	return old, new
}

func TestDiffGateMetrics(t *testing.T) {
	old, new := gateMetricPair()
	rep, err := Diff(old, new, DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"cases": "~", "elem_margin": "higher", "regs": "changed", "rel": "~", "spills": "added", "sweep_ms": "removed", "worst_rel_over_floor": "~"}
	got := map[string]string{}
	for _, m := range rep.Metrics {
		got[m.Metric] = m.Call
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("metric verdicts %v, want %v", got, want)
	}
	var txt, md bytes.Buffer
	if err := rep.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "diff-metrics.txt"), txt.Bytes())
	golden.Check(t, filepath.Join("testdata", "diff-metrics.md"), md.Bytes())

	// --changed keeps only the metrics that moved.
	rep, _ = Diff(old, new, DiffOptions{OnlyChanged: true})
	for _, m := range rep.Metrics {
		if m.Call == "~" {
			t.Errorf("OnlyChanged kept metric %s", m.Metric)
		}
	}
	// A key that does not parse is an error naming the gate.
	new.Gates[0].Metrics["rel{shape=qkv"] = 1
	if _, err := Diff(old, new, DiffOptions{}); err == nil || !strings.Contains(err.Error(), "gate gemm") {
		t.Errorf("unparsable key: err = %v", err)
	}
}

// Runs whose isolated records followed different scrubs get a warning: a
// run from before the scrub check (the copy scrub) against one with it,
// or two different recorded scrubs; the same scrub, or no isolated
// records on one side, gets none.
func TestDiffWarnsScrubDiffers(t *testing.T) {
	isolate := func(d *Document) {
		r := d.Records[0]
		r.Regime, r.Timing = Isolated, TimingEvents
		d.Records = append(d.Records, r)
	}
	read := &ScrubCheck{Scrub: "scrub_read_v4 reads 150 MiB", OK: true}
	for _, c := range []struct {
		name            string
		oldIso, newIso  bool
		oldScrub, newSc *ScrubCheck
		warn            bool
	}{
		{"copy-scrub-run-against-read-scrub-run", true, true, nil, read, true},
		{"two-recorded-scrubs", true, true, &ScrubCheck{Scrub: "copy_v4 copies 150 MiB", OK: true}, read, true},
		{"same-scrub", true, true, read, read, false},
		{"no-isolated-records-on-one-side", false, true, nil, read, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			old, new := diffPair()
			if c.oldIso {
				isolate(old)
			}
			if c.newIso {
				isolate(new)
			}
			old.ScrubCheck, new.ScrubCheck = c.oldScrub, c.newSc
			rep, err := Diff(old, new, DiffOptions{})
			if err != nil {
				t.Fatal(err)
			}
			all := strings.Join(rep.Warnings, "\n")
			if got := strings.Contains(all, "isolated regime's scrub differs"); got != c.warn {
				t.Errorf("warned %v, want %v: %q", got, c.warn, all)
			}
		})
	}
}
