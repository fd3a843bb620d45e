package gpu

import "unsafe"

// The HIP runtime's symbol table: the C entry points the HIP backend calls,
// bound with purego (no cgo, no ROCm SDK at build time).
//
// The functions live in a struct, not in package variables, so that each
// loaded runtime carries its own table and the tests can bind other
// libraries against it.
//
// Prototypes are those of include/hip/hip_runtime_api.h (ROCm 5.x to 7.x;
// the ones used here did not change shape across those releases; where a
// parameter gained a const, the ABI is the same). Handles (hipModule_t,
// hipFunction_t, hipStream_t, hipEvent_t, hipGraph_t, hipGraphExec_t,
// hipDeviceptr_t) are opaque pointers and travel as uintptr. size_t is
// uintptr; int is int32; hipError_t and the enums are int32.

// hipError is hipError_t, a C enum (int).
type hipError int32

// hipSuccess is hipError_t's success value.
const hipSuccess hipError = 0

// hipLib is one loaded libamdhip64 and its bound entry points.
type hipLib struct {
	*library // path: the name it was dlopened by, e.g. "libamdhip64.so.6"

	note  string   // why this runtime despite its age ("": none needed)
	tried []string // "PATH: why" of the candidates tried before it

	// ---- init and device ----

	// hipError_t hipInit(unsigned int flags);
	hipInit func(flags uint32) hipError
	// hipError_t hipDriverGetVersion(int* driverVersion);
	hipDriverGetVersion func(v *int32) hipError
	// hipError_t hipRuntimeGetVersion(int* runtimeVersion);
	hipRuntimeGetVersion func(v *int32) hipError
	// hipError_t hipGetDeviceCount(int* count);
	hipGetDeviceCount func(n *int32) hipError
	// hipError_t hipSetDevice(int deviceId);
	hipSetDevice func(dev int32) hipError
	// hipError_t hipDeviceGetByPCIBusId(int* device, const char* pciBusId);
	// (optional: only OpenDevice by bus id needs it)
	hipDeviceGetByPCIBusId func(dev *int32, busID string) hipError
	// hipError_t hipDeviceGetPCIBusId(char* pciBusId, int len, int device);
	// (optional: Info.PCIBusID)
	hipDeviceGetPCIBusId func(busID *byte, n int32, dev int32) hipError
	// hipError_t hipDeviceGetName(char* name, int len, hipDevice_t device);
	hipDeviceGetName func(name *byte, n int32, dev int32) hipError
	// hipError_t hipDeviceGetAttribute(int* pi, hipDeviceAttribute_t attr, int deviceId);
	hipDeviceGetAttribute func(v *int32, attr int32, dev int32) hipError
	// hipError_t hipDeviceTotalMem(size_t* bytes, hipDevice_t device);
	hipDeviceTotalMem func(n *uintptr, dev int32) hipError
	// hipError_t hipGetDevicePropertiesR0600(hipDeviceProp_tR0600* prop, int deviceId);
	// ROCm 6+: what the header's hipGetDeviceProperties macro names.
	hipGetDevicePropertiesR0600 func(prop unsafe.Pointer, dev int32) hipError
	// hipError_t hipGetDeviceProperties(hipDeviceProp_t* prop, int deviceId);
	// ROCm 5 (ROCm 6+ keep it for binaries built against the old struct).
	hipGetDeviceProperties func(prop unsafe.Pointer, dev int32) hipError

	// ---- module ----

	// hipError_t hipModuleLoadData(hipModule_t* module, const void* image);
	hipModuleLoadData func(mod *uintptr, image unsafe.Pointer) hipError
	// hipError_t hipModuleUnload(hipModule_t module);
	hipModuleUnload func(mod uintptr) hipError
	// hipError_t hipModuleGetFunction(hipFunction_t* function, hipModule_t module, const char* kname);
	hipModuleGetFunction func(fn *uintptr, mod uintptr, name string) hipError
	// hipError_t hipFuncGetAttribute(int* value, hipFunction_attribute attrib, hipFunction_t hfunc);
	hipFuncGetAttribute func(v *int32, attr int32, fn uintptr) hipError

	// ---- memory ----

	// hipError_t hipMalloc(void** ptr, size_t size);
	hipMalloc func(p *uintptr, n uintptr) hipError
	// hipError_t hipFree(void* ptr);
	hipFree func(p uintptr) hipError
	// hipError_t hipMemcpyHtoD(hipDeviceptr_t dst, const void* src, size_t sizeBytes);
	// (ROCm 5/6 declare src as void*; same ABI.)
	hipMemcpyHtoD func(dst uintptr, src unsafe.Pointer, n uintptr) hipError
	// hipError_t hipMemcpyDtoH(void* dst, hipDeviceptr_t src, size_t sizeBytes);
	hipMemcpyDtoH func(dst unsafe.Pointer, src uintptr, n uintptr) hipError
	// hipError_t hipMemsetD8(hipDeviceptr_t dest, unsigned char value, size_t count);
	hipMemsetD8 func(dst uintptr, v uint8, n uintptr) hipError

	// ---- launch ----

	// hipError_t hipModuleLaunchKernel(hipFunction_t f,
	//     unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
	//     unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
	//     unsigned int sharedMemBytes, hipStream_t stream,
	//     void** kernelParams, void** extra);
	hipModuleLaunchKernel func(f uintptr, gx, gy, gz, bx, by, bz, sharedBytes uint32, stream uintptr, params unsafe.Pointer, extra unsafe.Pointer) hipError
	// hipError_t hipDeviceSynchronize(void);
	hipDeviceSynchronize func() hipError

	// ---- stream and event ----

	// hipError_t hipStreamCreate(hipStream_t* stream);
	hipStreamCreate func(s *uintptr) hipError
	// hipError_t hipStreamDestroy(hipStream_t stream);
	hipStreamDestroy func(s uintptr) hipError
	// hipError_t hipStreamSynchronize(hipStream_t stream);
	hipStreamSynchronize func(s uintptr) hipError
	// hipError_t hipEventCreate(hipEvent_t* event);
	hipEventCreate func(e *uintptr) hipError
	// hipError_t hipEventCreateWithFlags(hipEvent_t* event, unsigned flags);
	// (optional: NewEvent falls back to hipEventCreate)
	hipEventCreateWithFlags func(e *uintptr, flags uint32) hipError
	// hipError_t hipEventDestroy(hipEvent_t event);
	hipEventDestroy func(e uintptr) hipError
	// hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream);
	hipEventRecord func(e uintptr, s uintptr) hipError
	// hipError_t hipEventSynchronize(hipEvent_t event);
	hipEventSynchronize func(e uintptr) hipError
	// hipError_t hipEventElapsedTime(float* ms, hipEvent_t start, hipEvent_t stop);
	hipEventElapsedTime func(ms *float32, start, stop uintptr) hipError

	// ---- graph ----

	// hipError_t hipStreamBeginCapture(hipStream_t stream, hipStreamCaptureMode mode);
	hipStreamBeginCapture func(s uintptr, mode int32) hipError
	// hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t* pGraph);
	hipStreamEndCapture func(s uintptr, g *uintptr) hipError
	// hipError_t hipGraphInstantiate(hipGraphExec_t* pGraphExec, hipGraph_t graph,
	//     hipGraphNode_t* pErrorNode, char* pLogBuffer, size_t bufferSize);
	hipGraphInstantiate func(exec *uintptr, g uintptr, errNode *uintptr, log *byte, logSize uintptr) hipError
	// hipError_t hipGraphLaunch(hipGraphExec_t graphExec, hipStream_t stream);
	hipGraphLaunch func(exec uintptr, s uintptr) hipError
	// hipError_t hipGraphExecDestroy(hipGraphExec_t graphExec);
	hipGraphExecDestroy func(exec uintptr) hipError
	// hipError_t hipGraphDestroy(hipGraph_t graph);
	hipGraphDestroy func(g uintptr) hipError

	// ---- errors ----

	// const char* hipGetErrorName(hipError_t hip_error);
	hipGetErrorName func(e hipError) string
	// const char* hipGetErrorString(hipError_t hipError);
	hipGetErrorString func(e hipError) string
}

// symbols is the table of every entry point, in the order of the struct.
// An optional symbol may be missing (hipGetDevicePropertiesR0600 before
// ROCm 6); the code checks the function variable for nil before calling it.
func (l *hipLib) symbols() []symbol {
	return []symbol{
		{"hipInit", &l.hipInit, false},
		{"hipDriverGetVersion", &l.hipDriverGetVersion, false},
		{"hipRuntimeGetVersion", &l.hipRuntimeGetVersion, false},
		{"hipGetDeviceCount", &l.hipGetDeviceCount, false},
		{"hipSetDevice", &l.hipSetDevice, false},
		{"hipDeviceGetByPCIBusId", &l.hipDeviceGetByPCIBusId, true},
		{"hipDeviceGetPCIBusId", &l.hipDeviceGetPCIBusId, true},
		{"hipDeviceGetName", &l.hipDeviceGetName, false},
		{"hipDeviceGetAttribute", &l.hipDeviceGetAttribute, false},
		{"hipDeviceTotalMem", &l.hipDeviceTotalMem, false},
		// One of the two properties entry points is required (hipSpec's
		// anyOf).
		{"hipGetDevicePropertiesR0600", &l.hipGetDevicePropertiesR0600, true},
		{"hipGetDeviceProperties", &l.hipGetDeviceProperties, true},

		{"hipModuleLoadData", &l.hipModuleLoadData, false},
		{"hipModuleUnload", &l.hipModuleUnload, false},
		{"hipModuleGetFunction", &l.hipModuleGetFunction, false},
		{"hipFuncGetAttribute", &l.hipFuncGetAttribute, false},

		{"hipMalloc", &l.hipMalloc, false},
		{"hipFree", &l.hipFree, false},
		{"hipMemcpyHtoD", &l.hipMemcpyHtoD, false},
		{"hipMemcpyDtoH", &l.hipMemcpyDtoH, false},
		{"hipMemsetD8", &l.hipMemsetD8, false},

		{"hipModuleLaunchKernel", &l.hipModuleLaunchKernel, false},
		{"hipDeviceSynchronize", &l.hipDeviceSynchronize, false},

		{"hipStreamCreate", &l.hipStreamCreate, false},
		{"hipStreamDestroy", &l.hipStreamDestroy, false},
		{"hipStreamSynchronize", &l.hipStreamSynchronize, false},
		{"hipEventCreate", &l.hipEventCreate, false},
		{"hipEventCreateWithFlags", &l.hipEventCreateWithFlags, true},
		{"hipEventDestroy", &l.hipEventDestroy, false},
		{"hipEventRecord", &l.hipEventRecord, false},
		{"hipEventSynchronize", &l.hipEventSynchronize, false},
		{"hipEventElapsedTime", &l.hipEventElapsedTime, false},

		{"hipStreamBeginCapture", &l.hipStreamBeginCapture, false},
		{"hipStreamEndCapture", &l.hipStreamEndCapture, false},
		{"hipGraphInstantiate", &l.hipGraphInstantiate, false},
		{"hipGraphLaunch", &l.hipGraphLaunch, false},
		{"hipGraphExecDestroy", &l.hipGraphExecDestroy, false},
		{"hipGraphDestroy", &l.hipGraphDestroy, false},

		{"hipGetErrorName", &l.hipGetErrorName, false},
		{"hipGetErrorString", &l.hipGetErrorString, false},
	}
}

// spec is how a HIP runtime candidate is bound to l's table (the search
// itself is loadHIPCands, hip_find.go).
func (l *hipLib) spec() libSpec {
	return libSpec{lib: hipLibName, syms: l.symbols(),
		anyOf: [][]string{{"hipGetDevicePropertiesR0600", "hipGetDeviceProperties"}}}
}

// hipLibName is the HIP runtime's Error.Lib.
const hipLibName = "HIP runtime library"

// check turns a hipError_t into nil or an *Error carrying the runtime's
// own name and description of the code.
func (l *hipLib) check(fn string, r hipError) error {
	if r == hipSuccess {
		return nil
	}
	return statusError(hipLibName, fn, "hipError_t", r, l.hipGetErrorName, l.hipGetErrorString)
}

// Enumerator values. Source: ROCm's public headers, read in
// github.com/ROCm/rocm-systems at projects/hip/include/hip/ (the ROCm 7
// tree; before the monorepo the same files were ROCm/HIP include/hip/):
//
//   - hipDeviceAttribute_t: hip_runtime_api.h. The enum starts at
//     hipDeviceAttributeCudaCompatibleBegin = 0 and counts up implicitly;
//     the values below are the positions in that list. The ROCm 5.5 header
//     has the identical sequence up to and past hipDeviceAttributeMultiprocessorCount
//     (ROCm 6 only renamed entries in place: hipDeviceAttributeName became
//     hipDeviceAttributeUnused1, hipDeviceAttributeUuid became
//     hipDeviceAttributeUnused2, and hipDeviceAttributePciDomainID became an
//     alias of the new spelling hipDeviceAttributePciDomainId, which adds
//     no position). ROCm 5.2 (Debian's libamdhip64.so.5 5.2.3) was checked
//     against its binary: hipDeviceGetAttribute's switch sends 5, 19, 59,
//     60 and 63 to the clockRate, l2CacheSize, memoryBusWidth,
//     memoryClockRate and multiProcessorCount fields of its device
//     properties. hipDeviceAttributeMaxSharedMemoryPerBlock is position 74
//     of the same list (ROCm's enum listings with explicit values give 74;
//     not checked against the 5.2 binary). Older HIP headers (the ROCm 3 /
//     early ROCm 4 era) had a different order
//     (hipDeviceAttributeMaxThreadsPerBlock = 0 …); those releases are not
//     supported here.
//   - hipFunction_attribute: driver_types.h (explicit in older headers,
//     implicit from 0 in newer ones; unchanged ROCm 5 to 7).
//   - hipStreamCaptureMode: hip_runtime_api.h.
const (
	hipAttrClockRate           int32 = 5  // hipDeviceAttributeClockRate: peak clock, kHz
	hipAttrL2CacheSize         int32 = 19 // hipDeviceAttributeL2CacheSize: bytes
	hipAttrMemoryBusWidth      int32 = 59 // hipDeviceAttributeMemoryBusWidth: bits
	hipAttrMemoryClockRate     int32 = 60 // hipDeviceAttributeMemoryClockRate: peak, kHz
	hipAttrMultiprocessorCount int32 = 63 // hipDeviceAttributeMultiprocessorCount: CUs (WGPs in WGP mode)
	hipAttrMaxSharedPerBlock   int32 = 74 // hipDeviceAttributeMaxSharedMemoryPerBlock: LDS bytes a block

	hipFuncAttrMaxThreadsPerBlock int32 = 0 // HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
	hipFuncAttrSharedSizeBytes    int32 = 1 // HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES (static LDS)
	hipFuncAttrLocalSizeBytes     int32 = 3 // HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES (scratch per lane)
	hipFuncAttrNumRegs            int32 = 4 // HIP_FUNC_ATTRIBUTE_NUM_REGS

	hipStreamCaptureModeThreadLocal int32 = 1 // Global = 0, ThreadLocal = 1, Relaxed = 2
)

// hipEventDisableSystemFence is the hipEventCreateWithFlags flag that drops
// the system-scope fence of an event's record (hip_runtime_api.h:
// "#define hipEventDisableSystemFence 0x20000000"; first in the ROCm 5.6
// header, unchanged through the 2024 ROCm/HIP tree).
const hipEventDisableSystemFence uint32 = 0x20000000
