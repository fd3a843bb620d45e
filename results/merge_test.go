package results

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// shardDoc is shard i/n of a sweep planned over keys, measuring the keys
// it is given.
func shardDoc(i, n int, planned []string, measured ...int) *Document {
	d := &Document{Schema: SchemaVersion, Tool: "t", Commit: "c1", Date: "2026-12-01T00:00:0" + string(rune('0'+i)) + "Z",
		Device: &Device{Name: "NVIDIA H200", Arch: "sm_90"}, CodeObjects: map[string]string{"sm_90a/gemm.ptx": "aa"},
		Shard: &Shard{Index: i, Count: n}, Planned: planned,
		Command: []string{"parharness", "bench2", "dec", "--m", "1,2,3", "--shard", fmt.Sprintf("%d/%d", i, n), "--json=s.json"}}
	for _, m := range measured {
		d.Records = append(d.Records, Record{Suite: "dec", Kernel: "k", Variant: "S4", Shape: "qkv", M: m, Regime: Cold,
			SamplesUS: []float64{1, 1, 1, 1}, Check: &Check{Status: CheckPass, Copies: []int{0}}})
	}
	return d
}

func TestMerge(t *testing.T) {
	planned := []string{PointKey("dec", "qkv", 1), PointKey("dec", "qkv", 2), PointKey("dec", "qkv", 3)}
	good := func() []Part {
		return []Part{{"a", shardDoc(0, 2, planned, 1, 3)}, {"b", shardDoc(1, 2, planned, 2)}}
	}
	t.Run("whole", func(t *testing.T) {
		d, err := Merge(good(), MergeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Records) != 3 || len(d.DeviceRuns) != 2 || d.Records[1].Device != "b" || d.Date != "2026-12-01T00:00:00Z" {
			t.Errorf("merged: %d records, %d runs, record 1 from %q, date %s", len(d.Records), len(d.DeviceRuns), d.Records[1].Device, d.Date)
		}
		if err := d.Validate(); err != nil {
			t.Errorf("the merged document does not validate: %v", err)
		}
	})
	for _, c := range []struct {
		name string
		edit func(ps []Part) []Part
		want string
	}{
		{"missing shard", func(ps []Part) []Part { return ps[:1] }, "shard 1/2 is missing"},
		{"shard twice", func(ps []Part) []Part { ps[1].Doc.Shard.Index = 0; return ps }, "both shard 0/2"},
		{"other count", func(ps []Part) []Part { ps[1].Doc.Shard.Count = 3; return ps }, "the others are of 2"},
		{"partial", func(ps []Part) []Part { ps[0].Doc.Partial, ps[0].Doc.PartialReason = true, "hung"; return ps }, "a is partial (hung)"},
		{"not a shard", func(ps []Part) []Part { ps[0].Doc.Shard = nil; return ps }, "a is not a shard"},
		{"other commit", func(ps []Part) []Part { ps[1].Doc.Commit = "c2"; return ps }, "merge runs of one build"},
		{"other code objects", func(ps []Part) []Part { ps[1].Doc.CodeObjects = map[string]string{"sm_90a/gemm.ptx": "bb"}; return ps }, "other code objects"},
		{"other device", func(ps []Part) []Part { ps[1].Doc.Device = &Device{Name: "NVIDIA H100", Arch: "sm_90"}; return ps }, "devices of different kinds"},
		{"other plan", func(ps []Part) []Part { ps[1].Doc.Planned = planned[:2]; return ps }, "ran different sweeps"},
		{"point twice", func(ps []Part) []Part { ps[1].Doc.Records = append(ps[1].Doc.Records, ps[0].Doc.Records[0]); return ps }, "measured by both a and b"},
		{"other flags", func(ps []Part) []Part { ps[1].Doc.Command = append(ps[1].Doc.Command, "--reps", "20"); return ps }, "ran different sweeps (suite or flags)"},
		{"point missing", func(ps []Part) []Part { ps[1].Doc.Records = nil; return ps }, "1 planned points have no record"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Merge(c.edit(good()), MergeOptions{})
			var me *MergeError
			if !errors.As(err, &me) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Merge: %v, want a *MergeError containing %q", err, c.want)
			}
		})
	}
	t.Run("cache-regime checks carried", func(t *testing.T) {
		// Each part's checks go to its device run; the top level holds the
		// first part's, or a part's that failed.
		ps := good()
		for i, p := range ps {
			p.Doc.Eviction = &EvictionCheck{Rot3xUS: float64(i + 1), OK: true}
			p.Doc.ScrubCheck = &ScrubCheck{Scrub: "read", ScrubUS: float64(i + 1), OK: true}
		}
		d, err := Merge(ps, MergeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if d.ScrubCheck == nil || d.ScrubCheck.ScrubUS != 1 || d.Eviction == nil || d.Eviction.Rot3xUS != 1 ||
			d.DeviceRuns[1].ScrubCheck == nil || d.DeviceRuns[1].ScrubCheck.ScrubUS != 2 || d.DeviceRuns[1].Eviction.Rot3xUS != 2 {
			t.Errorf("all passed: top %+v %+v, runs %+v", d.ScrubCheck, d.Eviction, d.DeviceRuns)
		}
		ps = good()
		for i, p := range ps {
			p.Doc.Eviction = &EvictionCheck{Rot3xUS: float64(i + 1), OK: i == 0}
			p.Doc.ScrubCheck = &ScrubCheck{Scrub: "read", ScrubUS: float64(i + 1), OK: i == 0}
		}
		if d, err = Merge(ps, MergeOptions{}); err != nil {
			t.Fatal(err)
		}
		if d.ScrubCheck.OK || d.ScrubCheck.ScrubUS != 2 || d.Eviction.OK {
			t.Errorf("part b failed: top %+v %+v; want b's failed checks", d.ScrubCheck, d.Eviction)
		}
	})
	t.Run("mixed devices allowed", func(t *testing.T) {
		ps := good()
		ps[1].Doc.Device = &Device{Name: "NVIDIA H100", Arch: "sm_90"}
		if _, err := Merge(ps, MergeOptions{MixedDevices: true}); err != nil {
			t.Errorf("MixedDevices: %v", err)
		}
	})
}
