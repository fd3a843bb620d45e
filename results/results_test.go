package results

import (
	"bytes"
	"compress/gzip"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/parharness/parharness/internal/golden"
)

// samples returns n deterministic per-call times around center, each
// within ±rel of it (a fixed pattern, not a random generator, so the golden
// files never depend on one); phase shifts the pattern.
func samples(n int, center, rel float64, phase int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		k := float64((i*7+phase*3)%11-5) / 5 // in [-1, 1]
		xs[i] = math.Round(center*(1+rel*k)*1000) / 1000
	}
	return xs
}

func record(suite, kernel, shape string, m int, variant, regime string, bytes int64, xs []float64) Record {
	r := Record{Suite: suite, Kernel: kernel, Shape: shape, M: m, Variant: variant, Regime: regime, Bytes: bytes, SamplesUS: xs}
	if err := r.Derive(); err != nil {
		panic(err)
	}
	return r
}

// synthetic is a small but complete document, records deliberately out of order.
func synthetic() *Document {
	doc := &Document{
		Schema:  SchemaVersion,
		Tool:    "parharness v0.1.0-test",
		Commit:  "0123456789abcdef0123456789abcdef01234567",
		Date:    "2026-11-30T12:00:00Z",
		Command: []string{"parharness", "bench", "--suite", "decode", "--seed", "42"},
		Device: &Device{
			Backend: "cuda", Name: "NVIDIA H200", Arch: "sm_90", Driver: "575.57.08",
			SMs: 132, ClockMHz: 1980, MemClockMHz: 3201, MemBusBits: 6144,
			L2Bytes: 60 << 20, LLCBytes: 60 << 20, TotalMem: 150_000_000_000,
			Clocks: []ClockSample{
				{When: "before decode", SMMHz: 1980, MemMHz: 3201, TempC: 41, PowerW: 118.5},
				{When: "after decode", SMMHz: 1965, MemMHz: 3201, TempC: 57, PowerW: 402.25},
			},
		},
		Seed: 42,
		CodeObjects: map[string]string{
			"build/sm_90/w4a8_gemm.ptx": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
			"build/sm_90/act_quant.ptx": "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752",
		},
		Ceilings: []Ceiling{
			{Name: CeilingFP8TFlops, Value: 1437, Unit: "TF/s", How: "cuBLASLt-free fp8 mma loop 8192^3"},
			{Name: CeilingCopyGBps, Value: 4150, Unit: "GB/s", How: "device copy, 2 GiB, read+write bytes"},
		},
		Gates: []GateRecord{
			{Gate: "w4a8-gemm", Status: Pass, Seed: 7, Seconds: 3.25, Metrics: map[string]float64{"rel_max": 1.2e-3, "floor": 1e-3}},
			{Gate: "e4m3-encode", Status: Pass, Seed: 5, Seconds: 0.5, Notes: []string{"2^32 inputs"}},
		},
	}
	a := record("decode", "w4a8_gemm", "mlp_down", 8, "v2", Cold, 22_000_000, samples(8, 9.5, 0.004, 1))
	a.Control, _ = NewControl("v2", samples(8, 9.5, 0.004, 2), samples(8, 9.5, 0.004, 3))
	a.Extra = map[string]float64{"split_k": 2, "waves": 1.5}
	doc.Records = []Record{
		record("decode", "w4a8_gemm", "mlp_gate_up", 8, "v3", Cold, 47_000_000, samples(8, 12.3, 0.003, 0)),
		a,
		record("decode", "w4a8_gemm", "mlp_down", 1, "v2", Cold, 22_000_000, samples(6, 8.7, 0.01, 4)),
		record("decode", "act_quant", "hidden", 8, "fused", Hot, 200_000, samples(4, 1.9, 0.02, 5)),
	}
	doc.Records[0].Flops = 2 * 8 * 17408 * 5120
	doc.Records[0].Derive()
	return doc
}

func TestWriteGolden(t *testing.T) {
	doc := synthetic()
	dir := t.TempDir()
	path := filepath.Join(dir, "run.json")
	if err := Write(path, doc); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "document.json"), got)

	// Stable: input order does not matter, and doc is not reordered.
	if doc.Records[0].Shape != "mlp_gate_up" {
		t.Error("Write reordered the caller's records")
	}
	shuffled := synthetic()
	slices.Reverse(shuffled.Records)
	slices.Reverse(shuffled.Gates)
	again, err := Marshal(shuffled)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, again) {
		t.Error("a reordered document marshals to different bytes")
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}

	// Round trip.
	back, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	doc.Sort()
	if !reflect.DeepEqual(back, doc) {
		t.Errorf("Read(Write(doc)) != doc:\n got %+v\nwant %+v", back, doc)
	}
}

func TestWritePartial(t *testing.T) {
	doc := synthetic()
	path := filepath.Join(t.TempDir(), "run.partial.json")
	if err := WritePartial(path, doc, "interrupted by SIGINT during decode/w4a8_gemm"); err != nil {
		t.Fatal(err)
	}
	if doc.Partial {
		t.Error("WritePartial modified the caller's document")
	}
	back, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Partial || back.PartialReason != "interrupted by SIGINT during decode/w4a8_gemm" {
		t.Errorf("partial = %v, reason %q", back.Partial, back.PartialReason)
	}
}

// A failed Write leaves the existing file and the directory as they were.
func TestWriteFailureKeepsFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.json")
	if err := Write(path, synthetic()); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)

	bad := synthetic()
	bad.Records[1].SamplesUS[3] = math.NaN()
	err := Write(path, bad)
	if err == nil || !strings.Contains(err.Error(), "samples_us[3] is NaN") || !errors.Is(err, ErrInvalid) {
		t.Errorf("Write of a NaN sample: err = %v", err)
	}
	bad = synthetic()
	bad.Records = append(bad.Records, bad.Records[0])
	if err := Write(path, bad); err == nil || !strings.Contains(err.Error(), "duplicate key") {
		t.Errorf("Write of a duplicate record: err = %v", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Error("a failed Write changed the existing file")
	}

	// A failure after the temporary file is written (the rename onto a
	// non-empty directory fails) removes the temporary file.
	target := filepath.Join(dir, "occupied")
	os.MkdirAll(filepath.Join(target, "x"), 0o755)
	if err := Write(target, synthetic()); err == nil || !strings.Contains(err.Error(), "unchanged") {
		t.Errorf("Write onto a directory: err = %v", err)
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"occupied", "run.json"}) {
		t.Errorf("directory holds %v after failed writes, want only occupied and run.json", names)
	}
	if err := Write(filepath.Join(dir, "no", "such", "dir.json"), synthetic()); err == nil {
		t.Error("Write into a missing directory succeeded")
	}
}

func TestReadErrors(t *testing.T) {
	good, err := Marshal(synthetic())
	if err != nil {
		t.Fatal(err)
	}
	s := string(good)
	dup := synthetic()
	dupRec := dup.Records[2]
	dup.Records = nil
	dupData, _ := Marshal(dup)
	// Splice two copies of one record into an otherwise valid document.
	one, _ := Marshal(&Document{Records: []Record{dupRec}})
	rec := string(one[strings.Index(string(one), "    {") : strings.LastIndex(string(one), "}\n  ]")+1])
	dupDoc := strings.Replace(string(dupData), `"records": []`, `"records": [`+"\n"+rec+",\n"+rec+"\n  ]", 1)

	for _, tc := range []struct {
		name string
		data string
		is   error
		want []string
	}{
		{"schema 2", strings.Replace(s, `"schema": 1`, `"schema": 2`, 1), ErrSchema,
			[]string{"results file f.json has schema version 2; this parharness reads version 1: ", `tool "parharness v0.1.0-test"`}},
		{"no schema", strings.Replace(s, `"schema": 1,`, ``, 1), ErrSchema, []string{`no "schema" field`}},
		{"schema string", strings.Replace(s, `"schema": 1`, `"schema": "1"`, 1), ErrSchema, []string{`"schema" is "1", want an integer`}},
		{"truncated", s[:len(s)/2], ErrTruncated, []string{"f.json:", "mid-document", "probably died"}},
		{"empty", "  \n", ErrTruncated, []string{"empty"}},
		{"malformed", strings.Replace(s, `"seed": 42,`, `"seed": 42,,`, 1), nil, []string{"f.json:", "malformed JSON: invalid character ','"}},
		{"trailing data", s + "{}", nil, []string{"after top-level value"}},
		{"wrong type", strings.Replace(s, `"m": 8,`, `"m": "8",`, 1), nil, []string{"field records.m: cannot use JSON string as Go int"}},
		{"duplicate keys", dupDoc, ErrInvalid, []string{"record 1 (decode/w4a8_gemm/shape=mlp_down/M=1/variant=v2/regime=cold): duplicate key, also record 0"}},
		{"bad regime", strings.Replace(s, `"regime": "hot"`, `"regime": "warm"`, 1), ErrInvalid, []string{`regime "warm", want "cold", "hot" or "isolated"`}},
		{"bad status", strings.Replace(s, `"status": "PASS"`, `"status": "ok"`, 1), ErrInvalid, []string{`status "ok", want PASS, FAIL, SKIP or ERROR`}},
		{"zero sample", strings.Replace(s, `"samples_us": [1.892,`, `"samples_us": [0,`, 1), ErrInvalid, []string{"samples_us[0] is 0"}},
	} {
		if tc.data == s {
			t.Errorf("%s: the test's edit did not apply", tc.name)
			continue
		}
		_, err := Parse("f.json", []byte(tc.data))
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if tc.is != nil && !errors.Is(err, tc.is) {
			t.Errorf("%s: %v is not %v", tc.name, err, tc.is)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not contain %q", tc.name, err, w)
			}
		}
	}
}

func TestReadPosition(t *testing.T) {
	data := "{\n  \"schema\": 1,\n  \"tool\": x\n}\n"
	_, err := Parse("p.json", []byte(data))
	var fe *FileError
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v, want a *FileError", err)
	}
	if fe.Line != 3 || fe.Col != 11 || fe.Offset != 27 {
		t.Errorf("position %d:%d byte %d, want 3:11 byte 27 (%v)", fe.Line, fe.Col, fe.Offset, err)
	}
	if _, err := Read(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("Read of a missing file succeeded")
	}
}

func TestDerive(t *testing.T) {
	r := Record{Suite: "s", Kernel: "k", Variant: "v", Shape: "x", M: 1, Regime: Cold,
		SamplesUS: []float64{10, 11, 9, 30, 10}, Bytes: 40_000_000, Flops: 2e9}
	if err := r.Derive(); err != nil {
		t.Fatal(err)
	}
	if r.MedianUS != 10 || r.MeanUS != 14 || math.Abs(r.TrimmedMeanUS-31.0/3) > 1e-12 {
		t.Errorf("median %v mean %v trimmed %v", r.MedianUS, r.MeanUS, r.TrimmedMeanUS)
	}
	if want := 40e6 / (31.0 / 3 * 1e-6) / 1e9; math.Abs(r.GBps-want) > 1e-9 {
		t.Errorf("GBps = %v, want %v", r.GBps, want)
	}
	if want := 2e9 / (31.0 / 3 * 1e-6) / 1e12; math.Abs(r.TFlops-want) > 1e-12 {
		t.Errorf("TFlops = %v, want %v", r.TFlops, want)
	}
	r.SamplesUS = r.SamplesUS[:3]
	if err := r.Derive(); err == nil || !strings.Contains(err.Error(), "s/k/shape=x/M=1/variant=v/regime=cold") {
		t.Errorf("Derive of 3 samples: err = %v", err)
	}
}

func TestFlagAboveRoofline(t *testing.T) {
	doc := synthetic()
	if _, err := (&Document{}).FlagAboveRoofline(5); err == nil {
		t.Error("no ceiling: no error")
	}
	// gate_up: 47 MB in ~12.3 µs is ~3.8 TB/s: under 4150. Make it leak.
	for i := range doc.Records {
		doc.Records[i].GBps *= 1.2
	}
	keys, err := doc.FlagAboveRoofline(5)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"decode/w4a8_gemm/shape=mlp_gate_up/M=8/variant=v3/regime=cold"}; !slices.Equal(keys, want) {
		t.Errorf("flagged %v, want %v", keys, want)
	}
	if !doc.Records[0].HasFlag(FlagAboveRoofline) {
		t.Error("record not flagged")
	}
	doc.FlagAboveRoofline(5)
	if len(doc.Records[0].Flags) != 1 {
		t.Errorf("flag added twice: %v", doc.Records[0].Flags)
	}
}

func TestCellTimes(t *testing.T) {
	ct := synthetic().CellTimes("decode", "w4a8_gemm", Cold)
	if len(ct) != 3 {
		t.Fatalf("cells %v", ct)
	}
	for c, vt := range ct {
		if len(vt) != 1 || vt["v2"] <= 0 && vt["v3"] <= 0 {
			t.Errorf("cell %v: %v", c, vt)
		}
	}
}

func readFile(p string) ([]byte, error) { return os.ReadFile(p) }

// A gzip-compressed results file (results/ keeps large runs as .json.gz)
// reads as its plain text does; a cut-off stream is ErrTruncated and a
// damaged one a FileError, never a panic or a half document.
func TestReadGzip(t *testing.T) {
	plain, err := os.ReadFile(filepath.Join("testdata", "document.json"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(plain); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	gz := buf.Bytes()
	want, err := Parse("document.json", plain)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("whole", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "document.json.gz")
		if err := os.WriteFile(p, gz, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := Read(p)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := Marshal(want)
		b, _ := Marshal(got)
		if !bytes.Equal(a, b) {
			t.Error("the gzip-compressed file reads differently from the plain one")
		}
	})
	t.Run("cut off", func(t *testing.T) {
		_, err := Parse("cut.json.gz", gz[:len(gz)/2])
		var fe *FileError
		if !errors.Is(err, ErrTruncated) || !errors.As(err, &fe) {
			t.Errorf("half a gzip stream: %v, want a FileError wrapping ErrTruncated", err)
		}
	})
	t.Run("header only", func(t *testing.T) {
		if _, err := Parse("hdr.json.gz", gz[:2]); !errors.Is(err, ErrTruncated) {
			t.Errorf("a gzip magic alone: %v, want ErrTruncated", err)
		}
	})
	t.Run("damaged", func(t *testing.T) {
		bad := bytes.Clone(gz)
		bad[len(bad)-5] ^= 0xff // the trailer's CRC/size
		var fe *FileError
		if _, err := Parse("bad.json.gz", bad); !errors.As(err, &fe) {
			t.Errorf("a damaged gzip trailer: %v, want a FileError", err)
		}
	})
}
