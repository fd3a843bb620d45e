package e4m3

import "github.com/parharness/parharness/kernels"

// Family is this folder's name in the registry.
const Family = "e4m3"

// The fp8 e4m3 codec kernels (e4m3.hip): each is its own Op, the subject
// of the codec gates (gate.go).
func init() {
	for _, k := range []kernels.Kernel{
		{Name: "e4m3_sweep", Op: "sweep", Doc: "all 2^32 float32 patterns: software encoder vs wrapped and raw hardware; mismatch counts"},
		{Name: "e4m3_encode_list", Op: "encode-list", Doc: "encode a list of float32 bit patterns: software, wrapped hardware, raw hardware"},
		{Name: "e4m3_encode_range", Op: "encode-range", Doc: "software codes of a contiguous range of bit patterns, four per u32"},
		{Name: "e4m3_decode_all", Op: "decode", Doc: "the 256 codes through the software and hardware decoders"},
		{Name: "pack_lanes", Op: "lanes", Doc: "every lane of every packed convert the producers and GEMMs use, on a list of words"},
	} {
		k.Family, k.Module, k.Role, k.Tag = Family, "e4m3", kernels.Baseline, k.Op
		kernels.Register(k)
	}
}
