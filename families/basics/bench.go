package basics

import (
	"fmt"

	"github.com/parharness/parharness/bench"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/results"
)

// The copy suite: device-to-device copies at several sizes, cold. It is the
// bandwidth ceiling every GB/s figure is compared with, and the engine's
// self-test: "copy+5%" moves 5% more bytes than "copy" and must be called
// slower; the identical-code control must read "~".

func init() {
	bench.RegisterSuite(bench.Suite{Name: "copy", Doc: "device copy at 4 MiB..1 GiB, cold: the bandwidth ceiling, an identical variant the A/B protocol must call ~, and a 5%-more-traffic variant it must call slower", Run: runCopySuite})
}

func init() {
	bench.RegisterSuite(bench.Suite{Name: "launch", Doc: "an empty kernel (1 and 132 blocks) in a graph: the floor under every small kernel's time", Run: runLaunchSuite})
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
		vs = append(vs, bench.Variant{Name: fmt.Sprintf("blocks=%d", blocks), Enqueue: f})
	}
	return c.Measure(bench.Point{Suite: "launch", Kernel: "selftest_empty", Shape: "empty", Regime: bench.Hot, Copies: 1, Variants: vs})
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
	llc := c.Dev.Info().LLCBytes
	footprint := 2 * size
	copies := bench.CopiesFor(footprint, llc)
	src, err := c.Alloc(int64(copies) * size)
	if err != nil {
		return bench.Point{}, err
	}
	dst, err := c.Alloc(int64(copies) * size)
	if err != nil {
		return bench.Point{}, err
	}
	if err := c.Dev.Memset(src, 0x5A, copies*int(size)); err != nil {
		return bench.Point{}, err
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
		Variants: []bench.Variant{{Name: "copy", Enqueue: plain}}}
	if extraPct > 100 {
		// copy_v4_extra re-copies the first extra vectors: more than n would
		// index past the buffers.
		return bench.Point{}, fmt.Errorf("copy: extra traffic %d%% above 100%%", extraPct)
	}
	if extraPct > 0 {
		// The same code as the baseline under another name: the A/B verdict
		// must come out "~" (the control measures the same thing as spread).
		p.Variants = append(p.Variants, bench.Variant{Name: "copy-identical", Enqueue: plain})
		extra := n * int64(extraPct) / 100
		slow, err := c.Launcher("copy_v4_extra", copyGrid(c.Dev, n+extra), block, 0, func(k int) []any {
			off := int(int64(k) * size)
			return []any{src.Add(off), dst.Add(off), uint64(n), uint64(extra)}
		})
		if err != nil {
			return bench.Point{}, err
		}
		p.Variants = append(p.Variants, bench.Variant{Name: fmt.Sprintf("copy+%d%%", extraPct), Enqueue: slow})
	}
	return p, nil
}

func runCopySuite(c *bench.Ctx) error {
	sizes := []int64{4 << 20, 16 << 20, 64 << 20, 256 << 20, 1 << 30}
	for i, s := range sizes {
		if c.Progress != nil {
			c.Progress(i, len(sizes), fmt.Sprintf("copy %d MiB", s>>20))
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
	saved := c.Records
	if err := c.Measure(p); err != nil {
		return results.Ceiling{}, err
	}
	r := c.Records[len(c.Records)-1]
	c.Records = saved
	return results.Ceiling{Name: results.CeilingCopyGBps, Value: r.GBps, Unit: "GB/s",
		How: fmt.Sprintf("copy_v4 1 GiB -> 1 GiB, 16-byte vectors, read+write bytes over the graph-timed trimmed mean (%.1f us/call, cold)", r.TrimmedMeanUS)}, nil
}
