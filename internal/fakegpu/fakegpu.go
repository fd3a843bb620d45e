// Package fakegpu is a gpu.Device in host memory for tests that exercise
// the harness's device-side plumbing without a GPU: buffers, copies and
// memsets work on a host slab; modules expose every symbol asked for;
// launches run nothing and are recorded (kernel name, geometry and
// arguments), so a test can run real gate and bench code paths against the
// real compiled code objects' declared parameters (kernels.Loader.Checked)
// and see which kernels were launched with what. Stream capture records
// launches into a graph, and a graph replay runs them as launches again.
// Outputs stay as the test left them, so anything comparing them with a
// reference fails, unless the test sets Exec to stand in for a kernel
// (writing what a correct, or a deliberately wrong, kernel would).
package fakegpu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/parharness/parharness/gpu"
)

// Targets are the two devices the kernels are built for, as fakes report
// them (llc is the last-level cache the cold-regime sizing divides).
func Targets(llc int) []gpu.Info {
	return []gpu.Info{
		{Backend: "cuda", Arch: "sm_90", Name: "fake sm_90", SMs: 132, LLCBytes: llc},
		{Backend: "hip", Arch: "gfx1201", Name: "fake gfx1201", SMs: 64, LLCBytes: llc},
	}
}

// Built returns nil if buildDir holds code objects for info's arch, else
// why not (for a test's Skip: `make kernels` was not run).
func Built(buildDir string, info gpu.Info) error {
	dir := filepath.Join(buildDir, info.CodeArch())
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("no %s code objects in %s (run make kernels): %v", info.CodeArch(), buildDir, err)
	}
	return nil
}

// Launch is one recorded launch.
type Launch struct {
	Kernel      string
	Grid, Block gpu.Dim3
	SharedBytes int
	Opts        *gpu.LaunchOpts // nil for a plain launch
	Args        []any
	Captured    bool // recorded into a graph by a stream capture, not run
}

// Device is the fake. Info is what Info returns (set Arch to pick the code
// objects a loader reads).
type Device struct {
	info     gpu.Info
	allocs   []alloc // by address
	next     gpu.Ptr
	Launches []Launch
	// Exec, when set, runs for every launch that executes (not those
	// recorded by a capture): a test's stand-in for the kernel.
	Exec func(d *Device, l Launch) error
	// The fake keeps one shared memory between kernels, as a GPU keeps
	// each SM's: the gates' shared-memory poison (smem_fill, and the probe
	// smem_count that counts what it finds; kernels.SharedFillKernel and
	// SharedCountKernel) run here, not through Exec. ClearsShared makes it
	// a device that clears shared memory as every kernel starts;
	// SharedFillLimit, when positive, makes smem_fill cover only that many
	// bytes (a broken fill, for the probe's tests).
	ClearsShared    bool
	SharedFillLimit int
	// The gates' input check (buf_diff) runs here too: BufDiff, when set,
	// replaces its exact comparison (a broken kernel, for the self-test's
	// tests); it returns the index it would report, or -1.
	BufDiff   func(a, b []byte) int
	shared    []byte
	capturing []Launch // nil: not capturing
	inCapture bool
}

// Mem is the host memory behind n device bytes at p (for Exec).
func (d *Device) Mem(p gpu.Ptr, n int) ([]byte, error) { return d.at(p, n) }

// alloc is one Malloc: its host bytes at a fake address.
type alloc struct {
	p   gpu.Ptr
	mem []byte
}

// New returns a fake device that reports info. Addresses start at 1 MiB,
// away from 0 and small integers, and are never reused.
func New(info gpu.Info) *Device { return &Device{info: info, next: 1 << 20} }

func (d *Device) Info() gpu.Info { return d.info }

// at returns the host bytes of [p, p+n), which must lie in one live
// allocation.
func (d *Device) at(p gpu.Ptr, n int) ([]byte, error) {
	i := sort.Search(len(d.allocs), func(i int) bool { return d.allocs[i].p > p }) - 1
	if i < 0 || n < 0 || uint64(p-d.allocs[i].p) > uint64(len(d.allocs[i].mem)) || int(p-d.allocs[i].p)+n > len(d.allocs[i].mem) {
		return nil, fmt.Errorf("fakegpu: access [%#x, +%d) is not inside one live allocation", uint64(p), n)
	}
	o := int(p - d.allocs[i].p)
	return d.allocs[i].mem[o : o+n], nil
}

func (d *Device) Malloc(n int) (gpu.Ptr, error) {
	if n < 0 {
		return 0, errors.New("fakegpu: negative allocation")
	}
	p := d.next
	d.next += gpu.Ptr((n + 256 + 255) &^ 255) // a gap: an overrun is not the next buffer
	d.allocs = append(d.allocs, alloc{p, make([]byte, n)})
	return p, nil
}

// Live is the number of live allocations (leak tests).
func (d *Device) Live() int { return len(d.allocs) }

// Free releases an allocation; freeing anything else is an error.
func (d *Device) Free(p gpu.Ptr) error {
	for i, a := range d.allocs {
		if a.p == p {
			d.allocs = append(d.allocs[:i], d.allocs[i+1:]...)
			return nil
		}
	}
	return fmt.Errorf("fakegpu: free of %#x, which is not a live allocation", uint64(p))
}
func (d *Device) HtoD(dst gpu.Ptr, src []byte) error {
	b, err := d.at(dst, len(src))
	if err == nil {
		copy(b, src)
	}
	return err
}
func (d *Device) DtoH(dst []byte, src gpu.Ptr) error {
	b, err := d.at(src, len(dst))
	if err == nil {
		copy(dst, b)
	}
	return err
}
func (d *Device) Memset(dst gpu.Ptr, v byte, n int) error {
	b, err := d.at(dst, n)
	if len(b) > 0 { // fill by doubling copies: memmove speed, not a byte loop
		b[0] = v
		for done := 1; done < len(b); done *= 2 {
			copy(b[done:], b[:done])
		}
	}
	return err
}

type module struct{}
type function string

func (module) Function(name string) (gpu.Function, error) { return function(name), nil }
func (module) Unload() error                              { return nil }
func (f function) Name() string                           { return string(f) }
func (f function) Attrs() (gpu.FuncAttrs, error) {
	return gpu.FuncAttrs{Regs: 32, MaxThreads: 1024}, nil
}

func (d *Device) LoadModule([]byte) (gpu.Module, error) { return module{}, nil }

// Launch records a launch after checking that every pointer argument
// points into a live allocation (a freed or never-allocated buffer is an
// error, as a fault would be on a device).
func (d *Device) Launch(f gpu.Function, grid, block gpu.Dim3, sharedBytes int, s gpu.Stream, args ...any) error {
	return d.record(Launch{Kernel: f.Name(), Grid: grid, Block: block, SharedBytes: sharedBytes, Args: args})
}

// LaunchEx makes the fake a gpu.ExLauncher.
func (d *Device) LaunchEx(f gpu.Function, grid, block gpu.Dim3, sharedBytes int, s gpu.Stream, opts gpu.LaunchOpts, args ...any) error {
	o := opts
	return d.record(Launch{Kernel: f.Name(), Grid: grid, Block: block, SharedBytes: sharedBytes, Opts: &o, Args: args})
}

func (d *Device) record(l Launch) error {
	for i, a := range l.Args {
		if p, ok := a.(gpu.Ptr); ok {
			if _, err := d.at(p, 0); err != nil {
				return fmt.Errorf("fakegpu: %s argument %d: %v", l.Kernel, i, err)
			}
		}
	}
	if d.inCapture {
		d.capturing = append(d.capturing, l)
		l.Captured = true
		d.Launches = append(d.Launches, l)
		return nil
	}
	d.Launches = append(d.Launches, l)
	if d.ClearsShared {
		clear(d.shared)
	}
	switch l.Kernel {
	case "smem_fill", "smem_count":
		return d.sharedMemory(l)
	case "buf_diff":
		return d.bufDiff(l)
	}
	if d.Exec != nil {
		return d.Exec(d, l)
	}
	return nil
}

// sharedMemory runs smem_fill(n, v) or smem_count(n, v, count) on the
// fake's one shared memory; smem_count adds, for each of its grid's
// blocks, the n bytes' count of v to count[0] and of zeros to count[1].
func (d *Device) sharedMemory(l Launch) error {
	n, v := int(l.Args[0].(uint32)), byte(l.Args[1].(uint32))
	if len(d.shared) < n {
		d.shared = append(d.shared, make([]byte, n-len(d.shared))...)
	}
	if l.Kernel == "smem_fill" {
		if d.SharedFillLimit > 0 {
			n = min(n, d.SharedFillLimit)
		}
		for i := range d.shared[:n] {
			d.shared[i] = v
		}
		return nil
	}
	var hit, zero uint64
	for _, b := range d.shared[:n] {
		if b == v {
			hit++
		}
		if b == 0 {
			zero++
		}
	}
	out, err := d.at(l.Args[2].(gpu.Ptr), 16)
	if err != nil {
		return fmt.Errorf("fakegpu: smem_count: %v", err)
	}
	blocks := uint64(l.Grid.X) * uint64(l.Grid.Y) * uint64(l.Grid.Z)
	binary.LittleEndian.PutUint64(out, binary.LittleEndian.Uint64(out)+hit*blocks)
	binary.LittleEndian.PutUint64(out[8:], binary.LittleEndian.Uint64(out[8:])+zero*blocks)
	return nil
}

// bufDiff runs buf_diff(a, b, n, first): the lowest index at which a's and
// b's n bytes differ, min'd into first's word.
func (d *Device) bufDiff(l Launch) error {
	n := int(l.Args[2].(uint64))
	a, err := d.at(l.Args[0].(gpu.Ptr), n)
	if err != nil {
		return fmt.Errorf("fakegpu: buf_diff: %v", err)
	}
	b, err := d.at(l.Args[1].(gpu.Ptr), n)
	if err != nil {
		return fmt.Errorf("fakegpu: buf_diff: %v", err)
	}
	out, err := d.at(l.Args[3].(gpu.Ptr), 8)
	if err != nil {
		return fmt.Errorf("fakegpu: buf_diff: %v", err)
	}
	i := FirstDiff(a, b)
	if d.BufDiff != nil {
		i = d.BufDiff(a, b)
	}
	if i >= 0 {
		binary.LittleEndian.PutUint64(out, min(binary.LittleEndian.Uint64(out), uint64(i)))
	}
	return nil
}

// FirstDiff is the lowest index at which a and b differ, or -1.
func FirstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// graph is a captured sequence of launches; Launch runs them again.
type graph struct {
	d        *Device
	launches []Launch
}

func (g *graph) Launch(gpu.Stream) error {
	for _, l := range g.launches {
		l.Captured = false
		if err := g.d.record(l); err != nil {
			return err
		}
	}
	return nil
}

func (g *graph) Destroy() error { return nil }

func (d *Device) Synchronize() error                            { return nil }
func (d *Device) NewStream() (gpu.Stream, error)                { return 1, nil }
func (d *Device) DestroyStream(gpu.Stream) error                { return nil }
func (d *Device) StreamSynchronize(gpu.Stream) error            { return nil }
func (d *Device) NewEvent() (gpu.Event, error)                  { return 1, nil }
func (d *Device) DestroyEvent(gpu.Event) error                  { return nil }
func (d *Device) Record(gpu.Event, gpu.Stream) error            { return nil }
func (d *Device) Elapsed(gpu.Event, gpu.Event) (float32, error) { return 0.001, nil }

// BeginCapture starts recording launches into a graph.
func (d *Device) BeginCapture(gpu.Stream) error {
	if d.inCapture {
		return errors.New("fakegpu: capture already in progress")
	}
	d.inCapture, d.capturing = true, []Launch{}
	return nil
}

// EndCapture ends the capture and returns its graph.
func (d *Device) EndCapture(gpu.Stream) (gpu.Graph, error) {
	if !d.inCapture {
		return nil, errors.New("fakegpu: no capture in progress")
	}
	g := &graph{d: d, launches: d.capturing}
	d.inCapture, d.capturing = false, nil
	return g, nil
}
func (d *Device) Close() error { return nil }

// Kernels lists the distinct kernels launched or captured into a graph, in
// first-launch order.
func (d *Device) Kernels() []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range d.Launches {
		if !seen[l.Kernel] {
			seen[l.Kernel] = true
			out = append(out, l.Kernel)
		}
	}
	return out
}

var (
	_ gpu.Device     = (*Device)(nil)
	_ gpu.ExLauncher = (*Device)(nil)
)
