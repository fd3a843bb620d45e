// Package checkpoint reads and writes safetensors files and loads ParoQuant
// linears from them, validating every tensor a kernel will trust.
//
// # The safetensors format
//
// A file is an 8-byte little-endian header length n, a JSON object of n
// bytes (padded with trailing spaces), then the data buffer. Each key of the
// object names a tensor, {"dtype": "F16", "shape": [K, N], "data_offsets":
// [begin, end]}, with offsets relative to the start of the data buffer;
// the optional key "__metadata__" maps strings to strings. Tensors are
// little-endian and row-major.
//
// This package is strict where the format is (as the reference
// implementation is): the offsets of the tensors must tile the data buffer
// exactly, with no overlap, no gap and no trailing bytes, and each range must
// hold exactly shape × dtype size bytes. Every violation is an error naming
// the file and the tensor. Files are opened lazily: Open reads and checks
// the header, Tensor reads one tensor's bytes.
//
// # ParoQuant linears
//
// LoadLinear (paroquant.go) finds the six tensors of one quantized linear
// (eight for int5) under a name prefix in a file or a directory of
// *.safetensors shards, and checks dtypes, shapes and the rotation
// invariants before anything is uploaded. Synthetic draws a linear with
// realistic statistics for gates that run without a checkpoint.
package checkpoint

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"

	"golang.org/x/exp/mmap"
)

// DType is a safetensors dtype name.
type DType string

const (
	F64    DType = "F64"
	F32    DType = "F32"
	F16    DType = "F16"
	BF16   DType = "BF16"
	I64    DType = "I64"
	I32    DType = "I32"
	I16    DType = "I16"
	I8     DType = "I8"
	U64    DType = "U64"
	U32    DType = "U32"
	U16    DType = "U16"
	U8     DType = "U8"
	Bool   DType = "BOOL"
	F8E4M3 DType = "F8_E4M3"
	F8E5M2 DType = "F8_E5M2"
)

var dtypeSizes = map[DType]int{
	F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1,
	U64: 8, U32: 4, U16: 2, U8: 1, Bool: 1, F8E4M3: 1, F8E5M2: 1,
}

// Size is the element size in bytes, 0 for an unknown dtype.
func (d DType) Size() int { return dtypeSizes[d] }

// MaxHeader bounds the JSON header (the reference implementation's limit).
const MaxHeader = 100 << 20

// Tensor is one named tensor with its raw little-endian bytes.
type Tensor struct {
	Name  string
	DType DType
	Shape []int
	Data  []byte
}

// Elements is the product of the shape (1 for a scalar).
func (t *Tensor) Elements() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

func (t *Tensor) want(d DType) error {
	if t.DType != d {
		return fmt.Errorf("checkpoint: %s: dtype %s, want %s", t.Name, t.DType, d)
	}
	if len(t.Data) != t.Elements()*d.Size() {
		return fmt.Errorf("checkpoint: %s: %d bytes for shape %v of %s", t.Name, len(t.Data), t.Shape, d)
	}
	return nil
}

// Int32s decodes an I32 tensor.
func (t *Tensor) Int32s() ([]int32, error) {
	return decodeLE(t, I32, func(b []byte) int32 { return int32(binary.LittleEndian.Uint32(b)) })
}

// Int16s decodes an I16 tensor.
func (t *Tensor) Int16s() ([]int16, error) {
	return decodeLE(t, I16, func(b []byte) int16 { return int16(binary.LittleEndian.Uint16(b)) })
}

// Bits16 returns the raw 16-bit words of a tensor of dtype d (F16 or BF16).
func (t *Tensor) Bits16(d DType) ([]uint16, error) {
	if d != F16 && d != BF16 {
		return nil, fmt.Errorf("checkpoint: %s: Bits16 reads F16 or BF16, not %s", t.Name, d)
	}
	return decodeLE(t, d, binary.LittleEndian.Uint16)
}

// decodeLE decodes a tensor of dtype d element by element (get reads one
// little-endian element from the front of its slice).
func decodeLE[T any](t *Tensor, d DType, get func([]byte) T) ([]T, error) {
	if err := t.want(d); err != nil {
		return nil, err
	}
	out := make([]T, t.Elements())
	for i := range out {
		out[i] = get(t.Data[i*d.Size():])
	}
	return out, nil
}

// NewInt32 builds an I32 tensor.
func NewInt32(name string, shape []int, v []int32) *Tensor {
	return encodeLE(name, I32, shape, v, func(b []byte, x int32) { binary.LittleEndian.PutUint32(b, uint32(x)) })
}

// NewInt16 builds an I16 tensor.
func NewInt16(name string, shape []int, v []int16) *Tensor {
	return encodeLE(name, I16, shape, v, func(b []byte, x int16) { binary.LittleEndian.PutUint16(b, uint16(x)) })
}

// NewBits16 builds an F16 or BF16 tensor from raw 16-bit words.
func NewBits16(name string, d DType, shape []int, v []uint16) *Tensor {
	return encodeLE(name, d, shape, v, binary.LittleEndian.PutUint16)
}

// encodeLE builds a tensor of dtype d from v (put writes one element,
// little endian, to the front of its slice).
func encodeLE[T any](name string, d DType, shape []int, v []T, put func([]byte, T)) *Tensor {
	b := make([]byte, d.Size()*len(v))
	for i, x := range v {
		put(b[i*d.Size():], x)
	}
	return &Tensor{Name: name, DType: d, Shape: shape, Data: b}
}

// Info describes one tensor of a file without its data.
type Info struct {
	Name       string
	DType      DType
	Shape      []int
	Begin, End int64 // offsets in the data buffer
}

// File is an open safetensors file whose header has been validated.
type File struct {
	Path     string
	Metadata map[string]string

	r         io.ReaderAt
	closer    io.Closer
	dataStart int64
	infos     map[string]*Info
	order     []string // by offset
}

// Open maps a safetensors file into memory (golang.org/x/exp/mmap) and
// validates its header against the file size. Nothing is read until a
// tensor is asked for: Tensor copies that tensor's bytes out of the
// mapping (the page cache's pages, shared with every other reader), never
// the shard, so a 27B checkpoint's multi-GiB shards cost only the tensors
// a gate uses. Close it when done.
func Open(path string) (*File, error) {
	if st, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	} else if st.Size() == 0 {
		// An empty file cannot be mapped; it is a truncated header.
		return parse(path, bytes.NewReader(nil), 0)
	}
	m, err := mmap.Open(path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	f, err := parse(path, m, int64(m.Len()))
	if err != nil {
		m.Close()
		return nil, err
	}
	f.closer = m
	return f, nil
}

// Parse validates an in-memory safetensors file; name is used in messages.
func Parse(name string, b []byte) (*File, error) {
	return parse(name, bytes.NewReader(b), int64(len(b)))
}

// Close releases the file.
func (f *File) Close() error {
	if f.closer != nil {
		return f.closer.Close()
	}
	return nil
}

// Names lists the tensors in data order.
func (f *File) Names() []string { return append([]string(nil), f.order...) }

// Info returns a tensor's description.
func (f *File) Info(name string) (Info, bool) {
	i, ok := f.infos[name]
	if !ok {
		return Info{}, false
	}
	return *i, true
}

// Tensor reads one tensor.
func (f *File) Tensor(name string) (*Tensor, error) {
	i, ok := f.infos[name]
	if !ok {
		return nil, fmt.Errorf("checkpoint: %s: no tensor %s", f.Path, name)
	}
	b := make([]byte, i.End-i.Begin)
	if len(b) == 0 {
		return &Tensor{Name: name, DType: i.DType, Shape: append([]int(nil), i.Shape...), Data: b}, nil
	}
	if _, err := f.r.ReadAt(b, f.dataStart+i.Begin); err != nil {
		return nil, fmt.Errorf("checkpoint: %s: reading %s: %w", f.Path, name, err)
	}
	return &Tensor{Name: name, DType: i.DType, Shape: append([]int(nil), i.Shape...), Data: b}, nil
}

func parse(path string, r io.ReaderAt, size int64) (*File, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("checkpoint: %s: "+format, append([]any{path}, args...)...)
	}
	if size < 8 {
		return nil, fail("%d bytes: too short for the 8-byte header length (truncated file?)", size)
	}
	var lb [8]byte
	if _, err := r.ReadAt(lb[:], 0); err != nil {
		return nil, fail("reading the header length: %v", err)
	}
	n := binary.LittleEndian.Uint64(lb[:])
	if n > MaxHeader {
		return nil, fail("header length %d exceeds %d bytes (not a safetensors file?)", n, MaxHeader)
	}
	if int64(n) > size-8 {
		return nil, fail("header length %d but only %d bytes follow (truncated file?)", n, size-8)
	}
	hb := make([]byte, n)
	if _, err := r.ReadAt(hb, 8); err != nil {
		return nil, fail("reading the header: %v", err)
	}
	f := &File{Path: path, r: r, dataStart: 8 + int64(n), infos: map[string]*Info{}}
	if err := f.parseHeader(hb); err != nil {
		return nil, fail("header: %v", err)
	}
	dataLen := size - f.dataStart
	infos := make([]*Info, 0, len(f.infos))
	for _, i := range f.infos {
		infos = append(infos, i)
	}
	sort.Slice(infos, func(a, b int) bool {
		if infos[a].Begin != infos[b].Begin {
			return infos[a].Begin < infos[b].Begin
		}
		if infos[a].End != infos[b].End {
			return infos[a].End < infos[b].End
		}
		return infos[a].Name < infos[b].Name
	})
	var pos int64
	prev := ""
	for _, i := range infos {
		switch {
		case i.End > dataLen:
			return nil, fail("tensor %s: data_offsets [%d, %d] past the end of the %d-byte data buffer (truncated file?)", i.Name, i.Begin, i.End, dataLen)
		case i.Begin < pos:
			return nil, fail("tensor %s: data_offsets [%d, %d] overlap tensor %s (ends at %d)", i.Name, i.Begin, i.End, prev, pos)
		case i.Begin > pos:
			return nil, fail("tensor %s: gap of %d bytes before its data_offsets [%d, %d]", i.Name, i.Begin-pos, i.Begin, i.End)
		}
		pos, prev = i.End, i.Name
		f.order = append(f.order, i.Name)
	}
	if pos != dataLen {
		return nil, fail("%d bytes after the last tensor's data (data buffer %d bytes, tensors cover %d)", dataLen-pos, dataLen, pos)
	}
	return f, nil
}

func (f *File) parseHeader(hb []byte) error {
	dec := json.NewDecoder(bytes.NewReader(hb))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("bad JSON: %v", err)
		}
		name := tok.(string) // object keys are strings
		if name == "__metadata__" {
			if f.Metadata != nil {
				return fmt.Errorf("duplicate __metadata__")
			}
			var raw map[string]json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return fmt.Errorf("__metadata__: %v", err)
			}
			f.Metadata = map[string]string{}
			for k, v := range raw {
				var s string
				if err := json.Unmarshal(v, &s); err != nil {
					return fmt.Errorf("__metadata__[%q]: value %s is not a string", k, v)
				}
				f.Metadata[k] = s
			}
			continue
		}
		if _, dup := f.infos[name]; dup {
			return fmt.Errorf("tensor %s: listed twice", name)
		}
		var raw map[string]json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("tensor %s: %v", name, err)
		}
		info, err := parseInfo(name, raw)
		if err != nil {
			return fmt.Errorf("tensor %s: %v", name, err)
		}
		f.infos[name] = info
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return fmt.Errorf("bad JSON: %v", err)
	}
	rest, _ := io.ReadAll(dec.Buffered())
	if strings.TrimRight(string(rest), " \t\r\n") != "" {
		return fmt.Errorf("%d unexpected bytes after the JSON object", len(rest))
	}
	return nil
}

func parseInfo(name string, raw map[string]json.RawMessage) (*Info, error) {
	for k := range raw {
		if k != "dtype" && k != "shape" && k != "data_offsets" {
			return nil, fmt.Errorf("unknown field %q", k)
		}
	}
	for _, k := range []string{"dtype", "shape", "data_offsets"} {
		if _, ok := raw[k]; !ok {
			return nil, fmt.Errorf("missing field %q", k)
		}
	}
	info := &Info{Name: name}
	if err := json.Unmarshal(raw["dtype"], &info.DType); err != nil {
		return nil, fmt.Errorf("dtype %s: %v", raw["dtype"], err)
	}
	if info.DType.Size() == 0 {
		return nil, fmt.Errorf("unknown dtype %q", info.DType)
	}
	var shape, offs []int64
	if err := json.Unmarshal(raw["shape"], &shape); err != nil {
		return nil, fmt.Errorf("shape %s: %v", raw["shape"], err)
	}
	if err := json.Unmarshal(raw["data_offsets"], &offs); err != nil {
		return nil, fmt.Errorf("data_offsets %s: %v", raw["data_offsets"], err)
	}
	elems := int64(1)
	for _, d := range shape {
		if d < 0 {
			return nil, fmt.Errorf("negative dimension in shape %v", shape)
		}
		if d != 0 && elems > math.MaxInt64/8/d {
			return nil, fmt.Errorf("shape %v is too large", shape)
		}
		elems *= d
		info.Shape = append(info.Shape, int(d))
	}
	if info.Shape == nil {
		info.Shape = []int{}
	}
	if len(offs) != 2 || offs[0] < 0 || offs[1] < offs[0] {
		return nil, fmt.Errorf("data_offsets %v: want [begin, end] with 0 <= begin <= end", offs)
	}
	info.Begin, info.End = offs[0], offs[1]
	if want := elems * int64(info.DType.Size()); info.End-info.Begin != want {
		return nil, fmt.Errorf("data_offsets [%d, %d] hold %d bytes, but shape %v of %s needs %d", info.Begin, info.End, info.End-info.Begin, info.Shape, info.DType, want)
	}
	return info, nil
}

// Encode writes tensors as a safetensors file, in the given order, with the
// header keys sorted (the JSON encoder sorts map keys) and padded with
// spaces to a multiple of 8 bytes so the data buffer is aligned.
func Encode(w io.Writer, tensors []*Tensor, meta map[string]string) error {
	type entry struct {
		DType       DType    `json:"dtype"`
		Shape       []int    `json:"shape"`
		DataOffsets [2]int64 `json:"data_offsets"`
	}
	header := map[string]any{}
	if len(meta) > 0 {
		header["__metadata__"] = meta
	}
	var pos int64
	for _, t := range tensors {
		if t.Name == "__metadata__" || t.Name == "" {
			return fmt.Errorf("checkpoint: bad tensor name %q", t.Name)
		}
		if _, dup := header[t.Name]; dup {
			return fmt.Errorf("checkpoint: tensor %s given twice", t.Name)
		}
		if t.DType.Size() == 0 {
			return fmt.Errorf("checkpoint: tensor %s: unknown dtype %q", t.Name, t.DType)
		}
		if len(t.Data) != t.Elements()*t.DType.Size() {
			return fmt.Errorf("checkpoint: tensor %s: %d bytes for shape %v of %s", t.Name, len(t.Data), t.Shape, t.DType)
		}
		shape := t.Shape
		if shape == nil {
			shape = []int{}
		}
		header[t.Name] = entry{t.DType, shape, [2]int64{pos, pos + int64(len(t.Data))}}
		pos += int64(len(t.Data))
	}
	hb, err := json.Marshal(header)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	for len(hb)%8 != 0 {
		hb = append(hb, ' ')
	}
	var lb [8]byte
	binary.LittleEndian.PutUint64(lb[:], uint64(len(hb)))
	if _, err := w.Write(lb[:]); err != nil {
		return err
	}
	if _, err := w.Write(hb); err != nil {
		return err
	}
	for _, t := range tensors {
		if _, err := w.Write(t.Data); err != nil {
			return err
		}
	}
	return nil
}

// Write writes tensors to a safetensors file at path (see Encode).
func Write(path string, tensors []*Tensor, meta map[string]string) error {
	fh, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := Encode(fh, tensors, meta); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// Dir is a checkpoint: one safetensors file or a directory of shards, with
// an index of which file holds each tensor.
type Dir struct {
	Path  string
	files []*File
	where map[string]*File
}

// OpenDir opens path: a single .safetensors file, or every *.safetensors
// file of a directory. A tensor name present in two files is an error.
func OpenDir(path string) (*Dir, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	paths := []string{path}
	if st.IsDir() {
		ents, err := os.ReadDir(path)
		if err != nil {
			return nil, fmt.Errorf("checkpoint: %w", err)
		}
		paths = paths[:0]
		for _, e := range ents {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".safetensors") {
				paths = append(paths, path+string(os.PathSeparator)+e.Name())
			}
		}
		if len(paths) == 0 {
			return nil, fmt.Errorf("checkpoint: %s: no *.safetensors files", path)
		}
	}
	var files []*File
	for _, p := range paths {
		f, err := Open(p)
		if err != nil {
			for _, f := range files {
				f.Close()
			}
			return nil, err
		}
		files = append(files, f)
	}
	d, err := NewDir(path, files...)
	if err != nil {
		for _, f := range files {
			f.Close()
		}
		return nil, err
	}
	return d, nil
}

// NewDir indexes files that are already open (Open, or Parse for files held
// in memory, such as embedded test data) as one checkpoint named name. A
// tensor name present in two files is an error (the files are then left
// open, for the caller to close). Closing the Dir closes the files.
func NewDir(name string, files ...*File) (*Dir, error) {
	d := &Dir{Path: name, where: map[string]*File{}}
	for _, f := range files {
		d.files = append(d.files, f)
		for _, n := range f.order {
			if other, dup := d.where[n]; dup {
				return nil, fmt.Errorf("checkpoint: tensor %s is in both %s and %s", n, other.Path, f.Path)
			}
			d.where[n] = f
		}
	}
	return d, nil
}

// Close closes every file.
func (d *Dir) Close() error {
	var errs []error
	for _, f := range d.files {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}

// Names lists every tensor, sorted.
func (d *Dir) Names() []string {
	out := make([]string, 0, len(d.where))
	for n := range d.where {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Has reports whether a tensor exists.
func (d *Dir) Has(name string) bool { _, ok := d.where[name]; return ok }

// Info describes a tensor without reading it.
func (d *Dir) Info(name string) (Info, bool) {
	f, ok := d.where[name]
	if !ok {
		return Info{}, false
	}
	return f.Info(name)
}

// Tensor reads a tensor from whichever file holds it.
func (d *Dir) Tensor(name string) (*Tensor, error) {
	f, ok := d.where[name]
	if !ok {
		return nil, fmt.Errorf("checkpoint: %s: missing tensor (not in %s, %d file(s))", name, d.Path, len(d.files))
	}
	return f.Tensor(name)
}
