package basics

import "github.com/parharness/parharness/kernels"

// Family is this folder's name in the registry.
const Family = "basics"

// Device copies (copy.hip): the copy-bandwidth ceiling, the bench
// engine's self-test subject and the isolated regime's cache scrub;
// kernels that misbehave on purpose (selftest.hip), which prove the
// harness's canaries, poison checks and watchdog catch what they claim
// to, and the empty kernel of the launch floor. smem.hip's shared-memory
// poison and probe are registered by package kernels (sharedfill.go),
// beside the launch that every gate and bench check makes of them.
func init() {
	for _, k := range []kernels.Kernel{
		{Name: "copy_v4", Module: "copy", Op: "copy", Role: kernels.Baseline, Tag: "copy", Doc: "16-byte vector copy, grid-stride: the copy-bandwidth ceiling"},
		{Name: "copy_v4_extra", Module: "copy", Op: "copy", Role: kernels.Variant, Tag: "copy+5%", Doc: "copy_v4 plus a chosen amount of extra traffic: a deliberately slower A/B subject"},
		{Name: "scrub_read_v4", Module: "copy", Op: "scrub", Role: kernels.Baseline, Tag: "scrub", Doc: "reads a buffer, one word a block written: the isolated regime's cache scrub, leaving clean lines"},
		{Name: "read_v4x4", Module: "copy", Op: "read", Role: kernels.Baseline, Tag: "read", Doc: "reads a buffer with four loads in flight a thread, one word a block written: a suite's read roof, one resident wave"},
		{Name: "selftest_fill", Module: "selftest", Op: "fill", Role: kernels.Baseline, Tag: "fill", Doc: "writes a byte over a chosen index range, including out of bounds"},
		{Name: "selftest_spin", Module: "selftest", Op: "spin", Role: kernels.Baseline, Tag: "spin", Doc: "never returns: exercises the watchdog"},
		{Name: "selftest_empty", Module: "selftest", Op: "empty", Role: kernels.Baseline, Tag: "empty", Doc: "does nothing: the launch floor of a graph node"},
	} {
		k.Family = Family
		kernels.Register(k)
	}
}
