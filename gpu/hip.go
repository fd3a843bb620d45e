package gpu

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"unsafe"
)

// HIP runtime backend (libamdhip64, ROCm 5 to 7), one selected device.
//
// Threads: HIP's current device is per OS thread (hipSetDevice sets it for
// the calling thread only). openHIP calls hipSetDevice on the selected
// device, so the caller must hold runtime.LockOSThread before Open and
// make every call on the Device from that goroutine; the CLI does. A call
// from another thread would run against that thread's current device,
// device 0 by the runtime's default.
//
// The symbol table and the enum values are in hip_bind.go.

// openHIP opens the selected device through the HIP runtime findHIP
// finds (see hip_find.go for the order). The error of a failed search
// lists every candidate and why each failed; once a library is bound, a
// device error (hipInit failing on a machine without an AMD GPU) is
// returned as is, naming the library.
func openHIP(sel deviceSel) (Device, error) {
	l, err := findHIP()
	if err != nil {
		return nil, err
	}
	return l.open(sel)
}

// openHIPFrom is openHIP of device 0 over the given names only.
func openHIPFrom(names []string) (Device, error) {
	l, err := loadHIP(names)
	if err != nil {
		return nil, err
	}
	return l.open(deviceSel{})
}

// open opens the selected device. From here on the library stays loaded
// even on failure: hipInit may have started runtime threads, and unloading
// code they run would crash the process.
func (l *hipLib) open(sel deviceSel) (Device, error) {
	d, err := l.openDevice(sel)
	if err != nil {
		return nil, fmt.Errorf("%s loaded but no usable HIP device: %w", l.path, err)
	}
	return d, nil
}

// listHIP describes every HIP device, making none current.
func listHIP() ([]Info, error) {
	l, err := findHIP()
	if err != nil {
		return nil, err
	}
	n, err := l.initDevices()
	if err != nil {
		return nil, fmt.Errorf("%s loaded but no usable HIP device: %w", l.path, err)
	}
	infos := make([]Info, 0, n)
	for i := 0; i < n; i++ {
		info, err := (&hipDevice{lib: l, dev: int32(i)}).readInfo()
		if err != nil {
			return infos, fmt.Errorf("HIP device %d: %w", i, err)
		}
		infos = append(infos, info)
	}
	return infos, nil
}

// ---- init and device ----

type hipDevice struct {
	lib  *hipLib
	dev  int32
	info Info
	// eventFlags are NewEvent's hipEventCreateWithFlags flags; 0: use
	// hipEventCreate.
	eventFlags uint32
}

// initDevices initialises the runtime and counts its devices (at least
// one, or an error).
func (l *hipLib) initDevices() (int, error) {
	if err := l.check("hipInit", l.hipInit(0)); err != nil {
		return 0, err
	}
	var n int32
	if err := l.check("hipGetDeviceCount", l.hipGetDeviceCount(&n)); err != nil {
		return 0, err
	}
	if n < 1 {
		return 0, fmt.Errorf("hipGetDeviceCount reports %d devices", n)
	}
	return int(n), nil
}

// pick is the device ordinal of a selection among the n devices.
func (l *hipLib) pick(sel deviceSel, n int) (int32, error) {
	if sel.busID != "" {
		if l.hipDeviceGetByPCIBusId == nil {
			return 0, noBusLookup(hipLibName, "hipDeviceGetByPCIBusId")
		}
		var dev int32
		if err := l.check("hipDeviceGetByPCIBusId", l.hipDeviceGetByPCIBusId(&dev, sel.busID)); err != nil {
			return 0, sel.busError(err, "HIP", n)
		}
		return dev, nil
	}
	if sel.index >= n {
		return 0, sel.rangeError(hipLibName, "HIP", n)
	}
	return int32(sel.index), nil
}

// openDevice makes the selected device current on the calling thread and
// reads its Info.
func (l *hipLib) openDevice(sel deviceSel) (*hipDevice, error) {
	n, err := l.initDevices()
	if err != nil {
		return nil, err
	}
	dev, err := l.pick(sel, n)
	if err != nil {
		return nil, err
	}
	d := &hipDevice{lib: l, dev: dev}
	if l.hipEventCreateWithFlags != nil {
		d.eventFlags = hipEventDisableSystemFence
	}
	if err := l.check("hipSetDevice", l.hipSetDevice(d.dev)); err != nil {
		return nil, err
	}
	info, err := d.readInfo()
	if err != nil {
		return nil, err
	}
	d.info = info
	return d, nil
}

// readInfo gathers the Info every results document records.
func (d *hipDevice) readInfo() (Info, error) {
	l := d.lib
	info := Info{Backend: "hip"}

	var drv, rt int32
	if err := l.check("hipRuntimeGetVersion", l.hipRuntimeGetVersion(&rt)); err != nil {
		return info, err
	}
	if err := l.check("hipDriverGetVersion", l.hipDriverGetVersion(&drv)); err != nil {
		return info, err
	}
	// HIP_VERSION encoding: major*10^7 + minor*10^5 + patch (60342000 is 6.3.42000).
	info.Driver = fmt.Sprintf("HIP runtime %d", rt)
	if drv != rt && drv != 0 {
		info.Driver += fmt.Sprintf(", driver %d", drv)
	}
	note := l.note
	if note == "" && rt/10000000 < hipMinMajor {
		note = fmt.Sprintf("HIP runtime version %d is older than %d", rt, hipMinMajor)
	}
	if note != "" {
		info.Driver += " (" + l.path + "; " + note + ")"
	} else {
		info.Driver += " (" + l.path + ")"
	}

	name := make([]byte, 256)
	if err := l.check("hipDeviceGetName", l.hipDeviceGetName(&name[0], int32(len(name)), d.dev)); err != nil {
		return info, err
	}
	info.Name = cBytes(name)

	attrs := []struct {
		attr int32
		dst  *int
	}{
		{hipAttrMultiprocessorCount, &info.SMs},
		{hipAttrClockRate, &info.ClockMHz},
		{hipAttrMemoryClockRate, &info.MemClockMHz},
		{hipAttrMemoryBusWidth, &info.MemBusBits},
		{hipAttrL2CacheSize, &info.L2Bytes},
		{hipAttrMaxSharedPerBlock, &info.SharedPerBlock},
	}
	for _, a := range attrs {
		var v int32
		if err := l.check("hipDeviceGetAttribute", l.hipDeviceGetAttribute(&v, a.attr, d.dev)); err != nil {
			return info, fmt.Errorf("device attribute %d: %w", a.attr, err)
		}
		*a.dst = int(v)
	}
	info.ClockMHz /= 1000    // kHz
	info.MemClockMHz /= 1000 // kHz

	var mem uintptr
	if err := l.check("hipDeviceTotalMem", l.hipDeviceTotalMem(&mem, d.dev)); err != nil {
		return info, err
	}
	info.TotalMem = uint64(mem)

	arch, propName, err := d.archFromProperties()
	if err != nil {
		return info, err
	}
	info.Arch = arch
	if info.Name == "" {
		info.Name = propName
	}
	info.LLCBytes = hipLLCBytes(arch, info.L2Bytes)
	info.CUs = hipComputeUnits(arch, info.SMs, hipWGPMode())
	if l.hipDeviceGetPCIBusId != nil {
		bus := make([]byte, 64)
		if l.hipDeviceGetPCIBusId(&bus[0], int32(len(bus)), d.dev) == hipSuccess {
			info.PCIBusID = cBytes(bus)
		}
	}
	return info, nil
}

// hipComputeUnits is the compute-unit count of a device of this gfx arch
// whose hipDeviceAttributeMultiprocessorCount is mp, with the runtime in
// WGP mode or not (hipWGPMode).
//
// The HIP runtime (clr) enables WGP mode on every gfxip major version 10
// and later unless GPU_ENABLE_WGP_MODE turns it off
// (rocclr/device/rocm/rocsettings.cpp: "if (gfxipMajor >= 10) …
// enableWgpMode_ = GPU_ENABLE_WGP_MODE", default true in
// rocclr/utils/flags.hpp), and then halves the compute-unit count it
// reports (rocclr/device/rocm/rocdevice.cpp: "maxComputeUnits_ =
// settings().enableWgpMode_ ? maxComputeUnits_ / 2 : …"), which becomes
// the device properties' multiProcessorCount (hipamd/src/hip_device.cpp)
// that the attribute returns (hipamd/src/hip_device_runtime.cpp). Read in
// github.com/ROCm/clr at the rocm-5.6.0 and rocm-6.0.0 tags and at
// f9f995c (2024-10); the same in all three.
func hipComputeUnits(arch string, mp int, wgp bool) int {
	if wgp && gfxMajor(arch) >= 10 {
		return 2 * mp
	}
	return mp
}

// gfxMajor is the gfxip major version of a processor name: the digits
// before the last two characters ("gfx1201" → 12, "gfx942" → 9, "gfx90a"
// → 9), or -1.
func gfxMajor(arch string) int {
	rest, ok := strings.CutPrefix(arch, "gfx")
	if !ok || len(rest) < 3 {
		return -1
	}
	n, err := strconv.Atoi(rest[:len(rest)-2])
	if err != nil {
		return -1
	}
	return n
}

// hipWGPMode is the HIP runtime's GPU_ENABLE_WGP_MODE as it reads it
// (rocclr/utils/flags.cpp: a set boolean flag is true when its value is
// "true" or atoi of it is non-zero; unset, the default, true).
func hipWGPMode() bool {
	v, ok := os.LookupEnv("GPU_ENABLE_WGP_MODE")
	if !ok {
		return true
	}
	return v == "true" || cAtoi(v) != 0
}

// cAtoi is C's atoi: leading blanks, an optional sign, then the digits up
// to the first non-digit (0 for none).
func cAtoi(s string) int {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	n := 0
	for i := 0; i < len(s) && isDigit(s[i]) && n < 1<<31; i++ {
		n = n*10 + int(s[i]-'0')
	}
	if neg {
		return -n
	}
	return n
}

// hipPropsBufSize is several times larger than every hipDeviceProp_t layout
// (each is under 2 KiB), so a newer runtime that grows the struct again
// still writes inside the buffer.
const hipPropsBufSize = 8192

// archFromProperties reads the gfx arch name from the device properties.
//
// hipDeviceProp_t changed layout in ROCm 6 (hipDeviceProp_tR0600: a UUID,
// a LUID and many CUDA fields were inserted before gcnArchName), and HIP has
// no attribute for the arch name (hipDeviceAttributeGcnArchName is gone from
// ROCm 6). Rather than mirror two struct layouts, the call fills a zeroed
// buffer far larger than either, and the arch is the NUL-terminated string
// after the 256-byte name that starts with "gfx": gcnArchName, e.g.
// "gfx1201:sramecc-:xnack-" → "gfx1201". The name is char name[256] at
// offset 0 of both layouts.
func (d *hipDevice) archFromProperties() (arch, name string, err error) {
	l := d.lib
	buf := make([]byte, hipPropsBufSize)
	if l.hipGetDevicePropertiesR0600 != nil {
		err = l.check("hipGetDevicePropertiesR0600", l.hipGetDevicePropertiesR0600(unsafe.Pointer(&buf[0]), d.dev))
	} else {
		err = l.check("hipGetDeviceProperties", l.hipGetDeviceProperties(unsafe.Pointer(&buf[0]), d.dev))
	}
	runtime.KeepAlive(buf)
	if err != nil {
		return "", "", err
	}
	arch, ok := gcnArchName(buf)
	if !ok {
		return "", "", fmt.Errorf("hip: no gcnArchName (\"gfx…\") in the device properties")
	}
	return arch, cBytes(buf[:256]), nil
}

// gcnArchName finds gcnArchName in a hipDeviceProp_t image (see
// archFromProperties) and strips its target features (":sramecc-:xnack-").
func gcnArchName(props []byte) (string, bool) {
	for i := 256; i+3 <= len(props); i++ {
		if props[i-1] != 0 || string(props[i:i+3]) != "gfx" {
			continue
		}
		s := cBytes(props[i:])
		if k := strings.IndexByte(s, ':'); k >= 0 {
			s = s[:k]
		}
		if isGfxName(s) {
			return s, true
		}
	}
	return "", false
}

// isGfxName reports whether s looks like a processor name: "gfx" and one to
// six lower-case hex digits or letters (gfx906, gfx90a, gfx942, gfx1201).
func isGfxName(s string) bool {
	rest, ok := strings.CutPrefix(s, "gfx")
	if !ok || len(rest) < 1 || len(rest) > 6 {
		return false
	}
	for _, c := range rest {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return true
}

// hipLLCBytes is the last-level cache used to size cold-cache working sets.
//
// RDNA4 (gfx1200 Navi 44, gfx1201 Navi 48) has an Infinity Cache (MALL)
// behind the L2 that HIP does not report: hipDeviceAttributeL2CacheSize is
// the L2 alone (8 MiB on Navi 48). A working set between L2 and MALL size
// is still served from cache, so cold-regime sizing must use the MALL. The
// size is a per-arch fact: 64 MiB on the full Navi 48 (RX 9070 / 9070 XT);
// cut-down parts carry less (48 MiB on the 9070 GRE, 32 MiB on Navi 44),
// so 64 MiB is an upper bound across RDNA4, which is the safe direction for
// sizing a working set meant to miss the cache. Other arches: the L2.
func hipLLCBytes(arch string, l2 int) int {
	switch arch {
	case "gfx1200", "gfx1201":
		return 64 << 20
	}
	return l2
}

// cBytes returns the NUL-terminated string at the start of b.
func cBytes(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

func (d *hipDevice) Info() Info { return d.info }

// Close waits for queued work, so that its errors surface here. HIP has no
// context to release, and the library is not unloaded (see hipLib.open).
func (d *hipDevice) Close() error { return d.Synchronize() }

// ---- module ----

type hipModule struct {
	lib *hipLib
	h   uintptr
	// image is the code object the runtime was handed. hipModuleLoadData
	// may read it after returning (the runtime can defer building the
	// program for the device), so the module holds it until Unload.
	image []byte
}

type hipFunction struct {
	lib  *hipLib
	h    uintptr
	name string
}

// LoadModule loads a plain gfx ELF code object (not an offload bundle, not
// source). The image is copied first, so the caller may reuse its slice.
func (d *hipDevice) LoadModule(image []byte) (Module, error) {
	if len(image) == 0 {
		return nil, fmt.Errorf("hip: empty code object")
	}
	img := append([]byte(nil), image...)
	var h uintptr
	if err := d.lib.check("hipModuleLoadData", d.lib.hipModuleLoadData(&h, unsafe.Pointer(&img[0]))); err != nil {
		return nil, err
	}
	return &hipModule{lib: d.lib, h: h, image: img}, nil
}

func (m *hipModule) Function(name string) (Function, error) {
	var f uintptr
	if err := m.lib.check("hipModuleGetFunction", m.lib.hipModuleGetFunction(&f, m.h, name)); err != nil {
		return nil, fmt.Errorf("kernel %s: %w", name, err)
	}
	return &hipFunction{lib: m.lib, h: f, name: name}, nil
}

func (m *hipModule) Unload() error {
	if m.h == 0 {
		return fmt.Errorf("hip: module already unloaded")
	}
	err := m.lib.check("hipModuleUnload", m.lib.hipModuleUnload(m.h))
	m.h, m.image = 0, nil
	return err
}

func (f *hipFunction) Name() string { return f.name }

// Attrs reads the compiled resource figures with hipFuncGetAttribute, the
// call for module functions (hipFuncGetAttributes takes a host-side kernel
// stub address and does not apply to hipModuleGetFunction handles).
func (f *hipFunction) Attrs() (FuncAttrs, error) {
	var a FuncAttrs
	for _, q := range []struct {
		attr int32
		dst  *int
	}{
		{hipFuncAttrNumRegs, &a.Regs},
		{hipFuncAttrSharedSizeBytes, &a.SharedBytes},
		{hipFuncAttrLocalSizeBytes, &a.LocalBytes},
		{hipFuncAttrMaxThreadsPerBlock, &a.MaxThreads},
	} {
		var v int32
		if err := f.lib.check("hipFuncGetAttribute", f.lib.hipFuncGetAttribute(&v, q.attr, f.h)); err != nil {
			return a, fmt.Errorf("kernel %s attribute %d: %w", f.name, q.attr, err)
		}
		*q.dst = int(v)
	}
	return a, nil
}

// ---- memory ----

func (d *hipDevice) Malloc(n int) (Ptr, error) {
	if n < 0 {
		return 0, fmt.Errorf("hip: allocating %d bytes", n)
	}
	var p uintptr
	if err := d.lib.check("hipMalloc", d.lib.hipMalloc(&p, uintptr(n))); err != nil {
		return 0, fmt.Errorf("allocating %d bytes: %w", n, err)
	}
	return Ptr(p), nil
}

func (d *hipDevice) Free(p Ptr) error { return d.lib.check("hipFree", d.lib.hipFree(uintptr(p))) }

// HtoD copies host to device. HIP's plain copies and memsets run on the
// null stream and return only when done, after all earlier work on it, so
// a hung kernel would hang them too: HtoD and Memset run under the
// watchdog like DtoH.
func (d *hipDevice) HtoD(dst Ptr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	return guard("hipMemcpyHtoD", func() error {
		err := d.lib.check("hipMemcpyHtoD", d.lib.hipMemcpyHtoD(uintptr(dst), unsafe.Pointer(&src[0]), uintptr(len(src))))
		runtime.KeepAlive(src)
		return err
	})
}

func (d *hipDevice) DtoH(dst []byte, src Ptr) error {
	if len(dst) == 0 {
		return nil
	}
	return guard("hipMemcpyDtoH", func() error {
		err := d.lib.check("hipMemcpyDtoH", d.lib.hipMemcpyDtoH(unsafe.Pointer(&dst[0]), uintptr(src), uintptr(len(dst))))
		runtime.KeepAlive(dst)
		return err
	})
}

func (d *hipDevice) Memset(dst Ptr, b byte, n int) error {
	if n < 0 {
		return fmt.Errorf("hip: memset of %d bytes", n)
	}
	if n == 0 {
		return nil
	}
	return guard("hipMemsetD8", func() error {
		return d.lib.check("hipMemsetD8", d.lib.hipMemsetD8(uintptr(dst), b, uintptr(n)))
	})
}

// ---- launch ----

// Launch enqueues f with hipModuleLaunchKernel. kernelParams is a void**:
// one pointer per argument to that argument's value. argBlock builds the
// values and the pointer array in Go memory; both are pinned for the call,
// since C receives Go memory that holds Go pointers. The runtime copies the
// arguments into the kernarg segment before returning, so nothing needs to
// outlive the call.
func (d *hipDevice) Launch(f Function, grid, block Dim3, sharedBytes int, s Stream, args ...any) error {
	hf, ok := f.(*hipFunction)
	if !ok {
		return fmt.Errorf("gpu: launch of %s: function is not from the HIP backend", f.Name())
	}
	if sharedBytes < 0 {
		return fmt.Errorf("gpu: launch of %s: %d bytes of dynamic shared memory", hf.name, sharedBytes)
	}
	return withKernelParams(args, func(params unsafe.Pointer) error {
		r := d.lib.hipModuleLaunchKernel(hf.h, grid.X, grid.Y, grid.Z, block.X, block.Y, block.Z,
			uint32(sharedBytes), uintptr(s), params, nil)
		if err := d.lib.check("hipModuleLaunchKernel", r); err != nil {
			return fmt.Errorf("launch %s grid %v block %v: %w", hf.name, grid, block, err)
		}
		return nil
	})
}

func (d *hipDevice) Synchronize() error {
	return guard("hipDeviceSynchronize", func() error {
		return d.lib.check("hipDeviceSynchronize", d.lib.hipDeviceSynchronize())
	})
}

// ---- stream and event ----

// NewStream creates a stream with hipStreamCreate's default flags: it
// orders with the null stream (which the plain copies above use).
func (d *hipDevice) NewStream() (Stream, error) {
	var s uintptr
	if err := d.lib.check("hipStreamCreate", d.lib.hipStreamCreate(&s)); err != nil {
		return 0, err
	}
	return Stream(s), nil
}

func (d *hipDevice) DestroyStream(s Stream) error {
	return d.lib.check("hipStreamDestroy", d.lib.hipStreamDestroy(uintptr(s)))
}

func (d *hipDevice) StreamSynchronize(s Stream) error {
	return guard("hipStreamSynchronize", func() error {
		return d.lib.check("hipStreamSynchronize", d.lib.hipStreamSynchronize(uintptr(s)))
	})
}

// NewEvent creates a timing event, with hipEventDisableSystemFence where
// the runtime has hipEventCreateWithFlags. An event of default flags ends
// each record with a system-scope release (cache writeback and
// invalidation) inside the interval it measures: clr's
// Event::recordCommand (hipamd/src/hip_event.cpp) marks the record
// kCacheStateInvalid unless the event has the flag, then
// kCacheStateIgnore. The header's note on the flag: for events used only
// to measure time, whose waits need not synchronize-with the work
// recorded. So Elapsed on these events does not make the device's writes
// visible to the host; the copies and Synchronize do. A runtime that
// refuses the flag (ROCm before 5.6, whose header lacks it) gets
// hipEventCreate, for this and every later event.
func (d *hipDevice) NewEvent() (Event, error) {
	var e uintptr
	if d.eventFlags != 0 {
		if d.lib.hipEventCreateWithFlags(&e, d.eventFlags) == hipSuccess {
			return Event(e), nil
		}
		d.eventFlags = 0
	}
	if err := d.lib.check("hipEventCreate", d.lib.hipEventCreate(&e)); err != nil {
		return 0, err
	}
	return Event(e), nil
}

func (d *hipDevice) DestroyEvent(e Event) error {
	return d.lib.check("hipEventDestroy", d.lib.hipEventDestroy(uintptr(e)))
}

func (d *hipDevice) Record(e Event, s Stream) error {
	return d.lib.check("hipEventRecord", d.lib.hipEventRecord(uintptr(e), uintptr(s)))
}

// Elapsed waits for end (under the watchdog) and returns the milliseconds
// from start to end.
func (d *hipDevice) Elapsed(start, end Event) (float32, error) {
	var ms float32
	err := guard("hipEventSynchronize", func() error {
		if err := d.lib.check("hipEventSynchronize", d.lib.hipEventSynchronize(uintptr(end))); err != nil {
			return err
		}
		return d.lib.check("hipEventElapsedTime", d.lib.hipEventElapsedTime(&ms, uintptr(start), uintptr(end)))
	})
	return ms, err
}

// ---- graph ----

// BeginCapture starts capturing s in thread-local mode: only this thread's
// unsafe calls (such as a synchronous copy) invalidate the capture, which
// matches the one-thread ownership of the Device.
func (d *hipDevice) BeginCapture(s Stream) error {
	return d.lib.check("hipStreamBeginCapture", d.lib.hipStreamBeginCapture(uintptr(s), hipStreamCaptureModeThreadLocal))
}

type hipGraph struct {
	lib  *hipLib
	g    uintptr // hipGraph_t
	exec uintptr // hipGraphExec_t
}

// EndCapture ends the capture and instantiates the graph. The captured
// graph is kept alive next to its executable graph until Destroy: older
// runtimes (ROCm 5) build the executable graph from the captured graph's
// nodes without cloning them, so destroying it early is unsafe there.
func (d *hipDevice) EndCapture(s Stream) (Graph, error) {
	l := d.lib
	var g uintptr
	if err := l.check("hipStreamEndCapture", l.hipStreamEndCapture(uintptr(s), &g)); err != nil {
		return nil, err
	}
	logBuf := make([]byte, 2048)
	var exec, errNode uintptr
	r := l.hipGraphInstantiate(&exec, g, &errNode, &logBuf[0], uintptr(len(logBuf)))
	if err := l.check("hipGraphInstantiate", r); err != nil {
		if msg := cBytes(logBuf); msg != "" {
			err.(*Error).Msg += "; log: " + msg
		}
		l.hipGraphDestroy(g) // the instantiate error is the one to report
		return nil, err
	}
	return &hipGraph{lib: l, g: g, exec: exec}, nil
}

func (g *hipGraph) Launch(s Stream) error {
	if g.exec == 0 {
		return fmt.Errorf("hip: launch of a destroyed graph")
	}
	return g.lib.check("hipGraphLaunch", g.lib.hipGraphLaunch(g.exec, uintptr(s)))
}

// Destroy frees the executable graph, then the captured one. A second
// Destroy does nothing.
func (g *hipGraph) Destroy() error {
	var err error
	if g.exec != 0 {
		err = g.lib.check("hipGraphExecDestroy", g.lib.hipGraphExecDestroy(g.exec))
		g.exec = 0
	}
	if g.g != 0 {
		if err2 := g.lib.check("hipGraphDestroy", g.lib.hipGraphDestroy(g.g)); err == nil {
			err = err2
		}
		g.g = 0
	}
	return err
}
