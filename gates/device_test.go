package gates

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/parharness/parharness/gpu"
)

// hostDevice is device memory in a host slice: enough of gpu.Device for the
// guarded-buffer machinery (allocation, copies, memset). Anything else
// panics through the nil embedded interface.
type hostDevice struct {
	gpu.Device
	mem []byte
}

func (d *hostDevice) Malloc(n int) (gpu.Ptr, error) {
	p := gpu.Ptr(len(d.mem) + 256) // never 0
	d.mem = append(d.mem, make([]byte, n)...)
	return p, nil
}
func (d *hostDevice) Free(gpu.Ptr) error         { return nil }
func (d *hostDevice) at(p gpu.Ptr, n int) []byte { return d.mem[int(p)-256 : int(p)-256+n] }
func (d *hostDevice) HtoD(dst gpu.Ptr, src []byte) error {
	copy(d.at(dst, len(src)), src)
	return nil
}
func (d *hostDevice) DtoH(dst []byte, src gpu.Ptr) error {
	copy(dst, d.at(src, len(dst)))
	return nil
}
func (d *hostDevice) Memset(dst gpu.Ptr, v byte, n int) error {
	b := d.at(dst, n)
	for i := range b {
		b[i] = v
	}
	return nil
}

// The guards every gate relies on, run through T on host memory: a write
// into an uploaded input is caught after the launch, and so are one-byte
// overruns on either side; a buffer that became an output (Poison) is no
// longer compared with its upload.
func TestGuardedBuffersThroughT(t *testing.T) {
	for _, c := range []struct {
		name, want string
		scribble   func(d *hostDevice, in, out *Buffer)
	}{
		{"input written", "input buffer in was written at byte offset 10", func(d *hostDevice, in, _ *Buffer) { d.at(in.Ptr(), 64)[10] ^= 1 }},
		{"overrun", "out", func(d *hostDevice, _, out *Buffer) { d.at(out.Ptr(), out.N+1)[out.N] ^= 1 }},
		{"underrun", "out", func(d *hostDevice, _, out *Buffer) { d.at(out.Ptr()-1, 1)[0] ^= 1 }},
		{"output written", "", func(d *hostDevice, _, out *Buffer) { d.at(out.Ptr(), 8)[3] = 7 }},
	} {
		dev := &hostDevice{}
		res := RunGate(&Env{Seed: 1, Dev: dev}, Gate{Name: c.name, Device: true, Run: func(t *T) {
			in, out := t.Buffer("in", 64), t.Buffer("out", 32)
			data := make([]byte, 64)
			for i := range data {
				data[i] = byte(i)
			}
			t.Upload(in, data)
			t.Poison(out, 0xFF)
			c.scribble(dev, in, out)
			t.CheckCanaries("fake kernel")
		}})
		if c.want == "" {
			if res.Status != Pass {
				t.Errorf("%s: %s %s, want PASS (outputs may change)", c.name, res.Status, res.Reason)
			}
			continue
		}
		if res.Status != Fail || !strings.Contains(res.Reason, c.want) {
			t.Errorf("%s: %s %q, want FAIL naming %q", c.name, res.Status, res.Reason, c.want)
		}
	}
}

// An input is re-read whole after a launch, a chunk at a time: a write past
// the first chunk is caught (inputs above a size limit were once skipped).
func TestInputRecheckedPastTheFirstChunk(t *testing.T) {
	defer func(c int) { inputCheckChunk = c }(inputCheckChunk)
	inputCheckChunk = 16
	dev := &hostDevice{}
	res := RunGate(&Env{Seed: 1, Dev: dev}, Gate{Name: "chunks", Device: true, Run: func(t *T) {
		in := t.Buffer("in", 50)
		t.Upload(in, make([]byte, 50))
		dev.at(in.Ptr(), 50)[41] = 9
		t.CheckCanaries("the scribble")
	}})
	if res.Status != Fail || !strings.Contains(res.Reason, "input buffer in was written at byte offset 41") {
		t.Errorf("status %s: %s", res.Status, res.Reason)
	}
}

// The encoders and decoders are inverses, little-endian, and the Put
// forms write at the start of dst only.
func TestLittleEndianCodecs(t *testing.T) {
	f := []float32{0, float32(math.Copysign(0, -1)), 1.5, float32(math.Inf(-1)), math.Float32frombits(0x7FC00001), math.SmallestNonzeroFloat32}
	t.Run("f32", func(t *testing.T) {
		b := F32Bytes(f)
		if b[8] != 0x00 || b[11] != 0x3F || b[10] != 0xC0 { // 1.5 = 0x3FC00000
			t.Errorf("1.5 as % x, want 00 00 c0 3f", b[8:12])
		}
		for i, x := range F32s(b) {
			if math.Float32bits(x) != math.Float32bits(f[i]) {
				t.Errorf("value %d: %#x, want %#x", i, math.Float32bits(x), math.Float32bits(f[i]))
			}
		}
	})
	t.Run("u16 and u32", func(t *testing.T) {
		u := []uint16{0x0102, 0xFFFE}
		if b := U16Bytes(u); b[0] != 0x02 || b[1] != 0x01 || !slices.Equal(U16s(b), u) {
			t.Errorf("U16Bytes % x, back %v", b, U16s(b))
		}
		if got := U32s([]byte{1, 2, 3, 4, 9}); !slices.Equal(got, []uint32{0x04030201}) {
			t.Errorf("U32s: %#x (a trailing partial value is dropped)", got)
		}
	})
	t.Run("put", func(t *testing.T) {
		dst := []byte{9, 9, 9, 9, 9, 9}
		PutU16(dst, []uint16{0xABCD})
		PutF32(dst[2:], []float32{1})
		if !slices.Equal(dst, []byte{0xCD, 0xAB, 0, 0, 0x80, 0x3F}) {
			t.Errorf("dst % x", dst)
		}
	})
}
