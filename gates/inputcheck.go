package gates

import (
	"github.com/parharness/parharness/kernels"
)

// inputCheck is a gate's device-side input check (kernels.BufDiff), made
// and self-tested at its first upload. Every input buffer then gets a
// second device copy, and after each launch the device compares the two,
// so a launch costs a kernel over the inputs' bytes instead of reading
// them all back to the host (tens of MB of weights a launch in the GEMM
// gates).
type inputCheck struct {
	probed bool
	diff   *kernels.BufDiff // nil: inputs are read back to the host
}

// shadowInput uploads b's input again, into b's device copy.
func (t *T) shadowInput(b *Buffer) {
	ic := &t.inputs
	if !ic.probed {
		ic.probed = true
		t.probeInputCheck()
	}
	if ic.diff == nil || len(b.input) == 0 {
		return
	}
	if b.shadow == 0 {
		p, err := b.dev.Malloc(b.N)
		if err != nil {
			t.Logf("input %s: no memory for its device copy (%v): read back to the host after each launch instead", b.Name, err)
			return
		}
		b.shadow = p
	}
	t.Check(b.dev.HtoD(b.shadow, b.input), "upload the device copy of input "+b.Name)
}

// probeInputCheck loads the comparison and runs its self-test. Without
// it (no loader, a build without verify.hip) inputs are read back to the
// host, which checks the same but slower; a comparison that fails its
// self-test fails the gate, and inputs are read back too.
func (t *T) probeInputCheck() {
	if t.env.Kernels == nil {
		return
	}
	d, err := t.env.Kernels.BufDiff()
	if err != nil {
		t.Logf("%v: inputs are read back to the host after each launch instead (rebuild with make kernels)", err)
		return
	}
	if err := d.SelfTest(t.Seed()); err != nil {
		d.Close()
		t.Failf("%v: inputs are read back to the host after each launch instead", err)
		return
	}
	t.inputs.diff = d
}

// inputOnDevice checks b's input against its device copy where it has one,
// failing the gate on a difference; false where it has none (the caller
// reads it back).
func (t *T) inputOnDevice(b *Buffer, after string) bool {
	i, got, ok := t.inputWritten(b)
	switch {
	case !ok:
		return false
	case i < 0:
	case got == b.input[i]:
		t.Fatalf("after %s: the device copy of input buffer %s was written at byte offset %d (the input itself holds what was uploaded): a write outside the kernel's buffers", after, b.Name, i)
	default:
		t.Fatalf("after %s: input buffer %s was written at byte offset %d (%#02x, uploaded %#02x)", after, b.Name, i, got, b.input[i])
	}
	return true
}

// inputWritten compares b's input with its device copy: the lowest byte
// offset where they differ (-1: none) and the input's byte there (the
// upload's where the copy was written instead); ok is false where b has
// no device copy or the gate no comparison.
func (t *T) inputWritten(b *Buffer) (off int, got byte, ok bool) {
	d := t.inputs.diff
	if d == nil || b.shadow == 0 || b.input == nil {
		return -1, 0, false
	}
	i, err := d.First(b.Ptr(), b.shadow, len(b.input))
	t.Check(err, "compare input "+b.Name+" with its device copy")
	if i < 0 {
		return -1, 0, true
	}
	var at [1]byte
	t.Check(b.dev.DtoH(at[:], b.Ptr().Add(i)), "re-read input "+b.Name)
	return i, at[0], true
}

// closeInputCheck frees the comparison's result word at the gate's end.
func (t *T) closeInputCheck() {
	if t.inputs.diff != nil {
		t.inputs.diff.Close()
		t.inputs.diff = nil
	}
}
