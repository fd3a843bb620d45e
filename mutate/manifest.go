package mutate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// ManifestName is the manifest's file name inside a mutant directory.
const ManifestName = "manifest.json"

// ManifestSchema is the version of the manifest this package writes and reads.
const ManifestSchema = 1

// Build outcomes of a mutant.
const (
	BuildOK        = "built"
	BuildFailed    = "did-not-build"
	BuildIdentical = "equivalent (identical code)"
	BuildNoModule  = "no-module"
)

// Manifest is a mutant directory's index: how the mutants were made and
// built, the unmutated modules' hashes, and each mutant's outcome and
// objects.
type Manifest struct {
	Schema    int               `json:"schema"`
	Tool      string            `json:"tool"`
	Commit    string            `json:"commit"`
	Date      string            `json:"date"`
	Command   []string          `json:"command"`
	Clang     string            `json:"clang"`
	Targets   []string          `json:"targets"`
	Flags     map[string]string `json:"flags"`   // target -> the Makefile's clang flags
	Sources   []string          `json:"sources"` // the files mutated
	PerOpFile int               `json:"per_op_file"`
	Modules   []Module          `json:"modules"`
	Operators []OperatorDoc     `json:"operators"`
	Mutants   []BuiltMutant     `json:"mutants"`
}

// Module is one code object of the build.
type Module struct {
	Name   string            `json:"name"`
	Source string            `json:"source"`
	Deps   []string          `json:"deps,omitempty"`   // headers it includes, transitively
	SHA256 map[string]string `json:"sha256,omitempty"` // target -> sha256 of the unmutated object
}

// OperatorDoc is an operator as the manifest and the report describe it.
type OperatorDoc struct {
	Name string `json:"name"`
	Doc  string `json:"doc"`
	Rule string `json:"rule"`
}

// Catalogue returns the operators' descriptions.
func Catalogue() []OperatorDoc {
	out := make([]OperatorDoc, len(Operators))
	for i, o := range Operators {
		out[i] = OperatorDoc{o.Name, o.Doc, o.Rule}
	}
	return out
}

// BuiltMutant is a mutant and what building it gave.
type BuiltMutant struct {
	Mutant
	Modules []string                     `json:"modules,omitempty"` // the modules compiled: the file's own, or every one including the header
	Build   string                       `json:"build"`             // BuildOK, BuildFailed, BuildIdentical, BuildNoModule
	Error   string                       `json:"error,omitempty"`   // the compiler's first error line
	Objects map[string]map[string]Object `json:"objects,omitempty"` // target -> module -> the changed object
}

// Object is one mutated code object in the directory.
type Object struct {
	Path           string   `json:"path"`   // relative to the directory, gzip-compressed
	SHA256         string   `json:"sha256"` // of the uncompressed object
	Bytes          int      `json:"bytes"`
	GzipBytes      int      `json:"gzip_bytes"`
	ChangedEntries []string `json:"changed_entries,omitempty"` // PTX entry points whose code differs from the unmutated module's
}

// WriteManifest writes the manifest (two-space indent, one trailing newline).
func WriteManifest(path string, m *Manifest) error {
	m.Schema = ManifestSchema
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(b, '\n'))
}

// ReadManifest reads a mutant directory's manifest.
func ReadManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestName)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the mutant manifest: %v (build the mutants with `parharness mutate build --out %s`)", err, dir)
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if m.Schema != ManifestSchema {
		return nil, fmt.Errorf("%s: manifest schema %d, this tool reads %d: rebuild the mutants with this tool", path, m.Schema, ManifestSchema)
	}
	return &m, nil
}

// writeFileAtomic writes through a temporary file and a rename, so a
// reader never sees half a file.
func writeFileAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}
