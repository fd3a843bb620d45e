package amdgpu

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeMsgpackEncodings(t *testing.T) {
	cases := []struct {
		in   []byte
		want any
	}{
		{[]byte{0x05}, int64(5)},
		{[]byte{0x7f}, int64(127)},
		{[]byte{0xff}, int64(-1)},
		{[]byte{0xe0}, int64(-32)},
		{[]byte{0xcc, 0xfe}, uint64(254)},
		{[]byte{0xcd, 0x04, 0x10}, uint64(1040)},
		{[]byte{0xce, 0x00, 0x01, 0x11, 0x70}, uint64(70000)},
		{[]byte{0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, uint64(math.MaxUint64)},
		{[]byte{0xd0, 0x80}, int64(-128)},
		{[]byte{0xd1, 0xff, 0x00}, int64(-256)},
		{[]byte{0xd2, 0xff, 0xff, 0xff, 0xfc}, int64(-4)},
		{[]byte{0xd3, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, int64(math.MaxInt64)},
		{[]byte{0xc0}, nil},
		{[]byte{0xc2}, false},
		{[]byte{0xc3}, true},
		{[]byte{0xca, 0x3f, 0x80, 0, 0}, float32(1)},
		{[]byte{0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0}, float64(1)},
		{[]byte{0xa3, 'a', 'b', 'c'}, "abc"},
		{[]byte{0xd9, 2, 'h', 'i'}, "hi"},
		{[]byte{0xda, 0, 1, 'x'}, "x"},
		{[]byte{0xdb, 0, 0, 0, 1, 'y'}, "y"},
		{[]byte{0xc4, 2, 9, 8}, []byte{9, 8}},
		{[]byte{0xd4, 1, 7}, []byte{7}},
		{[]byte{0x92, 0x01, 0xa1, 'z'}, []any{int64(1), "z"}},
		{[]byte{0xdc, 0, 1, 0xc3}, []any{true}},
		{[]byte{0x81, 0xa1, 'k', 0x02}, map[string]any{"k": int64(2)}},
		{[]byte{0xde, 0, 1, 0xa1, 'k', 0xc0}, map[string]any{"k": nil}},
		{[]byte{0x80, 0, 0, 0}, map[string]any{}}, // trailing NUL padding
	}
	for _, c := range cases {
		got, err := decodeMsgpack(c.in)
		if err != nil {
			t.Errorf("% x: %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("% x: got %#v, want %#v", c.in, got, c.want)
		}
	}
}

func TestDecodeMsgpackErrors(t *testing.T) {
	deep := []byte{}
	for range maxMsgpackDepth + 2 {
		deep = append(deep, 0x91)
	}
	deep = append(deep, 0xc0)
	cases := []struct {
		in   []byte
		want string
	}{
		{nil, "truncated type byte"},
		{[]byte{0xc1}, "invalid type byte 0xc1"},
		{[]byte{0xcd, 0x01}, "truncated uint"},
		{[]byte{0xa5, 'a'}, "truncated string"},
		{[]byte{0xdd, 0xff, 0xff, 0xff, 0xff}, "truncated array"},
		{[]byte{0xdf, 0x7f, 0xff, 0xff, 0xff}, "truncated map"},
		{[]byte{0x81, 0x01, 0x02}, "map key at offset 1 is an integer, want string"},
		{[]byte{0x82, 0xa1, 'k', 0x01, 0xa1, 'k', 0x02}, `duplicate map key "k"`},
		{[]byte{0xc0, 0x01}, "1 trailing bytes"},
		{deep, "nesting deeper than"},
	}
	for _, c := range cases {
		_, err := decodeMsgpack(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("% x: error %v, want one containing %q", c.in, err, c.want)
		}
	}
}

// Every Go integer type that a MessagePack decoder may produce normalises.
func TestAsInt(t *testing.T) {
	for _, v := range []any{int(7), int8(7), int16(7), int32(7), int64(7), uint(7), uint8(7), uint16(7), uint32(7), uint64(7)} {
		if x, ok := asInt(v); !ok || x != 7 {
			t.Errorf("asInt(%T 7) = %d, %v", v, x, ok)
		}
	}
	for _, v := range []any{uint64(math.MaxUint64), "7", 7.0, nil, true} {
		if _, ok := asInt(v); ok {
			t.Errorf("asInt(%T %v) accepted", v, v)
		}
	}
	if _, err := count(".vgpr_count", uint64(math.MaxUint64)); err == nil || !strings.Contains(err.Error(), "an integer above 2^63") {
		t.Errorf("count of 2^64-1: %v", err)
	}
	if _, err := count(".vgpr_count", int64(1)<<40); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("count of 2^40: %v", err)
	}
}

// The encoder used by the tests and the decoder agree.
func TestMsgpackRoundTrip(t *testing.T) {
	md := testMetadata(testKernelMap(), testKernelMap())
	got, err := decodeMsgpack(encodeMsgpack(md))
	if err != nil {
		t.Fatal(err)
	}
	co, err := parseMetadata(got)
	if err != nil {
		t.Fatal(err)
	}
	if len(co.Kernels) != 2 || co.Kernels[1].KernargBytes != 20 || co.Target != "amdgcn-amd-amdhsa--gfx1201" {
		t.Fatalf("%+v", co)
	}
}
