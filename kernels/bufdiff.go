package kernels

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"

	"github.com/parharness/parharness/gpu"
)

// BufDiffKernel is families/basics' verify.hip: the lowest byte index at
// which two device buffers differ. Gates use it after every launch to check
// that a kernel left its inputs as uploaded, against a second device copy,
// instead of reading every input back to the host.
const BufDiffKernel = "buf_diff"

// Registered here, beside its launch, for the reason smem_fill is: every
// gate launch depends on it.
func init() {
	Register(Kernel{Name: BufDiffKernel, Module: "verify", Op: "buf-diff", Tag: "buf-diff", Family: "basics", Role: Baseline,
		Doc: "the lowest byte index at which two buffers differ: the gates' check that a kernel left its inputs as uploaded"})
}

// BufDiff launches BufDiffKernel: one resident wave (four blocks of 256
// threads an SM), grid-stride over 16-byte vectors and then the tail bytes,
// into a result word of its own.
type BufDiff struct {
	Grid int
	dev  gpu.Device
	f    gpu.Function
	out  gpu.Ptr
}

// BufDiff returns the device's buffer comparison, or an error naming what
// is missing (a build without verify.hip's code object). Close frees its
// result word.
func (l *Loader) BufDiff() (*BufDiff, error) {
	f, err := l.Checked(BufDiffKernel, []any{gpu.Ptr(0), gpu.Ptr(0), uint64(0), gpu.Ptr(0)})
	if err != nil {
		return nil, fmt.Errorf("device input check: %w", err)
	}
	out, err := l.Dev.Malloc(8)
	if err != nil {
		return nil, fmt.Errorf("device input check: allocate its result word: %w", err)
	}
	info := l.Dev.Info()
	return &BufDiff{Grid: 4 * max(info.SMs, info.CUs, 1), dev: l.Dev, f: f, out: out}, nil
}

// Close frees the result word.
func (d *BufDiff) Close() error { return d.dev.Free(d.out) }

// First is the lowest index i < n with a[i] != b[i], or -1 where the n
// bytes are equal. It runs on the legacy stream and waits for it (so after
// everything launched there before). a and b must be 16-byte aligned.
func (d *BufDiff) First(a, b gpu.Ptr, n int) (int, error) {
	if n <= 0 {
		return -1, nil
	}
	if a%16 != 0 || b%16 != 0 {
		return 0, fmt.Errorf("%s: buffers at %#x and %#x are not 16-byte aligned", BufDiffKernel, uint64(a), uint64(b))
	}
	if err := d.dev.Memset(d.out, 0xFF, 8); err != nil {
		return 0, fmt.Errorf("%s: clear its result word: %w", BufDiffKernel, err)
	}
	if err := d.dev.Launch(d.f, gpu.D1(d.Grid), gpu.D1(256), 0, 0, a, b, uint64(n), d.out); err != nil {
		return 0, fmt.Errorf("launch %s: %w", BufDiffKernel, err)
	}
	if err := d.dev.Synchronize(); err != nil {
		return 0, fmt.Errorf("run %s: %w", BufDiffKernel, err)
	}
	var w [8]byte
	if err := d.dev.DtoH(w[:], d.out); err != nil {
		return 0, fmt.Errorf("read %s's result: %w", BufDiffKernel, err)
	}
	i := binary.LittleEndian.Uint64(w[:])
	switch {
	case i == ^uint64(0):
		return -1, nil
	case i >= uint64(n):
		return 0, fmt.Errorf("%s: reported byte %d of %d compared: the kernel is broken", BufDiffKernel, i, n)
	}
	return int(i), nil
}

// SelfTest runs First on two equal buffers of random bytes, longer than two
// of its grid's passes and not a multiple of 16, then with one byte changed
// at a time: at each byte position of a 16-byte vector (in vectors spread
// over the passes), at the tail's ends and in the middle; then three at
// once (it must name the lowest). An error says which case it got wrong;
// the gate must not rely on it then.
func (d *BufDiff) SelfTest(seed uint64) error {
	n := 2*d.Grid*256*16 + 3*16 + 13
	a, err := d.dev.Malloc(n)
	if err != nil {
		return fmt.Errorf("%s self-test: allocate %d bytes: %w", BufDiffKernel, n, err)
	}
	defer d.dev.Free(a)
	b, err := d.dev.Malloc(n)
	if err != nil {
		return fmt.Errorf("%s self-test: allocate %d bytes: %w", BufDiffKernel, n, err)
	}
	defer d.dev.Free(b)
	host := make([]byte, n)
	rng := rand.New(rand.NewPCG(seed, 0xB0FD1FF))
	for i := range host {
		host[i] = byte(rng.Uint32())
	}
	for _, p := range []gpu.Ptr{a, b} {
		if err := d.dev.HtoD(p, host); err != nil {
			return fmt.Errorf("%s self-test: upload: %w", BufDiffKernel, err)
		}
	}
	// expect runs First with b's bytes at pos flipped, then restores them.
	expect := func(want int, pos ...int) error {
		for _, p := range pos {
			if err := d.dev.HtoD(b.Add(p), []byte{^host[p]}); err != nil {
				return err
			}
		}
		got, err := d.First(a, b, n)
		for _, p := range pos {
			if rerr := d.dev.HtoD(b.Add(p), host[p:p+1]); err == nil {
				err = rerr
			}
		}
		if err == nil && got != want {
			err = fmt.Errorf("%d bytes, bytes %v changed: reported %d, want %d", n, pos, got, want)
		}
		if err != nil {
			return fmt.Errorf("%s self-test: %w", BufDiffKernel, err)
		}
		return nil
	}
	if err := expect(-1); err != nil {
		return err
	}
	vectors := n / 16
	for k := range 16 {
		p := 16*(k*(vectors-1)/15) + k // vector 0 .. the last, byte k of it
		if err := expect(p, p); err != nil {
			return err
		}
	}
	for _, p := range []int{16 * vectors, n - 1, n / 2} { // the tail's ends, the middle
		if err := expect(p, p); err != nil {
			return err
		}
	}
	return expect(n/3, n-1, n/3, 16*vectors)
}
