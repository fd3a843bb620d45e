package int5

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/parharness/parharness/families/internal/sweep"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/refimpl"
)

// The int5 gates. A 5-bit GEMM trusts the unpack of the fifth-bit plane
// and the codes' values; the chain of trust:
//   Go unpack == shift/select form on all 2^32 plane words      (int5-go-unpack)
//   every code c: c - 16 -> e4m3 -> decode == c - 16, f16 too  (int5-code-table)
//   device unpack == shift/select form on the device, all 2^32 (full),
//     its output digest == the Go reference's, and every consumer form
//     == its definition on structured and random words          (int5-unpack-sweep)
//   device code table == Go on all 32 codes                      (int5-device-code-table)

func init() {
	gates.Register(gates.Gate{Family: Family, Name: "int5-go-unpack", Headline: []string{"mismatches", "words"}, Suites: gates.Quick | gates.Full, Run: gateGoUnpack,
		Proves: "the Go int5 fifth-bit unpack (the device's multiply form, refimpl.Int5SpreadWord) equals the shift/select form on all 2^32 plane words"})
	gates.Register(gates.Gate{Family: Family, Name: "int5-code-table", Headline: []string{"mismatches"}, Suites: gates.Quick | gates.Full, Run: gateCodeTable,
		Proves: "every 5-bit code c (0..31) becomes c - 16 through the xor-and-shift sign extension, and c - 16 encodes to a distinct e4m3 code that decodes to c - 16 exactly; the sm_90 f16 form (0x6400 | c) - 1040 is c - 16 exactly"})
	gates.Register(gates.Gate{Family: Family, Name: "int5-unpack-sweep", Headline: []string{"mismatches", "words"}, Suites: gates.Quick | gates.Full, Device: true, Run: gateUnpackSweep,
		Proves: "the device int5 unpack equals the shift/select form on the device on all 2^32 plane words (full; a seeded 2^24-word range in quick), every word visited once, and its output digest equals the Go reference's; the unpack and every consumer form (byte codes, int8, e4m3, sm_90 f16 pairs) equal their definitions on every byte value in every position over three backgrounds, every 16-bit pattern in both halves, every one- and two-bit word and its complement, and 2^20 seeded words"})
	gates.Register(gates.Gate{Family: Family, Name: "int5-device-code-table", Headline: []string{"mismatches"}, Suites: gates.Quick | gates.Full, Device: true, Run: gateDeviceCodeTable,
		Proves: "on the device, every 5-bit code becomes c - 16 (int5_signed), its e4m3 code from the software and the wrapped hardware encoders equals Go's, and the hardware and software decoders give c - 16 exactly"})
}

// byte0Ref[b] is the reference spread (even[0], odd[0]) of a word whose
// byte 0 is b.
var byte0Ref [256][2]uint32

func init() {
	for b := range byte0Ref {
		e, o := refimpl.Int5SpreadRef(uint32(b))
		byte0Ref[b] = [2]uint32{e[0], o[0]}
	}
}

// spreadBatch is a Go unpack under test: it writes the eight words of the
// unpack of plane word base + i (even[0..3], odd[0..3]) into out[i], for a
// block of 256 words (base a multiple of 256). A block per call keeps the
// exhaustive loop in registers and lets tests plant bugs.
type spreadBatch func(base uint32, out *[256][8]uint32)

// goSpread is the subject of int5-go-unpack: refimpl.Int5SpreadWord, the Go
// unpack, on every word (tests plant bugs in its place).
var goSpread spreadBatch = func(base uint32, out *[256][8]uint32) {
	for i := range out {
		p, r := base+uint32(i), &out[i]
		r[0], r[1], r[2], r[3] = refimpl.Int5SpreadWord(p, 0), refimpl.Int5SpreadWord(p, 1), refimpl.Int5SpreadWord(p, 2), refimpl.Int5SpreadWord(p, 3)
		r[4], r[5], r[6], r[7] = refimpl.Int5SpreadWord(p, 4), refimpl.Int5SpreadWord(p, 5), refimpl.Int5SpreadWord(p, 6), refimpl.Int5SpreadWord(p, 7)
	}
}

// refBlock is the reference spread of block base's words 1..3 (byte 0 of
// base is zero); with byte0Ref it gives every word of the block. Exact:
// output words q of Int5SpreadRef read only bits 8q..8q+7 (its
// definition), so evaluating it per byte is evaluating it.
func refBlock(base uint32) (even, odd [4]uint32) { return refimpl.Int5SpreadRef(base) }

// compareSpread compares spread with the reference on the blocks [lo, hi)
// of 256 words (block b is words 256b..256b+255).
func compareSpread(lo, hi uint64, spread spreadBatch, log *sweep.MismatchLog) {
	var out [256][8]uint32
	var bad uint64
	for blk := lo; blk < hi; blk++ {
		base := uint32(blk << 8)
		re, ro := refBlock(base)
		spread(base, &out)
		for i := range out {
			r := &out[i]
			d := (r[0] ^ byte0Ref[i][0]) | (r[1] ^ re[1]) | (r[2] ^ re[2]) | (r[3] ^ re[3]) |
				(r[4] ^ byte0Ref[i][1]) | (r[5] ^ ro[1]) | (r[6] ^ ro[2]) | (r[7] ^ ro[3])
			if d == 0 {
				continue
			}
			if bad++; bad <= 2 {
				p, got := base+uint32(i), *r
				want := [8]uint32{byte0Ref[i][0], re[1], re[2], re[3], byte0Ref[i][1], ro[1], ro[2], ro[3]}
				log.Add(0, func() string {
					return fmt.Sprintf("plane %#08x: even, odd %#x, want %#x", p, got, want)
				})
			}
		}
	}
	if bad > 0 {
		log.Add(bad, nil)
	}
}

func gateGoUnpack(t *gates.T) {
	var log sweep.MismatchLog
	const n = uint64(1) << 32
	start := time.Now()
	sweep.Chunks(n/256, func(lo, hi uint64) { compareSpread(lo, hi, goSpread, &log) })
	t.Metric("words", float64(n))
	t.Metric("mismatches", float64(log.Count()))
	t.Metric("sweep_s", time.Since(start).Seconds())
	log.Report(t, "Go int5 unpack vs the shift/select form over all 2^32 plane words")
	t.Logf("all 2^32 plane words in %.1f s", time.Since(start).Seconds())
}

func gateCodeTable(t *gates.T) {
	bad := 0
	fail := func(format string, args ...any) {
		bad++
		t.Failf(format, args...)
	}
	seen := map[uint8]int{}
	for c := uint32(0); c < 32; c++ {
		want := int32(c) - 16
		v := refimpl.Int5Signed(c)
		if v != want {
			fail("code %d: Int5Signed = %d, want %d", c, v, want)
		}
		e := refimpl.EncodeE4M3(float32(v))
		if d := refimpl.DecodeE4M3(e); d != float32(want) {
			fail("code %d: c - 16 = %d encodes to e4m3 %#02x, which decodes to %g: not exact", c, want, e, d)
		}
		if o, dup := seen[e]; dup {
			fail("codes %d and %d share e4m3 code %#02x", o, c, e)
		}
		seen[e] = int(c)
		// sm_90 magic form: f16 (0x6400 | c) is 1024 + c; minus 1040 exactly.
		if f := refimpl.F16ToF64(uint16(0x6400|c)) - 1040; f != float64(want) || refimpl.F16ToF64(refimpl.F64ToF16(f)) != f {
			fail("code %d: f16 (0x6400 | c) - 1040 = %g, want %d exactly in f16", c, f, want)
		}
	}
	t.Metric("codes", 32)
	t.Metric("mismatches", float64(bad))
}

// Sweep geometry: 2^20 threads, one word per thread per iteration.
const (
	sweepBlock     = 256
	sweepThreads   = 1 << 20
	sweepFullIters = (1 << 32) / sweepThreads
)

// quickIters sets the quick suite's sweep range: 16 · 2^20 = 2^24 words,
// at a seeded multiple of 2^24 (tests lower it; a power of two).
var quickIters uint32 = 16

// rangeSum is Σ p for p in [base, base+n), modulo 2^64.
func rangeSum(base, n uint64) uint64 { return n*base + n*(n-1)/2 }

// digest is int5_digest: FNV-1a over p and the spread's eight words.
func digest(p uint32, even, odd [4]uint32) uint32 {
	h := uint32(2166136261)
	h = (h ^ p) * 16777619
	for q := 0; q < 4; q++ {
		h = (h ^ even[q]) * 16777619
		h = (h ^ odd[q]) * 16777619
	}
	return h
}

// refDigest is Σ digest(p, reference spread of p) over [base, base+n),
// modulo 2^64; base and n are multiples of 256.
func refDigest(base, n uint64) uint64 {
	var total atomic.Uint64 // wrapping adds commute: the chunk order does not matter
	sweep.Chunks(n/256, func(lo, hi uint64) {
		var s uint64
		for blk := base/256 + lo; blk < base/256+hi; blk++ {
			b := uint32(blk << 8)
			re, ro := refBlock(b)
			for i := range byte0Ref {
				re[0], ro[0] = byte0Ref[i][0], byte0Ref[i][1]
				s += uint64(digest(b+uint32(i), re, ro))
			}
		}
		total.Add(s)
	})
	return total.Load()
}

// sweepResult is int5_unpack_sweep's counters.
type sweepResult struct {
	bad, ok, sum, digest uint64
	first                uint32
}

// runSweep launches int5_unpack_sweep over [base, base + iters·2^20).
func runSweep(t *gates.T, base uint32, iters uint32) (sweepResult, float32) {
	counts := t.Buffer("counts", 4*8)
	first := t.Buffer("first", 4)
	t.Init(counts, make([]byte, 32))
	t.Init(first, []byte{0xff, 0xff, 0xff, 0xff})
	ms := sweep.TimedLaunch(t, "int5_unpack_sweep", gpu.D1(sweepThreads/sweepBlock), gpu.D1(sweepBlock), counts.Ptr(), first.Ptr(), base, iters)
	c, f := t.Download(counts), t.Download(first)
	return sweepResult{
		bad: binary.LittleEndian.Uint64(c), ok: binary.LittleEndian.Uint64(c[8:]),
		sum: binary.LittleEndian.Uint64(c[16:]), digest: binary.LittleEndian.Uint64(c[24:]),
		first: binary.LittleEndian.Uint32(f),
	}, ms
}

func gateUnpackSweep(t *gates.T) {
	// The list first: structured and random words against Go, every
	// consumer form (failures are reported and the sweep still runs).
	planes, words := listInputs(t.Seed(), listRandom)
	listBad := checkList(t, planes, words)
	t.Metric("list_inputs", float64(len(planes)))
	t.Metric("list_mismatches", float64(listBad))

	base, iters := uint32(0), uint32(sweepFullIters)
	if !t.Full() {
		rng := rand.New(rand.NewPCG(t.Seed(), 0x5ee9))
		iters = quickIters
		base = rng.Uint32() &^ (iters*sweepThreads - 1)
	}
	n := uint64(iters) * sweepThreads
	r, ms := runSweep(t, base, iters)
	what := fmt.Sprintf("int5_unpack_sweep over [%#08x, %#x)", base, uint64(base)+n)
	// Coverage first: a sweep that did not compare every word once proves
	// nothing about its mismatch count.
	if r.bad+r.ok != n {
		t.Fatalf("%s compared %d words, want %d: the kernel did not compare every word", what, r.bad+r.ok, n)
	}
	if want := rangeSum(uint64(base), n); r.sum != want {
		t.Fatalf("%s: the words sum to %d, want %d: some word was skipped or repeated", what, r.sum, want)
	}
	if r.bad > 0 {
		t.Failf("%s: the unpack differs from the shift/select form on %d words, first at plane %#08x", what, r.bad, r.first)
	}
	if want := refDigest(uint64(base), n); r.digest != want {
		t.Failf("%s: output digest %#016x, the Go reference's %#016x: the device unpack differs from Go on some word", what, r.digest, want)
	}
	t.Metric("words", float64(n))
	t.Metric("mismatches", float64(r.bad+listBad))
	t.Metric("sweep_ms", float64(ms))
	t.Logf("%s: %d mismatches, digest equal to Go's, %.2f ms; list of %d planes (seed %d): %d mismatches", what, r.bad, ms, len(planes), t.Seed(), listBad)
}

func gateDeviceCodeTable(t *gates.T) {
	out := t.Buffer("table", 32*16)
	t.Poison(out, 0xFF)
	t.Launch("int5_code_table", gpu.D1(1), gpu.D1(32), 0, out.Ptr())
	got := t.Download(out)
	bad := 0
	for c := 0; c < 32; c++ {
		word := func(k int) uint32 { return binary.LittleEndian.Uint32(got[16*c+4*k:]) }
		v := int32(c) - 16
		e := uint32(refimpl.EncodeE4M3(float32(v)))
		f := math.Float32bits(float32(v))
		checks := []struct {
			what      string
			got, want uint32
		}{
			{"int5_signed", word(0), uint32(v)},
			{"e4m3_encode_sw", word(1) & 0xFF, e},
			{"e4m3_encode2_hw", word(1) >> 8, e},
			{"hw_e4m3_to_f32", word(2), f},
			{"e4m3_decode_sw", word(3), f},
		}
		for _, k := range checks {
			if k.got != k.want {
				bad++
				t.Failf("code %d (c - 16 = %d): %s gave %#08x, want %#08x", c, v, k.what, k.got, k.want)
			}
		}
	}
	t.Metric("codes", 32)
	t.Metric("mismatches", float64(bad))
}
