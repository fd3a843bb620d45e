package amdgpu

import (
	"encoding/binary"
	"fmt"
	"math"
)

// This file holds a small, strict MessagePack decoder (the subset of the
// format spec at github.com/msgpack/msgpack/blob/master/spec.md that a
// decoder into interface values needs). It decodes to the same Go shapes as
// github.com/vmihailenco/msgpack/v5's Unmarshal into map[string]any:
// map[string]any, []any, string, []byte, bool, nil, float32/float64, and
// int64/uint64 for integers (asInt accepts every Go integer type, so a switch
// to that library would need no change outside decodeMsgpack).
//
// It is its own code rather than that library because go.mod does not carry
// the library and this package may not edit go.mod. It also bounds its work
// on hostile input: every length is checked against the bytes left before
// anything is allocated, and nesting is limited to maxMsgpackDepth.

const maxMsgpackDepth = 32

// decodeMsgpack decodes exactly one MessagePack value from b. Trailing NUL
// bytes (note padding) are allowed; any other trailing data is an error.
func decodeMsgpack(b []byte) (any, error) {
	d := &mpDecoder{b: b}
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	for i := d.off; i < len(b); i++ {
		if b[i] != 0 {
			return nil, fmt.Errorf("%d trailing bytes after the top-level value, at offset %d", len(b)-d.off, d.off)
		}
	}
	return v, nil
}

type mpDecoder struct {
	b   []byte
	off int
}

func (d *mpDecoder) need(n uint64, what string) error {
	if left := uint64(len(d.b) - d.off); n > left {
		return fmt.Errorf("truncated %s at offset %d: need %d bytes, %d left", what, d.off, n, left)
	}
	return nil
}

func (d *mpDecoder) take(n uint64, what string) ([]byte, error) {
	if err := d.need(n, what); err != nil {
		return nil, err
	}
	s := d.b[d.off : d.off+int(n)]
	d.off += int(n)
	return s, nil
}

// uintN reads a big-endian unsigned integer of size bytes (1, 2, 4 or 8).
func (d *mpDecoder) uintN(size int, what string) (uint64, error) {
	s, err := d.take(uint64(size), what)
	if err != nil {
		return 0, err
	}
	switch size {
	case 1:
		return uint64(s[0]), nil
	case 2:
		return uint64(binary.BigEndian.Uint16(s)), nil
	case 4:
		return uint64(binary.BigEndian.Uint32(s)), nil
	default:
		return binary.BigEndian.Uint64(s), nil
	}
}

func (d *mpDecoder) value(depth int) (any, error) {
	if depth > maxMsgpackDepth {
		return nil, fmt.Errorf("nesting deeper than %d at offset %d", maxMsgpackDepth, d.off)
	}
	start := d.off
	tb, err := d.take(1, "type byte")
	if err != nil {
		return nil, err
	}
	t := tb[0]
	switch {
	case t <= 0x7f: // positive fixint
		return int64(t), nil
	case t >= 0xe0: // negative fixint
		return int64(int8(t)), nil
	case t >= 0x80 && t <= 0x8f:
		return d.mapBody(uint64(t&0x0f), depth)
	case t >= 0x90 && t <= 0x9f:
		return d.arrayBody(uint64(t&0x0f), depth)
	case t >= 0xa0 && t <= 0xbf:
		return d.str(uint64(t & 0x1f))
	}
	switch t {
	case 0xc0:
		return nil, nil
	case 0xc2:
		return false, nil
	case 0xc3:
		return true, nil
	case 0xc4, 0xc5, 0xc6: // bin 8/16/32
		n, err := d.uintN(1<<(t-0xc4), "bin length")
		if err != nil {
			return nil, err
		}
		s, err := d.take(n, "bin data")
		if err != nil {
			return nil, err
		}
		return append([]byte(nil), s...), nil
	case 0xc7, 0xc8, 0xc9: // ext 8/16/32
		n, err := d.uintN(1<<(t-0xc7), "ext length")
		if err != nil {
			return nil, err
		}
		return d.ext(n)
	case 0xca:
		u, err := d.uintN(4, "float32")
		if err != nil {
			return nil, err
		}
		return math.Float32frombits(uint32(u)), nil
	case 0xcb:
		u, err := d.uintN(8, "float64")
		if err != nil {
			return nil, err
		}
		return math.Float64frombits(u), nil
	case 0xcc, 0xcd, 0xce, 0xcf: // uint 8/16/32/64
		return d.uintN(1<<(t-0xcc), "uint")
	case 0xd0, 0xd1, 0xd2, 0xd3: // int 8/16/32/64
		size := 1 << (t - 0xd0)
		u, err := d.uintN(size, "int")
		if err != nil {
			return nil, err
		}
		shift := 64 - 8*size // sign-extend
		return int64(u<<shift) >> shift, nil
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1/2/4/8/16
		return d.ext(1 << (t - 0xd4))
	case 0xd9, 0xda, 0xdb: // str 8/16/32
		n, err := d.uintN(1<<(t-0xd9), "str length")
		if err != nil {
			return nil, err
		}
		return d.str(n)
	case 0xdc, 0xdd: // array 16/32
		n, err := d.uintN(2<<(t-0xdc), "array length")
		if err != nil {
			return nil, err
		}
		return d.arrayBody(n, depth)
	case 0xde, 0xdf: // map 16/32
		n, err := d.uintN(2<<(t-0xde), "map length")
		if err != nil {
			return nil, err
		}
		return d.mapBody(n, depth)
	}
	return nil, fmt.Errorf("invalid type byte 0x%02x at offset %d", t, start)
}

func (d *mpDecoder) str(n uint64) (string, error) {
	s, err := d.take(n, "string")
	if err != nil {
		return "", err
	}
	return string(s), nil
}

// ext values do not occur in AMDGPU metadata; they are skipped as opaque.
func (d *mpDecoder) ext(n uint64) (any, error) {
	s, err := d.take(1+n, "ext data")
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), s[1:]...), nil
}

func (d *mpDecoder) arrayBody(n uint64, depth int) ([]any, error) {
	// Every element takes at least one byte: reject impossible counts before
	// allocating.
	if err := d.need(n, "array"); err != nil {
		return nil, err
	}
	a := make([]any, 0, n)
	for i := uint64(0); i < n; i++ {
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
	}
	return a, nil
}

func (d *mpDecoder) mapBody(n uint64, depth int) (map[string]any, error) {
	if err := d.need(2*n, "map"); err != nil {
		return nil, err
	}
	m := make(map[string]any, n)
	for i := uint64(0); i < n; i++ {
		keyAt := d.off
		k, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		ks, ok := k.(string)
		if !ok {
			return nil, fmt.Errorf("map key at offset %d is %s, want string", keyAt, typeName(k))
		}
		if _, dup := m[ks]; dup {
			return nil, fmt.Errorf("duplicate map key %q at offset %d", ks, keyAt)
		}
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m[ks] = v
	}
	return m, nil
}

// asInt normalises any Go integer value (the decoders in use produce int64
// and uint64; other MessagePack libraries produce int8 ... uint64) to int64.
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
