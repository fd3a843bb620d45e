package results

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Marshal returns the canonical bytes of doc: a sorted copy (doc itself is
// not reordered), Schema set to SchemaVersion, two-space indent, trailing
// newline. It fails if doc breaks an invariant (Validate).
func Marshal(doc *Document) ([]byte, error) {
	if doc == nil {
		return nil, errors.New("results: marshal: nil document")
	}
	d := *doc
	d.Schema = SchemaVersion
	d.Records = slices.Clone(doc.Records)
	d.Gates = slices.Clone(doc.Gates)
	d.Ceilings = slices.Clone(doc.Ceilings)
	if d.Records == nil {
		d.Records = []Record{} // "records": [] rather than null
	}
	d.Sort()
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("results: refusing to write an invalid document: %w", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep "<", ">" and "&" readable in reasons
	enc.SetIndent("", "  ")
	if err := enc.Encode(&d); err != nil { // Encode appends the trailing newline
		return nil, fmt.Errorf("results: marshal: %w", err)
	}
	return inlineNumberArrays(buf.Bytes()), nil
}

// numberArray matches an indented JSON array holding only numbers. It
// cannot match inside a string: a JSON string holds no raw newline.
var numberArray = regexp.MustCompile(`\[\n[ ]*-?[0-9][-+.eE0-9]*(?:,\n[ ]*-?[0-9][-+.eE0-9]*)*\n[ ]*\]`)

// inlineNumberArrays puts each array of numbers (the samples) on one line,
// so that a record reads as a screenful and a changed sample shows as one
// changed line in git diff.
func inlineNumberArrays(p []byte) []byte {
	return numberArray.ReplaceAllFunc(p, func(m []byte) []byte {
		f := bytes.Fields(m[1 : len(m)-1])
		return append(append([]byte("["), bytes.Join(f, []byte(" "))...), ']')
	})
}

// Write writes doc to path atomically: the bytes go to a temporary file in
// the same directory, which is synced and then renamed over path. On any
// error the temporary file is removed and an existing file at path is left
// as it was.
func Write(path string, doc *Document) error {
	data, err := Marshal(doc)
	if err != nil {
		return err
	}
	return writeAtomic(path, data)
}

// WritePartial writes doc marked as partial, with the reason the run
// stopped early (a gate failure, a signal, a device error). doc itself is
// not modified.
func WritePartial(path string, doc *Document, reason string) error {
	if doc == nil {
		return errors.New("results: write partial: nil document")
	}
	d := *doc
	d.Partial = true
	d.PartialReason = reason
	return Write(path, &d)
}

func writeAtomic(path string, data []byte) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("results: write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
			err = fmt.Errorf("results: write %s: %w (the previous file, if any, is unchanged)", path, err)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil { // CreateTemp makes 0600
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	// Make the rename itself durable; a failure here leaves a complete file.
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Read reads and checks the results file at path (see Parse).
func Read(path string) (*Document, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	return Parse(path, data)
}

// FileError is a problem with a results file, at a position where one is
// known (Line 0: the whole file).
type FileError struct {
	Path   string
	Offset int64 // byte offset, 0-based
	Line   int   // 1-based; 0 when no position applies
	Col    int   // 1-based, in bytes
	Err    error
}

func (e *FileError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("results file %s: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("results file %s:%d:%d (byte %d): %v", e.Path, e.Line, e.Col, e.Offset, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

// ErrSchema is wrapped by the error for a file of another schema version.
var ErrSchema = errors.New("unsupported schema version")

// ErrTruncated is wrapped by the error for a file that ends mid-document.
var ErrTruncated = errors.New("truncated results file")

// maxGunzipped bounds a gzip-compressed results file's decompressed size
// (the largest sweep so far is a few MiB; a bound keeps a corrupt or
// hostile file from filling memory).
const maxGunzipped = 1 << 30

// gunzip decompresses a gzip-compressed results file (results/ keeps
// large runs as .json.gz); a damaged stream is ErrTruncated when it ends
// early, else a FileError naming the gzip problem.
func gunzip(name string, data []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, &FileError{Path: name, Err: fmt.Errorf("%w: gzip header: %v", ErrTruncated, err)}
	}
	out, err := io.ReadAll(io.LimitReader(zr, maxGunzipped+1))
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return nil, &FileError{Path: name, Err: fmt.Errorf("%w: the gzip stream ends early", ErrTruncated)}
	case err != nil:
		return nil, &FileError{Path: name, Err: fmt.Errorf("gzip stream: %v", err)}
	case len(out) > maxGunzipped:
		return nil, &FileError{Path: name, Err: fmt.Errorf("gzip stream decompresses past %d bytes; not a results file", maxGunzipped)}
	}
	return out, nil
}

// Parse decodes a results document from data, gzip-compressed or not;
// name is used in errors. It rejects malformed or truncated JSON (with the
// line, column and byte offset in the decompressed text), a missing or
// other schema version, fields of the wrong type, and documents that break
// an invariant (Validate), such as two records with the same Key.
func Parse(name string, data []byte) (*Document, error) {
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		var err error
		if data, err = gunzip(name, data); err != nil {
			return nil, err
		}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &FileError{Path: name, Err: fmt.Errorf("%w: the file is empty; the run that wrote it probably died before writing (look for a .partial.json beside it)", ErrTruncated)}
	}

	// First pass: syntax (json.Unmarshal checks the whole input before
	// decoding) and the schema version, before any field is interpreted.
	var probe struct {
		Schema *json.RawMessage `json:"schema"`
		Tool   string           `json:"tool"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, jsonError(name, data, err)
	}
	if probe.Schema == nil {
		return nil, &FileError{Path: name, Err: fmt.Errorf("%w: no \"schema\" field; is this a parharness results file?", ErrSchema)}
	}
	var version int
	if err := json.Unmarshal(*probe.Schema, &version); err != nil {
		return nil, &FileError{Path: name, Err: fmt.Errorf("%w: \"schema\" is %s, want an integer", ErrSchema, *probe.Schema)}
	}
	if version != SchemaVersion {
		return nil, fmt.Errorf("results file %s has schema version %d; this parharness reads version %d: %w; read it with the parharness that wrote it (tool %q) or rerun the benchmarks",
			name, version, SchemaVersion, ErrSchema, probe.Tool)
	}

	var doc Document
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, jsonError(name, data, err)
	}
	if err := doc.Validate(); err != nil {
		return nil, &FileError{Path: name, Err: err}
	}
	return &doc, nil
}

// jsonError turns an encoding/json error into a FileError with a position.
func jsonError(name string, data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		off := syn.Offset
		if off >= int64(len(data)) && isEOF(err) {
			return posError(name, data, int64(len(data)),
				fmt.Errorf("%w: the JSON ends after %d bytes, mid-document; the run that wrote it probably died (look for a .partial.json beside it)", ErrTruncated, len(data)))
		}
		// The offset counts the bytes read, including the bad one.
		return posError(name, data, max(off-1, 0), fmt.Errorf("malformed JSON: %v", syn))
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "(document)"
		}
		return posError(name, data, typ.Offset, fmt.Errorf("field %s: cannot use JSON %s as Go %v", field, typ.Value, typ.Type))
	}
	return &FileError{Path: name, Err: err}
}

// isEOF reports whether a syntax error is encoding/json's "unexpected end
// of JSON input", which has no error value of its own.
func isEOF(err error) bool { return strings.Contains(err.Error(), "unexpected end of JSON input") }

// posError computes the line and column of a byte offset.
func posError(name string, data []byte, off int64, err error) *FileError {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return &FileError{Path: name, Offset: off, Line: line, Col: col, Err: err}
}
