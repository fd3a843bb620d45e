package gates

import (
	"encoding/binary"

	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/kernels"
)

// SharedPoison is the byte every SM's shared memory holds when a gate's
// kernel starts (kernels.SharedPoison): before every launch a gate makes,
// kernels.SharedFill leaves it in all of every SM's shared memory, so an
// output that depends on shared memory the kernel never wrote fails the
// gate's NaN and bound checks.
const SharedPoison = kernels.SharedPoison

// sharedPoison is a gate's shared-memory fill, made at its first launch,
// which also runs the probe.
type sharedPoison struct {
	probed bool
	fill   *kernels.SharedFill // nil: no fill kernel; launches go unpoisoned (noted once)
}

// poisonShared fills every SM's shared memory with SharedPoison before
// kernel is launched (on the legacy stream, ahead of the launch). The
// first call per gate probes that the poison reaches the next kernel and
// records the fraction seen as the metric shared_poison_seen (1 where the
// device keeps shared memory between kernels, as it must for the poison to
// mean anything).
func (t *T) poisonShared(kernel string) {
	if kernel == kernels.SharedFillKernel || kernel == kernels.SharedCountKernel || t.env.Kernels == nil {
		return
	}
	p := &t.smem
	if !p.probed {
		p.probed = true
		t.probeShared()
	}
	if p.fill != nil {
		t.Check(p.fill.Launch(SharedPoison), "poison shared memory before "+kernel)
	}
}

// probeShared makes the fill, runs the probe and records the fraction of
// the poison the next kernel found as shared_poison_seen.
func (t *T) probeShared() {
	fill, err := t.env.Kernels.SharedFill()
	if err != nil {
		t.Logf("%v (launches find whatever shared memory holds; rebuild with make kernels)", err)
		return
	}
	t.smem.fill = fill
	seen, _ := t.sharedProbe()
	t.Metric("shared_poison_seen", seen)
	if seen < 1 {
		t.Logf("shared-memory poison: the probe found %.4f of %d blocks' %d bytes poisoned; a kernel's reads of shared memory it never wrote are not all proven harmless on this device", seen, fill.Grid, fill.Bytes)
	}
}

// sharedProbe fills shared memory with SharedPoison, then has smem_count
// (which never writes its shared memory) count what it finds there: the
// fractions of its bytes that are the poison and that are zero.
func (t *T) sharedProbe() (seen, zeros float64) {
	fill := t.smem.fill
	count := t.Buffer("smem-probe-count", 16)
	t.Poison(count, 0) // an output: zeroed, not an input the canary check re-reads
	t.Check(fill.Launch(SharedPoison), "the shared-memory poison probe")
	dev := t.Device()
	args := []any{uint32(fill.Bytes), uint32(SharedPoison), count.Ptr()}
	f := t.CheckedFunction(kernels.SharedCountKernel, args)
	t.Check(dev.Launch(f, gpu.D1(fill.Grid), gpu.D1(256), fill.Bytes, 0, args...), "launch "+kernels.SharedCountKernel+" (the shared-memory poison probe)")
	t.Check(dev.Synchronize(), "run "+kernels.SharedCountKernel)
	c := t.Download(count)
	total := float64(fill.Grid * fill.Bytes)
	return float64(binary.LittleEndian.Uint64(c)) / total, float64(binary.LittleEndian.Uint64(c[8:])) / total
}
