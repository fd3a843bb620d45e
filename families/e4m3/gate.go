package e4m3

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/parharness/parharness/families/internal/grid1d"
	"github.com/parharness/parharness/families/internal/sweep"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/refimpl"
)

// The e4m3 codec gates. Every producer kernel encodes activations with the
// codec in hipsrc/format/e4m3.h, and row sums are only exact if the codes
// decode to what the Go references think they do. The chain of trust:
//   Go encoder == nearest-value oracle on all 2^32 inputs      (e4m3-go-oracle)
//   Go decoder == the format's value table, round trips        (e4m3-decode)
//   device software encoder == wrapped hardware, all 2^32      (e4m3-device-sweep)
//   device software encoder == Go encoder                      (e4m3-device-vs-go)
//   device decoders == Go decoder                              (e4m3-device-decode)
//   every lane of the packed converts == Go                    (e4m3-device-lanes)

func init() {
	gates.Register(gates.Gate{Family: Family, Name: "e4m3-go-oracle", Headline: []string{"mismatches", "inputs"}, Suites: gates.Quick | gates.Full, Run: gateE4M3GoOracle,
		Proves: "the Go e4m3 encoder equals an independent nearest-value oracle (ties to even, saturation, NaN, zero) on all 2^32 float32 inputs"})
	gates.Register(gates.Gate{Family: Family, Name: "e4m3-decode", Suites: gates.Quick | gates.Full, Run: gateE4M3Decode,
		Proves: "the Go e4m3 decoder is bit-exact on all 256 codes and dec(enc(dec(c))) == c for every finite code"})
	gates.Register(gates.Gate{Family: Family, Name: "e4m3-device-sweep", Suites: gates.Quick | gates.Full, Device: true, Run: gateE4M3DeviceSweep,
		Proves: "the device software encoder equals the contract-wrapped hardware encoder on all 2^32 float32 inputs (raw hardware mismatches recorded)"})
	gates.Register(gates.Gate{Family: Family, Name: "e4m3-device-vs-go", Suites: gates.Quick | gates.Full, Device: true, Run: gateE4M3DeviceVsGo,
		Proves: "the device software and wrapped hardware encoders equal the Go encoder on boundary values and a seeded sample (quick and full), and the software encoder through e4m3_encode_range (four codes per word) on 11 windows of 2^20 patterns at the format's edges (quick) or on all 2^32 inputs (full; the wrapped hardware encoder on all 2^32 is e4m3-device-sweep)"})
	gates.Register(gates.Gate{Family: Family, Name: "e4m3-device-decode", Suites: gates.Quick | gates.Full, Device: true, Run: gateE4M3DeviceDecode,
		Proves: "the device software decoder equals the Go decoder bit for bit on all 256 codes, and the hardware decoder on every finite code"})
	gates.Register(gates.Gate{Family: Family, Name: "e4m3-device-lanes", Headline: []string{"mismatches", "inputs"}, Suites: gates.Quick | gates.Full, Device: true, Run: gateE4M3DeviceLanes,
		Proves: "every lane of every packed convert the kernels use (e4m3x2 encode, bf16x2 pack, e4m3x2->f16x2 decode, int4 weight-word unpacks) equals Go on all 2^16 patterns in each half-word, the e4m3 boundaries and 2^20 seeded words"})
}

// gateE4M3GoOracle walks the non-negative float32 patterns in increasing
// order with a pointer into the oracle's value table (the nearest value is
// monotone in x), so the oracle costs O(1) per input; each magnitude is
// checked with both signs, covering all 2^32 patterns.
func gateE4M3GoOracle(t *gates.T) {
	table := refimpl.E4M3OracleTable()
	var log sweep.MismatchLog
	const n = uint64(1) << 31
	sweep.Chunks(n, func(lo, hi uint64) {
		// first table index whose value >= x for the chunk's first input
		x0 := float64(math.Float32frombits(uint32(lo)))
		idx := 0
		for idx < len(table)-1 && table[idx] < x0 {
			idx++
		}
		var bad uint64
		for a := lo; a < hi; a++ {
			u := uint32(a)
			x := math.Float32frombits(u)
			var want uint8
			switch {
			case x != x:
				want = 0
			case float64(x) >= refimpl.E4M3MaxFinite:
				want = 0x7E
			default:
				v := float64(x)
				for table[idx] < v {
					idx++
				}
				c := idx // table[c] >= v > table[c-1]
				if c > 0 {
					below, above := v-table[c-1], table[c]-v
					if below < above || (below == above && (c-1)%2 == 0) {
						c--
					}
				}
				want = uint8(c)
			}
			wantNeg := want
			if want != 0 {
				wantNeg |= 0x80
			}
			gp, gn := refimpl.EncodeE4M3Bits(u), refimpl.EncodeE4M3Bits(u|0x80000000)
			if gp != want || gn != wantNeg {
				bad++
				if bad <= 2 {
					log.Add(0, func() string {
						return fmt.Sprintf("bits %#08x: encoder %#02x/%#02x (±), oracle %#02x/%#02x", u, gp, gn, want, wantNeg)
					})
				}
			}
		}
		if bad > 0 {
			log.Add(bad, nil)
		}
	})
	t.Metric("inputs", float64(2*n))
	t.Metric("mismatches", float64(log.Count()))
	log.Report(t, "Go encoder vs nearest-value oracle over all 2^32 inputs")
}

func gateE4M3Decode(t *gates.T) {
	table := refimpl.E4M3OracleTable()
	for c := 0; c < 256; c++ {
		got := refimpl.DecodeE4M3Bits(uint8(c))
		mag := c & 0x7F
		if mag == 0x7F {
			if !math.IsNaN(float64(math.Float32frombits(got))) {
				t.Failf("code %#02x decodes to bits %#08x, want NaN", c, got)
			}
			continue
		}
		want := float32(table[mag])
		wantBits := math.Float32bits(want)
		if c&0x80 != 0 {
			wantBits |= 0x80000000
		}
		if got != wantBits {
			t.Failf("code %#02x decodes to bits %#08x, want %#08x (%g)", c, got, wantBits, want)
		}
		re := refimpl.EncodeE4M3Bits(got)
		if c == 0x80 { // -0 encodes to 0x00 by contract
			if re != 0 {
				t.Failf("enc(dec(0x80)) = %#02x, want 0x00 (zero is never 0x80)", re)
			}
			continue
		}
		if re != uint8(c) {
			t.Failf("enc(dec(%#02x)) = %#02x", c, re)
		}
	}
}

// Sweep geometry: 2^19 threads, each handling 4096 pairs of patterns.
const (
	sweepBlock   = 256
	sweepThreads = 1 << 19
	sweepIters   = (1 << 31) / sweepThreads
)

func gateE4M3DeviceSweep(t *gates.T) {
	counts := t.Buffer("counts", 5*8)
	first := t.Buffer("first", 2*4)
	grid := gpu.D1(sweepThreads / sweepBlock)
	var best float32 = math.MaxFloat32
	var wrap, raw, okWrap, okRaw, sum uint64
	var firstRaw uint32
	for rep := 0; rep < 3; rep++ { // every rep is checked; the best time is reported
		t.Init(counts, make([]byte, 40))
		t.Init(first, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
		ms := sweep.TimedLaunch(t, "e4m3_sweep", grid, gpu.D1(sweepBlock), counts.Ptr(), first.Ptr(), uint32(0), uint32(sweepIters))
		best = min(best, ms)
		c := t.Download(counts)
		f := t.Download(first)
		wrap, raw = binary.LittleEndian.Uint64(c), binary.LittleEndian.Uint64(c[8:])
		okWrap, okRaw, sum = binary.LittleEndian.Uint64(c[16:]), binary.LittleEndian.Uint64(c[24:]), binary.LittleEndian.Uint64(c[32:])
		if wrap > 0 {
			t.Fatalf("software vs wrapped hardware encoder: %d mismatches over 2^32 inputs, first at bits %#08x", wrap, binary.LittleEndian.Uint32(f))
		}
		firstRaw = binary.LittleEndian.Uint32(f[4:])
		// Coverage, every rep (each is a full sweep): both comparisons ran
		// on 2^32 inputs, and the inputs were every pattern once (their sum
		// is Σ u for u < 2^32 = 2^63 - 2^31).
		if wrap+okWrap != 1<<32 || raw+okRaw != 1<<32 {
			t.Fatalf("rep %d: the sweep compared %d (wrapped) and %d (raw) inputs, want 2^32 each: the kernel did not compare every pattern", rep, wrap+okWrap, raw+okRaw)
		}
		if sum != 1<<63-1<<31 {
			t.Fatalf("rep %d: the sweep's inputs sum to %d, want 2^63-2^31 = %d: some pattern was skipped or repeated", rep, sum, uint64(1<<63-1<<31))
		}
		if raw == 0 {
			// The raw hardware gives 0x7F for NaN; zero raw mismatches means
			// the comparison never ran, not that the hardware agrees.
			t.Fatalf("rep %d: raw hardware encoder agreed on all inputs, including NaN: the sweep's comparison did not run", rep)
		}
	}
	t.Metric("inputs", float64(wrap+okWrap))
	t.Metric("mismatches_wrapped", float64(wrap))
	t.Metric("mismatches_raw_hw", float64(raw))
	t.Metric("sweep_ms", float64(best))
	t.Logf("0 mismatches wrapped; raw hardware differs from the contract on %d of 2^32 inputs (first at bits %#08x); sweep %.2f ms (best of 3)", raw, firstRaw, best)
}

// e4m3Boundaries returns the float32 patterns where encoders go wrong: every
// value-table midpoint and its float32 neighbours, every code value, the
// saturation edge, zeros, subnormal float32s, infinities and NaNs, with both
// signs.
func e4m3Boundaries() []uint32 {
	table := refimpl.E4M3OracleTable()
	var out []uint32
	add := func(x float32) {
		u := math.Float32bits(x)
		out = append(out, u, u^0x80000000)
	}
	for i, v := range table {
		add(float32(v))
		if i+1 < len(table) {
			mid := float32((v + table[i+1]) / 2)
			add(mid)
			add(math.Nextafter32(mid, 0))
			add(math.Nextafter32(mid, math.MaxFloat32))
		}
	}
	for _, x := range []float32{448, 464, 480, 1e30, math.MaxFloat32, math.SmallestNonzeroFloat32, 1e-40, 0x1p-126, float32(math.Inf(1))} {
		add(x)
		add(math.Nextafter32(x, 0))
	}
	out = append(out, 0x7FC00000, 0x7F800001, 0x7FFFFFFF, 0xFFC00000, 0xFF800001)
	return out
}

func gateE4M3DeviceVsGo(t *gates.T) {
	var rangeBad uint64
	window := uint64(1 << 20)
	if t.Full() {
		// The software encoder on all 2^32 inputs; the boundary + sample run
		// below still compares the wrapped and raw hardware encoders.
		window = e4m3ExhaustiveChunk
		rangeBad = e4m3DeviceVsGoExhaustive(t)
	} else {
		rangeBad = e4m3DeviceVsGoRanges(t, e4m3QuickRanges(t.Seed()), window, "device software encoder (four codes per word) vs Go encoder on the quick windows")
	}
	// The guard's launch classes the windows above do not reach (one block,
	// a partial last block): small windows at the saturation edge.
	for _, m := range grid1d.Cover("e4m3_encode_range", int(window/4)) {
		rangeBad += e4m3DeviceVsGoRanges(t, []uint64{0x43DF8000}, uint64(4*m), fmt.Sprintf("e4m3_encode_range on %d words (a launch-class window)", m))
	}
	t.Metric("range_mismatches", float64(rangeBad))
	rng := rand.New(rand.NewPCG(t.Seed(), 0xe4))
	inputs := e4m3Boundaries()
	nb := len(inputs)
	const sample = 1 << 22
	for i := 0; i < sample; i++ {
		inputs = append(inputs, rng.Uint32())
	}
	n := len(inputs)
	rawDiff := encodeList(t, inputs)
	// The guard's launch classes (one block or several, the last full or
	// partial) the main list does not reach: prefixes of the list, the
	// boundary values first.
	for _, m := range grid1d.Cover("e4m3_encode_list", n) {
		encodeList(t, inputs[:m])
	}
	t.Metric("inputs", float64(n))
	t.Metric("boundary_inputs", float64(nb))
	t.Metric("raw_hw_mismatches", float64(rawDiff))
	t.Logf("%d boundary values + %d seeded random patterns (seed %d): software and wrapped hardware equal Go; raw hardware differs on %d", nb, sample, t.Seed(), rawDiff)
}

// encodeList runs e4m3_encode_list on inputs (grid1d's geometry) and
// compares the software and wrapped hardware codes with Go; it returns
// the raw hardware's mismatch count (information only).
func encodeList(t *gates.T, inputs []uint32) int {
	n := len(inputs)
	const tail = 64 // elements past n that must stay poisoned
	in := t.Buffer("in", 4*n)
	outs := []*gates.Buffer{t.Buffer("sw", n+tail), t.Buffer("hw", n+tail), t.Buffer("raw", n+tail)}
	raw := make([]byte, 4*n)
	for i, u := range inputs {
		binary.LittleEndian.PutUint32(raw[4*i:], u)
	}
	t.Upload(in, raw)
	for _, o := range outs {
		t.Poison(o, 0xFF) // 0xFF is a NaN code: no contract encoder ever writes it
	}
	t.Launch("e4m3_encode_list", gpu.D1(grid1d.Grid(n)), gpu.D1(grid1d.Block), 0, in.Ptr(), outs[0].Ptr(), outs[1].Ptr(), outs[2].Ptr(), uint32(n))
	sw, hw, rw := t.Download(outs[0]), t.Download(outs[1]), t.Download(outs[2])
	var rawDiff int
	for _, o := range [][]byte{sw, hw, rw} {
		for i := n; i < n+tail; i++ {
			if o[i] != 0xFF {
				t.Fatalf("e4m3_encode_list (n=%d) wrote element %d past n", n, i)
			}
		}
	}
	bad := map[string]int{}
	for i, u := range inputs {
		want := refimpl.EncodeE4M3Bits(u)
		if sw[i] != want {
			if bad["sw"]++; bad["sw"] <= 5 {
				t.Failf("software encoder (n=%d): input bits %#08x: device %#02x, Go %#02x (seed %d)", n, u, sw[i], want, t.Seed())
			}
		}
		if hw[i] != want {
			if bad["hw"]++; bad["hw"] <= 5 {
				t.Failf("wrapped hardware encoder (n=%d): input bits %#08x: device %#02x, Go %#02x (seed %d)", n, u, hw[i], want, t.Seed())
			}
		}
		if rw[i] != want {
			rawDiff++
		}
	}
	for k, v := range bad {
		t.Failf("%s encoder: %d of %d inputs differ from Go", k, v, n)
	}
	return rawDiff
}

// e4m3DeviceVsGoExhaustive compares the device software encoder with the Go
// encoder on all 2^32 inputs, 2^28 at a time (256 MiB of codes per chunk).
func e4m3DeviceVsGoExhaustive(t *gates.T) uint64 {
	var bases []uint64
	for c := uint64(0); c < 1<<32; c += e4m3ExhaustiveChunk {
		bases = append(bases, c)
	}
	n := e4m3DeviceVsGoRanges(t, bases, e4m3ExhaustiveChunk, "device software encoder vs Go encoder over all 2^32 inputs")
	t.Metric("inputs", float64(uint64(1)<<32))
	if n == 0 {
		t.Logf("all 2^32 inputs: device software encoder == Go encoder")
	}
	return n
}

// e4m3ExhaustiveChunk is the window of one exhaustive launch: 2^28
// patterns, 256 MiB of codes.
const e4m3ExhaustiveChunk = 1 << 28

// e4m3QuickRanges are the contiguous windows of 2^20 bit patterns the
// quick suite runs through e4m3_encode_range (its packing of four codes
// per word is otherwise only exercised by the full suite): zero and the
// smallest subnormals, the e4m3 subnormal/normal boundary (2^-6), around
// 1.0, the saturation point 448 and the float32 Inf/NaN boundary, the same
// negated, and one seeded window.
func e4m3QuickRanges(seed uint64) []uint64 {
	var out []uint64
	for _, b := range []uint32{0x00000000, 0x3C7F0000, 0x3F7F8000, 0x43DF8000, 0x7F7F8000} {
		out = append(out, uint64(b), uint64(b|0x80000000))
	}
	r := rand.New(rand.NewPCG(seed, 0x3a9e))
	return append(out, uint64(r.Uint32()&^0xFFFFF))
}

// e4m3DeviceVsGoRanges runs e4m3_encode_range over windows of size bit
// patterns starting at each base (size a multiple of 4, the windows
// inside 2^32) and compares every code with the Go encoder; it returns the
// number of mismatches (reported as failures).
func e4m3DeviceVsGoRanges(t *gates.T, bases []uint64, size uint64, what string) uint64 {
	if size%4 != 0 {
		t.Fatalf("e4m3_encode_range window of %d patterns: not a multiple of 4 (four codes per word)", size)
	}
	n4 := size / 4
	out := t.Buffer("codes", int(size))
	var log sweep.MismatchLog
	host := make([]byte, size)
	for _, c := range bases {
		t.Poison(out, 0xFF)
		t.Launch("e4m3_encode_range", gpu.D1(grid1d.Grid(int(n4))), gpu.D1(grid1d.Block), 0, out.Ptr(), uint32(c), uint32(n4))
		t.DownloadInto(out, host)
		base := c
		sweep.Chunks(size, func(lo, hi uint64) {
			var bad uint64
			for i := lo; i < hi; i++ {
				u := uint32(base + i)
				if w := refimpl.EncodeE4M3Bits(u); host[i] != w {
					bad++
					if bad <= 2 {
						got := host[i]
						log.Add(0, func() string { return fmt.Sprintf("bits %#08x: device %#02x Go %#02x", u, got, w) })
					}
				}
			}
			if bad > 0 {
				log.Add(bad, nil)
			}
		})
	}
	log.Report(t, what)
	return log.Count()
}

func gateE4M3DeviceDecode(t *gates.T) {
	sw := t.Buffer("sw", 256*4)
	hw := t.Buffer("hw", 256*4)
	t.Poison(sw, 0xFF)
	t.Poison(hw, 0xFF)
	t.Launch("e4m3_decode_all", gpu.D1(1), gpu.D1(256), 0, sw.Ptr(), hw.Ptr())
	s, h := t.Download(sw), t.Download(hw)
	for c := 0; c < 256; c++ {
		want := refimpl.DecodeE4M3Bits(uint8(c))
		gs, gh := binary.LittleEndian.Uint32(s[4*c:]), binary.LittleEndian.Uint32(h[4*c:])
		if gs != want {
			t.Failf("software decoder: code %#02x: device bits %#08x, Go %#08x", c, gs, want)
		}
		if c&0x7F == 0x7F {
			// Any NaN is right, but not the poison (0xFFFFFFFF is a NaN too).
			if !math.IsNaN(float64(math.Float32frombits(gh))) || gh == 0xFFFFFFFF {
				t.Failf("hardware decoder: NaN code %#02x gave bits %#08x: not NaN, or never written", c, gh)
			}
		} else if gh != want {
			t.Failf("hardware decoder: code %#02x: device bits %#08x, Go %#08x", c, gh, want)
		}
	}
}
