package gates

import (
	"strings"

	"github.com/parharness/parharness/gpu"
)

func init() {
	Register(Gate{Family: "basics", Name: "harness-selftest", Suites: Quick | Full, Device: true, Run: gateHarnessSelftest,
		Proves: "the harness's own guards work on this device: a 1-byte overrun and underrun trip the canaries with the right offset, an unwritten element is caught by the poison check, shared memory a kernel never writes holds the gates' shared-memory poison (or, noted, the device clears it between kernels), and the device-side input check finds a 1-byte write into an input"})
}

// fillRaw launches selftest_fill without T.Launch's canary check, so the
// gate can inspect the canary result itself.
func fillRaw(t *T, b *Buffer, lo, hi int32, v uint32) {
	args := []any{b.Ptr(), lo, hi, v}
	f := t.CheckedFunction("selftest_fill", args)
	n := int(hi - lo)
	t.Check(t.env.Dev.Launch(f, gpu.D1((n+255)/256), gpu.D1(256), 0, 0, args...), "launch selftest_fill")
	t.Check(t.env.Dev.Synchronize(), "run selftest_fill")
}

func gateHarnessSelftest(t *T) {
	const n = 1000
	// 1. In-bounds write: canaries must stay intact.
	b := t.Buffer("probe", n)
	fillRaw(t, b, 0, n, 7)
	if err := b.CheckCanaries(); err != nil {
		t.Fatalf("in-bounds write tripped the canaries: %v", err)
	}
	// 2. One byte past the end.
	fillRaw(t, b, n, n+1, 7)
	err := b.CheckCanaries()
	if err == nil || !strings.Contains(err.Error(), "past the end") || !strings.Contains(err.Error(), "byte offset 1000") {
		t.Failf("a 1-byte overrun at offset %d was not reported correctly: %v", n, err)
	}
	// 3. One byte before the start, in a fresh buffer.
	c := t.Buffer("probe2", n)
	fillRaw(t, c, -1, 0, 7)
	err = c.CheckCanaries()
	if err == nil || !strings.Contains(err.Error(), "before the start") || !strings.Contains(err.Error(), "1 bytes before") {
		t.Failf("a 1-byte underrun was not reported correctly: %v", err)
	}
	// 4. Poison: a kernel that skips element 500 must leave the poison there.
	d := t.Buffer("probe3", n)
	t.Poison(d, 0xEE)
	fillRaw(t, d, 0, 500, 7)
	fillRaw(t, d, 501, n, 7)
	got := t.Download(d)
	if got[500] != 0xEE || got[499] != 7 || got[501] != 7 {
		t.Failf("poison check: element 500 = %#x (want poison 0xee), neighbours %#x %#x (want 7)", got[500], got[499], got[501])
	}
	// Leave the damaged buffers out of the end-of-gate canary check.
	t.forget(b, c)
	t.Logf("overrun, underrun and unwritten element all detected")
	// 5. Shared-memory poison: the probe every gate runs at its first
	// launch (a kernel that never writes its shared memory finds the
	// poison in every byte, or zeros in every byte on a device that clears
	// it; anything else fails there), run here without a launch of its own.
	t.poisonShared("")
	if f := t.smem.fill; f != nil && t.smem.seen == 1 {
		t.Logf("shared-memory poison reaches the next kernel: %d blocks x %d bytes", f.Grid, f.Bytes)
	}
	// 6. The input check: the first upload self-tests the device
	// comparison (inputcheck.go); a one-byte write into an input is then
	// found at its offset.
	in := t.Buffer("probe-input", n)
	t.Upload(in, make([]byte, n))
	if t.inputs.diff == nil {
		t.Logf("inputs are read back to the host after each launch (no device comparison)")
		return
	}
	fillRaw(t, in, 777, 778, 7)
	if off, got, _ := t.inputWritten(in); off != 777 || got != 7 {
		t.Failf("input check: a 1-byte write of 7 at offset 777 of an input was reported at %d (%#02x)", off, got)
	}
	t.forget(in)
	t.Logf("inputs are checked on the device after each launch; its comparison passed its self-test and found a 1-byte write")
}

// forget drops buffers from the gate's canary set (still freed at the end).
func (t *T) forget(bs ...*Buffer) {
	var keep []*Buffer
	for _, x := range t.bufs {
		drop := false
		for _, b := range bs {
			drop = drop || x == b
		}
		if !drop {
			keep = append(keep, x)
		}
	}
	for _, b := range bs {
		b.free()
	}
	t.bufs = keep
}
