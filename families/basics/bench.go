package basics

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/parharness/parharness/bench"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/results"
	"github.com/parharness/parharness/stats"
)

// The copy suite: device-to-device copies at several sizes, cold. It is the
// bandwidth ceiling every GB/s figure is compared with, and the engine's
// self-test: "copy+5%" moves 5% more bytes than "copy" and must be called
// slower; the identical-code control must read "~".

func init() {
	bench.RegisterSuite(bench.Suite{Family: Family, Name: "copy", Doc: "device copy at 4 MiB..1 GiB, cold: the bandwidth ceiling, an identical variant the A/B protocol must call ~, and a 5%-more-traffic variant it must call slower", Run: runCopySuite,
		Variants: func() []string { return []string{"copy", "copy-identical", "copy+*"} },
		Axes:     "size: 4 MiB..1 GiB (one point per size; M is 0); regime cold"})
}

func init() {
	bench.RegisterSuite(bench.Suite{Family: Family, Name: "launch", Doc: "an empty kernel (1 and 132 blocks) in a graph: the floor under every small kernel's time", Run: runLaunchSuiteTaken,
		Variants: func() []string { return []string{"blocks=*"} },
		Axes:     "one point (shape empty, M 0); blocks: 1 and one per SM; regime hot"})
}

// runLaunchSuite times selftest_empty: what a graph node costs by itself.
// Hot by nature (it touches no memory).
func runLaunchSuite(c *bench.Ctx) error {
	out, err := c.Alloc(256)
	if err != nil {
		return err
	}
	var vs []bench.Variant
	for _, blocks := range []int{1, c.Dev.Info().SMs} {
		f, err := c.Launcher("selftest_empty", gpu.D1(blocks), gpu.D1(256), 0, func(int) []any { return []any{out, uint32(0)} })
		if err != nil {
			return err
		}
		vs = append(vs, bench.Variant{Name: fmt.Sprintf("blocks=%d", blocks), Enqueue: f, Unchecked: "the empty kernel writes nothing"})
	}
	return c.Measure(bench.Point{Suite: "launch", Kernel: "selftest_empty", Shape: "empty", Regime: bench.Hot, Copies: 1, Variants: vs})
}

// runLaunchSuiteTaken is the launch suite's one point, when this run takes it.
func runLaunchSuiteTaken(c *bench.Ctx) error {
	if !c.Take("empty", 0) {
		return nil
	}
	return runLaunchSuite(c)
}

// ReadKernel (scrub_read_v4) reads n 16-byte vectors grid-stride, 256
// threads a block, and stores one word a block: the XOR of every 32-bit
// word its threads read (ReadSink). It is the isolated regime's scrub and,
// over a suite's own buffers, a read roof at their size.
const ReadKernel = "scrub_read_v4"

// ReadGrid is ReadKernel's grid for n vectors: the copy ceiling's.
func ReadGrid(dev gpu.Device, n int64) gpu.Dim3 { return copyGrid(dev, n) }

// RoofKernel (read_v4x4) reads, on any grid, the vectors ReadKernel
// reads on that grid and stores the same words (ReadSink), with four
// independent 16-byte loads in flight a thread. Launched as one resident
// wave (RoofGrid), it is a suite's read roof: no block waits for a slot,
// and the bytes in flight from the first cycle are those of a full
// device.
const RoofKernel = "read_v4x4"

// roofBlocksPerSM stands in for the driver's occupancy where the backend
// does not report it: 2048 threads an SM (sm_90) in 256-thread blocks.
const roofBlocksPerSM = 8

// RoofGrid is RoofKernel's grid for n vectors: every SM full once (the
// driver's count of 256-thread blocks an SM holds), no more blocks than
// n needs.
func RoofGrid(c *bench.Ctx, n int64) (gpu.Dim3, error) {
	per, err := c.Kernels.MaxActiveBlocks(RoofKernel, 256, 0)
	if err != nil {
		return gpu.Dim3{}, fmt.Errorf("read roof grid: %w", err)
	}
	if per <= 0 {
		per = roofBlocksPerSM
	}
	blocks := min((n+255)/256, int64(c.Dev.Info().SMs*per))
	return gpu.D1(int(max(blocks, 1))), nil
}

// ReadSink is what a blocks-block ReadKernel or RoofKernel launch over src
// stores: block b's word is the XOR of the 32-bit words of vectors
// b·256 + t + j·256·blocks.
func ReadSink(src []byte, blocks int) ([]byte, error) {
	if len(src)%16 != 0 || blocks < 1 {
		return nil, fmt.Errorf("%s: %d bytes over %d blocks: want whole 16-byte vectors and a block", ReadKernel, len(src), blocks)
	}
	acc := make([]uint32, blocks)
	stride := 256 * blocks
	for i := 0; i < len(src)/16; i++ {
		b := (i % stride) / 256
		for w := 0; w < 4; w++ {
			acc[b] ^= binary.LittleEndian.Uint32(src[16*i+4*w:])
		}
	}
	out := make([]byte, 4*blocks)
	for b, a := range acc {
		binary.LittleEndian.PutUint32(out[4*b:], a)
	}
	return out, nil
}

// copyGrid is the grid-stride launch geometry for n 16-byte vectors.
func copyGrid(dev gpu.Device, n int64) gpu.Dim3 {
	blocks := min((n+255)/256, int64(dev.Info().SMs)*16)
	return gpu.D1(int(max(blocks, 1)))
}

// CopyPoint builds a cold copy point of size bytes (each way) with the
// plain copy and, if extraPct > 0, a variant that moves extraPct% more:
// copy_v4_extra copies the first extraPct% again after the whole buffer.
// Above the last-level cache that is extraPct% more DRAM traffic; at or
// below it the re-read first part can still be cache-resident, so the
// variant is slower by less (its purpose is only to be slower: the A/B
// protocol's positive control).
func CopyPoint(c *bench.Ctx, size int64, extraPct int) (bench.Point, error) {
	return copyPointRotating(c, size, extraPct, bench.ColdFactor)
}

// copyPointRotating is CopyPoint with a rotation of factor x the
// last-level cache.
func copyPointRotating(c *bench.Ctx, size int64, extraPct int, factor int64) (bench.Point, error) {
	llc := c.Dev.Info().LLCBytes
	footprint := 2 * size
	copies := int(factor*int64(llc)/footprint) + 1
	src, err := c.Alloc(int64(copies) * size)
	if err != nil {
		return bench.Point{}, err
	}
	dst, err := c.Alloc(int64(copies) * size)
	if err != nil {
		return bench.Point{}, err
	}
	pattern := copyPattern()
	if err := bench.UploadRepeated(c, src, int64(copies)*size, pattern); err != nil {
		return bench.Point{}, err
	}
	// Every copy of dst must equal its src: the pattern continued from the
	// copy's offset (UploadRepeated wrote it across the copies).
	check := &bench.Check{
		Prepare: func(k int) error { return c.Dev.Memset(dst.Add(int(int64(k)*size)), 0xFF, int(size)) },
		Verify:  func(k int) error { return verifyCopy(c.Dev, dst.Add(int(int64(k)*size)), size, int64(k)*size, pattern) },
	}
	n := size / 16
	grid, block := copyGrid(c.Dev, n), gpu.D1(256)
	plain, err := c.Launcher("copy_v4", grid, block, 0, func(k int) []any {
		off := int(int64(k) * size)
		return []any{src.Add(off), dst.Add(off), uint64(n)}
	})
	if err != nil {
		return bench.Point{}, err
	}
	p := bench.Point{Suite: "copy", Kernel: "copy_v4", Shape: fmt.Sprintf("%dMiB", size>>20), Regime: bench.Cold,
		Bytes: 2 * size, Footprint: footprint, Copies: copies,
		Variants: []bench.Variant{{Name: "copy", Enqueue: plain, Check: check}}}
	if extraPct > 100 {
		// copy_v4_extra re-copies the first extra vectors: more than n would
		// index past the buffers.
		return bench.Point{}, fmt.Errorf("copy: extra traffic %d%% above 100%%", extraPct)
	}
	if extraPct > 0 {
		// The same code as the baseline under another name: the A/B verdict
		// must come out "~" (the control measures the same thing as spread).
		p.Variants = append(p.Variants, bench.Variant{Name: "copy-identical", Enqueue: plain, Check: check})
		extra := n * int64(extraPct) / 100
		slow, err := c.Launcher("copy_v4_extra", copyGrid(c.Dev, n+extra), block, 0, func(k int) []any {
			off := int(int64(k) * size)
			return []any{src.Add(off), dst.Add(off), uint64(n), uint64(extra)}
		})
		if err != nil {
			return bench.Point{}, err
		}
		p.Variants = append(p.Variants, bench.Variant{Name: fmt.Sprintf("copy+%d%%", extraPct), Enqueue: slow, Check: check})
	}
	return p, nil
}

// copyPattern is the source pattern of the copy points: random bytes in a
// block whose length is no power of two, so a copy that lands at a wrong
// offset (by a vector, a block or a power-of-two stride) differs from it.
func copyPattern() []byte {
	rng := rand.New(rand.NewPCG(0xc0, 0x9))
	b := make([]byte, 1<<20+48)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// verifyCopy compares size bytes at dst with the pattern as repeated from
// byte offset off of the source, a chunk at a time.
func verifyCopy(dev gpu.Device, dst gpu.Ptr, size, off int64, pattern []byte) error {
	const chunk = 64 << 20
	got := make([]byte, min(chunk, size))
	for at := int64(0); at < size; at += chunk {
		n := min(chunk, size-at)
		if err := dev.DtoH(got[:n], dst.Add(int(at))); err != nil {
			return err
		}
		for i := int64(0); i < n; {
			pos := (off + at + i) % int64(len(pattern))
			seg := min(int64(len(pattern))-pos, n-i)
			if g, w := got[i:i+seg], pattern[pos:pos+seg]; !bytes.Equal(g, w) {
				j := 0
				for g[j] == w[j] {
					j++
				}
				return fmt.Errorf("byte %d is %#02x, want %#02x (the source's)", at+i+int64(j), g[j], w[j])
			}
			i += seg
		}
	}
	return nil
}

func runCopySuite(c *bench.Ctx) error {
	sizes := []int64{4 << 20, 16 << 20, 64 << 20, 256 << 20, 1 << 30}
	for i, s := range sizes {
		if c.Progress != nil {
			c.Progress(i, len(sizes), fmt.Sprintf("copy %d MiB", s>>20))
		}
		if !c.Take(fmt.Sprintf("%dMiB", s>>20), 0) {
			continue
		}
		p, err := CopyPoint(c, s, 5)
		if err != nil {
			c.FreeAll()
			return err
		}
		if err := c.Measure(p); err != nil {
			return err
		}
	}
	return nil
}

// MeasureCopyCeiling times a 1 GiB cold copy and returns the ceiling
// (read+write bytes per second).
func MeasureCopyCeiling(c *bench.Ctx) (results.Ceiling, error) {
	p, err := CopyPoint(c, 1<<30, 0)
	if err != nil {
		c.FreeAll()
		return results.Ceiling{}, err
	}
	p.Suite = "ceiling"
	defer c.FreeAll()
	recs, err := c.Engine.Measure(p)
	if err != nil {
		return results.Ceiling{}, err
	}
	r := recs[0]
	if r.Failed() {
		return results.Ceiling{}, fmt.Errorf("the copy kernel's output is wrong, so it measures no ceiling: %s", r.Check.Reason)
	}
	return results.Ceiling{Name: results.CeilingCopyGBps, Value: r.GBps, Unit: "GB/s",
		How: fmt.Sprintf("copy_v4 1 GiB -> 1 GiB, 16-byte vectors, read+write bytes over the graph-timed trimmed mean (%.1f us/call, cold)", r.TrimmedMeanUS)}, nil
}

// Scrub kinds (bench2 --scrub): what the isolated regime runs before each
// timed launch.
const (
	// ScrubRead reads ScrubFactor x the last-level cache (scrub_read_v4):
	// the cache ends full of clean lines, so the timed launch evicts
	// without writing back, as after a profiler's cache flush.
	ScrubRead = "read"
	// ScrubCopy copies ScrubFactor x the cache into another buffer
	// (copy_v4): the cache ends full of the copy's dirty lines, and the
	// timed launch pays their write-back as it evicts them.
	ScrubCopy = "copy"
)

// ScrubFactor is the scrub's size over the last-level cache.
const ScrubFactor = 3

// Scrub is the isolated regime's cache scrub.
type Scrub struct {
	Run  func(gpu.Stream) error
	How  string // what it does, for the results
	Free func() // releases its buffers, which outlive the points
}

// NewScrub returns a scrub of the given kind over factor x the last-level
// cache.
func NewScrub(c *bench.Ctx, kind string, factor int64) (*Scrub, error) {
	llc := int64(c.Dev.Info().LLCBytes)
	if llc <= 0 {
		return nil, fmt.Errorf("scrub: the device's last-level cache size is unknown")
	}
	size := factor * llc / 16 * 16
	kernel := ReadKernel
	switch kind {
	case ScrubRead:
	case ScrubCopy:
		kernel = "copy_v4"
	default:
		return nil, fmt.Errorf("scrub: kind %q: want %q or %q", kind, ScrubRead, ScrubCopy)
	}
	n := size / 16
	grid := copyGrid(c.Dev, n)
	var bufs []gpu.Ptr
	free := func() {
		for _, p := range bufs {
			c.Dev.Free(p)
		}
	}
	// The second buffer is the copy's destination, or the read's sink of
	// one word a block.
	second := size
	if kind == ScrubRead {
		second = 4 * int64(grid.X)
	}
	for _, bytes := range []int64{size, second} {
		p, err := c.Dev.Malloc(int(bytes))
		if err != nil {
			free()
			return nil, fmt.Errorf("scrub: allocating %d bytes: %w", bytes, err)
		}
		bufs = append(bufs, p)
	}
	f, err := c.Launcher(kernel, grid, gpu.D1(256), 0, func(int) []any { return []any{bufs[0], bufs[1], uint64(n)} })
	if err != nil {
		free()
		return nil, err
	}
	how := fmt.Sprintf("%s reads %d MiB (%dx the %d MiB last-level cache), writes %d bytes", kernel, size>>20, factor, llc>>20, second)
	if kind == ScrubCopy {
		how = fmt.Sprintf("%s copies %d MiB into another buffer (%dx the %d MiB last-level cache each way)", kernel, size>>20, factor, llc>>20)
	}
	return &Scrub{Run: func(s gpu.Stream) error { return f(s, 0) }, How: how, Free: free}, nil
}

// ScrubCheck shows that the isolated regime's scrub evicts: a copy of a
// quarter of the last-level cache each way, timed alone after a scrub of
// this kind at ScrubFactor, after one at twice that, and right after four
// runs of the same copy (hot), interleaved, with the first arm run twice
// as its own control. If the scrub left part of the copy's data resident,
// the doubled scrub would make the copy slower; if it evicted nothing, the
// hot copy would not be faster. It sees a residue that moves the copy by
// more than the control's spread (stats.Compare), not a small one; the
// doubled scrub also touches more pages, so a tighter threshold would
// mistake TLB misses for residency.
//
// Its copy's buffers are freed on return (Ctx.FreeAll): call it between
// points.
func ScrubCheck(c *bench.Ctx, kind string, reps int) (*results.ScrubCheck, error) {
	defer c.FreeAll()
	var scrubs [2]*Scrub
	for i, f := range []int64{ScrubFactor, 2 * ScrubFactor} {
		sc, err := NewScrub(c, kind, f)
		if err != nil {
			return nil, err
		}
		defer sc.Free()
		scrubs[i] = sc
	}
	// A quarter of the cache each way: resident whole when hot, and large
	// enough that residency, not the launch, sets its time.
	size := int64(c.Dev.Info().LLCBytes) / 4 / 16 * 16
	src, err := c.Alloc(size)
	if err != nil {
		return nil, err
	}
	dst, err := c.Alloc(size)
	if err != nil {
		return nil, err
	}
	n := size / 16
	cp, err := c.Launcher("copy_v4", copyGrid(c.Dev, n), gpu.D1(256), 0, func(int) []any { return []any{src, dst, uint64(n)} })
	if err != nil {
		return nil, err
	}
	arms := []bench.IsolatedArm{
		{Name: "scrub", Scrub: scrubs[0].Run, Enqueue: cp},
		{Name: "scrub2x", Scrub: scrubs[1].Run, Enqueue: cp},
		// Hot: the same copy four times just before, so its data is
		// resident, and the timed launch queues behind kernels as in the
		// other arms (an idle stream would put the host's launch latency
		// inside the events; one copy is too short to cover it).
		{Name: "hot", Scrub: func(st gpu.Stream) error {
			for range 4 {
				if err := cp(st, 0); err != nil {
					return err
				}
			}
			return nil
		}, Enqueue: cp},
		{Name: "control", Scrub: scrubs[0].Run, Enqueue: cp},
	}
	s, err := c.Engine.TimeIsolatedArms(arms, reps)
	if err != nil {
		return nil, fmt.Errorf("scrub check: %w", err)
	}
	return judgeScrub(scrubs[0].How, 2*size, s)
}

// judgeScrub is ScrubCheck's verdict on the samples of its four arms.
func judgeScrub(how string, bytes int64, s map[string][]float64) (*results.ScrubCheck, error) {
	noise, err := stats.ControlSpread(s["scrub"], s["control"])
	if err != nil {
		return nil, fmt.Errorf("scrub check: %w", err)
	}
	v2, err := stats.Compare(s["scrub"], s["scrub2x"], noise)
	if err != nil {
		return nil, fmt.Errorf("scrub check: %w", err)
	}
	vh, err := stats.Compare(s["scrub"], s["hot"], noise)
	if err != nil {
		return nil, fmt.Errorf("scrub check: %w", err)
	}
	t := func(name string) float64 { m, _ := stats.TrimmedMean(s[name]); return m }
	r := &results.ScrubCheck{Scrub: how, BytesPerCall: bytes, ScrubUS: t("scrub"), Scrub2xUS: t("scrub2x"), HotUS: t("hot"),
		Scrub2xDeltaPct: v2.DeltaPct(), HotDeltaPct: vh.DeltaPct(), NoisePct: noise, OK: true}
	switch {
	case v2.Call == stats.Slower:
		r.OK, r.Why = false, fmt.Sprintf("after the doubled scrub the copy is %+.2f%% slower (noise %.2f%%): the scrub leaves data resident", r.Scrub2xDeltaPct, noise)
	case vh.Call != stats.Faster:
		why := vh.Why
		if vh.Call == stats.Slower {
			why = "slower"
		}
		r.OK, r.Why = false, fmt.Sprintf("the hot copy is not faster than the scrubbed one (%+.2f%%, %s): the scrub evicts nothing measurable", r.HotDeltaPct, why)
	}
	return r, nil
}

// EvictionCheck shows that the stream regime's rotation evicts: the same
// copy (8 MiB each way per call) rotated through 3x and through 6x the
// last-level cache must run at the same speed, within the sum of the two
// points' control spreads (at least 1%). If a 3x rotation left part of
// the data resident, the 3x point would read faster.
func EvictionCheck(c *bench.Ctx) (*results.EvictionCheck, error) {
	const size = 8 << 20
	var us [2]float64
	var spread [2]float64
	for i, factor := range []int64{3, 6} {
		p, err := copyPointRotating(c, size, 0, factor)
		if err != nil {
			return nil, err
		}
		p.Shape = fmt.Sprintf("8MiB rotated %dx LLC", factor)
		recs, err := c.Engine.Measure(p)
		if err != nil {
			return nil, err
		}
		r := recs[0]
		if r.Failed() {
			return nil, fmt.Errorf("eviction check: the copy failed its output check: %s", r.Check.Reason)
		}
		us[i] = r.TrimmedMeanUS
		if r.Control != nil {
			spread[i] = r.Control.SpreadPct
		}
	}
	diff := 100 * (us[0]/us[1] - 1)
	noise := max(spread[0]+spread[1], 1)
	return &results.EvictionCheck{BytesPerCall: 2 * size, Rot3xUS: us[0], Rot6xUS: us[1], DiffPct: diff, NoisePct: noise, OK: math.Abs(diff) <= noise}, nil
}
