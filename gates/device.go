package gates

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/internal/par"
	"github.com/parharness/parharness/kernels"
)

// CanaryBytes guard each side of every device buffer a gate hands a kernel.
// 256 keeps the user pointer 256-byte aligned.
const CanaryBytes = 256

// canaryByte is the expected byte at offset i of a canary region: a
// position-dependent pattern, so a kernel that writes a constant or copies a
// neighbour's bytes still trips it.
func canaryByte(side, i int) byte { return byte(0xC3 ^ (i * 37) ^ (side * 0x5A)) }

// Buffer is a device allocation with canaries on both sides.
type Buffer struct {
	Name string
	N    int // user bytes
	dev  gpu.Device
	base gpu.Ptr
	// input is what was last uploaded, for buffers a kernel must only read:
	// after every launch they are compared with it, so a kernel that
	// scribbles over its inputs fails even where canaries cannot see it.
	// shadow, where the build has the device comparison (inputcheck.go),
	// is a second device copy of input that the comparison runs against;
	// otherwise the input is downloaded again.
	input  []byte
	shadow gpu.Ptr
}

// inputCheckChunk bounds the host memory used to re-read an input after a
// launch (every input is re-read whole, a chunk at a time).
var inputCheckChunk = 64 << 20

// Ptr is the first user byte.
func (b *Buffer) Ptr() gpu.Ptr { return b.base.Add(CanaryBytes) }

// Buffer allocates a guarded device buffer of n bytes named for messages;
// it is freed when the gate ends.
func (t *T) Buffer(name string, n int) *Buffer {
	dev := t.Device()
	base, err := dev.Malloc(n + 2*CanaryBytes)
	t.Check(err, fmt.Sprintf("allocate buffer %s (%d bytes)", name, n))
	b := &Buffer{Name: name, N: n, dev: dev, base: base}
	t.bufs = append(t.bufs, b)
	front, back := make([]byte, CanaryBytes), make([]byte, CanaryBytes)
	for i := range front {
		front[i], back[i] = canaryByte(0, i), canaryByte(1, i)
	}
	t.Check(dev.HtoD(base, front), "write canary of "+name)
	t.Check(dev.HtoD(base.Add(CanaryBytes+n), back), "write canary of "+name)
	return b
}

// CheckCanaries returns an error naming the buffer and the offset of the
// first overwritten canary byte on either side.
func (b *Buffer) CheckCanaries() error {
	got := make([]byte, CanaryBytes)
	if err := b.dev.DtoH(got, b.base); err != nil {
		return fmt.Errorf("read canary of %s: %v", b.Name, err)
	}
	for i := range got {
		if got[i] != canaryByte(0, i) {
			return fmt.Errorf("buffer %s: canary before the start overwritten at byte offset %d (%d bytes before the buffer)", b.Name, i-CanaryBytes, CanaryBytes-i)
		}
	}
	if err := b.dev.DtoH(got, b.base.Add(CanaryBytes+b.N)); err != nil {
		return fmt.Errorf("read canary of %s: %v", b.Name, err)
	}
	for i := range got {
		if got[i] != canaryByte(1, i) {
			return fmt.Errorf("buffer %s: canary past the end overwritten at byte offset %d (end+%d)", b.Name, b.N+i, i)
		}
	}
	return nil
}

// Upload copies host bytes into the buffer (len(src) <= N): an input,
// which the kernel must leave as it is (CheckCanaries).
func (t *T) Upload(b *Buffer, src []byte) {
	t.write(b, src)
	b.input = src
	t.shadowInput(b)
}

// Init writes the starting contents of an output (counters a kernel
// accumulates into): unlike Upload, the kernel may change them, so they
// get no device copy and no input check.
func (t *T) Init(b *Buffer, src []byte) {
	t.write(b, src)
	b.input = nil
}

func (t *T) write(b *Buffer, src []byte) {
	if len(src) > b.N {
		t.Fatalf("upload to %s: %d bytes into a %d-byte buffer", b.Name, len(src), b.N)
	}
	t.Check(b.dev.HtoD(b.Ptr(), src), "upload to "+b.Name)
}

// Download copies the whole buffer to the host.
func (t *T) Download(b *Buffer) []byte {
	out := make([]byte, b.N)
	t.Check(b.dev.DtoH(out, b.Ptr()), "download "+b.Name)
	return out
}

// DownloadInto copies a buffer's contents into host (len(host) bytes, from
// the start), for gates that reuse one host slice over many launches.
func (t *T) DownloadInto(b *Buffer, host []byte) {
	t.Check(b.dev.DtoH(host, b.Ptr()), "download "+b.Name)
}

// Poison fills the buffer with a byte pattern before a variant runs, so an
// element the kernel fails to write is visible.
func (t *T) Poison(b *Buffer, v byte) {
	t.Check(b.dev.Memset(b.Ptr(), v, b.N), "poison "+b.Name)
	b.input = nil // an output from now on
}

// Launch runs a registered kernel on shared memory full of SharedPoison,
// waits for it under the watchdog, and checks every guarded buffer's
// canaries; any error fails the gate naming
// the kernel.
func (t *T) Launch(kernel string, grid, block gpu.Dim3, sharedBytes int, args ...any) {
	dev := t.Device()
	f := t.CheckedFunction(kernel, args)
	t.Check(kernels.CheckLaunch(kernel, sharedBytes, gpu.LaunchOpts{}), "launch "+kernel)
	t.poisonShared(kernel)
	t.Check(dev.Launch(f, grid, block, sharedBytes, 0, args...), "launch "+kernel)
	t.Check(dev.Synchronize(), "run "+kernel)
	t.CheckCanaries(kernel)
}

// BlocksPerSM is how many blocks of kernel (threads a block, dynShared
// bytes of dynamic shared memory) one SM holds at once, by the driver; 0
// where the backend does not say.
func (t *T) BlocksPerSM(kernel string, threads, dynShared int) int {
	if t.env.Kernels == nil {
		t.Skipf("no kernel loader (no build directory)")
	}
	n, err := t.env.Kernels.MaxActiveBlocks(kernel, threads, dynShared)
	t.Check(err, "occupancy of "+kernel)
	return n
}

// CheckedFunction is a kernel's entry point after its launch arguments
// were checked against the parameters its code object declares
// (kernels.Loader.Checked); any mismatch fails the gate before a launch.
func (t *T) CheckedFunction(kernel string, args []any) gpu.Function {
	if t.env.Kernels == nil {
		t.Skipf("no kernel loader (no build directory)")
	}
	f, err := t.env.Kernels.Checked(kernel, args)
	var ue *kernels.UnavailableError
	if errors.As(err, &ue) {
		t.Unavailablef("%v", err) // the kernel could not run: not a wrong result
	}
	if err != nil {
		t.Fatalf("%v", err)
	}
	return f
}

// LaunchEx launches kernel with opts (clusters, PDL), synchronizes and
// checks canaries. It reports false, after a note, when the device cannot
// launch with options (HIP): the caller skips what needed them.
func (t *T) LaunchEx(kernel string, grid, block gpu.Dim3, sharedBytes int, opts gpu.LaunchOpts, args ...any) bool {
	return t.launchEx(kernel, grid, block, sharedBytes, opts, args)
}

// LaunchPDLPair launches kernel twice back to back on one stream with opts,
// the second also with programmatic dependent launch (it may start while
// the first finishes), then synchronizes and checks canaries; false, after a
// note, when the device cannot.
func (t *T) LaunchPDLPair(kernel string, grid, block gpu.Dim3, sharedBytes int, opts gpu.LaunchOpts, first, second []any) bool {
	second2 := opts
	second2.PDL = true
	return t.launchEx(kernel, grid, block, sharedBytes, opts, first, launchArgs{second2, second})
}

type launchArgs struct {
	opts gpu.LaunchOpts
	args []any
}

func (t *T) launchEx(kernel string, grid, block gpu.Dim3, sharedBytes int, opts gpu.LaunchOpts, args []any, more ...launchArgs) bool {
	dev := t.Device()
	ex, ok := dev.(gpu.ExLauncher)
	if !ok {
		// HIP has no cluster or PDL launch; the CUDA backend always has
		// cuLaunchKernelEx, so there a refusal means the check did not run.
		if be := dev.Info().Backend; be == "cuda" {
			t.Failf("%s: the CUDA backend offers no extended launch (%v): the check it serves did not run", kernel, opts)
		} else {
			t.Logf("%s: the %s backend launches without %v; not run", kernel, be, opts)
		}
		return false
	}
	f := t.CheckedFunction(kernel, args)
	t.Check(kernels.CheckLaunch(kernel, sharedBytes, opts), "launch "+kernel)
	for _, m := range more {
		t.CheckedFunction(kernel, m.args)
		t.Check(kernels.CheckLaunch(kernel, sharedBytes, m.opts), "launch "+kernel)
	}
	t.poisonShared(kernel)
	// Uploads and poisons went to the legacy default stream, which a
	// non-blocking stream does not wait for: finish them first.
	t.Check(dev.Synchronize(), "uploads before "+kernel)
	s, err := dev.NewStream()
	t.Check(err, "stream for "+kernel)
	defer dev.DestroyStream(s)
	t.Check(ex.LaunchEx(f, grid, block, sharedBytes, s, opts, args...), "launch "+kernel)
	for _, m := range more {
		t.Check(ex.LaunchEx(f, grid, block, sharedBytes, s, m.opts, m.args...), "launch "+kernel)
	}
	t.Check(dev.StreamSynchronize(s), "run "+kernel)
	t.CheckCanaries(kernel)
	return true
}

// FirstWritten is the offset of the first byte of b[from:] that is no
// longer the 0xFF poison (an output's rows past M), or -1.
func FirstWritten(b []byte, from int) int {
	if from >= len(b) {
		return -1
	}
	if i := par.IndexNot(b[from:], 0xFF); i >= 0 {
		return from + i
	}
	return -1
}

// CheckCanaries checks every buffer of the gate, and that every input
// buffer still holds what was uploaded (on the device where it can,
// inputcheck.go; else read back a chunk at a time); after names the
// kernel.
func (t *T) CheckCanaries(after string) {
	for _, b := range t.bufs {
		if err := b.CheckCanaries(); err != nil {
			t.Fatalf("after %s: %v", after, err)
		}
		if b.input == nil || t.inputOnDevice(b, after) {
			continue
		}
		if n := min(len(b.input), inputCheckChunk); cap(t.reread) < n {
			t.reread = make([]byte, n)
		}
		got := t.reread[:min(len(b.input), inputCheckChunk)]
		for off := 0; off < len(b.input); off += len(got) {
			chunk := got[:min(len(got), len(b.input)-off)]
			t.Check(b.dev.DtoH(chunk, b.Ptr().Add(off)), "re-read input "+b.Name)
			if par.Equal(chunk, b.input[off:off+len(chunk)]) {
				continue
			}
			for i := range chunk {
				if chunk[i] != b.input[off+i] {
					t.Fatalf("after %s: input buffer %s was written at byte offset %d (%#02x, uploaded %#02x)", after, b.Name, off+i, chunk[i], b.input[off+i])
				}
			}
		}
	}
}

func (t *T) release() {
	for _, b := range t.bufs {
		b.free()
	}
	t.bufs = nil
}

// free releases the buffer and its input's device copy.
func (b *Buffer) free() {
	b.dev.Free(b.base)
	if b.shadow != 0 {
		b.dev.Free(b.shadow)
		b.shadow = 0
	}
}

// Release checks every buffer's canaries, then frees them all: a gate that
// runs many cases calls it between cases so memory does not pile up.
func (t *T) Release() {
	t.CheckCanaries("the last launch")
	t.release()
}

// RequireFilled fails the gate unless every byte of b is fill; rule says
// why it must be (the message names the first byte that is not and the
// count).
func (t *T) RequireFilled(what string, b *Buffer, fill byte, rule string) {
	got := t.Download(b)
	first := par.IndexNot(got, fill)
	if first < 0 {
		return
	}
	bad := 0
	for _, v := range got[first:] {
		if v != fill {
			bad++
		}
	}
	t.Failf("%s: buffer %s: %d bytes are not %#02x, first at byte %d: %s", what, b.Name, bad, fill, first, rule)
}

// F32Bytes is v little-endian, as a device buffer holds it.
func F32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	PutF32(b, v)
	return b
}

// U16Bytes is v little-endian, as a device buffer holds it.
func U16Bytes(v []uint16) []byte {
	b := make([]byte, 2*len(v))
	PutU16(b, v)
	return b
}

// PutF32 writes v little-endian at the start of dst (4 bytes a value).
func PutF32(dst []byte, v []float32) {
	for i, x := range v {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(x))
	}
}

// PutU16 writes v little-endian at the start of dst (2 bytes a value).
func PutU16(dst []byte, v []uint16) {
	for i, x := range v {
		binary.LittleEndian.PutUint16(dst[2*i:], x)
	}
}

// F32s reads b (a device buffer's bytes) as little-endian float32 values.
func F32s(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// U32s reads b as little-endian uint32 values.
func U32s(b []byte) []uint32 {
	v := make([]uint32, len(b)/4)
	for i := range v {
		v[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return v
}

// U16s reads b as little-endian uint16 values.
func U16s(b []byte) []uint16 {
	v := make([]uint16, len(b)/2)
	for i := range v {
		v[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return v
}
