package kernels

// Kernels that misbehave on purpose (hipsrc/selftest.hip), used to prove the
// harness's canaries, poison checks and watchdog catch what they claim to.
func init() {
	Register(Kernel{Name: "selftest_fill", Module: "selftest", Doc: "writes a byte over a chosen index range, including out of bounds"})
	Register(Kernel{Name: "selftest_spin", Module: "selftest", Doc: "never returns: exercises the watchdog"})
	Register(Kernel{Name: "selftest_empty", Module: "selftest", Doc: "does nothing: the launch floor of a graph node"})
}
