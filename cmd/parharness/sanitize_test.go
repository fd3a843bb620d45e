package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/results"
)

func readSample(t *testing.T, name string) SanitizerReport {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "sanitizer", name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	return ParseSanitizer(string(b))
}

// The sanitizer's verdict: PASS only with a summary and nothing found,
// FAIL on a reported error or hazard (warnings included) with the report's
// first lines, ERROR without a summary or when the tool could not start.
func TestSanitizerRecord(t *testing.T) {
	for _, c := range []struct {
		sample, tool string
		exit         int
		want         string
		reason       string
	}{
		{"memcheck-clean", "memcheck", 0, gates.Pass, ""},
		{"memcheck-clean", "memcheck", 1, gates.Pass, ""}, // a gate failed: its own record says so
		{"memcheck-oob", "memcheck", sanitizerErrorExit, gates.Fail, "2 errors: Invalid __global__ write"},
		{"racecheck-clean", "racecheck", 0, gates.Pass, ""},
		{"racecheck-hazards", "racecheck", sanitizerErrorExit, gates.Fail, "2 hazards displayed (1 errors, 1 warnings): Error: Race reported"},
		{"synccheck-divergent", "synccheck", sanitizerErrorExit, gates.Fail, "Barrier error detected"},
		{"initcheck-uninit", "initcheck", sanitizerErrorExit, gates.Fail, "Uninitialized __global__ memory read"},
		{"killed", "racecheck", 137, gates.Error, "printed no summary (exit 137)"},
	} {
		t.Run(fmt.Sprintf("%s-exit%d", c.sample, c.exit), func(t *testing.T) {
			r := sanitizerRecord(c.tool, readSample(t, c.sample), c.exit, nil, 1)
			if r.Status != c.want || !strings.Contains(r.Reason, c.reason) || r.Gate != "sanitizer-"+c.tool {
				t.Errorf("%s %q, want %s containing %q", r.Status, r.Reason, c.want, c.reason)
			}
			if r.Status == gates.Fail && len(r.Failures) == 0 && c.sample != "" {
				t.Error("a FAIL without the tool's report lines")
			}
		})
	}
	t.Run("exit-code-without-count", func(t *testing.T) {
		r := sanitizerRecord("memcheck", readSample(t, "memcheck-clean"), sanitizerErrorExit, nil, 1)
		if r.Status != gates.Fail {
			t.Errorf("the tool's error exit code with a clean summary: %s", r.Status)
		}
	})
}

// Without the tool, or without an NVIDIA device, sanitize SKIPs saying why.
func TestSanitizeSkips(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var out, errb bytes.Buffer
	code, err := runSanitize([]string{"--tool", "memcheck", "--sanitizer", "", "--backend", "none"}, &out, &errb)
	if err != nil || code != ExitOK {
		t.Fatalf("exit %d, %v", code, err)
	}
	if !strings.Contains(out.String(), "SKIP") {
		t.Errorf("output %q: want a SKIP", out.String())
	}
	out.Reset()
	code, _ = runSanitize([]string{"--sanitizer", "/bin/true", "--backend", "none"}, &out, &errb)
	if code != ExitOK || !strings.Contains(out.String(), "SKIP") || !strings.Contains(out.String(), "no device") {
		t.Errorf("exit %d, output %q: want SKIP for no device", code, out.String())
	}
	if code, err := runSanitize([]string{"--tool", "helgrind"}, &out, &errb); code != ExitUsage || err == nil {
		t.Errorf("unknown tool: exit %d, %v", code, err)
	}
}

// End to end with a stand-in for compute-sanitizer: a script that sets the
// injection variable the real tool sets, runs the program it is given
// (this test binary, re-entering Main as `parharness gate`) and prints a
// racecheck summary. The gates run (they do not refuse under injection),
// their records and the sanitizer's land in one document, and a reported
// hazard fails the run.
func TestSanitizeEndToEnd(t *testing.T) {
	if args := os.Getenv("PARHARNESS_SANITIZE_CHILD"); args != "" {
		os.Exit(Main(strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	build, err := filepath.Abs(filepath.Join("..", "..", "build"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(build, "sm_90a")); err != nil {
		t.Skip("no built kernels (make kernels):", err)
	}
	for _, c := range []struct {
		name, summary string
		code          int
		status        string
	}{
		{"clean", "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)", ExitOK, gates.Pass},
		{"hazard", "========= Error: Race reported between Write access at k+0x10\\n=========     and Read access at k+0x20 [4 hazards]\\n========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)", ExitFail, gates.Fail},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			script := filepath.Join(dir, "compute-sanitizer")
			// $1..$4 are --tool T --error-exitcode N; $5 is the binary.
			body := "#!/bin/sh\nshift 4\nprog=\"$1\"; shift\nargs=\"\"\nfor a in \"$@\"; do if [ -z \"$args\" ]; then args=\"$a\"; else args=\"$args$(printf '\\037')$a\"; fi; done\n" +
				"CUDA_INJECTION64_PATH=/opt/fake/libsanitizer.so PARHARNESS_SANITIZE_CHILD=\"$args\" \"$prog\" -test.run='^TestSanitizeEndToEnd$'\nrc=$?\nprintf '" + c.summary + "\\n'\nexit $rc\n"
			if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
			oldDev, oldSelf := sanitizeDevice, sanitizeSelf
			defer func() { sanitizeDevice, sanitizeSelf = oldDev, oldSelf }()
			sanitizeDevice = func(string) (gpu.Info, error) { return gpu.Info{Backend: "cuda", Name: "stand-in"}, nil }
			sanitizeSelf = func() (string, error) { return self, nil }
			jsonPath := filepath.Join(dir, "san.json")
			var out, errb bytes.Buffer
			code, err := runSanitize([]string{"--tool", "racecheck", "--sanitizer", script, "--json", jsonPath, "--",
				"--only", "^sync-inventory$", "--backend", "none", "--build", build}, &out, &errb)
			if err != nil {
				t.Fatal(err)
			}
			doc, err := results.Read(jsonPath)
			if err != nil {
				t.Fatalf("%v\n%s\n%s", err, out.String(), errb.String())
			}
			got := map[string]string{}
			for _, g := range doc.Gates {
				got[g.Gate] = g.Status
			}
			if got["sync-inventory"] != gates.Pass || got["sanitizer-racecheck"] != c.status || code != c.code {
				t.Errorf("exit %d, gates %v; want exit %d, sync-inventory PASS and the sanitizer %s\n%s\n%s", code, got, c.code, c.status, out.String(), errb.String())
			}
		})
	}
}

func TestSanitizeGateArgs(t *testing.T) {
	for _, c := range []struct {
		user []string
		want string
	}{
		{nil, "gate --quick --require-device --json J"},
		{[]string{"--full", "--only", "x"}, "gate --require-device --json J --full --only x"},
		{[]string{"--quick", "--require-device", "--fail-fast"}, "gate --json J --quick --require-device --fail-fast"},
	} {
		if got := strings.Join(sanitizeGateArgs(c.user, "J"), " "); got != c.want {
			t.Errorf("%v: %q, want %q", c.user, got, c.want)
		}
	}
}
