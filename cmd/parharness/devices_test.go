package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/results"
)

// fakeChildren stands in for the per-device child processes: each device
// selector's behaviour writes (or does not write) the document a real child
// would, and the calls are recorded.
type fakeChildren struct {
	mu    sync.Mutex // the children run concurrently
	calls [][]string
	do    map[string]func(ctx context.Context, json string, args []string) (int, string)
}

func (f *fakeChildren) run(ctx context.Context, args []string) (int, string, error) {
	f.mu.Lock()
	f.calls = append(f.calls, args)
	f.mu.Unlock()
	sel := args[slices.Index(args, "--device")+1]
	json := args[slices.Index(args, "--json")+1]
	code, out := f.do[sel](ctx, json, args)
	return code, out, nil
}

func gateDoc(dev string, status string) *results.Document {
	return &results.Document{Schema: results.SchemaVersion, Device: &results.Device{Name: "NVIDIA H200", Arch: "sm_90"},
		Gates: []results.GateRecord{{Gate: "gemm", Status: status}, {Gate: "producers", Status: results.Pass}}}
}

// gate --devices: every device runs at once in its own child; a failing
// card is called out against its twin, a hung one and one that faulted
// without a document are ERROR, and the others still finish.
func TestGateOnDevices(t *testing.T) {
	f := &fakeChildren{do: map[string]func(context.Context, string, []string) (int, string){
		"0": func(_ context.Context, json string, _ []string) (int, string) {
			must(t, results.Write(json, gateDoc("0", results.Pass)))
			return 0, "2 passed"
		},
		"1": func(_ context.Context, json string, _ []string) (int, string) {
			must(t, results.Write(json, gateDoc("1", results.Fail)))
			return 1, "FAIL gemm  38s  qkv decode M=1: rel 3e-2 > 1.5 x floor"
		},
		"2": func(ctx context.Context, _ string, _ []string) (int, string) { <-ctx.Done(); return -1, "" },
		"3": func(context.Context, string, []string) (int, string) { return 2, "parharness gate: cuInit failed" },
	}}
	saved := childRunner
	defer func() { childRunner = saved }()
	childRunner = f.run
	out := filepath.Join(t.TempDir(), "gate.json")
	var stdout bytes.Buffer
	code, err := gateOnDevices([]string{"--quick", "--devices", "0,1,2,3", "--json", out}, "none", "0,1,2,3", out, "../../build", 200e6, &stdout)
	if err != nil || code != ExitFail {
		t.Fatalf("exit %d, err %v; want 1", code, err)
	}
	if len(f.calls) != 4 {
		t.Fatalf("%d children, want 4", len(f.calls))
	}
	for _, c := range f.calls {
		if slices.Contains(c, "--devices") || strings.Count(strings.Join(c, " "), "--json") != 1 {
			t.Errorf("child args %v: --devices must not reach a child, and it gets its own --json", c)
		}
	}
	doc, err := results.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	var st []string
	for _, r := range doc.DeviceRuns {
		st = append(st, r.Selector+"="+r.Status)
	}
	if want := "0=PASS 1=FAIL 2=ERROR 3=ERROR"; strings.Join(st, " ") != want {
		t.Errorf("device runs %v, want %s", st, want)
	}
	if o := stdout.String(); !strings.Contains(o, "TWIN gate gemm is PASS on device 0 and FAIL on device 1") {
		t.Errorf("the failing twin is not called out:\n%s", o)
	}
}

// bench2 --devices: device k runs --shard k/n; the parts merge into one
// document whose records name their device; a device that fails leaves a
// partial document with what the others measured.
func TestBenchOnDevices(t *testing.T) {
	planned := []string{results.PointKey("dec", "qkv", 1), results.PointKey("dec", "qkv", 8)}
	part := func(i int, failed bool) func(context.Context, string, []string) (int, string) {
		return func(_ context.Context, json string, args []string) (int, string) {
			if failed {
				return 2, "parharness bench2: a bench needs a GPU: device 1 is out of range"
			}
			if got := args[slices.Index(args, "--shard")+1]; got != fmt.Sprintf("%d/2", i) {
				t.Errorf("device %d ran shard %s", i, got)
			}
			d := &results.Document{Schema: results.SchemaVersion, Device: &results.Device{Name: "NVIDIA H200", Arch: "sm_90"},
				Shard: &results.Shard{Index: i, Count: 2}, Planned: planned,
				Records: []results.Record{{Suite: "dec", Kernel: "k", Variant: "S4", Shape: "qkv", M: []int{1, 8}[i], Regime: results.Cold,
					SamplesUS: []float64{1, 1, 1, 1}, Check: &results.Check{Status: results.CheckPass, Copies: []int{0}}}}}
			must(t, results.Write(json, d))
			return 0, ""
		}
	}
	saved := childRunner
	defer func() { childRunner = saved }()
	for _, failing := range []bool{false, true} {
		f := &fakeChildren{do: map[string]func(context.Context, string, []string) (int, string){"0": part(0, false), "1": part(1, failing)}}
		childRunner = f.run
		out := filepath.Join(t.TempDir(), "dec.json")
		var stdout bytes.Buffer
		code, err := benchOnDevices([]string{"dec", "--m", "1,8", "--devices", "0,1", "--json", out}, "none", "0,1", out, 200e6, &stdout, nil)
		if err != nil {
			t.Fatal(err)
		}
		doc, rerr := results.Read(out)
		if !failing {
			if code != ExitOK || rerr != nil || len(doc.Records) != 2 || doc.Records[0].Device != "0" || doc.Records[1].Device != "1" || doc.Partial {
				t.Fatalf("exit %d, read %v, doc %+v", code, rerr, doc)
			}
			continue
		}
		if code != ExitFail || rerr != nil || !doc.Partial || len(doc.Records) != 1 || doc.DeviceRuns[1].Status != results.Error {
			t.Errorf("a failing device: exit %d, read %v, partial %v, %d records", code, rerr, doc != nil && doc.Partial, len(doc.Records))
		}
	}
}

func TestDevicesList(t *testing.T) {
	saved := listDevices
	defer func() { listDevices = saved }()
	listDevices = func(string) ([]gpu.Info, error) { return []gpu.Info{{Name: "a"}, {Name: "b"}}, nil }
	if got, err := devicesList("cuda", "all"); err != nil || strings.Join(got, ",") != "0,1" {
		t.Errorf("all: %v %v", got, err)
	}
	if got, err := devicesList("cuda", "1,0000:03:00.0"); err != nil || len(got) != 2 {
		t.Errorf("list: %v %v", got, err)
	}
	for _, bad := range []string{"0,0", "0,,1"} {
		if _, err := devicesList("cuda", bad); err == nil {
			t.Errorf("--devices %q accepted", bad)
		}
	}
	for _, c := range []struct{ in, want string }{{"1/4", "1/4"}, {"0/1", "0/1"}} {
		if s, err := parseShard(c.in); err != nil || s.String() != c.want {
			t.Errorf("parseShard(%q) = %v, %v", c.in, s, err)
		}
	}
	for _, bad := range []string{"4/4", "-1/4", "1", "a/b", "0/0"} {
		if _, err := parseShard(bad); err == nil {
			t.Errorf("--shard %q accepted", bad)
		}
	}
	if got := withoutFlag([]string{"--m", "1", "--devices", "all", "--json=x", "--reps", "4"}, "devices"); strings.Join(got, " ") != "--m 1 --json=x --reps 4" {
		t.Errorf("withoutFlag: %v", got)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
