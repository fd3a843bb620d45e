package results

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// FuzzRead feeds arbitrary bytes to the parser. It must never panic, and a
// document it accepts must survive everything downstream: canonical
// marshalling, a second parse of those bytes, diffing against itself, and
// the text, Markdown and benchfmt renderings.
func FuzzRead(f *testing.F) {
	for _, name := range []string{"document.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)/2])
		var gz bytes.Buffer // the same document gzip-compressed, whole and cut
		zw := gzip.NewWriter(&gz)
		zw.Write(data)
		zw.Close()
		f.Add(gz.Bytes())
		f.Add(gz.Bytes()[:gz.Len()/2])
		f.Add(bytes.Replace(data, []byte(`"schema": 1`), []byte(`"schema": 2`), 1))
	}
	old, new := diffPair()
	for _, d := range []*Document{old, new} {
		data, err := Marshal(d)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"schema":1,"records":[{"suite":"s","kernel":"k","variant":"v","shape":"x","m":1,"regime":"cold","samples_us":[1,2,3,4]}]}`))
	f.Add([]byte(`{"schema":1,"records":null,"gates":[{"gate":"g","status":"FAIL"}]}`))
	f.Add([]byte(`{"schema":1e400}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := Parse("fuzz.json", data)
		if err != nil {
			if doc != nil {
				t.Fatal("Parse returned a document and an error")
			}
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		out, err := Marshal(doc)
		if err != nil {
			t.Fatalf("accepted document does not marshal: %v", err)
		}
		again, err := Parse("again.json", out)
		if err != nil {
			t.Fatalf("canonical bytes do not parse: %v\n%s", err, out)
		}
		out2, err := Marshal(again)
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("marshal is not stable: %v", err)
		}
		rep, err := Diff(doc, again, DiffOptions{})
		if err != nil {
			t.Fatalf("diff of an accepted document: %v", err)
		}
		if rep.Slower+rep.Faster+rep.Mismatched+rep.Added+rep.Removed != 0 {
			t.Fatalf("a document differs from itself: %+v", rep)
		}
		if err := rep.WriteText(io.Discard); err != nil {
			t.Fatal(err)
		}
		if err := rep.WriteMarkdown(io.Discard); err != nil {
			t.Fatal(err)
		}
		if err := WriteBenchfmt(io.Discard, doc); err != nil {
			t.Fatal(err)
		}
	})
}
