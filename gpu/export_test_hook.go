package gpu

// GuardForTest runs fn under the watchdog, as every device wait does; tests
// use it to prove a hang ends the process.
func GuardForTest(what string, fn func() error) error { return guard(what, fn) }
