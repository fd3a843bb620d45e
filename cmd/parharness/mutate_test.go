package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parharness/parharness/mutate"
)

func TestMutateUsageErrors(t *testing.T) {
	for _, c := range [][]string{
		{"mutate"},
		{"mutate", "nosuch"},
		{"mutate", "build"},
		{"mutate", "run"},
		{"mutate", "run", "--mutants", "x", "--resume"},
		{"mutate", "run", "--mutants", "x", "--jobs", "0"},
		{"mutate", "list", "--root", "../..", "--operators", "nosuch"},
		{"mutate", "list", "--root", "../..", "--targets", "sm_80"},
		{"mutate", "list", "--root", "../..", "--sources", "nothing/*.hip"},
		{"mutate", "list", "--root", "../..", "--per-op-file", "-1"},
		{"mutate", "report"},
		{"mutate", "report", "a.json", "b.json"},
	} {
		t.Run(strings.Join(c, " "), func(t *testing.T) {
			code, _, stderr := run(t, c...)
			if code != ExitUsage || stderr == "" {
				t.Errorf("exit %d, stderr %q; want %d with a message", code, stderr, ExitUsage)
			}
		})
	}
}

// TestMutateListDefault: the default selection over the real sources is
// a run of 50 to 400 mutants (about 28 per kernel source and header: one
// device call runs 200 in about 210 s on the H200), every one in a gated
// module.
func TestMutateListDefault(t *testing.T) {
	code, out, stderr := run(t, "mutate", "list", "--root", "../..")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	m := regexp.MustCompile(`(?m)^(\d+) mutants: `).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no count line in:\n%s", out)
	}
	n, _ := strconv.Atoi(m[1])
	if n < 50 || n > 400 {
		t.Errorf("%d mutants by default, want 50..400", n)
	}
	if strings.Contains(out, "families/basics/") {
		t.Error("the default list mutates families/basics, which --exclude leaves out by default")
	}
	if strings.Contains(out, "pq_gemm_dec_memonly_m8 (kernel)") {
		t.Error("the attribution kernel's own body is mutated: no gate runs it")
	}
}

func TestMutateOperators(t *testing.T) {
	code, out, _ := run(t, "mutate", "operators")
	if code != ExitOK || !strings.Contains(out, strconv.Itoa(len(mutate.Operators))+" operators") || len(mutate.Operators) < 20 {
		t.Errorf("exit %d, %d operators:\n%s", code, len(mutate.Operators), out)
	}
}

func TestMutateRegistry(t *testing.T) {
	r := mutateRegistry()
	for mod, fam := range map[string]string{"gemm": "gemm", "producers": "producers", "e4m3": "e4m3", "skinny": "skinny", "int5": "int5"} {
		if r.ModuleFamily[mod] != fam {
			t.Errorf("module %s: family %q, want %q", mod, r.ModuleFamily[mod], fam)
		}
	}
	for fam, g := range map[string]string{"gemm": "gemm", "producers": "producers", "e4m3": "e4m3-device-sweep", "skinny": "skinny", "int5": "int5-unpack-sweep"} {
		if !slices.Contains(r.FamilyGates[fam], g) {
			t.Errorf("family %s gates %v, want %s among them", fam, r.FamilyGates[fam], g)
		}
	}
	if slices.Contains(r.FamilyGates["producers"], "producers-semantics") || slices.Contains(r.FamilyGates["e4m3"], "e4m3-go-oracle") ||
		slices.Contains(r.FamilyGates["int5"], "int5-go-unpack") {
		t.Error("a Go-only gate (it reads no kernel) is among the gates run per mutant")
	}
	if _, ok := r.Ungated["pq_gemm_dec_memonly_m8"]; !ok {
		t.Error("the attribution kernel is not marked ungated")
	}
}

// TestMutateRunCLI drives `mutate run` with a fake gate command (a shell
// script that passes the base build and fails any other gemm module,
// unless the module says it survives): exit 0 when every mutant is killed,
// 1 when one survives, and the report is written beside the results.
func TestMutateRunCLI(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "fake-gate")
	os.WriteFile(script, []byte(`#!/bin/sh
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift ;;
    --json) json=$2; shift ;;
  esac
  shift
done
m=$(cat "$build/sm_90a/gemm.ptx")
status=PASS; code=0
case "$m" in base|*survive*) ;; *) status=FAIL; code=1 ;; esac
printf '{"schema":1,"tool":"fake","commit":"x","date":"2026-01-01T00:00:00Z","command":[],"seed":1,"gates":[{"gate":"gemm","status":"%s","reason":"fake verdict","seed":1,"seconds":0},{"gate":"gemm5","status":"%s","reason":"fake verdict","seed":1,"seconds":0}],"records":[]}\n' "$status" "$status" >"$json"
exit $code
`), 0o755)
	old := mutateGateCommand
	mutateGateCommand = func() ([]string, error) { return []string{script}, nil }
	t.Cleanup(func() { mutateGateCommand = old })

	base := filepath.Join(dir, "build")
	os.MkdirAll(filepath.Join(base, "sm_90a"), 0o755)
	os.WriteFile(filepath.Join(base, "sm_90a", "gemm.ptx"), []byte("base"), 0o644)
	mk := func(contents ...string) string {
		mut := filepath.Join(t.TempDir(), "build-mut")
		man := &mutate.Manifest{Targets: []string{"sm_90a"}, Modules: []mutate.Module{{Name: "gemm", Source: "families/gemm/gemm.hip", SHA256: map[string]string{"sm_90a": hexSHA([]byte("base"))}}}}
		for i, c := range contents {
			id := "gemm-m" + strconv.Itoa(i)
			path := id + "/sm_90a/gemm.ptx.gz"
			writeGz(t, filepath.Join(mut, path), []byte(c))
			man.Mutants = append(man.Mutants, mutate.BuiltMutant{Mutant: mutate.Mutant{ID: id, Operator: "lt-to-le", File: "families/gemm/gemm.hip", Line: 1, Func: "f"},
				Build: mutate.BuildOK, Modules: []string{"gemm"}, Objects: map[string]map[string]mutate.Object{"sm_90a": {"gemm": {Path: path, SHA256: hexSHA([]byte(c))}}}})
		}
		if err := mutate.WriteManifest(filepath.Join(mut, mutate.ManifestName), man); err != nil {
			t.Fatal(err)
		}
		return mut
	}
	for _, c := range []struct {
		name     string
		contents []string
		code     int
	}{
		{"all killed", []string{"m1", "m2"}, ExitOK},
		{"one survives", []string{"m1", "survive"}, ExitFail},
	} {
		t.Run(c.name, func(t *testing.T) {
			jsonPath := filepath.Join(t.TempDir(), "mutate.json")
			code, out, stderr := run(t, "mutate", "run", "--mutants", mk(c.contents...), "--build", base, "--jobs", "2", "--json", jsonPath, "--explain", "")
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, c.code, out, stderr)
			}
			md, err := os.ReadFile(strings.TrimSuffix(jsonPath, ".json") + ".md")
			if err != nil || !bytes.Contains(md, []byte("Kill ratio")) {
				t.Errorf("no report beside the results (%v)", err)
			}
			code, rep, stderr := run(t, "mutate", "report", jsonPath, "--explain", "")
			if code != ExitOK || !strings.Contains(rep, "| gemm-m0 |") {
				t.Errorf("mutate report: exit %d %s\n%s", code, stderr, rep)
			}
		})
	}
}

func hexSHA(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func writeGz(t *testing.T, path string, b []byte) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
