package amdgpu

import (
	"strconv"
	"strings"
)

// efAMDGPUMach masks the processor out of e_flags.
const efAMDGPUMach = 0x0ff

// Processor values of EF_AMDGPU_MACH for the AMDGCN processors, from
// llvm/include/llvm/BinaryFormat/ELF.h (LLVM 21; the values are stable, new
// processors only add entries). The names are the ones used in target IDs
// ("amdgcn-amd-amdhsa--<name>"). Note the numbering is not in processor
// order: gfx1100 is 0x041, gfx1200 0x048, gfx1201 0x04e.
var machNames = map[uint32]string{
	0x020: "gfx600", 0x021: "gfx601", 0x022: "gfx700", 0x023: "gfx701",
	0x024: "gfx702", 0x025: "gfx703", 0x026: "gfx704",
	0x028: "gfx801", 0x029: "gfx802", 0x02a: "gfx803", 0x02b: "gfx810",
	0x02c: "gfx900", 0x02d: "gfx902", 0x02e: "gfx904", 0x02f: "gfx906",
	0x030: "gfx908", 0x031: "gfx909", 0x032: "gfx90c",
	0x033: "gfx1010", 0x034: "gfx1011", 0x035: "gfx1012",
	0x036: "gfx1030", 0x037: "gfx1031", 0x038: "gfx1032", 0x039: "gfx1033",
	0x03a: "gfx602", 0x03b: "gfx705", 0x03c: "gfx805",
	0x03d: "gfx1035", 0x03e: "gfx1034", 0x03f: "gfx90a",
	0x041: "gfx1100", 0x042: "gfx1013", 0x043: "gfx1150", 0x044: "gfx1103",
	0x045: "gfx1036", 0x046: "gfx1101", 0x047: "gfx1102",
	0x048: "gfx1200", 0x049: "gfx1250", 0x04a: "gfx1151",
	0x04c: "gfx942", 0x04e: "gfx1201", 0x04f: "gfx950",
	0x051: "gfx9-generic", 0x052: "gfx10-1-generic", 0x053: "gfx10-3-generic",
	0x054: "gfx11-generic", 0x055: "gfx1152", 0x058: "gfx1153",
	0x059: "gfx12-generic", 0x05a: "gfx1251", 0x05f: "gfx9-4-generic",
}

// Selected EF_AMDGPU_MACH values, for callers that want to compare.
const (
	MachGFX1100 = 0x041
	MachGFX1200 = 0x048
	MachGFX1201 = 0x04e
)

// MachName returns the processor name for an EF_AMDGPU_MACH value (the low
// byte of e_flags), or "" if it is not a known AMDGCN processor.
func MachName(mach uint32) string { return machNames[mach&efAMDGPUMach] }

// Family returns the major generation of a processor name: "gfx12" for
// gfx1200, gfx1201 and gfx12-generic, "gfx11" for gfx1100, "gfx9" for
// gfx942 or gfx90a. It returns "" for a name it cannot read.
func Family(arch string) string {
	rest, ok := strings.CutPrefix(arch, "gfx")
	if !ok || rest == "" {
		return ""
	}
	if i := strings.IndexByte(rest, '-'); i >= 0 { // gfx12-generic, gfx10-3-generic
		rest = rest[:i]
		if _, err := strconv.Atoi(rest); err != nil {
			return ""
		}
		return "gfx" + rest
	}
	// The last two characters are minor and stepping (stepping may be a hex
	// digit: gfx90a, gfx90c); what is before them is the major version.
	if len(rest) < 3 {
		return ""
	}
	major := rest[:len(rest)-2]
	if _, err := strconv.Atoi(major); err != nil {
		return ""
	}
	return "gfx" + major
}

// expectedWave is the wavefront size the gate expects for a processor
// family: RDNA (gfx10 and later) kernels of this project run in wave32; GCN
// and CDNA (gfx9 and earlier) have only wave64. Zero means unknown.
func expectedWave(arch string) int {
	f := Family(arch)
	if f == "" {
		return 0
	}
	major, _ := strconv.Atoi(strings.TrimPrefix(f, "gfx"))
	if major >= 10 {
		return 32
	}
	return 64
}
