package gpu

import (
	"fmt"
	"sync"
)

// NVML (libnvidia-ml, shipped with the NVIDIA driver) through purego: the
// clocks, temperature and power the bench engine records around each
// benchmark, so a result can say whether the GPU ran at its clocks.
//
// Values and prototypes are from nvml.h (NVML API version 10, as stored in
// github.com/flightlessmango/MangoHud, include/nvml.h; the nvmlReturn_t
// names up to 22 from a later nvml.h of the same layout). The values used
// here have not changed since they were introduced: nvml.h's versioned
// names are the ones its macros map the plain names to (nvmlInit ->
// nvmlInit_v2, nvmlDeviceGetHandleByIndex -> nvmlDeviceGetHandleByIndex_v2).
//
// NVML is thread-safe and needs no CUDA context; NVML's device index is
// its own enumeration (PCI order), which can differ from the CUDA ordinal
// when CUDA_VISIBLE_DEVICES or CUDA_DEVICE_ORDER reorder devices. On a
// one-GPU machine both are 0.
//
// Sample is exercised by the bench engine on the device, and by
// TestNVMLSampleOnDevice where a driver is installed; CI checks the
// loading error and the symbol table.

// nvmlReturn is nvmlReturn_t (nvml.h), a C enum (int).
type nvmlReturn int32

// nvmlReturn_t values (nvml.h).
const (
	nvmlSuccess         nvmlReturn = 0 // NVML_SUCCESS
	nvmlErrNotSupported nvmlReturn = 3 // NVML_ERROR_NOT_SUPPORTED
)

var nvmlReturnNames = map[nvmlReturn]string{
	0:   "NVML_SUCCESS",
	1:   "NVML_ERROR_UNINITIALIZED",
	2:   "NVML_ERROR_INVALID_ARGUMENT",
	3:   "NVML_ERROR_NOT_SUPPORTED",
	4:   "NVML_ERROR_NO_PERMISSION",
	5:   "NVML_ERROR_ALREADY_INITIALIZED",
	6:   "NVML_ERROR_NOT_FOUND",
	7:   "NVML_ERROR_INSUFFICIENT_SIZE",
	8:   "NVML_ERROR_INSUFFICIENT_POWER",
	9:   "NVML_ERROR_DRIVER_NOT_LOADED",
	10:  "NVML_ERROR_TIMEOUT",
	11:  "NVML_ERROR_IRQ_ISSUE",
	12:  "NVML_ERROR_LIBRARY_NOT_FOUND",
	13:  "NVML_ERROR_FUNCTION_NOT_FOUND",
	14:  "NVML_ERROR_CORRUPTED_INFOROM",
	15:  "NVML_ERROR_GPU_IS_LOST",
	16:  "NVML_ERROR_RESET_REQUIRED",
	17:  "NVML_ERROR_OPERATING_SYSTEM",
	18:  "NVML_ERROR_LIB_RM_VERSION_MISMATCH",
	19:  "NVML_ERROR_IN_USE",
	20:  "NVML_ERROR_MEMORY",
	21:  "NVML_ERROR_NO_DATA",
	22:  "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED",
	999: "NVML_ERROR_UNKNOWN",
}

// nvmlClockType_t (nvml.h). Clocks are in MHz.
const (
	nvmlClockGraphics = 0 // NVML_CLOCK_GRAPHICS
	nvmlClockSM       = 1 // NVML_CLOCK_SM
	nvmlClockMem      = 2 // NVML_CLOCK_MEM
)

// nvmlTemperatureSensors_t (nvml.h).
const nvmlTemperatureGPU = 0 // NVML_TEMPERATURE_GPU: the GPU die, °C

// nvmlLib is one loaded libnvidia-ml and its bound entry points.
// nvmlDevice_t is an opaque pointer (uintptr); unsigned int is uint32.
type nvmlLib struct {
	*library

	// nvmlReturn_t nvmlInit_v2(void);
	nvmlInit func() nvmlReturn
	// nvmlReturn_t nvmlShutdown(void);
	nvmlShutdown func() nvmlReturn
	// const char* nvmlErrorString(nvmlReturn_t result);
	nvmlErrorString func(r nvmlReturn) uintptr
	// nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device);
	nvmlDeviceGetHandleByIndex func(index uint32, dev *uintptr) nvmlReturn
	// nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock);
	nvmlDeviceGetClockInfo func(dev uintptr, typ int32, mhz *uint32) nvmlReturn
	// nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType, unsigned int* temp);
	nvmlDeviceGetTemperature func(dev uintptr, sensor int32, c *uint32) nvmlReturn
	// nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power);  (milliwatts)
	nvmlDeviceGetPowerUsage func(dev uintptr, mw *uint32) nvmlReturn
	// nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length);
	// (optional: DriverVersion)
	nvmlSystemGetDriverVersion func(version *byte, length uint32) nvmlReturn
	// nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device, unsigned long long *reasons);
	// (optional: Sample's Throttle)
	nvmlDeviceGetCurrentClocksThrottleReasons func(dev uintptr, reasons *uint64) nvmlReturn
}

// ThrottleReasons are the nvmlClocksThrottleReason* bits of nvml.h, by
// name. Idle is not a slowdown of a running kernel and is not reported.
var ThrottleReasons = []struct {
	Bit  uint64
	Name string
}{
	{0x2, "applications_clocks_setting"},
	{0x4, "sw_power_cap"},
	{0x8, "hw_slowdown"},
	{0x10, "sync_boost"},
	{0x20, "sw_thermal_slowdown"},
	{0x40, "hw_thermal_slowdown"},
	{0x80, "hw_power_brake_slowdown"},
	{0x100, "display_clock_setting"},
}

// ThrottleNames names the set bits of an NVML throttle-reason mask.
func ThrottleNames(mask uint64) []string {
	var out []string
	for _, r := range ThrottleReasons {
		if mask&r.Bit != 0 {
			out = append(out, r.Name)
		}
	}
	return out
}

// symbols is the table of every entry point, in the order of the struct.
func (l *nvmlLib) symbols() []symbol {
	return []symbol{
		{"nvmlInit_v2", &l.nvmlInit, false},
		{"nvmlShutdown", &l.nvmlShutdown, false},
		{"nvmlErrorString", &l.nvmlErrorString, false},
		{"nvmlDeviceGetHandleByIndex_v2", &l.nvmlDeviceGetHandleByIndex, false},
		{"nvmlDeviceGetClockInfo", &l.nvmlDeviceGetClockInfo, false},
		{"nvmlDeviceGetTemperature", &l.nvmlDeviceGetTemperature, false},
		{"nvmlDeviceGetPowerUsage", &l.nvmlDeviceGetPowerUsage, false},
		{"nvmlSystemGetDriverVersion", &l.nvmlSystemGetDriverVersion, true},
		{"nvmlDeviceGetCurrentClocksThrottleReasons", &l.nvmlDeviceGetCurrentClocksThrottleReasons, true},
	}
}

// err turns an nvmlReturn_t into an *Error (nil on success).
func (l *nvmlLib) err(fn string, r nvmlReturn) error {
	if r == nvmlSuccess {
		return nil
	}
	var msg func(nvmlReturn) string
	if l != nil && l.nvmlErrorString != nil {
		msg = func(r nvmlReturn) string { return cString(l.nvmlErrorString(r)) }
	}
	return statusError("NVML", fn, "nvmlReturn_t", r, nameIn(nvmlReturnNames), msg)
}

// NVMLLibraries are the names tried for libnvidia-ml, through the dynamic
// loader's normal search path.
var NVMLLibraries = []string{"libnvidia-ml.so.1", "libnvidia-ml.so"}

// NVML is an initialised NVML session.
type NVML struct {
	lib  *nvmlLib
	mu   sync.Mutex
	devs map[int]uintptr // nvmlDevice_t by NVML index
	open bool
}

// ClockSample is one reading of a device's clocks, temperature and power.
// TempC and PowerW are -1 where the device does not report them.
type ClockSample struct {
	// Throttle names the throttle reasons set at the sample (nil: none, or
	// the driver does not report them).
	Throttle []string `json:"throttle,omitempty"`
	SMMHz    int      `json:"sm_mhz"`
	MemMHz   int      `json:"mem_mhz"`
	TempC    int      `json:"temp_c"`
	PowerW   float64  `json:"power_w"`
}

// spec is how OpenNVML finds libnvidia-ml: NVMLLibraries, bound to l's
// table.
func (l *nvmlLib) spec() libSpec {
	return libSpec{lib: "NVML", names: NVMLLibraries, syms: l.symbols()}
}

// OpenNVML loads libnvidia-ml and calls nvmlInit_v2. When no library
// loads with every symbol, the error is an *Error naming every name tried
// and why.
func OpenNVML() (*NVML, error) {
	l := &nvmlLib{}
	lib, err := loadLib(l.spec())
	if err != nil {
		return nil, err
	}
	l.library = lib
	if err := l.err("nvmlInit_v2", l.nvmlInit()); err != nil {
		return nil, fmt.Errorf("%s loaded but NVML did not start: %w", lib.path, err)
	}
	return &NVML{lib: l, devs: map[int]uintptr{}, open: true}, nil
}

// Path is the library name that was loaded.
func (n *NVML) Path() string { return n.lib.path }

// nvmlSystemDriverVersionBufferSize is NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
// (nvml.h): large enough for nvmlSystemGetDriverVersion's string.
const nvmlSystemDriverVersionBufferSize = 80

// DriverVersion is the NVIDIA driver's version string
// (nvmlSystemGetDriverVersion), e.g. "560.35.03".
func (n *NVML) DriverVersion() (string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.open {
		return "", fmt.Errorf("gpu: NVML is closed")
	}
	if n.lib.nvmlSystemGetDriverVersion == nil {
		return "", &Error{Lib: "NVML", Func: "nvmlSystemGetDriverVersion", Msg: "this NVML has no nvmlSystemGetDriverVersion"}
	}
	buf := make([]byte, nvmlSystemDriverVersionBufferSize)
	if err := n.lib.err("nvmlSystemGetDriverVersion", n.lib.nvmlSystemGetDriverVersion(&buf[0], uint32(len(buf)))); err != nil {
		return "", err
	}
	return cBytes(buf), nil
}

// handle returns the nvmlDevice_t of an NVML index.
func (n *NVML) handle(index int) (uintptr, error) {
	if h, ok := n.devs[index]; ok {
		return h, nil
	}
	if index < 0 {
		return 0, fmt.Errorf("gpu: NVML device index %d", index)
	}
	var h uintptr
	if err := n.lib.err("nvmlDeviceGetHandleByIndex_v2", n.lib.nvmlDeviceGetHandleByIndex(uint32(index), &h)); err != nil {
		return 0, fmt.Errorf("NVML device %d: %w", index, err)
	}
	n.devs[index] = h
	return h, nil
}

// Sample reads the current SM and memory clocks, the GPU temperature and
// the power draw of the device with this NVML index. The clocks are
// required; a temperature or power reading the device does not support
// (NVML_ERROR_NOT_SUPPORTED) is reported as -1.
func (n *NVML) Sample(index int) (ClockSample, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := ClockSample{TempC: -1, PowerW: -1}
	if !n.open {
		return s, fmt.Errorf("gpu: NVML is closed")
	}
	h, err := n.handle(index)
	if err != nil {
		return s, err
	}
	l := n.lib
	var v uint32
	if err := l.err("nvmlDeviceGetClockInfo", l.nvmlDeviceGetClockInfo(h, nvmlClockSM, &v)); err != nil {
		return s, fmt.Errorf("NVML device %d SM clock: %w", index, err)
	}
	s.SMMHz = int(v)
	if l.nvmlDeviceGetCurrentClocksThrottleReasons != nil {
		var mask uint64
		if l.nvmlDeviceGetCurrentClocksThrottleReasons(h, &mask) == nvmlSuccess {
			s.Throttle = ThrottleNames(mask)
		}
	}
	if err := l.err("nvmlDeviceGetClockInfo", l.nvmlDeviceGetClockInfo(h, nvmlClockMem, &v)); err != nil {
		return s, fmt.Errorf("NVML device %d memory clock: %w", index, err)
	}
	s.MemMHz = int(v)
	switch r := l.nvmlDeviceGetTemperature(h, nvmlTemperatureGPU, &v); r {
	case nvmlSuccess:
		s.TempC = int(v)
	case nvmlErrNotSupported:
	default:
		return s, fmt.Errorf("NVML device %d temperature: %w", index, l.err("nvmlDeviceGetTemperature", r))
	}
	switch r := l.nvmlDeviceGetPowerUsage(h, &v); r {
	case nvmlSuccess:
		s.PowerW = float64(v) / 1000 // milliwatts
	case nvmlErrNotSupported:
	default:
		return s, fmt.Errorf("NVML device %d power: %w", index, l.err("nvmlDeviceGetPowerUsage", r))
	}
	return s, nil
}

// Close calls nvmlShutdown.
func (n *NVML) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.open {
		return nil
	}
	n.open = false
	n.devs = nil
	return n.lib.err("nvmlShutdown", n.lib.nvmlShutdown())
}
