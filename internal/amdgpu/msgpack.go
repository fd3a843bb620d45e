package amdgpu

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// decodeMsgpack decodes the NT_AMDGPU_METADATA note's MessagePack with
// github.com/vmihailenco/msgpack/v5: the library reads every type byte,
// length and value (the format spec is github.com/msgpack/msgpack,
// spec.md). This file walks the structure with the library's Decoder so
// that it can be strict where the note is hostile input: each length is
// checked against the bytes left before anything is allocated, map keys
// must be strings and unique, nesting stops at maxMsgpackDepth, and an
// error says what was truncated or wrong at which offset. Values come out
// as map[string]any, []any, string, []byte (bin and ext payloads), bool,
// nil, float32/float64, int64 for signed and uint64 for unsigned integers.

const maxMsgpackDepth = 32

// decodeMsgpack decodes exactly one MessagePack value from b. Trailing NUL
// bytes (note padding) are allowed; any other trailing data is an error.
func decodeMsgpack(b []byte) (any, error) {
	r := bytes.NewReader(b)
	w := &mpWalker{d: msgpack.NewDecoder(r), r: r, n: len(b)}
	v, err := w.value(0)
	if err != nil {
		return nil, err
	}
	off := w.off()
	for i := off; i < len(b); i++ {
		if b[i] != 0 {
			return nil, fmt.Errorf("%d trailing bytes after the top-level value, at offset %d", len(b)-off, off)
		}
	}
	return v, nil
}

// mpWalker reads one value at a time through the library's Decoder; r is
// the decoder's reader (a bytes.Reader, which it reads unbuffered), so the
// offset is what r has consumed.
type mpWalker struct {
	d *msgpack.Decoder
	r *bytes.Reader
	n int
}

func (w *mpWalker) off() int  { return w.n - w.r.Len() }
func (w *mpWalker) left() int { return w.r.Len() }

// fail turns a library error into one that names what was being read and
// where: a short read is "truncated".
func (w *mpWalker) fail(what string, at int, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("truncated %s at offset %d", what, at)
	}
	return fmt.Errorf("%s at offset %d: %v", what, at, err)
}

// need fails unless n bytes are left for a payload of that length.
func (w *mpWalker) need(n int, what string, at int) error {
	if n < 0 || n > w.left() {
		return fmt.Errorf("truncated %s at offset %d: need %d bytes, %d left", what, at, n, w.left())
	}
	return nil
}

func (w *mpWalker) value(depth int) (any, error) {
	at := w.off()
	if depth > maxMsgpackDepth {
		return nil, fmt.Errorf("nesting deeper than %d at offset %d", maxMsgpackDepth, at)
	}
	c, err := w.d.PeekCode()
	if err != nil {
		return nil, w.fail("type byte", at, err)
	}
	switch {
	case c == msgpcode.Nil:
		return nil, w.d.DecodeNil()
	case c == msgpcode.False || c == msgpcode.True:
		v, err := w.d.DecodeBool()
		return v, err
	case msgpcode.IsFixedNum(c) || c >= msgpcode.Int8 && c <= msgpcode.Int64:
		v, err := w.d.DecodeInt64()
		if err != nil {
			return nil, w.fail("int", at, err)
		}
		return v, nil
	case c >= msgpcode.Uint8 && c <= msgpcode.Uint64:
		v, err := w.d.DecodeUint64()
		if err != nil {
			return nil, w.fail("uint", at, err)
		}
		return v, nil
	case c == msgpcode.Float:
		v, err := w.d.DecodeFloat32()
		if err != nil {
			return nil, w.fail("float", at, err)
		}
		return v, nil
	case c == msgpcode.Double:
		v, err := w.d.DecodeFloat64()
		if err != nil {
			return nil, w.fail("float", at, err)
		}
		return v, nil
	case msgpcode.IsString(c):
		b, err := w.payload("string", at)
		return string(b), err
	case msgpcode.IsBin(c):
		return w.payload("binary", at)
	case msgpcode.IsExt(c):
		_, n, err := w.d.DecodeExtHeader()
		if err != nil {
			return nil, w.fail("ext", at, err)
		}
		return w.read(n, "ext", at)
	case msgpcode.IsFixedArray(c) || c == msgpcode.Array16 || c == msgpcode.Array32:
		n, err := w.d.DecodeArrayLen()
		if err != nil {
			return nil, w.fail("array", at, err)
		}
		if err := w.need(n, "array", at); err != nil { // every element takes a byte
			return nil, err
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = w.value(depth + 1); err != nil {
				return nil, err
			}
		}
		return out, nil
	case msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32:
		n, err := w.d.DecodeMapLen()
		if err != nil {
			return nil, w.fail("map", at, err)
		}
		if n > 0 && (n > w.left()/2) { // every entry takes two bytes
			return nil, fmt.Errorf("truncated map at offset %d: %d entries, %d bytes left", at, n, w.left())
		}
		out := make(map[string]any, max(n, 0))
		for range n {
			keyAt := w.off()
			k, err := w.value(depth + 1)
			if err != nil {
				return nil, err
			}
			ks, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("map key at offset %d is %s, want string", keyAt, typeName(k))
			}
			if _, dup := out[ks]; dup {
				return nil, fmt.Errorf("duplicate map key %q at offset %d", ks, keyAt)
			}
			if out[ks], err = w.value(depth + 1); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("invalid type byte 0x%02x at offset %d", c, at)
}

// payload reads a string's or a bin's length with the library, checks it
// against the bytes left, then reads the bytes.
func (w *mpWalker) payload(what string, at int) ([]byte, error) {
	n, err := w.d.DecodeBytesLen()
	if err != nil {
		return nil, w.fail(what, at, err)
	}
	return w.read(max(n, 0), what, at)
}

func (w *mpWalker) read(n int, what string, at int) ([]byte, error) {
	if err := w.need(n, what, at); err != nil {
		return nil, err
	}
	b := make([]byte, n)
	if err := w.d.ReadFull(b); err != nil {
		return nil, w.fail(what, at, err)
	}
	return b, nil
}

// asInt normalises any Go integer value (decodeMsgpack produces int64 and
// uint64; the library's own interface decoding produces int8 ... uint64) to
// int64.
func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint:
		if uint64(x) > math.MaxInt64 {
			return 0, false
		}
		return int64(x), true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		if x > math.MaxInt64 {
			return 0, false
		}
		return int64(x), true
	}
	return 0, false
}

// typeName names a decoded value's MessagePack kind for error messages.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "nil"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case []byte:
		return "binary data"
	case []any:
		return "an array"
	case map[string]any:
		return "a map"
	case float32, float64:
		return "a float"
	}
	if _, ok := asInt(v); ok {
		return "an integer"
	}
	if _, ok := v.(uint64); ok {
		return "an integer above 2^63"
	}
	return fmt.Sprintf("%T", v)
}
