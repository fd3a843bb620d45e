package shapes

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/parharness/parharness/internal/golden"
)

// dump is what the golden files hold: the canonical form and the derived
// figures of every linear, or the error.
func dump(s *Set, err error) []byte {
	var b bytes.Buffer
	if err != nil {
		fmt.Fprintf(&b, "error: %v\n", err)
		return b.Bytes()
	}
	Format(&b, s)
	fmt.Fprintf(&b, "--\nset %s: model %s tp %d\n", s.Name, s.Model, s.TP)
	for _, l := range s.Linears {
		fmt.Fprintf(&b, "%-14s %-4s K=%-5d N=%-5d P=%d G=%d widths=%v line %d\n", l.Name, l.Kind, l.K, l.N(), l.P(), l.Groups(), l.Widths(), l.Line)
	}
	return b.Bytes()
}

func TestGolden(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if len(files) == 0 {
		t.Fatal("no testdata")
	}
	for _, f := range files {
		s, err := Load(f)
		if strings.HasPrefix(filepath.Base(f), "bad-") != (err != nil) {
			t.Errorf("%s: err = %v", f, err)
		}
		golden.Check(t, strings.TrimSuffix(f, ".txt")+".golden", dump(s, err))
	}
}

func TestBuiltinGolden(t *testing.T) {
	var b bytes.Buffer
	for _, name := range Builtins() {
		s, err := Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(dump(s, nil))
		b.WriteString("\n")
	}
	golden.Check(t, filepath.Join("testdata", "builtin.golden"), b.Bytes())
}

// The embedded tables hold the deployed Qwen3.8-27B geometry (docs/design.md).
func TestBuiltinContents(t *testing.T) {
	if got := strings.Join(Builtins(), " "); got != "qwen38-27b-tp1 qwen38-27b-tp2" {
		t.Fatalf("builtins: %s", got)
	}
	tp2, tp1 := MustBuiltin("qwen38-27b-tp2"), MustBuiltin("qwen38-27b-tp1")
	want := map[string]struct {
		k, n, p int
		w4a8    bool
	}{
		"attn_qkv": {5120, 7168, 3, true}, "attn_o": {3072, 5120, 1, true},
		"gdn_in_qkvz": {5120, 8192, 2, true}, "gdn_in_ba": {5120, 48, 2, false},
		"gdn_out": {3072, 5120, 1, true}, "mlp_gate_up": {5120, 17408, 2, true},
		"mlp_down": {8704, 5120, 1, true},
	}
	if len(tp2.Linears) != len(want) || len(tp1.Linears) != len(want) {
		t.Fatalf("%d and %d linears, want %d", len(tp2.Linears), len(tp1.Linears), len(want))
	}
	for name, w := range want {
		l, ok := tp2.Linear(name)
		if !ok || l.K != w.k || l.N() != w.n || l.P() != w.p || l.IsW4A8() != w.w4a8 {
			t.Errorf("tp2 %s: K=%d N=%d P=%d w4a8=%v, want %+v", name, l.K, l.N(), l.P(), l.IsW4A8(), w)
		}
		l1, _ := tp1.Linear(name)
		rowParallel := name == "attn_o" || name == "gdn_out" || name == "mlp_down"
		wantK, wantN := l.K, 2*l.N()
		if rowParallel {
			wantK, wantN = 2*l.K, l.N()
		}
		if l1.K != wantK || l1.N() != wantN || l1.P() != l.P() || l1.Kind != l.Kind {
			t.Errorf("tp1 %s: K=%d N=%d, want K=%d N=%d", name, l1.K, l1.N(), wantK, wantN)
		}
		for i, p := range l.Parts {
			if p.Proj == "" || p.Proj != l1.Parts[i].Proj {
				t.Errorf("%s partition %d: proj %q vs %q", name, i, p.Proj, l1.Parts[i].Proj)
			}
		}
	}
	if d, _ := tp2.Linear("mlp_down"); d.Groups() != 68 {
		t.Errorf("down G = %d, want 68", d.Groups())
	}
	if q, _ := tp2.Linear("gdn_in_qkvz"); fmt.Sprint(q.Parts[0].Blocks) != "[1024 1024 3072]" {
		t.Errorf("in_proj_qkv blocks %v", q.Parts[0].Blocks)
	}
	if len(tp2.W4A8()) != 6 {
		t.Errorf("%d W4A8 linears, want 6", len(tp2.W4A8()))
	}
	for _, s := range []*Set{tp1, tp2} {
		if fmt.Sprint(s.Ladder("decode")) != "[1 2 5 8 16 40 48 64 128]" || fmt.Sprint(s.Ladder("prefill")) != "[200 512 1024 2048 4096 8192]" {
			t.Errorf("%s ladders: %v %v", s.Name, s.Ladder("decode"), s.Ladder("prefill"))
		}
	}
	if _, err := Builtin("nope"); err == nil || !strings.Contains(err.Error(), "qwen38-27b-tp2") {
		t.Errorf("unknown builtin: %v", err)
	}
}

func TestErrorPosition(t *testing.T) {
	_, err := Parse("x.txt", strings.NewReader("model m\ntp 1\n\nlinear a K=128 N=8+51x\n"))
	var e *Error
	if !errors.As(err, &e) || e.Line != 4 || e.Field != "N" {
		t.Fatalf("error %v", err)
	}
	if want := `x.txt:4: N: a: partition 2: "51x" is not a positive integer`; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

var errForm = regexp.MustCompile(`^[^:]+(:[0-9]+)?: [A-Za-z0-9_]+: .+`)

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.txt"))
	files = append(files, "qwen38-27b-tp1.txt", "qwen38-27b-tp2.txt")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := Parse("fuzz.txt", bytes.NewReader(in))
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || !errForm.MatchString(err.Error()) || !strings.HasPrefix(err.Error(), "fuzz.txt") {
				t.Fatalf("error not in file:line: field: problem form: %q", err)
			}
			return
		}
		// Valid input: the canonical form parses to the same set.
		var b1 bytes.Buffer
		Format(&b1, s)
		s2, err := Parse("fuzz.txt", bytes.NewReader(b1.Bytes()))
		if err != nil {
			t.Fatalf("canonical form does not parse: %v\n%s", err, b1.Bytes())
		}
		var b2 bytes.Buffer
		Format(&b2, s2)
		if !bytes.Equal(b1.Bytes(), b2.Bytes()) {
			t.Fatalf("Format is not stable:\n%s\nvs\n%s", b1.Bytes(), b2.Bytes())
		}
		for _, l := range s.Linears {
			if l.N() <= 0 || l.K <= 0 || l.P() == 0 {
				t.Fatalf("bad linear accepted: %+v", l)
			}
		}
	})
}

func TestBuiltinProducerShapes(t *testing.T) {
	tp1, tp2 := MustBuiltin("qwen38-27b-tp1").ProducerShapes(), MustBuiltin("qwen38-27b-tp2").ProducerShapes()
	t.Run("one set is its ProducerShapes", func(t *testing.T) {
		if got := BuiltinProducerShapes("qwen38-27b-tp2"); !slices.Equal(got, tp2) {
			t.Errorf("got %v, want %v", got, tp2)
		}
	})
	t.Run("sets in order, each pair once", func(t *testing.T) {
		want := slices.Clone(tp2)
		for _, kp := range tp1 {
			if !slices.Contains(want, kp) {
				want = append(want, kp)
			}
		}
		if got := BuiltinProducerShapes("qwen38-27b-tp2", "qwen38-27b-tp1"); !slices.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})
	t.Run("unknown name panics", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Error("no panic for an unknown set")
			}
		}()
		BuiltinProducerShapes("no-such-set")
	})
}
