package e4m3

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/parharness/parharness/families/internal/faketest"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/internal/fakegpu"
	"github.com/parharness/parharness/refimpl"
)

// packLanesExec stands in for pack_lanes: the Go values, with corrupt
// applied to each output word (slot s of input i).
func packLanesExec(arch string, corrupt func(i, s int, w uint32) uint32) func(d *fakegpu.Device, l fakegpu.Launch) error {
	return func(d *fakegpu.Device, l fakegpu.Launch) error {
		if l.Kernel != "pack_lanes" {
			return nil
		}
		n := int(l.Args[2].(uint32))
		in, err := d.Mem(l.Args[0].(gpu.Ptr), 4*n)
		if err != nil {
			return err
		}
		out, err := d.Mem(l.Args[1].(gpu.Ptr), 4*laneWords*n)
		if err != nil {
			return err
		}
		word := func(i int) uint32 { return binary.LittleEndian.Uint32(in[4*i:]) }
		for i := 0; i < n; i++ {
			want := LaneExpect(arch, word(i), word(n-1-i))
			for s, v := range want {
				binary.LittleEndian.PutUint32(out[4*(laneWords*i+s):], corrupt(i, s, v))
			}
		}
		return nil
	}
}

func laneGate(t *testing.T) gates.Gate {
	for _, g := range gates.All() {
		if g.Name == "e4m3-device-lanes" {
			return g
		}
	}
	t.Fatal("gate e4m3-device-lanes not registered")
	return gates.Gate{}
}

// A bug in any one lane of any one packed convert fails the gate, even
// when it touches a single byte of one input in 256: the class the
// one-lane e4m3-device-vs-go cannot see.
func TestLanesGateCatchesEveryLane(t *testing.T) {
	defer func(n int) { laneRandom = n }(laneRandom)
	laneRandom = 1024
	g := laneGate(t)
	for _, info := range faketest.Targets(50 << 20) {
		arch := info.CodeArch()
		t.Run(arch+"/correct", func(t *testing.T) {
			env, dev := faketest.Env(t, info)
			dev.Exec = packLanesExec(arch, func(i, s int, w uint32) uint32 { return w })
			if r := gates.RunGate(env, g); r.Status != gates.Pass {
				t.Fatalf("correct lanes: %s %s", r.Status, r.Reason)
			}
		})
		for s := 0; s < laneWords; s++ {
			for b := 0; b < 4; b++ {
				s, b := s, b
				t.Run(fmt.Sprintf("%s/word%d/byte%d", arch, s, b), func(t *testing.T) {
					env, dev := faketest.Env(t, info)
					dev.Exec = packLanesExec(arch, func(i, slot int, w uint32) uint32 {
						if slot == s && i%256 == 17 {
							return w ^ 1<<(8*b+1) // one wrong bit in one byte lane
						}
						return w
					})
					if r := gates.RunGate(env, g); r.Status != gates.Fail {
						t.Fatalf("bit %d of word %d wrong on 1/256 of inputs: %s", 8*b+1, s, r.Status)
					}
				})
			}
		}
	}
}

// The inputs reach every 16-bit pattern in both halves of a word, so every
// e4m3 pair and every nibble value at every position is converted.
func TestLaneInputsCoverEveryHalfPattern(t *testing.T) {
	in := laneInputs(1, 0)
	var lo, hi [1 << 16]bool
	for _, w := range in {
		lo[uint16(w)], hi[uint16(w>>16)] = true, true
	}
	for p := 0; p < 1<<16; p++ {
		if !lo[p] || !hi[p] {
			t.Fatalf("half pattern %#04x missing (low %v, high %v)", p, lo[p], hi[p])
		}
	}
}

// Spot values of the expectations, worked by hand from the formats.
func TestLaneExpectHandValues(t *testing.T) {
	// sm_90: word 0x00000000 is codes 0 -> c - 8 = -8 in every pair: f16(-8) = 0xC800.
	if got := LaneExpect("sm_90a", 0, 0)[8]; got != 0xC800C800 {
		t.Errorf("w4_pair_f16x2(0, 0) = %#08x, want 0xC800C800", got)
	}
	// nibble 0 = 15 (7), nibble 4 = 8 (0): pair 0 = f16(7) | f16(0) << 16.
	if got := LaneExpect("sm_90a", 0x0008000F, 0)[4]; got != 0x00004700 {
		t.Errorf("pair 0 of 0x0008000F = %#08x, want 0x00004700", got)
	}
	// e4m3 0x38 = 1.0 -> f16 0x3C00; 0xB8 = -1.0 -> 0xBC00.
	if got := LaneExpect("sm_90a", 0xB838, 0)[2]; got != 0xBC003C00 {
		t.Errorf("f16x2 decode of bytes 0x38, 0xB8 = %#08x, want 0xBC003C00", got)
	}
	// encode2(p = 1.0, w = -2.0): low byte 0x38, high byte 0xC0.
	if got := LaneExpect("sm_90a", 0xC0000000, 0x3F800000)[0]; got != 0xC038 {
		t.Errorf("encode2(1, -2) = %#04x, want 0xC038", got)
	}
	// gfx1201 lut: code 8 -> 0 (0x00), code 9 -> 1.0 (0x38), code 0 -> -8 (0xD0).
	if got := LaneExpect("gfx1201", 0x00000908, 0)[2]; got != 0xD0D03800 {
		t.Errorf("w4_lut_e4m3(0x0908) = %#08x, want 0xD0D03800", got)
	}
}

// encodeRangeExec stands in for e4m3_encode_range, with bug applied to
// each packed word (index i of the launch, base pattern u).
func encodeRangeExec(bug func(u, word uint32) uint32) func(d *fakegpu.Device, l fakegpu.Launch) error {
	return func(d *fakegpu.Device, l fakegpu.Launch) error {
		if l.Kernel != "e4m3_encode_range" {
			return nil
		}
		base, n4 := l.Args[1].(uint32), int(l.Args[2].(uint32))
		out, err := d.Mem(l.Args[0].(gpu.Ptr), 4*n4)
		if err != nil {
			return err
		}
		for i := 0; i < n4; i++ {
			u := base + 4*uint32(i)
			var w uint32
			for j := uint32(0); j < 4; j++ {
				w |= uint32(refimpl.EncodeE4M3Bits(u+j)) << (8 * j)
			}
			binary.LittleEndian.PutUint32(out[4*i:], bug(u, w))
		}
		return nil
	}
}

// The quick suite runs e4m3_encode_range too (it packs four codes per
// word, which the list kernel does not): a packing bug fails the quick
// e4m3-device-vs-go, not only the full sweep.
func TestQuickRangesCatchPackingBugs(t *testing.T) {
	var g gates.Gate
	for _, x := range gates.All() {
		if x.Name == "e4m3-device-vs-go" {
			g = x
		}
	}
	info := faketest.Targets(50 << 20)[0]
	for _, c := range []struct {
		name string
		bug  func(u, w uint32) uint32
		want bool
	}{
		{"correct", func(u, w uint32) uint32 { return w }, false},
		{"byte1-repeats-byte0", func(u, w uint32) uint32 { return w&^0xFF00 | (w&0xFF)<<8 }, true},
		{"byte3-shift-23", func(u, w uint32) uint32 { return w&0xFFFFFF | (w>>24)<<23 }, true},
		{"one-window-edge", func(u, w uint32) uint32 {
			if u == 0x43E00000 { // 448: saturation
				return w ^ 1
			}
			return w
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			env, dev := faketest.Env(t, info)
			env.Full = false
			dev.Exec = encodeRangeExec(c.bug)
			r := gates.RunGate(env, g)
			got := strings.Contains(strings.Join(append([]string{r.Reason}, r.Failures...), "\n"), "four codes per word")
			if got != c.want {
				t.Errorf("range check failed=%v, want %v (%s: %v)", got, c.want, r.Status, r.Failures)
			}
		})
	}
}
