package gpu

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"runtime"
	"unsafe"
)

// CUDA driver API backend (libcuda.so.1). One primary context on the
// selected device, made current on the calling OS thread at open.

type cuResult int32

// C prototypes are from cuda.h (CUDA 12/13 driver API). Versioned names
// (_v2) are the ones cuda.h's macros map the plain names to.
var (
	// CUresult cuInit(unsigned int Flags)
	cuInit func(flags uint32) cuResult
	// CUresult cuDriverGetVersion(int *driverVersion)
	cuDriverGetVersion func(v *int32) cuResult
	// CUresult cuDeviceGetCount(int *count)
	cuDeviceGetCount func(n *int32) cuResult
	// CUresult cuDeviceGet(CUdevice *device, int ordinal)
	cuDeviceGet func(d *int32, ordinal int32) cuResult
	// CUresult cuDeviceGetByPCIBusId(CUdevice *dev, const char *pciBusId)
	// (optional: only OpenDevice by bus id needs it)
	cuDeviceGetByPCIBusId func(d *int32, busID string) cuResult
	// CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
	// (optional: Info.PCIBusID)
	cuDeviceGetPCIBusId func(busID *byte, n int32, d int32) cuResult
	// CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
	cuDeviceGetName func(name *byte, n int32, d int32) cuResult
	// CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
	cuDeviceGetAttribute func(v *int32, attr int32, d int32) cuResult
	// CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
	cuDeviceTotalMem func(b *uint64, d int32) cuResult
	// CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
	cuDevicePrimaryCtxRetain func(ctx *uintptr, d int32) cuResult
	// CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
	cuDevicePrimaryCtxRelease func(d int32) cuResult
	// CUresult cuCtxSetCurrent(CUcontext ctx)
	cuCtxSetCurrent func(ctx uintptr) cuResult
	// CUresult cuCtxSynchronize(void)
	cuCtxSynchronize func() cuResult
	// CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions, CUjit_option *options, void **optionValues)
	cuModuleLoadDataEx func(m *uintptr, image unsafe.Pointer, n uint32, opts *int32, vals *uintptr) cuResult
	// CUresult cuModuleUnload(CUmodule hmod)
	cuModuleUnload func(m uintptr) cuResult
	// CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
	cuModuleGetFunction func(f *uintptr, m uintptr, name *byte) cuResult
	// CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
	cuFuncGetAttribute func(v *int32, attr int32, f uintptr) cuResult
	// CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
	cuFuncSetAttribute func(f uintptr, attr int32, v int32) cuResult
	// CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
	cuMemAlloc func(p *uint64, n uint64) cuResult
	// CUresult cuMemFree_v2(CUdeviceptr dptr)
	cuMemFree func(p uint64) cuResult
	// CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
	cuMemcpyHtoD func(dst uint64, src unsafe.Pointer, n uint64) cuResult
	// CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
	cuMemcpyDtoH func(dst unsafe.Pointer, src uint64, n uint64) cuResult
	// CUresult cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N)
	cuMemsetD8 func(dst uint64, v uint8, n uint64) cuResult
	// CUresult cuLaunchKernel(CUfunction f, unsigned gx, gy, gz, bx, by, bz, unsigned sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)
	cuLaunchKernel func(f uintptr, gx, gy, gz, bx, by, bz, shmem uint32, s uintptr, params unsafe.Pointer, extra unsafe.Pointer) cuResult
	// CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)
	// (CUDA 12.0+; optional: only the PDL launch needs it)
	cuLaunchKernelEx func(cfg *cuLaunchConfig, f uintptr, params unsafe.Pointer, extra unsafe.Pointer) cuResult
	// CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize)
	// (optional: only Occupier needs it)
	cuOccupancyMaxActiveBlocksPerMultiprocessor func(n *int32, f uintptr, blockSize int32, dynShared uint64) cuResult
	// CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
	cuStreamCreate func(s *uintptr, flags uint32) cuResult
	// CUresult cuStreamDestroy_v2(CUstream hStream)
	cuStreamDestroy func(s uintptr) cuResult
	// CUresult cuStreamSynchronize(CUstream hStream)
	cuStreamSynchronize func(s uintptr) cuResult
	// CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
	cuEventCreate func(e *uintptr, flags uint32) cuResult
	// CUresult cuEventDestroy_v2(CUevent hEvent)
	cuEventDestroy func(e uintptr) cuResult
	// CUresult cuEventRecord(CUevent hEvent, CUstream hStream)
	cuEventRecord func(e, s uintptr) cuResult
	// CUresult cuEventSynchronize(CUevent hEvent)
	cuEventSynchronize func(e uintptr) cuResult
	// CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
	cuEventElapsedTime func(ms *float32, start, end uintptr) cuResult
	// CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
	cuStreamBeginCapture func(s uintptr, mode int32) cuResult
	// CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
	cuStreamEndCapture func(s uintptr, g *uintptr) cuResult
	// CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags)
	cuGraphInstantiateWithFlags func(e *uintptr, g uintptr, flags uint64) cuResult
	// CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
	cuGraphLaunch func(e, s uintptr) cuResult
	// CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
	cuGraphExecDestroy func(e uintptr) cuResult
	// CUresult cuGraphDestroy(CUgraph hGraph)
	cuGraphDestroy func(g uintptr) cuResult
	// CUresult cuGetErrorName(CUresult error, const char **pStr)
	cuGetErrorName func(r cuResult, s *uintptr) cuResult
	// CUresult cuGetErrorString(CUresult error, const char **pStr)
	cuGetErrorString func(r cuResult, s *uintptr) cuResult
)

var cudaSymbols = []symbol{
	{"cuInit", &cuInit, false},
	{"cuDriverGetVersion", &cuDriverGetVersion, false},
	{"cuDeviceGetCount", &cuDeviceGetCount, false},
	{"cuDeviceGet", &cuDeviceGet, false},
	{"cuDeviceGetByPCIBusId", &cuDeviceGetByPCIBusId, true},
	{"cuDeviceGetPCIBusId", &cuDeviceGetPCIBusId, true},
	{"cuDeviceGetName", &cuDeviceGetName, false},
	{"cuDeviceGetAttribute", &cuDeviceGetAttribute, false},
	{"cuDeviceTotalMem_v2", &cuDeviceTotalMem, false},
	{"cuDevicePrimaryCtxRetain", &cuDevicePrimaryCtxRetain, false},
	{"cuDevicePrimaryCtxRelease_v2", &cuDevicePrimaryCtxRelease, false},
	{"cuCtxSetCurrent", &cuCtxSetCurrent, false},
	{"cuCtxSynchronize", &cuCtxSynchronize, false},
	{"cuModuleLoadDataEx", &cuModuleLoadDataEx, false},
	{"cuModuleUnload", &cuModuleUnload, false},
	{"cuModuleGetFunction", &cuModuleGetFunction, false},
	{"cuFuncGetAttribute", &cuFuncGetAttribute, false},
	{"cuFuncSetAttribute", &cuFuncSetAttribute, false},
	{"cuMemAlloc_v2", &cuMemAlloc, false},
	{"cuMemFree_v2", &cuMemFree, false},
	{"cuMemcpyHtoD_v2", &cuMemcpyHtoD, false},
	{"cuMemcpyDtoH_v2", &cuMemcpyDtoH, false},
	{"cuMemsetD8_v2", &cuMemsetD8, false},
	{"cuLaunchKernel", &cuLaunchKernel, false},
	{"cuLaunchKernelEx", &cuLaunchKernelEx, true},
	{"cuOccupancyMaxActiveBlocksPerMultiprocessor", &cuOccupancyMaxActiveBlocksPerMultiprocessor, true},
	{"cuStreamCreate", &cuStreamCreate, false},
	{"cuStreamDestroy_v2", &cuStreamDestroy, false},
	{"cuStreamSynchronize", &cuStreamSynchronize, false},
	{"cuEventCreate", &cuEventCreate, false},
	{"cuEventDestroy_v2", &cuEventDestroy, false},
	{"cuEventRecord", &cuEventRecord, false},
	{"cuEventSynchronize", &cuEventSynchronize, false},
	{"cuEventElapsedTime", &cuEventElapsedTime, false},
	{"cuStreamBeginCapture_v2", &cuStreamBeginCapture, false},
	{"cuStreamEndCapture", &cuStreamEndCapture, false},
	{"cuGraphInstantiateWithFlags", &cuGraphInstantiateWithFlags, false},
	{"cuGraphLaunch", &cuGraphLaunch, false},
	{"cuGraphExecDestroy", &cuGraphExecDestroy, false},
	{"cuGraphDestroy", &cuGraphDestroy, false},
	{"cuGetErrorName", &cuGetErrorName, false},
	{"cuGetErrorString", &cuGetErrorString, false},
}

// CUdevice_attribute values (cuda.h).
const (
	cuAttrClockRate       = 13 // kHz
	cuAttrSMCount         = 16
	cuAttrMemClockRate    = 36 // kHz
	cuAttrMemBusWidth     = 37
	cuAttrL2CacheSize     = 38
	cuAttrCCMajor         = 75
	cuAttrCCMinor         = 76
	cuAttrSharedOptin     = 97 // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, bytes
	cuFuncMaxThreads      = 0
	cuFuncSharedSizeBytes = 1
	cuFuncLocalSizeBytes  = 3
	cuFuncNumRegs         = 4
	cuJitErrorLogBuffer   = 5
	cuJitErrorLogSize     = 6
	cuCaptureThreadLocal  = 1
)

// cudaLibName is the CUDA driver's Error.Lib.
const cudaLibName = "CUDA driver library"

// cuErr turns a CUresult into nil or an *Error carrying the driver's own
// name and description of the code.
func cuErr(fn string, r cuResult) error {
	if r == 0 {
		return nil
	}
	return statusError(cudaLibName, fn, "CUresult", r, cuString(cuGetErrorName), cuString(cuGetErrorString))
}

// cuString adapts cuGetErrorName or cuGetErrorString (nil before the
// library is bound) to a function returning "" where it has no string.
func cuString(get func(cuResult, *uintptr) cuResult) func(cuResult) string {
	if get == nil {
		return nil
	}
	return func(r cuResult) string {
		var p uintptr
		if get(r, &p) != 0 {
			return ""
		}
		return cString(p)
	}
}

type cudaDevice struct {
	dev  int32
	ctx  uintptr
	info Info
}

// CUDALibraries are the names tried for the driver library through the
// dynamic loader's search path.
var CUDALibraries = []string{"libcuda.so.1", "libcuda.so"}

// CUDADriverDirs are the directories searched for libcuda.so.1 after
// CUDALibraries, for a driver the loader's path does not reach: the
// Debian/Ubuntu multiarch folder, the Red Hat-style lib64 folder, and
// /usr/local/nvidia/lib64, where some container setups mount the driver.
var CUDADriverDirs = []string{"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/local/nvidia/lib64"}

// cudaSpec is how openCUDA finds the driver library: CUDALibraries, then
// libcuda.so.1 in each of CUDADriverDirs, bound to the package's cu*
// variables.
func cudaSpec() libSpec {
	globs := make([]string, len(CUDADriverDirs))
	for i, d := range CUDADriverDirs {
		globs[i] = filepath.Join(sysPath(d), "libcuda.so.1")
	}
	return libSpec{lib: cudaLibName, names: CUDALibraries, globs: globs, syms: cudaSymbols}
}

// openCUDA opens the selected device through the first driver library
// of cudaSpec that loads and has every required symbol, retains its
// primary context and makes it current on the calling thread. The error
// of a failed search is an *Error listing every library tried and why.
func openCUDA(sel deviceSel) (Device, error) {
	lib, n, err := initCUDA()
	if err != nil {
		return nil, err
	}
	dev, err := cudaPick(sel, n)
	if err != nil {
		return nil, err
	}
	d := &cudaDevice{dev: dev}
	if err := cuErr("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain(&d.ctx, d.dev)); err != nil {
		return nil, err
	}
	if err := cuErr("cuCtxSetCurrent", cuCtxSetCurrent(d.ctx)); err != nil {
		return nil, err
	}
	d.info = cudaInfo(d.dev, lib)
	return d, nil
}

// listCUDA describes every CUDA device without creating a context.
func listCUDA() ([]Info, error) {
	lib, n, err := initCUDA()
	if err != nil {
		return nil, err
	}
	infos := make([]Info, 0, n)
	for i := 0; i < n; i++ {
		var dev int32
		if err := cuErr("cuDeviceGet", cuDeviceGet(&dev, int32(i))); err != nil {
			return infos, err
		}
		infos = append(infos, cudaInfo(dev, lib))
	}
	return infos, nil
}

// initCUDA loads and initialises the driver library and counts its
// devices (at least one, or an error).
func initCUDA() (*library, int, error) {
	lib, err := loadLib(cudaSpec())
	if err != nil {
		return nil, 0, err
	}
	if err := cuErr("cuInit", cuInit(0)); err != nil {
		return nil, 0, fmt.Errorf("%s loaded but no usable CUDA device: %w", lib.path, err)
	}
	var n int32
	if err := cuErr("cuDeviceGetCount", cuDeviceGetCount(&n)); err != nil {
		return nil, 0, err
	}
	if n == 0 {
		return nil, 0, fmt.Errorf("%s loaded but it reports no CUDA device", lib.path)
	}
	return lib, int(n), nil
}

// cudaPick is the CUdevice of a selection among the n devices.
func cudaPick(sel deviceSel, n int) (int32, error) {
	var dev int32
	if sel.busID != "" {
		if cuDeviceGetByPCIBusId == nil {
			return 0, noBusLookup(cudaLibName, "cuDeviceGetByPCIBusId")
		}
		if err := cuErr("cuDeviceGetByPCIBusId", cuDeviceGetByPCIBusId(&dev, sel.busID)); err != nil {
			return 0, sel.busError(err, "CUDA", n)
		}
		return dev, nil
	}
	if sel.index >= n {
		return 0, sel.rangeError(cudaLibName, "CUDA", n)
	}
	err := cuErr("cuDeviceGet", cuDeviceGet(&dev, int32(sel.index)))
	return dev, err
}

// cudaInfo describes a device from its attributes (no context needed).
func cudaInfo(dev int32, lib *library) Info {
	attr := func(a int32) int {
		var v int32
		if cuDeviceGetAttribute(&v, a, dev) != 0 {
			return 0
		}
		return int(v)
	}
	name := make([]byte, 256)
	cuDeviceGetName(&name[0], int32(len(name)), dev)
	var ver int32
	cuDriverGetVersion(&ver)
	var mem uint64
	cuDeviceTotalMem(&mem, dev)
	info := Info{
		Backend:     "cuda",
		Name:        cBytes(name),
		Arch:        fmt.Sprintf("sm_%d%d", attr(cuAttrCCMajor), attr(cuAttrCCMinor)),
		Driver:      fmt.Sprintf("CUDA driver %d.%d (%s)", ver/1000, ver%1000/10, lib.path),
		SMs:         attr(cuAttrSMCount),
		ClockMHz:    attr(cuAttrClockRate) / 1000,
		MemClockMHz: attr(cuAttrMemClockRate) / 1000,
		MemBusBits:  attr(cuAttrMemBusWidth),
		L2Bytes:     attr(cuAttrL2CacheSize),
		TotalMem:    mem,

		SharedPerBlock: attr(cuAttrSharedOptin),
	}
	info.LLCBytes = info.L2Bytes
	if cuDeviceGetPCIBusId != nil {
		bus := make([]byte, 64)
		if cuDeviceGetPCIBusId(&bus[0], int32(len(bus)), dev) == 0 {
			info.PCIBusID = cBytes(bus)
		}
	}
	return info
}

func (d *cudaDevice) Info() Info { return d.info }

type cudaModule struct{ h uintptr }
type cudaFunction struct {
	h    uintptr
	name string
	// dynShared is the dynamic shared memory this function has been
	// allowed (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).
	dynShared int
}

// cuFuncAttrMaxDynamicSharedSizeBytes is CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
const cuFuncAttrMaxDynamicSharedSizeBytes = 8

// cudaDefaultDynShared is the dynamic shared memory a launch may ask for
// without opting in.
const cudaDefaultDynShared = 48 << 10

// allowShared opts f in to n bytes of dynamic shared memory (over 48 KiB a
// kernel must, once, before its first such launch).
func (f *cudaFunction) allowShared(n int) error {
	if n <= cudaDefaultDynShared || n <= f.dynShared {
		return nil
	}
	if err := cuErr("cuFuncSetAttribute", cuFuncSetAttribute(f.h, cuFuncAttrMaxDynamicSharedSizeBytes, int32(n))); err != nil {
		return fmt.Errorf("kernel %s: allowing %d bytes of dynamic shared memory: %w (over the device's per-block limit?)", f.name, n, err)
	}
	f.dynShared = n
	return nil
}

func (d *cudaDevice) LoadModule(image []byte) (Module, error) {
	img := append(append([]byte(nil), image...), 0) // PTX must be NUL-terminated
	logBuf := make([]byte, 8192)
	opts := []int32{cuJitErrorLogBuffer, cuJitErrorLogSize}
	vals := []uintptr{uintptr(unsafe.Pointer(&logBuf[0])), uintptr(len(logBuf))}
	var pin runtime.Pinner
	pin.Pin(&img[0])
	pin.Pin(&logBuf[0])
	defer pin.Unpin()
	var m uintptr
	r := cuModuleLoadDataEx(&m, unsafe.Pointer(&img[0]), uint32(len(opts)), &opts[0], &vals[0])
	if err := cuErr("cuModuleLoadDataEx", r); err != nil {
		if log := cString(uintptr(unsafe.Pointer(&logBuf[0]))); log != "" {
			err.(*Error).Msg += "; JIT log: " + log
		}
		return nil, err
	}
	return &cudaModule{h: m}, nil
}

func (m *cudaModule) Function(name string) (Function, error) {
	cname := append([]byte(name), 0)
	var f uintptr
	if err := cuErr("cuModuleGetFunction", cuModuleGetFunction(&f, m.h, &cname[0])); err != nil {
		return nil, err
	}
	return &cudaFunction{h: f, name: name}, nil
}

func (m *cudaModule) Unload() error { return cuErr("cuModuleUnload", cuModuleUnload(m.h)) }

func (f *cudaFunction) Name() string { return f.name }

// MaxActiveBlocks is the driver's count of f's blocks of blockThreads
// threads and dynShared bytes of dynamic shared memory that one SM holds
// at once (every per-SM limit: registers, shared memory, threads,
// barriers, blocks).
func (f *cudaFunction) MaxActiveBlocks(blockThreads, dynShared int) (int, error) {
	if cuOccupancyMaxActiveBlocksPerMultiprocessor == nil {
		return 0, fmt.Errorf("kernel %s: this driver has no cuOccupancyMaxActiveBlocksPerMultiprocessor", f.name)
	}
	if err := f.allowShared(dynShared); err != nil {
		return 0, err
	}
	var n int32
	if err := cuErr("cuOccupancyMaxActiveBlocksPerMultiprocessor", cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f.h, int32(blockThreads), uint64(dynShared))); err != nil {
		return 0, fmt.Errorf("kernel %s, %d threads, %d bytes of dynamic shared memory: %w", f.name, blockThreads, dynShared, err)
	}
	return int(n), nil
}

func (f *cudaFunction) Attrs() (FuncAttrs, error) {
	get := func(a int32) (int, error) {
		var v int32
		err := cuErr("cuFuncGetAttribute", cuFuncGetAttribute(&v, a, f.h))
		return int(v), err
	}
	var a FuncAttrs
	var err error
	if a.Regs, err = get(cuFuncNumRegs); err != nil {
		return a, err
	}
	if a.SharedBytes, err = get(cuFuncSharedSizeBytes); err != nil {
		return a, err
	}
	if a.LocalBytes, err = get(cuFuncLocalSizeBytes); err != nil {
		return a, err
	}
	a.MaxThreads, err = get(cuFuncMaxThreads)
	return a, err
}

func (d *cudaDevice) Malloc(n int) (Ptr, error) {
	var p uint64
	if err := cuErr("cuMemAlloc", cuMemAlloc(&p, uint64(n))); err != nil {
		return 0, fmt.Errorf("allocating %d bytes: %w", n, err)
	}
	return Ptr(p), nil
}

func (d *cudaDevice) Free(p Ptr) error { return cuErr("cuMemFree", cuMemFree(uint64(p))) }

func (d *cudaDevice) HtoD(dst Ptr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	err := cuErr("cuMemcpyHtoD", cuMemcpyHtoD(uint64(dst), unsafe.Pointer(&src[0]), uint64(len(src))))
	runtime.KeepAlive(src)
	return err
}

func (d *cudaDevice) DtoH(dst []byte, src Ptr) error {
	if len(dst) == 0 {
		return nil
	}
	return guard("cuMemcpyDtoH", func() error {
		err := cuErr("cuMemcpyDtoH", cuMemcpyDtoH(unsafe.Pointer(&dst[0]), uint64(src), uint64(len(dst))))
		runtime.KeepAlive(dst)
		return err
	})
}

func (d *cudaDevice) Memset(dst Ptr, b byte, n int) error {
	return cuErr("cuMemsetD8", cuMemsetD8(uint64(dst), b, uint64(n)))
}

// launchable is f as this backend's function, allowed sharedBytes of
// dynamic shared memory: what both launch calls need first.
func launchable(f Function, sharedBytes int) (*cudaFunction, error) {
	cf, ok := f.(*cudaFunction)
	if !ok {
		return nil, fmt.Errorf("gpu: launch of %s: function is not from the CUDA backend", f.Name())
	}
	return cf, cf.allowShared(sharedBytes)
}

func (d *cudaDevice) Launch(f Function, grid, block Dim3, sharedBytes int, s Stream, args ...any) error {
	cf, err := launchable(f, sharedBytes)
	if err != nil {
		return err
	}
	return withKernelParams(args, func(params unsafe.Pointer) error {
		r := cuLaunchKernel(cf.h, grid.X, grid.Y, grid.Z, block.X, block.Y, block.Z, uint32(sharedBytes), uintptr(s), params, nil)
		if err := cuErr("cuLaunchKernel", r); err != nil {
			return fmt.Errorf("launch %s grid %v block %v: %w", cf.name, grid, block, err)
		}
		return nil
	})
}

// cuLaunchConfig is CUlaunchConfig (cuda.h): seven unsigned ints, then the
// stream handle at offset 32, the attribute pointer at 40, the count at 48.
type cuLaunchConfig struct {
	gridX, gridY, gridZ    uint32
	blockX, blockY, blockZ uint32
	sharedBytes            uint32
	_                      uint32
	stream                 uintptr
	attrs                  *cuLaunchAttribute
	numAttrs               uint32
	_                      uint32
}

// cuLaunchAttribute is CUlaunchAttribute: the id, 4 bytes of padding and the
// 64-byte CUlaunchAttributeValue union (its first int32 carries the flag
// values used here).
type cuLaunchAttribute struct {
	id    uint32
	_     uint32
	value [64]byte
}

// CUlaunchAttributeID values (cuda.h) used by LaunchEx.
const (
	// CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION: value = three unsigned ints.
	cuLaunchAttrClusterDimension = 4
	// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION: value = int,
	// non-zero lets the launch overlap the previous kernel of its stream
	// (the kernel resolves the dependency with griddepcontrol.wait).
	cuLaunchAttrProgrammaticStreamSerialization = 6
)

// LaunchEx enqueues f like Launch with the options of opts (cuLaunchKernelEx):
// a programmatic dependent launch, and/or thread block clusters.
func (d *cudaDevice) LaunchEx(f Function, grid, block Dim3, sharedBytes int, s Stream, opts LaunchOpts, args ...any) error {
	if cuLaunchKernelEx == nil {
		return fmt.Errorf("gpu: launch of %s with %v: %w", f.Name(), opts,
			&Error{Lib: cudaLibName, Func: "cuLaunchKernelEx", Msg: "this driver has no cuLaunchKernelEx (CUDA 12.0+ needed)"})
	}
	cf, err := launchable(f, sharedBytes)
	if err != nil {
		return err
	}
	attrs := make([]cuLaunchAttribute, 0, 2)
	if opts.PDL {
		a := cuLaunchAttribute{id: cuLaunchAttrProgrammaticStreamSerialization}
		binary.LittleEndian.PutUint32(a.value[0:], 1)
		attrs = append(attrs, a)
	}
	if opts.Cluster != (Dim3{}) {
		a := cuLaunchAttribute{id: cuLaunchAttrClusterDimension}
		binary.LittleEndian.PutUint32(a.value[0:], opts.Cluster.X)
		binary.LittleEndian.PutUint32(a.value[4:], opts.Cluster.Y)
		binary.LittleEndian.PutUint32(a.value[8:], opts.Cluster.Z)
		attrs = append(attrs, a)
	}
	cfg := &cuLaunchConfig{gridX: grid.X, gridY: grid.Y, gridZ: grid.Z, blockX: block.X, blockY: block.Y, blockZ: block.Z,
		sharedBytes: uint32(sharedBytes), stream: uintptr(s), numAttrs: uint32(len(attrs))}
	var pin runtime.Pinner
	defer pin.Unpin()
	if len(attrs) > 0 {
		cfg.attrs = &attrs[0]
		pin.Pin(&attrs[0])
	}
	pin.Pin(cfg)
	return withKernelParams(args, func(params unsafe.Pointer) error {
		if err := cuErr("cuLaunchKernelEx", cuLaunchKernelEx(cfg, cf.h, params, nil)); err != nil {
			return fmt.Errorf("launch %s grid %v block %v %v: %w", cf.name, grid, block, opts, err)
		}
		return nil
	})
}

func (d *cudaDevice) Synchronize() error {
	return guard("cuCtxSynchronize", func() error { return cuErr("cuCtxSynchronize", cuCtxSynchronize()) })
}

func (d *cudaDevice) NewStream() (Stream, error) {
	var s uintptr
	err := cuErr("cuStreamCreate", cuStreamCreate(&s, 1 /* CU_STREAM_NON_BLOCKING */))
	return Stream(s), err
}

func (d *cudaDevice) DestroyStream(s Stream) error {
	return cuErr("cuStreamDestroy", cuStreamDestroy(uintptr(s)))
}

func (d *cudaDevice) StreamSynchronize(s Stream) error {
	return guard("cuStreamSynchronize", func() error { return cuErr("cuStreamSynchronize", cuStreamSynchronize(uintptr(s))) })
}

func (d *cudaDevice) NewEvent() (Event, error) {
	var e uintptr
	err := cuErr("cuEventCreate", cuEventCreate(&e, 0))
	return Event(e), err
}

func (d *cudaDevice) DestroyEvent(e Event) error {
	return cuErr("cuEventDestroy", cuEventDestroy(uintptr(e)))
}

func (d *cudaDevice) Record(e Event, s Stream) error {
	return cuErr("cuEventRecord", cuEventRecord(uintptr(e), uintptr(s)))
}

func (d *cudaDevice) Elapsed(start, end Event) (float32, error) {
	if err := guard("cuEventSynchronize", func() error { return cuErr("cuEventSynchronize", cuEventSynchronize(uintptr(end))) }); err != nil {
		return 0, err
	}
	var ms float32
	err := cuErr("cuEventElapsedTime", cuEventElapsedTime(&ms, uintptr(start), uintptr(end)))
	return ms, err
}

func (d *cudaDevice) BeginCapture(s Stream) error {
	return cuErr("cuStreamBeginCapture", cuStreamBeginCapture(uintptr(s), cuCaptureThreadLocal))
}

type cudaGraph struct{ g, exec uintptr }

func (d *cudaDevice) EndCapture(s Stream) (Graph, error) {
	var g uintptr
	if err := cuErr("cuStreamEndCapture", cuStreamEndCapture(uintptr(s), &g)); err != nil {
		return nil, err
	}
	var e uintptr
	if err := cuErr("cuGraphInstantiateWithFlags", cuGraphInstantiateWithFlags(&e, g, 0)); err != nil {
		cuGraphDestroy(g)
		return nil, err
	}
	return &cudaGraph{g: g, exec: e}, nil
}

func (g *cudaGraph) Launch(s Stream) error {
	return cuErr("cuGraphLaunch", cuGraphLaunch(g.exec, uintptr(s)))
}

func (g *cudaGraph) Destroy() error {
	err := cuErr("cuGraphExecDestroy", cuGraphExecDestroy(g.exec))
	if err2 := cuErr("cuGraphDestroy", cuGraphDestroy(g.g)); err == nil {
		err = err2
	}
	return err
}

func (d *cudaDevice) Close() error {
	return cuErr("cuDevicePrimaryCtxRelease", cuDevicePrimaryCtxRelease(d.dev))
}
