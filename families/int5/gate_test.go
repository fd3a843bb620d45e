package int5

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/parharness/parharness/families/internal/sweep"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/refimpl"
)

// The structured planes hold what their comment promises.
func TestStructuredPlanesCover(t *testing.T) {
	have := map[uint32]bool{}
	for _, p := range structuredPlanes() {
		have[p] = true
	}
	for q := 0; q < 4; q++ {
		for _, bg := range []uint32{0, 0xFFFFFFFF, 0x5A3CA5A5} {
			for v := uint32(0); v < 256; v++ {
				if p := bg&^(0xFF<<(8*q)) | v<<(8*q); !have[p] {
					t.Fatalf("byte %#02x in position %d over %#08x missing", v, q, bg)
				}
			}
		}
	}
	for i := uint32(0); i < 1<<16; i++ {
		if !have[i|uint32(bits.Reverse16(uint16(i)))<<16] {
			t.Fatalf("16-bit pattern %#04x missing", i)
		}
	}
	for i := 0; i < 32; i++ {
		for j := 0; j < 32; j++ {
			w := uint32(1)<<i | uint32(1)<<j
			if !have[w] || !have[^w] {
				t.Fatalf("bits %d, %d set (or clear) missing", i, j)
			}
		}
	}
}

// Every nibble of every weight word meets every value with either fifth
// bit, so the consumer forms see all 32 codes at every position.
func TestListInputsMeetEveryCodeAtEveryNibble(t *testing.T) {
	planes, words := listInputs(1, 0)
	var seen [4][8][32]bool
	for i, p := range planes {
		for q := 0; q < 4; q++ {
			for n := 0; n < 8; n++ {
				seen[q][n][words[4*i+q]>>(4*n)&15|(p>>(8*q+n)&1)<<4] = true
			}
		}
	}
	for q := range seen {
		for n := range seen[q] {
			for c, ok := range seen[q][n] {
				if !ok {
					t.Fatalf("word %d nibble %d never holds code %d", q, n, c)
				}
			}
		}
	}
}

// ListExpect (worked from the layout) and listModel (the kernel's
// algorithm, built on the spread) agree on every structured input: two
// formulations of the same outputs.
func TestListExpectEqualsKernelModel(t *testing.T) {
	planes, words := listInputs(1, 1000)
	for _, arch := range []string{"sm_90a", "gfx1201"} {
		for i, p := range planes {
			w := [4]uint32(words[4*i : 4*i+4])
			e, o := refimpl.Int5Spread(p)
			if got, want := listModel(arch, e, o, w), ListExpect(arch, p, w); got != want {
				t.Fatalf("%s plane %#08x words %#08x:\nmodel  %#08x\nexpect %#08x", arch, p, w, got, want)
			}
		}
	}
}

// Spot values of the expectation, worked by hand.
func TestListExpectHandValues(t *testing.T) {
	// Plane bit 28 = byte 3 bit 4 = nibble 4 of w[3]; w[3] nibble 4 = 0x9:
	// code 25 -> byte 2 of codes_even[3] (nibble 4 = 2*2); 25 - 16 = 9.
	w := [4]uint32{0, 0, 0, 0x00090000}
	o := ListExpect("sm_90a", 1<<28, w)
	if o[3] != 0x00100000 || o[11] != 0x00190000 {
		t.Errorf("even[3] = %#08x, codes_even[3] = %#08x, want 0x00100000, 0x00190000", o[3], o[11])
	}
	// int8 of codes (0, 0, 25, 0) = (-16, -16, 9, -16) = F0 F0 09 F0.
	if o[19] != 0xF009F0F0 {
		t.Errorf("int5_s8x4(codes_even[3]) = %#08x, want 0xF009F0F0", o[19])
	}
	// e4m3: -16 = 0xD8, 9 = 0x51 (2^3 * 1.125).
	if o[27] != 0xD851D8D8 {
		t.Errorf("int5_e4m3x4(codes_even[3]) = %#08x, want 0xD851D8D8", o[27])
	}
	// sm_90 pair 0 of w[0] with code 0 in nibbles 0 and 4: f16(-16) = 0xCC00.
	if o[32] != 0xCC00CC00 {
		t.Errorf("pair 0 of w[0] = %#08x, want 0xCC00CC00", o[32])
	}
	// gfx1201 pair 3 of w[3]: nibbles 3 and 7 = plane bits 27 and 31.
	if g := ListExpect("gfx1201", 1<<31, w)[35]; g != 0x00100000 {
		t.Errorf("gfx1201 pair 3 fifth bits = %#08x, want 0x00100000", g)
	}
}

// listOutputs is the list kernel's output bytes as listModel makes them
// from spread (a buggy unpack in the tests below).
func listOutputs(arch string, planes, words []uint32, spread func(uint32) ([4]uint32, [4]uint32)) []byte {
	out := make([]byte, 4*listWords*len(planes))
	for i, p := range planes {
		e, o := spread(p)
		for k, v := range listModel(arch, e, o, [4]uint32(words[4*i:4*i+4])) {
			binary.LittleEndian.PutUint32(out[4*(listWords*i+k):], v)
		}
	}
	return out
}

// The structured planes alone (no random ones) catch every planted unpack
// bug: any plane bit lost, a
// spread whose partial products carry into a wanted bit (mask 0x57), and
// a bit lost only when a bit of another byte is set.
func TestStructuredSetCatchesPlantedBugs(t *testing.T) {
	planes, words := listInputs(1, 0)
	bugs := map[string]func(uint32) ([4]uint32, [4]uint32){}
	for b := uint(0); b < 32; b++ {
		bugs[fmt.Sprintf("bit%d-dropped", b)] = bitDropped(b)
	}
	bugs["carry-mask-0x57"] = func(p uint32) (e, o [4]uint32) {
		for q := 0; q < 4; q++ {
			x := p >> (8 * q)
			e[q] = (x & 0x57) * refimpl.Int5SpreadMul & refimpl.Int5SpreadMask
			o[q] = (x >> 1 & 0x57) * refimpl.Int5SpreadMul & refimpl.Int5SpreadMask
		}
		return
	}
	mixed := func(p uint32) ([4]uint32, [4]uint32) {
		if p&(1<<23) != 0 {
			p &^= 1 << 28
		}
		return refimpl.Int5Spread(p)
	}
	bugs["bit28-dropped-when-bit23-set"] = mixed
	for name, bug := range bugs {
		t.Run(name, func(t *testing.T) {
			for _, arch := range []string{"sm_90a", "gfx1201"} {
				var f gates.Findings
				if n := compareList(&f, arch, planes, words, listOutputs(arch, planes, words, bug), 0); n == 0 || f.Err() == nil {
					t.Fatalf("%s: planted bug not caught by the structured planes", arch)
				}
			}
		})
	}
	t.Run("correct", func(t *testing.T) {
		var f gates.Findings
		if n := compareList(&f, "sm_90a", planes, words, listOutputs("sm_90a", planes, words, refimpl.Int5Spread), 0); n != 0 {
			t.Fatalf("correct outputs: %d mismatches: %v", n, f.Err())
		}
	})
	// Why the mixed backgrounds: probes of one byte value over zeros never
	// set bit 23 beside bit 28, so they miss the last bug.
	t.Run("single-byte-probes-miss-the-mixed-bug", func(t *testing.T) {
		var single []uint32
		for q := 0; q < 4; q++ {
			for v := uint32(0); v < 256; v++ {
				single = append(single, v<<(8*q))
			}
		}
		w := words[:4*len(single)]
		var f gates.Findings
		if n := compareList(&f, "sm_90a", single, w, listOutputs("sm_90a", single, w, mixed), 0); n != 0 {
			t.Fatalf("single-byte probes caught the mixed-pattern bug (%d): the test's premise is wrong", n)
		}
	})
}

// batchOf turns a per-word unpack into a spreadBatch.
func batchOf(spread func(uint32) ([4]uint32, [4]uint32)) spreadBatch {
	return func(base uint32, out *[256][8]uint32) {
		for i := range out {
			e, o := spread(base + uint32(i))
			out[i] = [8]uint32{e[0], e[1], e[2], e[3], o[0], o[1], o[2], o[3]}
		}
	}
}

// int5-go-unpack's comparison catches a wrong word wherever it is in a
// block (byte 0 comes from a table, bytes 1..3 from the block's reference:
// both paths are compared), and passes the Go unpack.
func TestGoUnpackComparison(t *testing.T) {
	bugs := []struct {
		name   string
		spread func(uint32) ([4]uint32, [4]uint32)
		block  uint64 // a block where the bug shows
	}{
		{"bit28-dropped", bitDropped(28), 0x10000000 >> 8},
		{"bit3-dropped", bitDropped(3), 0},
		{"last-word-of-block", func(p uint32) ([4]uint32, [4]uint32) {
			e, o := refimpl.Int5Spread(p)
			if p == 0x0ABCDEFF {
				o[1] ^= 1 << 12
			}
			return e, o
		}, 0x0ABCDEFF >> 8},
	}
	for _, b := range bugs {
		t.Run(b.name, func(t *testing.T) {
			var log sweep.MismatchLog
			compareSpread(b.block, b.block+4, batchOf(b.spread), &log)
			if log.Count() == 0 {
				t.Fatal("planted bug not caught")
			}
			var f gates.Findings
			log.Report(&f, "test")
			if !strings.Contains(f.Err().Error(), "plane 0x") {
				t.Errorf("report does not name the plane word: %v", f.Err())
			}
		})
	}
	t.Run("go-unpack", func(t *testing.T) {
		var log sweep.MismatchLog
		for _, blk := range []uint64{0, 0x10000000 >> 8, 0xFFFFFF, 0x5A3CA5} {
			compareSpread(blk, blk+1, goSpread, &log)
		}
		for i := uint64(0); i < 1<<12; i++ { // 4096 blocks spread over the range
			blk := i * 4099 % (1 << 24)
			compareSpread(blk, blk+1, goSpread, &log)
		}
		if log.Count() != 0 {
			t.Fatalf("Go unpack: %d mismatches: %v", log.Count(), log.First())
		}
	})
}

func TestSweepArithmetic(t *testing.T) {
	if uint64(sweepFullIters)*sweepThreads != 1<<32 {
		t.Fatalf("full sweep covers %d words", uint64(sweepFullIters)*sweepThreads)
	}
	if got := rangeSum(0, 1<<32); got != 1<<63-1<<31 {
		t.Fatalf("rangeSum(0, 2^32) = %d, want 2^63 - 2^31", got)
	}
	var s uint64
	for p := uint64(0xFFFFFF00); p < 1<<32; p++ {
		s += p
	}
	if got := rangeSum(0xFFFFFF00, 256); got != s {
		t.Fatalf("rangeSum at the top of the range = %d, want %d", got, s)
	}
}

// refDigest evaluates the reference per block; summed word by word it is
// the same.
func TestRefDigestEqualsWordByWord(t *testing.T) {
	base, n := uint64(0x10FF0000), uint64(1<<16)
	var want uint64
	for a := base; a < base+n; a++ {
		e, o := refimpl.Int5SpreadRef(uint32(a))
		want += uint64(digest(uint32(a), e, o))
	}
	if got := refDigest(base, n); got != want {
		t.Fatalf("refDigest = %#x, word by word %#x", got, want)
	}
}

// The sweep kernel keeps the multiply form: the compiler did not fold the
// unpack into its shift/select reference (which would make the sweep
// compare a form with itself).
func TestSweepKernelKeepsTheMultiply(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "build", "sm_90a", "int5.ptx"))
	if err != nil {
		t.Skipf("no sm_90a PTX (run make kernels): %v", err)
	}
	body, _, _ := strings.Cut(string(b)[strings.Index(string(b), ".entry int5_unpack_sweep"):], "\n}\n")
	// 0x00410410 = 4260880: once per spread word, eight per plane word.
	if n := len(regexp.MustCompile(`mul(24)?\.lo\.[su]32\s+%r\d+, %r\d+, 4260880;`).FindAllString(body, -1)); n != 8 {
		t.Fatalf("int5_unpack_sweep has %d multiplies by 0x00410410, want 8", n)
	}
}
