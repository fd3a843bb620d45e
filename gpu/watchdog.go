package gpu

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// The watchdog bounds every call that waits for the device. CUDA and HIP
// have no timeout for a compute kernel that never returns: without this the
// process would freeze inside the driver. On expiry the hang handler runs
// (the CLI's writes partial results naming the running gate) and the
// process exits with status 1.
var (
	wdMu      sync.Mutex
	wdTimeout = 60 * time.Second
	wdOnHang  = func(what string, after time.Duration) {}
)

// SetWatchdog sets the bound on device waits and the function that runs on
// a hang before the process exits. A zero timeout disables the watchdog.
func SetWatchdog(timeout time.Duration, onHang func(what string, after time.Duration)) {
	wdMu.Lock()
	defer wdMu.Unlock()
	wdTimeout = timeout
	if onHang != nil {
		wdOnHang = onHang
	}
}

// guard runs fn (a driver call that waits for the device) under the watchdog.
func guard(what string, fn func() error) error {
	wdMu.Lock()
	timeout, onHang := wdTimeout, wdOnHang
	wdMu.Unlock()
	if timeout <= 0 {
		return fn()
	}
	timer := time.AfterFunc(timeout, func() {
		fmt.Fprintf(os.Stderr, "parharness: watchdog: %s did not return within %s: a kernel is hung (or the device stopped answering); exiting. Raise --watchdog if the work is legitimately this long.\n", what, timeout)
		onHang(what, timeout)
		os.Exit(1)
	})
	defer timer.Stop()
	return fn()
}
