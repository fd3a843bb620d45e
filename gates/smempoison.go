package gates

import (
	"encoding/binary"

	"github.com/parharness/parharness/gpu"
)

// SharedPoison is the byte every SM's shared memory holds when a gate's
// kernel starts. Shared memory is not cleared between the kernels of one
// context, so a kernel that reads shared memory it never wrote (padding
// rows of a tile, a stage the pipeline has not filled yet) finds whatever
// the last block left; zeros there can hide the read. Before every launch
// a gate makes, smem_fill (families/basics, smem.hip) leaves 0xFF in all
// of it: NaN as fp8 e4m3, fp16, bf16 and fp32, so an output that depends
// on such a read fails the gate's NaN and bound checks.
const SharedPoison = 0xFF

const (
	smemFill  = "smem_fill"
	smemCount = "smem_count"
)

// sharedPoison is a gate's shared-memory poison: the fill's geometry,
// fixed by the first launch, which also runs the probe.
type sharedPoison struct {
	probed bool
	off    bool // no fill kernel or no size: launches go unpoisoned (noted once)
	bytes  int  // dynamic shared memory of each fill block
	grid   int
}

// poisonShared fills every SM's shared memory with SharedPoison before
// kernel is launched (on the legacy stream, ahead of the launch). The
// first call per gate probes that the poison reaches the next kernel and
// records the fraction seen as the metric shared_poison_seen (1 where the
// device keeps shared memory between kernels, as it must for the poison to
// mean anything).
func (t *T) poisonShared(kernel string) {
	if kernel == smemFill || kernel == smemCount || t.env.Kernels == nil {
		return
	}
	p := &t.smem
	if !p.probed {
		p.probed = true
		t.probeShared()
	}
	if p.off {
		return
	}
	t.fillShared(SharedPoison)
}

func (t *T) fillShared(v byte) {
	p := &t.smem
	dev := t.Device()
	f := t.CheckedFunction(smemFill, []any{uint32(p.bytes), uint32(v)})
	t.Check(dev.Launch(f, gpu.Dim3{X: uint32(p.grid), Y: 1, Z: 1}, gpu.Dim3{X: 256, Y: 1, Z: 1}, p.bytes, 0, uint32(p.bytes), uint32(v)), "launch "+smemFill+" (the shared-memory poison)")
}

// probeShared sizes the fill (the largest block the device allows, two
// blocks an SM so every SM gets one), runs the probe and records the
// fraction of the poison the next kernel found as shared_poison_seen.
func (t *T) probeShared() {
	p := &t.smem
	info := t.Device().Info()
	p.bytes = info.SharedPerBlock
	if p.bytes <= 0 {
		p.bytes = 48 << 10 // what every backend allows without opting in
	}
	p.bytes &^= 15
	p.grid = 2 * max(info.SMs, info.CUs, 1)
	if _, err := t.env.Kernels.Checked(smemFill, []any{uint32(0), uint32(0)}); err != nil {
		p.off = true
		t.Logf("shared-memory poison off: %v (launches find whatever shared memory holds; rebuild with make kernels)", err)
		return
	}
	seen, _ := t.sharedProbe()
	t.Metric("shared_poison_seen", seen)
	if seen < 1 {
		t.Logf("shared-memory poison: the probe found %.4f of %d blocks' %d bytes poisoned; a kernel's reads of shared memory it never wrote are not all proven harmless on this device", seen, p.grid, p.bytes)
	}
}

// sharedProbe fills shared memory with SharedPoison, then has smem_count
// (which never writes its shared memory) count what it finds there: the
// fractions of its bytes that are the poison and that are zero.
func (t *T) sharedProbe() (seen, zeros float64) {
	p := &t.smem
	count := t.Buffer("smem-probe-count", 16)
	t.Poison(count, 0) // an output: zeroed, not an input the canary check re-reads
	t.fillShared(SharedPoison)
	dev := t.Device()
	args := []any{uint32(p.bytes), uint32(SharedPoison), count.Ptr()}
	f := t.CheckedFunction(smemCount, args)
	t.Check(dev.Launch(f, gpu.Dim3{X: uint32(p.grid), Y: 1, Z: 1}, gpu.Dim3{X: 256, Y: 1, Z: 1}, p.bytes, 0, args...), "launch "+smemCount+" (the shared-memory poison probe)")
	t.Check(dev.Synchronize(), "run "+smemCount)
	c := t.Download(count)
	total := float64(p.grid * p.bytes)
	return float64(binary.LittleEndian.Uint64(c)) / total, float64(binary.LittleEndian.Uint64(c[8:])) / total
}
