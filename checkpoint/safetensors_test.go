package checkpoint

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parharness/parharness/internal/golden"
)

func smallTensors() []*Tensor {
	return []*Tensor{
		NewBits16("w.f16", F16, []int{2, 2}, []uint16{0x3C00, 0xC000, 0x0001, 0x7BFF}),
		NewInt32("w.i32", []int{3}, []int32{1, -1, 0x7FFFFFFF}),
		NewInt16("w.scalar", []int{}, []int16{-2}),
		{Name: "w.empty", DType: F32, Shape: []int{0, 4}, Data: []byte{}},
	}
}

func TestEncodeGolden(t *testing.T) {
	var b bytes.Buffer
	if err := Encode(&b, smallTensors(), map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "small.safetensors"), b.Bytes())
	n := binary.LittleEndian.Uint64(b.Bytes())
	if n%8 != 0 {
		t.Errorf("header length %d is not padded to 8", n)
	}
	golden.Check(t, filepath.Join("testdata", "small.header.golden"), append(bytes.TrimRight(b.Bytes()[8:8+n], " "), '\n'))
}

func TestParseRoundTrip(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "small.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse("small", raw)
	if err != nil {
		t.Fatal(err)
	}
	if f.Metadata["format"] != "pt" {
		t.Errorf("metadata %v", f.Metadata)
	}
	if got := strings.Join(f.Names(), ","); got != "w.f16,w.i32,w.scalar,w.empty" {
		t.Errorf("names in data order: %s", got)
	}
	for _, want := range smallTensors() {
		got, err := f.Tensor(want.Name)
		if err != nil {
			t.Fatal(err)
		}
		if got.DType != want.DType || len(got.Shape) != len(want.Shape) || !bytes.Equal(got.Data, want.Data) {
			t.Errorf("%s: got %s %v %x, want %s %v %x", want.Name, got.DType, got.Shape, got.Data, want.DType, want.Shape, want.Data)
		}
	}
	i32, _ := f.Tensor("w.i32")
	v, err := i32.Int32s()
	if err != nil || v[1] != -1 || v[2] != 0x7FFFFFFF {
		t.Errorf("Int32s = %v, %v", v, err)
	}
	if _, err := i32.Int16s(); err == nil || !strings.Contains(err.Error(), "w.i32: dtype I32, want I16") {
		t.Errorf("typed accessor on the wrong dtype: %v", err)
	}
}

// file builds a safetensors file from a literal header and a data buffer.
func file(header string, data int) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint64(len(header)))
	b.WriteString(header)
	b.Write(make([]byte, data))
	return b.Bytes()
}

func TestParseBadInput(t *testing.T) {
	var good bytes.Buffer
	Encode(&good, smallTensors(), nil)
	cases := []struct {
		name string
		raw  []byte
		want []string
	}{
		{"truncated data", good.Bytes()[:good.Len()-3], []string{"tensor w.i32", "past the end", "truncated"}},
		{"truncated header", good.Bytes()[:20], []string{"header length", "truncated"}},
		{"too short", []byte{1, 2, 3}, []string{"too short"}},
		{"huge header", binary.LittleEndian.AppendUint64(nil, 1<<40), []string{"exceeds"}},
		{"header length past eof", append(binary.LittleEndian.AppendUint64(nil, 1000), '{', '}'), []string{"header length 1000", "truncated"}},
		{"not json", file("nope", 0), []string{"not JSON"}},
		{"array", file("[]", 0), []string{"not a JSON object"}},
		{"overlap", file(`{"a":{"dtype":"I32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"I32","shape":[2],"data_offsets":[4,12]}}`, 12),
			[]string{"tensor b", "overlap tensor a"}},
		{"gap", file(`{"a":{"dtype":"I32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"I32","shape":[1],"data_offsets":[8,12]}}`, 12),
			[]string{"tensor b", "gap of 4 bytes"}},
		{"trailing", file(`{"a":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}}`, 6), []string{"2 bytes after the last tensor"}},
		{"size mismatch", file(`{"a":{"dtype":"F16","shape":[2,2],"data_offsets":[0,6]}}`, 6),
			[]string{"tensor a", "hold 6 bytes", "needs 8"}},
		{"dtype", file(`{"a":{"dtype":"F17","shape":[1],"data_offsets":[0,2]}}`, 2), []string{"tensor a", `unknown dtype "F17"`}},
		{"duplicate", file(`{"a":{"dtype":"I8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"I8","shape":[1],"data_offsets":[1,2]}}`, 2),
			[]string{"tensor a: listed twice"}},
		{"missing field", file(`{"a":{"dtype":"I8","shape":[1]}}`, 1), []string{"tensor a", `missing field "data_offsets"`}},
		{"unknown field", file(`{"a":{"dtype":"I8","shape":[1],"data_offsets":[0,1],"x":1}}`, 1), []string{"tensor a", `unknown field "x"`}},
		{"negative dim", file(`{"a":{"dtype":"I8","shape":[-1],"data_offsets":[0,1]}}`, 1), []string{"tensor a", "negative dimension"}},
		{"offsets reversed", file(`{"a":{"dtype":"I8","shape":[0],"data_offsets":[1,0]}}`, 1), []string{"tensor a", "data_offsets [1 0]"}},
		{"metadata not string", file(`{"__metadata__":{"k":1}}`, 0), []string{`__metadata__["k"]`}},
		{"junk after object", file(`{} x`, 0), []string{"unexpected bytes"}},
	}
	for _, c := range cases {
		_, err := Parse("f", c.raw)
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", c.name, err, w)
			}
		}
	}
}

func TestEncodeRejects(t *testing.T) {
	var b bytes.Buffer
	for _, ts := range [][]*Tensor{
		{{Name: "a", DType: F16, Shape: []int{3}, Data: make([]byte, 4)}},
		{{Name: "a", DType: "X", Shape: []int{1}, Data: make([]byte, 1)}},
		{NewInt32("a", []int{1}, []int32{1}), NewInt32("a", []int{1}, []int32{1})},
		{NewInt32("__metadata__", []int{1}, []int32{1})},
	} {
		if err := Encode(&b, ts, nil); err == nil {
			t.Errorf("Encode accepted %s %s %v", ts[0].Name, ts[0].DType, ts[0].Shape)
		}
	}
}

func TestDirShards(t *testing.T) {
	dir := t.TempDir()
	ts := smallTensors()
	if err := Write(filepath.Join(dir, "model-00001-of-00002.safetensors"), ts[:2], nil); err != nil {
		t.Fatal(err)
	}
	if err := Write(filepath.Join(dir, "model-00002-of-00002.safetensors"), ts[2:], nil); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "config.json"), []byte("{}"), 0o644)
	d, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if got := strings.Join(d.Names(), ","); got != "w.empty,w.f16,w.i32,w.scalar" {
		t.Errorf("names %s", got)
	}
	if x, err := d.Tensor("w.scalar"); err != nil || x.Elements() != 1 {
		t.Errorf("second shard: %v", err)
	}
	if _, err := d.Tensor("nope"); err == nil || !strings.Contains(err.Error(), "nope: missing tensor") {
		t.Errorf("missing: %v", err)
	}
	// The same name in two shards is an error.
	Write(filepath.Join(dir, "extra.safetensors"), ts[:1], nil)
	if _, err := OpenDir(dir); err == nil || !strings.Contains(err.Error(), "w.f16 is in both") {
		t.Errorf("duplicate across shards: %v", err)
	}
	if _, err := OpenDir(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no *.safetensors") {
		t.Errorf("empty dir: %v", err)
	}
}

// NewDir indexes in-memory files as one checkpoint, as OpenDir does files
// on disk, and refuses a tensor held twice, naming both files.
func TestNewDir(t *testing.T) {
	ts := smallTensors()
	parse := func(name string, ts []*Tensor) *File {
		var b bytes.Buffer
		if err := Encode(&b, ts, nil); err != nil {
			t.Fatal(err)
		}
		f, err := Parse(name, b.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	d, err := NewDir("embedded", parse("a", ts[:2]), parse("b", ts[2:]))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if got := strings.Join(d.Names(), ","); got != "w.empty,w.f16,w.i32,w.scalar" {
		t.Errorf("names %s", got)
	}
	if x, err := d.Tensor("w.scalar"); err != nil || x.Elements() != 1 {
		t.Errorf("second file: %v", err)
	}
	if _, err := d.Tensor("nope"); err == nil || !strings.Contains(err.Error(), "not in embedded") {
		t.Errorf("missing: %v", err)
	}
	if _, err := NewDir("embedded", parse("a", ts[:2]), parse("c", ts[:1])); err == nil || !strings.Contains(err.Error(), "w.f16 is in both a and c") {
		t.Errorf("duplicate: %v", err)
	}
}

// FuzzParse: no input makes Parse panic; every error is one line; an
// accepted file's tensors all read back, and re-encoding them parses to the
// same names and bytes.
//
//	go test ./checkpoint -run X -fuzz FuzzParse -fuzztime 60s
func FuzzParse(f *testing.F) {
	var good bytes.Buffer
	if err := Encode(&good, smallTensors(), map[string]string{"format": "pt"}); err != nil {
		f.Fatal(err)
	}
	f.Add(good.Bytes())
	for _, n := range []int{0, 3, 8, 20, good.Len() / 2, good.Len() - 3} {
		f.Add(good.Bytes()[:n])
	}
	f.Add(file(`{"a":{"dtype":"I32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"I32","shape":[2],"data_offsets":[4,12]}}`, 12))
	f.Add(file(`{"__metadata__":{"k":"v"},"a":{"dtype":"BF16","shape":[1,2],"data_offsets":[0,4]}}`, 4))
	f.Fuzz(func(t *testing.T, raw []byte) {
		pf, err := Parse("fuzz", raw)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		var ts []*Tensor
		for _, name := range pf.Names() {
			tn, err := pf.Tensor(name)
			if err != nil {
				t.Fatalf("accepted file, tensor %s unreadable: %v", name, err)
			}
			ts = append(ts, tn)
		}
		var again bytes.Buffer
		if err := Encode(&again, ts, nil); err != nil {
			t.Fatalf("accepted tensors do not re-encode: %v", err)
		}
		pf2, err := Parse("again", again.Bytes())
		if err != nil {
			t.Fatalf("re-encoded file does not parse: %v", err)
		}
		for i, name := range pf2.Names() {
			tn, _ := pf2.Tensor(name)
			if name != ts[i].Name || !bytes.Equal(tn.Data, ts[i].Data) {
				t.Fatalf("tensor %d: %s (%d bytes) re-read as %s (%d bytes)", i, ts[i].Name, len(ts[i].Data), name, len(tn.Data))
			}
		}
	})
}

// Open maps the file: every tensor reads back as written, a tensor's bytes
// outlive Close (they are copied out of the mapping), and an empty or
// truncated file is an error naming it.
func TestOpenMapped(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "m.safetensors")
	ts := smallTensors()
	if err := Write(p, ts, nil); err != nil {
		t.Fatal(err)
	}
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	var got []*Tensor
	for _, want := range ts {
		x, err := f.Tensor(want.Name)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, x)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for i, want := range ts {
		if !bytes.Equal(got[i].Data, want.Data) || got[i].DType != want.DType {
			t.Errorf("%s: read back %v %x, wrote %v %x", want.Name, got[i].DType, got[i].Data, want.DType, want.Data)
		}
	}
	b, _ := os.ReadFile(p)
	for _, tc := range []struct {
		name string
		data []byte
	}{{"empty", nil}, {"truncated", b[:len(b)-1]}} {
		t.Run(tc.name, func(t *testing.T) {
			q := filepath.Join(dir, tc.name+".safetensors")
			os.WriteFile(q, tc.data, 0o644)
			if _, err := Open(q); err == nil || !strings.Contains(err.Error(), q) {
				t.Errorf("Open = %v, want an error naming %s", err, q)
			}
		})
	}
}
