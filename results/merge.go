package results

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Part is one document of a sharded sweep and the label its records and
// device run carry in the merge ("shard 2/4", or the --device selector of
// a multi-device run).
type Part struct {
	Label string
	Doc   *Document
}

// MergeOptions say what Merge may accept.
type MergeOptions struct {
	// MixedDevices accepts shards measured on devices of different kinds
	// (name or arch); their times are then not one population.
	MixedDevices bool
}

// MergeError lists every reason a merge was refused.
type MergeError struct{ Problems []string }

func (e *MergeError) Error() string {
	return "results: merge refused: " + strings.Join(e.Problems, "; ")
}

// Merge joins the documents of one sharded sweep into one document. It
// refuses, listing every reason: a document that is partial or not a
// shard; shards of different counts, a shard index twice or not at all;
// different builds (commit, tool or code-object hashes); devices of
// different kinds unless opt.MixedDevices; different planned point sets;
// a record two shards measured; a planned point no shard measured. The
// merged document's records each carry their part's label in Device, and
// each part's device, exit, ceilings and cache-regime checks are a
// DeviceRun; the top-level ceilings are the first part's, the top-level
// checks the first part's or a failed one.
func Merge(parts []Part, opt MergeOptions) (*Document, error) {
	var probs []string
	add := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	if len(parts) == 0 {
		return nil, &MergeError{[]string{"no documents"}}
	}
	first := parts[0].Doc
	count := 0
	seen := map[int]string{}
	for _, p := range parts {
		d := p.Doc
		switch {
		case d.Partial:
			add("%s is partial (%s): rerun that shard", p.Label, d.PartialReason)
		case d.Shard == nil:
			add("%s is not a shard (no shard field): run it with bench2 --shard i/n", p.Label)
		default:
			if count == 0 {
				count = d.Shard.Count
			}
			if d.Shard.Count != count {
				add("%s is shard %s, the others are of %d", p.Label, d.Shard, count)
			}
			if other, dup := seen[d.Shard.Index]; dup {
				add("%s and %s are both shard %s", other, p.Label, d.Shard)
			}
			seen[d.Shard.Index] = p.Label
		}
		if d.Commit != first.Commit || d.Tool != first.Tool {
			add("%s was built from %s %s, %s from %s %s: merge runs of one build", p.Label, d.Tool, d.Commit, parts[0].Label, first.Tool, first.Commit)
		}
		if !maps.Equal(d.CodeObjects, first.CodeObjects) {
			add("%s ran other code objects than %s: merge runs of one build", p.Label, parts[0].Label)
		}
		if !opt.MixedDevices && deviceKind(d) != deviceKind(first) {
			add("%s ran on %s, %s on %s: devices of different kinds (allow with --mixed-devices)", p.Label, deviceKind(d), parts[0].Label, deviceKind(first))
		}
		if a, b := sweepCommand(d.Command), sweepCommand(first.Command); !slices.Equal(a, b) {
			add("%s ran %q, %s %q: the shards ran different sweeps (suite or flags)", p.Label, strings.Join(a, " "), parts[0].Label, strings.Join(b, " "))
		}
		if !slices.Equal(d.Planned, first.Planned) {
			add("%s planned %d points, %s %d: the shards ran different sweeps (suite, flags or shapes)", p.Label, len(d.Planned), parts[0].Label, len(first.Planned))
		}
	}
	for i := 0; i < count; i++ {
		if _, ok := seen[i]; !ok {
			add("shard %d/%d is missing", i, count)
		}
	}
	out := &Document{Schema: SchemaVersion, Tool: first.Tool, Commit: first.Commit, Date: first.Date, Seed: first.Seed,
		Device: first.Device, CodeObjects: first.CodeObjects, Ceilings: first.Ceilings, Planned: first.Planned}
	byKey := map[string]string{}
	measured := map[string]bool{}
	for _, p := range parts {
		d := p.Doc
		out.Date = min(out.Date, d.Date)
		status := Pass
		for _, r := range d.Records {
			if r.Failed() {
				status = Fail
			}
		}
		out.DeviceRuns = append(out.DeviceRuns, DeviceRun{Selector: p.Label, Device: d.Device, Status: status, Ceilings: d.Ceilings,
			Eviction: d.Eviction, ScrubCheck: d.ScrubCheck})
		// The top-level checks are the first part's, or a part's that
		// failed: the merged run's checks hold only if every part's did.
		if d.Eviction != nil && (out.Eviction == nil || !d.Eviction.OK && out.Eviction.OK) {
			out.Eviction = d.Eviction
		}
		if d.ScrubCheck != nil && (out.ScrubCheck == nil || !d.ScrubCheck.OK && out.ScrubCheck.OK) {
			out.ScrubCheck = d.ScrubCheck
		}
		for _, r := range d.Records {
			if other, dup := byKey[r.Key()]; dup {
				add("%s: measured by both %s and %s", r.Key(), other, p.Label)
				continue
			}
			byKey[r.Key()] = p.Label
			measured[PointKey(r.Suite, r.Shape, r.M)] = true
			r.Device = p.Label
			out.Records = append(out.Records, r)
		}
	}
	var missing []string
	for _, k := range first.Planned {
		if !measured[k] {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		add("%d planned points have no record in any shard (%s)", len(missing), strings.Join(missing[:min(len(missing), 5)], ", "))
	}
	if len(probs) > 0 {
		return nil, &MergeError{probs}
	}
	slices.SortStableFunc(out.DeviceRuns, func(a, b DeviceRun) int { return cmp.Compare(a.Selector, b.Selector) })
	out.Sort()
	return out, nil
}

// deviceKind is what makes two devices' times one population: the name and
// the arch.
func deviceKind(d *Document) string {
	if d.Device == nil {
		return "no device"
	}
	return d.Device.Name + " (" + d.Device.Arch + ")"
}

// sweepCommand is a shard's command without what differs between the
// shards of one sweep: --shard, --json and --device and their values.
func sweepCommand(cmd []string) []string {
	var out []string
	for i := 0; i < len(cmd); i++ {
		a := strings.TrimLeft(cmd[i], "-")
		name, _, hasValue := strings.Cut(a, "=")
		if cmd[i] != a && (name == "shard" || name == "json" || name == "device") {
			if !hasValue {
				i++
			}
			continue
		}
		out = append(out, cmd[i])
	}
	return out
}
