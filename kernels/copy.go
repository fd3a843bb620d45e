package kernels

// Device copies (hipsrc/copy.hip): the copy-bandwidth ceiling and the bench
// engine's self-test subject.
func init() {
	Register(Kernel{Name: "copy_v4", Module: "copy", Doc: "16-byte vector copy, grid-stride: the copy-bandwidth ceiling"})
	Register(Kernel{Name: "copy_v4_extra", Module: "copy", Doc: "copy_v4 plus a chosen amount of extra traffic: a deliberately slower A/B subject"})
}
