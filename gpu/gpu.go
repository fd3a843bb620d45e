// Package gpu is the device layer: one small interface over the CUDA driver
// API (libcuda.so.1) and the HIP runtime (libamdhip64.so), both loaded with
// purego so the binary needs no cgo and no vendor SDK at build time.
//
// The model:
//   - Open picks a backend (CUDA first, then HIP, or the one named by
//     PARHARNESS_BACKEND / --backend) and returns its device 0, or an
//     *Error listing every library tried and why each failed. OpenDevice
//     takes a device index or PCI bus id; ListDevices describes them all;
//     Probe reports the vendor libraries without opening a device.
//   - A Device belongs to the OS thread that opened it (CUDA contexts and
//     HIP's current device are per thread): call runtime.LockOSThread before
//     Open and make every call from that goroutine.
//   - Every driver call's status is checked and becomes an *Error carrying
//     the function, the numeric code and the driver's own name for it.
//   - Calls that wait for the device (Synchronize, copies to the host, event
//     waits) run under the Watchdog: a kernel that never returns is reported
//     with what was running and the process exits instead of freezing.
//   - The package knows no kernels; kernels are found by name in package
//     kernels, and checked by package gates.
package gpu

import (
	"fmt"
	"runtime"
	"strings"
	"unsafe"
)

// Ptr is a device address.
type Ptr uint64

// Add offsets a device address.
func (p Ptr) Add(off int) Ptr { return p + Ptr(off) }

// Dim3 is a grid or block size.
type Dim3 struct{ X, Y, Z uint32 }

// D1 is a one-dimensional Dim3.
func D1(x int) Dim3 { return Dim3{uint32(x), 1, 1} }

// Info describes the device, as recorded in every results document.
type Info struct {
	Backend string `json:"backend"` // "cuda" or "hip"
	Name    string `json:"name"`
	Arch    string `json:"arch"` // "sm_90", "gfx1201"
	Driver  string `json:"driver"`
	SMs     int    `json:"sms"` // the unit the driver reports: SMs on CUDA; on HIP, CUs, or WGPs on gfx10+ (see CUs)
	// CUs is the compute-unit count on HIP (0 on CUDA). On gfx10 and
	// later the HIP runtime runs in WGP mode by default and
	// hipDeviceAttributeMultiprocessorCount counts workgroup processors
	// of two CUs each (a 64-CU gfx1201 reports 32); see hipComputeUnits.
	CUs         int    `json:"cus,omitempty"`
	ClockMHz    int    `json:"clock_mhz"`     // SM clock as reported by the driver (max)
	MemClockMHz int    `json:"mem_clock_mhz"` // memory clock as reported by the driver
	MemBusBits  int    `json:"mem_bus_bits"`
	L2Bytes     int    `json:"l2_bytes"`  // last-level cache the driver reports
	LLCBytes    int    `json:"llc_bytes"` // last-level cache used for cold-regime sizing (MALL on gfx1201)
	TotalMem    uint64 `json:"total_mem"` // bytes
	// SharedPerBlock is the most dynamic shared memory (LDS) one block may
	// ask for, opted in (232448 bytes on an H100, read 2026-12-07,
	// results/2026-12-06m); 0 where the driver did not say.
	SharedPerBlock int    `json:"shared_per_block,omitempty"`
	PCIBusID       string `json:"pci_bus_id,omitempty"` // "0000:03:00.0", as the driver writes it ("" where it has no such call)
}

// CodeArch is the build directory name of the code objects this device
// runs: "sm_90a" for compute capability 9.0 (PTX targeting sm_90a), the gfx
// name on AMD.
func (i Info) CodeArch() string {
	if strings.HasPrefix(i.Arch, "sm_") {
		if i.Arch == "sm_90" {
			return "sm_90a"
		}
		return i.Arch
	}
	return i.Arch
}

// FuncAttrs are the compiled resource figures of one kernel.
type FuncAttrs struct {
	Regs        int `json:"regs"`
	SharedBytes int `json:"shared_bytes"`
	LocalBytes  int `json:"local_bytes"` // per-thread local (spill/stack) memory
	MaxThreads  int `json:"max_threads"`
}

// Occupier is a Function whose backend reports how many of its blocks
// one SM holds at once (the driver's occupancy calculation).
type Occupier interface {
	MaxActiveBlocks(blockThreads, dynShared int) (int, error)
}

// Module is a loaded code object.
type Module interface {
	Function(name string) (Function, error)
	Unload() error
}

// Function is a kernel entry point in a loaded module.
type Function interface {
	Name() string
	Attrs() (FuncAttrs, error)
}

// Stream is an ordered queue of device work.
type Stream uintptr

// Event marks a point in a stream for timing.
type Event uintptr

// Graph is an instantiated, replayable capture of stream work.
type Graph interface {
	Launch(s Stream) error
	Destroy() error
}

// Device is one GPU behind one backend.
type Device interface {
	Info() Info
	// LoadModule loads a code object image (PTX text or cubin on CUDA, a
	// plain gfx ELF on HIP).
	LoadModule(image []byte) (Module, error)
	Malloc(n int) (Ptr, error)
	Free(p Ptr) error
	HtoD(dst Ptr, src []byte) error
	DtoH(dst []byte, src Ptr) error
	Memset(dst Ptr, b byte, n int) error
	// Launch enqueues f on stream s (0: the default stream). args are
	// Ptr, int32, uint32, int64, uint64, float32 or float64 values, passed by
	// value in order.
	Launch(f Function, grid, block Dim3, sharedBytes int, s Stream, args ...any) error
	Synchronize() error
	NewStream() (Stream, error)
	DestroyStream(s Stream) error
	StreamSynchronize(s Stream) error
	NewEvent() (Event, error)
	DestroyEvent(e Event) error
	Record(e Event, s Stream) error
	// Elapsed waits for end and returns the milliseconds between the events.
	Elapsed(start, end Event) (float32, error)
	BeginCapture(s Stream) error
	// EndCapture ends a capture and instantiates the graph.
	EndCapture(s Stream) (Graph, error)
	Close() error
}

// LaunchOpts are launch options beyond grid, block and shared memory.
type LaunchOpts struct {
	// PDL: programmatic dependent launch. The kernel may start while the
	// previous kernel of its stream finishes, and must execute
	// griddepcontrol.wait (arch.h grid_dep_wait) before it touches anything
	// that kernel writes. Graph capture keeps it as a programmatic edge.
	PDL bool
	// Cluster: thread block cluster dimensions (zero: none); the grid must
	// be a multiple of it.
	Cluster Dim3
}

func (o LaunchOpts) String() string {
	s := "opts{"
	if o.PDL {
		s += "pdl"
	}
	if o.Cluster != (Dim3{}) {
		if o.PDL {
			s += " "
		}
		s += fmt.Sprintf("cluster %dx%dx%d", o.Cluster.X, o.Cluster.Y, o.Cluster.Z)
	}
	return s + "}"
}

// ExLauncher is a Device that launches with LaunchOpts (CUDA, sm_90+). HIP
// has neither option; callers type-assert and say why they go without.
type ExLauncher interface {
	LaunchEx(f Function, grid, block Dim3, sharedBytes int, s Stream, opts LaunchOpts, args ...any) error
}

// withKernelParams packs args, pins the values and the pointer array for
// the duration of fn (kernelParams is void**: Go memory handed to the
// driver must not move), and calls fn with the array (nil for no args).
func withKernelParams(args []any, fn func(params unsafe.Pointer) error) error {
	ptrs, vals, err := argBlock(args)
	if err != nil {
		return err
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	var params unsafe.Pointer
	if len(ptrs) > 0 {
		pin.Pin(&vals[0])
		pin.Pin(&ptrs[0])
		params = unsafe.Pointer(&ptrs[0])
	}
	return fn(params)
}

// argBlock packs kernel arguments into pinned memory and returns the
// void** array the launch APIs take. The caller keeps the returned slices
// alive (and pinned) across the launch call.
func argBlock(args []any) (ptrs []unsafe.Pointer, vals [][8]byte, err error) {
	vals = make([][8]byte, len(args))
	ptrs = make([]unsafe.Pointer, len(args))
	for i, a := range args {
		v := &vals[i]
		switch x := a.(type) {
		case Ptr:
			*(*uint64)(unsafe.Pointer(v)) = uint64(x)
		case int32:
			*(*int32)(unsafe.Pointer(v)) = x
		case uint32:
			*(*uint32)(unsafe.Pointer(v)) = x
		case int:
			return nil, nil, fmt.Errorf("gpu: kernel argument %d is a Go int; pass int32 or int64 so its width is explicit", i)
		case int64:
			*(*int64)(unsafe.Pointer(v)) = x
		case uint64:
			*(*uint64)(unsafe.Pointer(v)) = x
		case float32:
			*(*float32)(unsafe.Pointer(v)) = x
		case float64:
			*(*float64)(unsafe.Pointer(v)) = x
		default:
			return nil, nil, fmt.Errorf("gpu: kernel argument %d has unsupported type %T", i, a)
		}
		ptrs[i] = unsafe.Pointer(v)
	}
	return ptrs, vals, nil
}
