package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/internal/golden"
)

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestUsageErrors(t *testing.T) {
	cases := [][]string{
		{},
		{"nosuchcommand"},
		{"gate", "--quick", "--full"},
		{"gate", "--only", "("},
		{"gate", "--only", "^no-such-gate$"},
		{"gate", "--nosuchflag"},
		{"bench2"},
		{"bench2", "nosuchsuite"},
		{"selftest"},
		{"gate", "--backend", "foo"},
		{"gate", "--build", "/nonexistent"},
		{"gate", "--watchdog", "-1s"},
		{"gate", "--checkpoint", "/nonexistent"},
		{"gate", "--json", "/nonexistent-dir/quick.json"},
		{"gate", "--devices", "0,0"},
		{"gate", "--devices", "0", "--device", "1"},
		{"bench2", "dec", "--reps", "3"},
		{"bench2", "dec", "--m", "1,1"},
		{"bench2", "dec", "--variants", "pld"},
		{"bench2", "grpq", "--variants", "group-hot,"},
		{"bench2", "dec", "--m", "0"},
		{"bench2", "dec", "--shard", "4/4"},
		{"bench2", "dec", "--devices", "0", "--shard", "0/2"},
		{"bench2", "dec", "--warmup", "-5ms"},
		{"bench2", "dec", "--scrub", "flush"},
		{"bench2", "dec", "--max-grid", "-1"},
		{"bench2", "dec", "--launch-once", "--json", "x.json"},
		{"bench2", "dec", "--launch-once", "--devices", "all"},
		{"bench2", "dec", "--launch-once", "--benchfmt"},
		{"doctor", "--step-timeout", "0s"},
		{"diff", "a.json", "b.json", "--fail-on-slower", "NaN"},
		{"diff", "a.json", "b.json", "--noise", "-1"},
		{"diff", "a.json", "b.json", "--metric-noise", "-5"},
		{"diff", "a.json"},
		{"merge", "out.json"},
		{"merge", "--frobnicate", "a.json", "b.json"},
	}
	for _, c := range cases {
		code, _, stderr := run(t, c...)
		if code != ExitUsage {
			t.Errorf("%v: exit %d, want %d (stderr %q)", c, code, ExitUsage, stderr)
		}
		if stderr == "" {
			t.Errorf("%v: no message on stderr", c)
		}
	}
}

// TestGateWithoutDevice runs the decode gate and a device gate with the
// "none" backend: the CPU gate passes, the device gate SKIPs with a reason,
// the exit code is 0, and --require-device turns the SKIP into a failure.
func TestGateWithoutDevice(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "r.json")
	code, out, stderr := run(t, "gate", "--backend", "none", "--only", "^(e4m3-decode|e4m3-device-sweep)$", "--json", js, "--seed", "42")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(out, "PASS e4m3-decode") || !strings.Contains(out, "SKIP e4m3-device-sweep") {
		t.Fatalf("unexpected output:\n%s", out)
	}
	if !strings.Contains(out, "1 passed, 0 failed, 1 skipped") {
		t.Fatalf("no summary line:\n%s", out)
	}
	var doc map[string]any
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["seed"].(float64) != 42 {
		t.Errorf("seed not recorded: %v", doc["seed"])
	}
	gs := doc["gates"].([]any)
	skip := gs[1].(map[string]any)
	if skip["status"] != "SKIP" || !strings.Contains(skip["reason"].(string), "no GPU device") {
		t.Errorf("skip record: %v", skip)
	}
	// Under --require-device a device gate that cannot run is ERROR (could
	// not run) and the command exits 2, not 1 (a wrong result).
	code, out, _ = run(t, "gate", "--backend", "none", "--only", "^e4m3-device-sweep$", "--require-device")
	if code != ExitUsage || !strings.Contains(out, "ERROR e4m3-device-sweep") || !strings.Contains(out, "1 could not run (ERROR)") {
		t.Errorf("--require-device: exit %d\n%s", code, out)
	}
}

func TestList(t *testing.T) {
	code, out, _ := run(t, "list")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"e4m3-go-oracle", "e4m3_sweep", "e4m3/sweep", "harness-selftest"} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q", want)
		}
	}
}

func TestBenchNeedsDevice(t *testing.T) {
	code, _, stderr := run(t, "bench2", "copy", "--backend", "none")
	if code != ExitUsage || !strings.Contains(stderr, "needs a GPU") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestWatchdogExits proves the watchdog ends a process stuck in a device
// wait: a child process (this test binary) blocks in a guarded call that
// never returns and must exit 1 with the watchdog's line.
func TestWatchdogExits(t *testing.T) {
	if os.Getenv("PARHARNESS_WATCHDOG_CHILD") == "1" {
		hangUnderWatchdog()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestWatchdogExits$")
	cmd.Env = append(os.Environ(), "PARHARNESS_WATCHDOG_CHILD=1")
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 {
		t.Fatalf("child exit: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "watchdog: test wait did not return within 200ms") || !strings.Contains(string(out), "hang handler ran") {
		t.Fatalf("child output:\n%s", out)
	}
}

// TestReadmeNamesEveryGate keeps the README's gate table and the registry
// equal both ways: every registered gate has a row, every row a gate.
func TestReadmeNamesEveryGate(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "## What each gate proves")
	if !ok {
		t.Fatal("README.md has no section 'What each gate proves'")
	}
	table, _, _ = strings.Cut(table, "\n## ")
	rows := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9-]+)` \\|").FindAllStringSubmatch(table, -1) {
		rows[m[1]] = true
	}
	for _, g := range gates.All() {
		if !rows[g.Name] {
			t.Errorf("README.md's gate table has no row for gate %s", g.Name)
		}
		delete(rows, g.Name)
	}
	for name := range rows {
		t.Errorf("README.md's gate table has a row for %s, which is not a registered gate", name)
	}
}

// --full names the full suite (it once printed "quick": the suite mask was
// compared with Full exactly).
func TestGateFullNamesItsSuite(t *testing.T) {
	_, _, errOut := run(t, "gate", "--full", "--backend", "none", "--only", "^no-such-gate$")
	if !strings.Contains(errOut, "in the full suite") {
		t.Errorf("gate --full: %q", errOut)
	}
}

// SIGINT and SIGTERM run the save function (what was measured, written
// partial) and exit 130 and 143.
func TestInterruptSavesAndExits(t *testing.T) {
	if f := os.Getenv("PARHARNESS_SIGNAL_CHILD"); f != "" {
		onInterrupt(os.Stderr, func(reason string) { os.WriteFile(f, []byte(reason), 0o644) })
		fmt.Println("ready")
		time.Sleep(time.Minute)
		return
	}
	for _, c := range []struct {
		sig  syscall.Signal
		code int
		name string
	}{{syscall.SIGINT, 130, "SIGINT"}, {syscall.SIGTERM, 143, "SIGTERM"}} {
		t.Run(c.name, func(t *testing.T) {
			saved := filepath.Join(t.TempDir(), "saved")
			cmd := exec.Command(os.Args[0], "-test.run", "^TestInterruptSavesAndExits$")
			cmd.Env = append(os.Environ(), "PARHARNESS_SIGNAL_CHILD="+saved)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 6)
			if _, err := io.ReadFull(stdout, buf); err != nil {
				t.Fatal(err)
			}
			cmd.Process.Signal(c.sig)
			err = cmd.Wait()
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != c.code {
				t.Fatalf("exit %v, want %d", err, c.code)
			}
			if b, _ := os.ReadFile(saved); string(b) != "interrupted by "+c.name {
				t.Errorf("saved %q", b)
			}
		})
	}
}

// Help asked for goes to stdout and exits 0: the top-level usage, a
// command's flags (help CMD, CMD -h), a suite's; version too.
func TestHelpAndVersion(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"help"}, "usage: parharness COMMAND"},
		{[]string{"--help"}, "usage: parharness COMMAND"},
		{[]string{"help", "gate"}, "-require-device"},
		{[]string{"gate", "-h"}, "-require-device"},
		{[]string{"bench2", "-h"}, "dec"},
		{[]string{"help", "bench2", "dec"}, "-shard"},
		{[]string{"merge", "-h"}, "merge the shard documents"},
		{[]string{"version"}, "go         go1"},
	} {
		code, out, errOut := run(t, c.args...)
		if code != ExitOK || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d, stdout lacks %q (stdout %q, stderr %q)", c.args, code, c.want, out, errOut)
		}
	}
	if code, _, _ := run(t, "help", "nosuchcommand"); code != ExitUsage {
		t.Errorf("help of an unknown command: exit %d", code)
	}
}

// An unknown --variants name is one line that lists the suite's variants,
// exit 2, before any device is opened (the "none" backend would fail later
// with another message); a listed name passes the check.
func TestBench2UnknownVariant(t *testing.T) {
	code, out, stderr := run(t, "bench2", "dec", "--variants", "pdl,pld", "--backend", "none")
	if code != ExitUsage || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	want := `parharness bench2: --variants: unknown variant "pld" for suite dec; its variants: S1..S64, pdl, ws, dec, v1, memonly, wgS1..wgS64, wgpdl, ksS1..ksS16, kspdl, ks2S1..ks2S16, ks2pdl, wkS1..wkS4, wkpdl, wk1S1..wk1S4, wk1pdl, wksS1..wksS4, wkspdl, wpS2, wppdl, wp3S3, wp3pdl, wpsS3, wpspdl, cublaslt, hipblaslt, read` + "\n"
	if stderr != want {
		t.Errorf("stderr\n%q\nwant\n%q", stderr, want)
	}
	code, _, stderr = run(t, "bench2", "dec", "--variants", "pdl,v1", "--backend", "none")
	if code != ExitUsage || !strings.Contains(stderr, "a bench needs a GPU") {
		t.Errorf("known variants: exit %d, stderr %q: want the no-device error, not a variant error", code, stderr)
	}
}

// help bench2 SUITE prints the suite's doc, axes, variants and flags.
func TestHelpBench2Suite(t *testing.T) {
	for _, s := range []string{"dec", "grpq", "copy"} {
		t.Run(s, func(t *testing.T) {
			code, out, _ := run(t, "help", "bench2", s)
			if code != ExitOK {
				t.Fatalf("exit %d", code)
			}
			if s == "dec" {
				golden.Check(t, filepath.Join("testdata", "help-bench2-dec.txt"), []byte(out))
			}
			for _, w := range []string{"axes: ", "variants (--variants", "-variants string"} {
				if !strings.Contains(out, w) {
					t.Errorf("lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// TestCPUProfile: --cpuprofile writes a pprof file (gzip-framed) for a
// gate run, and an unwritable path or a multi-device run is a usage error
// named on stderr before any device work.
func TestCPUProfile(t *testing.T) {
	t.Run("written", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "cpu.pprof")
		code, _, stderr := run(t, "gate", "--backend", "none", "--only", "^e4m3-decode$", "--cpuprofile", p)
		if code != ExitOK {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
			t.Fatalf("%s is not a gzip-framed pprof profile (%d bytes)", p, len(b))
		}
	})
	for _, c := range []struct {
		name string
		args []string
	}{
		{"gate-unwritable", []string{"gate", "--backend", "none", "--cpuprofile", "/nonexistent-dir/cpu.pprof"}},
		{"bench2-unwritable", []string{"bench2", "copy", "--backend", "none", "--cpuprofile", "/nonexistent-dir/cpu.pprof"}},
		{"gate-devices", []string{"gate", "--devices", "all", "--cpuprofile", "cpu.pprof"}},
		{"bench2-devices", []string{"bench2", "dec", "--devices", "all", "--cpuprofile", "cpu.pprof"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := run(t, c.args...)
			if code != ExitUsage || !strings.Contains(stderr, "--cpuprofile") {
				t.Errorf("%v: exit %d, stderr %q; want exit %d naming --cpuprofile", c.args, code, stderr, ExitUsage)
			}
		})
	}
}
