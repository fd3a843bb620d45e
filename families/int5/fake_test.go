package int5

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/parharness/parharness/families/internal/faketest"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/internal/fakegpu"
	"github.com/parharness/parharness/refimpl"
)

// The int5 device gates on a fake device. A no-op device (every launch
// accepted, nothing computed) must fail every gate in the full suite, with
// no launch mismatching its kernel's parameters, and the gates together
// must run every registered int5 kernel.
func TestNoOpDeviceFailsGatesAndRunsEveryKernel(t *testing.T) {
	for _, info := range faketest.Targets(50 << 20) {
		env, dev := faketest.Env(t, info)
		ran := 0
		for _, g := range gates.All() {
			if g.Family != Family || !g.Device {
				continue
			}
			ran++
			if res := gates.RunGate(env, g); res.Status != gates.Fail || len(faketest.ArgumentErrors(res)) > 0 {
				t.Errorf("%s %s on a no-op device: %s (%s)", info.Arch, g.Name, res.Status, res.Reason)
			}
		}
		if ran == 0 {
			t.Fatalf("no device gate of family %s", Family)
		}
		if miss := faketest.Missing(faketest.Registered(Family, info), dev.Kernels()); len(miss) > 0 {
			t.Errorf("%s: registered int5 kernels no gate ran: %v", info.Arch, miss)
		}
	}
}

// standIn is a Go model of the int5 kernels with bugs to plant:
//   - spread and sweepSpread are the unpack the list and the sweep kernels
//     run (int5_spread: a bug in the header is in both);
//   - sweepRef is the sweep's shift/select form (a bug planted in it and in
//     sweepSpread is one the sweep cannot see: only the digest can);
//   - skip drops a word from the sweep's range;
//   - corrupt changes list output word s of input i;
//   - table changes code-table word k of code c.
type standIn struct {
	spread, sweepSpread func(uint32) (even, odd [4]uint32)
	sweepRef            func(uint32) (even, odd [4]uint32)
	skip                func(p uint32) bool
	corrupt             func(i, s int, v uint32) uint32
	table               func(c, k int, v uint32) uint32
}

func correct() *standIn {
	return &standIn{spread: refimpl.Int5Spread, sweepSpread: refimpl.Int5Spread, sweepRef: refimpl.Int5SpreadRef}
}

// listModel is int5_unpack_list's algorithm in Go: the consumer forms built
// from the spread words, as the kernel builds them.
func listModel(arch string, even, odd, w [4]uint32) [listWords]uint32 {
	perByte := func(y uint32, f func(c uint32) uint32) uint32 {
		var r uint32
		for b := 0; b < 4; b++ {
			r |= f(y>>(8*b)&0xFF) << (8 * b)
		}
		return r
	}
	s8 := func(c uint32) uint32 { return uint32(uint8(int8(refimpl.Int5Signed(c)))) }
	e4 := func(c uint32) uint32 { return uint32(refimpl.EncodeE4M3(float32(refimpl.Int5Signed(c)))) }
	var o [listWords]uint32
	for q := 0; q < 4; q++ {
		ce, co := w[q]&0x0F0F0F0F|even[q], w[q]>>4&0x0F0F0F0F|odd[q]
		o[q], o[4+q], o[8+q], o[12+q] = even[q], odd[q], ce, co
		o[16+q], o[20+q] = perByte(ce, s8), perByte(co, s8)
		o[24+q], o[28+q] = perByte(ce, e4), perByte(co, e4)
	}
	for j := 0; j < 4; j++ {
		src := even[j]
		if j&1 == 1 {
			src = odd[j]
		}
		fifth := src >> (8 * (j >> 1)) & 0x00100010
		if arch == "gfx1201" {
			o[32+j] = fifth
			continue
		}
		x := w[j] >> (4 * j) & 0x000F000F
		lo, hi := (x&0xF|fifth&0x10)&31, (x>>16&0xF|fifth>>16&0x10)&31
		o[32+j] = uint32(refimpl.F32ToF16(float32(int(lo)-16))) | uint32(refimpl.F32ToF16(float32(int(hi)-16)))<<16
	}
	return o
}

func (s *standIn) exec(arch string) func(d *fakegpu.Device, l fakegpu.Launch) error {
	return func(d *fakegpu.Device, l fakegpu.Launch) error {
		switch l.Kernel {
		case "int5_unpack_list":
			n := int(l.Args[3].(uint32))
			planes, err := d.Mem(l.Args[0].(gpu.Ptr), 4*n)
			if err != nil {
				return err
			}
			words, err := d.Mem(l.Args[1].(gpu.Ptr), 16*n)
			if err != nil {
				return err
			}
			out, err := d.Mem(l.Args[2].(gpu.Ptr), 4*listWords*n)
			if err != nil {
				return err
			}
			for i := 0; i < n; i++ {
				var w [4]uint32
				for q := range w {
					w[q] = binary.LittleEndian.Uint32(words[16*i+4*q:])
				}
				e, o := s.spread(binary.LittleEndian.Uint32(planes[4*i:]))
				for k, v := range listModel(arch, e, o, w) {
					if s.corrupt != nil {
						v = s.corrupt(i, k, v)
					}
					binary.LittleEndian.PutUint32(out[4*(listWords*i+k):], v)
				}
			}
		case "int5_unpack_sweep":
			counts, err := d.Mem(l.Args[0].(gpu.Ptr), 32)
			if err != nil {
				return err
			}
			first, err := d.Mem(l.Args[1].(gpu.Ptr), 4)
			if err != nil {
				return err
			}
			base, iters := l.Args[2].(uint32), l.Args[3].(uint32)
			threads := l.Grid.X * l.Block.X
			var bad, ok, sum, dig uint64
			firstBad := uint32(math.MaxUint32)
			for k := uint64(0); k < uint64(iters)*uint64(threads); k++ {
				p := base + uint32(k)
				if s.skip != nil && s.skip(p) {
					continue
				}
				e, o := s.sweepSpread(p)
				re, ro := s.sweepRef(p)
				if e != re || o != ro {
					bad++
					firstBad = min(firstBad, p)
				} else {
					ok++
				}
				sum += uint64(p)
				dig += uint64(digest(p, e, o))
			}
			for i, v := range []uint64{bad, ok, sum, dig} {
				binary.LittleEndian.PutUint64(counts[8*i:], binary.LittleEndian.Uint64(counts[8*i:])+v)
			}
			binary.LittleEndian.PutUint32(first, min(binary.LittleEndian.Uint32(first), firstBad))
		case "int5_code_table":
			out, err := d.Mem(l.Args[0].(gpu.Ptr), 32*16)
			if err != nil {
				return err
			}
			for c := uint32(0); c < 32; c++ {
				v := refimpl.Int5Signed(c)
				e := uint32(refimpl.EncodeE4M3(float32(v)))
				f := refimpl.DecodeE4M3Bits(uint8(e))
				for k, x := range []uint32{uint32(v), e | e<<8, f, f} {
					if s.table != nil {
						x = s.table(int(c), k, x)
					}
					binary.LittleEndian.PutUint32(out[16*c+4*uint32(k):], x)
				}
			}
		}
		return nil
	}
}

func gateNamed(t *testing.T, name string) gates.Gate {
	for _, g := range gates.All() {
		if g.Name == name {
			return g
		}
	}
	t.Fatalf("gate %s not registered", name)
	return gates.Gate{}
}

// runQuick runs a gate in the quick suite with the stand-in on both code
// archs' fakes, and checks the status and that the first failure says want.
func runQuick(t *testing.T, name string, s *standIn, status gates.Status, want string) {
	t.Helper()
	g := gateNamed(t, name)
	for _, info := range faketest.Targets(50 << 20) {
		env, dev := faketest.Env(t, info)
		env.Full = false
		dev.Exec = s.exec(info.CodeArch())
		r := gates.RunGate(env, g)
		text := r.Reason + strings.Join(r.Failures, "\n")
		if r.Status != status || !strings.Contains(text, want) {
			t.Errorf("%s on %s: %s, want %s saying %q:\n%s", name, info.CodeArch(), r.Status, status, want, text)
		}
	}
}

// bitDropped is the unpack with plane bit b read as zero.
func bitDropped(b uint) func(uint32) ([4]uint32, [4]uint32) {
	return func(p uint32) ([4]uint32, [4]uint32) { return refimpl.Int5Spread(p &^ (1 << b)) }
}

func TestUnpackSweepGate(t *testing.T) {
	t.Run("correct", func(t *testing.T) { runQuick(t, "int5-unpack-sweep", correct(), gates.Pass, "") })
	// Bit 28 lost in the header's unpack (both kernels run it): the
	// quick sweep's range has bit 28 fixed, so it is the list that fails.
	t.Run("bit28-dropped", func(t *testing.T) {
		s := correct()
		s.spread, s.sweepSpread = bitDropped(28), bitDropped(28)
		runQuick(t, "int5-unpack-sweep", s, gates.Fail, "int5_spread even[3]")
	})
	// A bug the device's own comparison cannot see (its shift/select form
	// carries it too): the digest differs from Go's.
	t.Run("self-consistent-bug", func(t *testing.T) {
		s := correct()
		s.sweepSpread, s.sweepRef = bitDropped(5), bitDropped(5)
		runQuick(t, "int5-unpack-sweep", s, gates.Fail, "digest")
	})
	t.Run("sweep-mismatch", func(t *testing.T) {
		s := correct()
		s.sweepRef = bitDropped(3)
		runQuick(t, "int5-unpack-sweep", s, gates.Fail, "differs from the shift/select form")
	})
	t.Run("word-skipped", func(t *testing.T) {
		s := correct()
		s.skip = func(p uint32) bool { return p&0xFFFFF == 0x12345 }
		runQuick(t, "int5-unpack-sweep", s, gates.Fail, "did not compare every word")
	})
	// One consumer form wrong in one byte lane on 1 input in 256.
	for _, slot := range []int{8, 17, 26, 31, 33} {
		t.Run("list-slot-"+listSlot("sm_90a", slot), func(t *testing.T) {
			s := correct()
			s.corrupt = func(i, k int, v uint32) uint32 {
				if k == slot && i%256 == 99 {
					return v ^ 1<<17
				}
				return v
			}
			runQuick(t, "int5-unpack-sweep", s, gates.Fail, "of ")
		})
	}
}

func TestDeviceCodeTableGate(t *testing.T) {
	t.Run("correct", func(t *testing.T) { runQuick(t, "int5-device-code-table", correct(), gates.Pass, "") })
	for k, what := range []string{"int5_signed", "e4m3_encode_sw", "hw_e4m3_to_f32", "e4m3_decode_sw"} {
		t.Run(what, func(t *testing.T) {
			s := correct()
			s.table = func(c, kk int, v uint32) uint32 {
				if c == 3 && kk == k {
					return v ^ 1
				}
				return v
			}
			runQuick(t, "int5-device-code-table", s, gates.Fail, what)
		})
	}
	t.Run("e4m3_encode2_hw", func(t *testing.T) {
		s := correct()
		s.table = func(c, k int, v uint32) uint32 {
			if c == 30 && k == 1 {
				return v ^ 1<<8
			}
			return v
		}
		runQuick(t, "int5-device-code-table", s, gates.Fail, "e4m3_encode2_hw")
	})
}
