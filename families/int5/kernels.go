// Package int5 is the int5 weight family: the fifth-bit plane's device
// unpack (hipsrc/format/int5.h) and its gates. The kernels here are test
// subjects, not GEMMs: they run the unpack the 5-bit GEMMs will use over
// every plane word and over structured lists, so the GEMMs can take the
// unpack as proven.
package int5

import "github.com/parharness/parharness/kernels"

// Family is this folder's name in the registry.
const Family = "int5"

func init() {
	for _, k := range []kernels.Kernel{
		{Name: "int5_unpack_sweep", Op: "unpack-sweep", Doc: "a range of plane words: the multiply-form unpack vs the shift/select form on the device; mismatch counts, first mismatch, proof-of-visit sum, output digest"},
		{Name: "int5_unpack_list", Op: "unpack-list", Doc: "a list of plane words with four weight words each: the unpack and every consumer form (byte codes, int8, e4m3, sm_90 f16 pairs)"},
		{Name: "int5_code_table", Op: "code-table", Doc: "the 32 codes through c - 16, the e4m3 encoders and the hardware and software decoders"},
	} {
		k.Family, k.Module, k.Role, k.Tag = Family, "int5", kernels.Baseline, k.Op
		kernels.Register(k)
	}
}
