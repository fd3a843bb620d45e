package kernels

// The fp8 e4m3 codec kernels (hipsrc/e4m3.hip), used by the codec gates.
func init() {
	for _, k := range []Kernel{
		{Name: "e4m3_sweep", Module: "e4m3", Doc: "all 2^32 float32 patterns: software encoder vs wrapped and raw hardware; mismatch counts"},
		{Name: "e4m3_encode_list", Module: "e4m3", Doc: "encode a list of float32 bit patterns: software, wrapped hardware, raw hardware"},
		{Name: "e4m3_encode_range", Module: "e4m3", Doc: "software codes of a contiguous range of bit patterns, four per u32"},
		{Name: "e4m3_decode_all", Module: "e4m3", Doc: "the 256 codes through the software and hardware decoders"},
	} {
		Register(k)
	}
}
