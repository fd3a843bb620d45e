package kernels

import (
	"fmt"

	"github.com/parharness/parharness/gpu"
)

// SharedPoison is the byte every SM's shared memory holds when a checked
// launch starts (gates and bench checks). Shared memory is not cleared
// between the kernels of one context, so a kernel that reads shared memory
// it never wrote (padding rows of a tile, a stage the pipeline has not
// filled) finds what the last block left, and zeros there hide the read.
// 0xFF is NaN in fp8 e4m3, fp16, bf16 and fp32: an output that depends on
// such a read fails its check instead.
const SharedPoison = 0xFF

// SharedFillKernel and SharedCountKernel are families/basics' smem.hip:
// the fill, and the probe that counts what a kernel that never writes its
// shared memory finds there.
const (
	SharedFillKernel  = "smem_fill"
	SharedCountKernel = "smem_count"
)

// The fill and its probe are registered here, not by their family's
// folder (families/basics, smem.hip), so every program and test that
// loads kernels knows them: every gate launch depends on them.
func init() {
	for _, k := range []Kernel{
		{Name: SharedFillKernel, Module: "smem", Op: "smem-fill", Tag: "smem-fill", Doc: "fills its dynamic shared memory with a byte: the shared-memory poison before every gate launch and bench check"},
		{Name: SharedCountKernel, Module: "smem", Op: "smem-count", Tag: "smem-count", Doc: "counts the bytes of its never-written dynamic shared memory equal to a byte, and the zeros: the probe that the poison reaches the next kernel"},
	} {
		k.Family, k.Role, k.Caps = "basics", Baseline, DynShared
		Register(k)
	}
}

// SharedFill is the launch of SharedFillKernel that covers all of every
// SM's shared memory: blocks of the largest dynamic shared memory the
// device allows a block (gpu.Info.SharedPerBlock, or 48 KiB where the
// driver does not say), two an SM, so every SM runs one.
type SharedFill struct {
	Bytes, Grid int
	f           gpu.Function
	dev         gpu.Device
}

// SharedFill returns the device's shared-memory fill, or an error naming
// what is missing (a build without smem.hip's code object).
func (l *Loader) SharedFill() (*SharedFill, error) {
	info := l.Dev.Info()
	n := info.SharedPerBlock
	if n <= 0 {
		n = 48 << 10 // every backend allows this without opting in
	}
	n &^= 15
	f, err := l.Checked(SharedFillKernel, []any{uint32(0), uint32(0)})
	if err != nil {
		return nil, fmt.Errorf("shared-memory poison: %w", err)
	}
	return &SharedFill{Bytes: n, Grid: 2 * max(info.SMs, info.CUs, 1), f: f, dev: l.Dev}, nil
}

// Launch fills shared memory with v, on the legacy stream (ordered before
// the next launch there; a non-blocking stream must synchronize first).
func (s *SharedFill) Launch(v byte) error {
	err := s.dev.Launch(s.f, gpu.D1(s.Grid), gpu.D1(256), s.Bytes, 0, uint32(s.Bytes), uint32(v))
	if err != nil {
		return fmt.Errorf("launch %s (the shared-memory poison): %w", SharedFillKernel, err)
	}
	return nil
}
