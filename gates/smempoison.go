package gates

import (
	"encoding/binary"

	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/kernels"
)

// sharedPoison is a gate's shared-memory fill (kernels.SharedFill), made
// and probed at its first launch.
type sharedPoison struct {
	probed bool
	fill   *kernels.SharedFill
	// seen is the fraction of the probe's bytes that held the poison: 1
	// where the device keeps shared memory between kernels, 0 where it
	// clears it (then every byte was zero).
	seen float64
}

// poisonShared fills every SM's shared memory with kernels.SharedPoison
// before kernel is launched (on the legacy stream, ahead of the launch),
// so an output that depends on shared memory the kernel never wrote fails
// the gate's NaN and bound checks. The first call per gate probes that
// the poison reaches the next kernel (shared_poison_seen) and fails the
// gate where it cannot: no fill kernel in the build, or a probe that
// found neither the poison everywhere nor zeros everywhere (a device that
// clears shared memory between kernels, noted).
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
		t.Check(p.fill.Launch(kernels.SharedPoison), "poison shared memory before "+kernel)
	}
}

func (t *T) probeShared() {
	fill, err := t.env.Kernels.SharedFill()
	if err != nil {
		t.Failf("%v: the gate's launches would run on whatever shared memory holds (rebuild with make kernels)", err)
		return
	}
	t.smem.fill = fill
	seen, zeros := t.sharedProbe()
	t.smem.seen = seen
	t.Metric("shared_poison_seen", seen)
	switch {
	case seen == 1:
	case zeros == 1:
		t.Logf("this device clears shared memory between kernels: reads of unwritten shared memory find zeros, which the gate cannot tell from no read")
	default:
		t.Failf("shared-memory poison: the probe found %.6f of %d blocks' %d bytes poisoned and %.6f zero (want all poisoned, or all zero where the device clears shared memory): the fill or the probe is broken", seen, fill.Grid, fill.Bytes, zeros)
	}
}

// sharedProbe fills shared memory with the poison, then has smem_count
// (which never writes its shared memory) count what it finds there: the
// fractions of its bytes that are the poison and that are zero.
func (t *T) sharedProbe() (seen, zeros float64) {
	fill := t.smem.fill
	count := t.Buffer("smem-probe-count", 16)
	t.Poison(count, 0) // an output: zeroed, not an input the canary check re-reads
	t.Check(fill.Launch(kernels.SharedPoison), "the shared-memory poison probe")
	dev := t.Device()
	args := []any{uint32(fill.Bytes), uint32(kernels.SharedPoison), count.Ptr()}
	f := t.CheckedFunction(kernels.SharedCountKernel, args)
	t.Check(dev.Launch(f, gpu.D1(fill.Grid), gpu.D1(256), fill.Bytes, 0, args...), "launch "+kernels.SharedCountKernel+" (the shared-memory poison probe)")
	t.Check(dev.Synchronize(), "run "+kernels.SharedCountKernel)
	c := t.Download(count)
	total := float64(fill.Grid * fill.Bytes)
	return float64(binary.LittleEndian.Uint64(c)) / total, float64(binary.LittleEndian.Uint64(c[8:])) / total
}
