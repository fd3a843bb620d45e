package main

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/parharness/parharness/results"
)

func init() {
	register(command{name: "merge", usage: "merge the shard documents of one sharded sweep: OUT FILE... [--mixed-devices]", run: runMerge})
}

// runMerge merges the documents of `bench2 --shard I/N` runs into one. It
// refuses (exit 1, every reason listed) mixed builds, devices of different
// kinds unless --mixed-devices, a missing, duplicated or partial shard, and
// planned points no shard measured.
func runMerge(args []string, stdout, stderr io.Writer) (int, error) {
	if slices.ContainsFunc(args, isHelpFlag) {
		fmt.Fprintln(stderr, "usage: parharness merge OUT FILE... [--mixed-devices]\n  OUT            the merged document to write\n  FILE...        the shard documents of one sweep (bench2 --shard I/N)\n  --mixed-devices  accept shards measured on devices of different kinds")
		return ExitOK, nil
	}
	mixed := slices.Contains(args, "--mixed-devices") || slices.Contains(args, "-mixed-devices")
	args = slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a == "--mixed-devices" || a == "-mixed-devices" })
	for _, a := range args {
		if len(a) > 1 && a[0] == '-' {
			return ExitUsage, usagef("unknown flag %s (merge takes only --mixed-devices)", a)
		}
	}
	if len(args) < 2 {
		return ExitUsage, usagef("usage: parharness merge OUT FILE... [--mixed-devices]")
	}
	out, files := args[0], args[1:]
	if slices.Contains(files, out) {
		return ExitUsage, usagef("OUT %s is also one of the inputs", out)
	}
	var parts []results.Part
	for _, f := range files {
		d, err := results.Read(f)
		if err != nil {
			return ExitUsage, err
		}
		label := f
		if d.Shard != nil {
			label = "shard " + d.Shard.String()
		}
		parts = append(parts, results.Part{Label: label, Doc: d})
	}
	doc, err := results.Merge(parts, results.MergeOptions{MixedDevices: mixed})
	var me *results.MergeError
	if errors.As(err, &me) {
		for _, p := range me.Problems {
			fmt.Fprintf(stderr, "parharness merge: %s\n", p)
		}
		return ExitFail, fmt.Errorf("%d problems: nothing written", len(me.Problems))
	}
	if err != nil {
		return ExitFail, err
	}
	doc.Command = append([]string{"parharness", "merge"}, args...)
	if err := results.Write(out, doc); err != nil {
		return ExitUsage, fmt.Errorf("writing %s: %v", out, err)
	}
	fmt.Fprintf(stdout, "merged %d shards, %d records of %d planned points into %s\n", len(parts), len(doc.Records), len(doc.Planned), out)
	failed := 0
	for _, r := range doc.Records {
		if r.Failed() {
			failed++
		}
	}
	if failed > 0 {
		return ExitFail, fmt.Errorf("%d merged records failed their output check (written, not timed)", failed)
	}
	return ExitOK, nil
}
