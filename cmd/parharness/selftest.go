package main

import (
	"fmt"
	"io"
	"time"

	"github.com/parharness/parharness/gpu"
)

func init() {
	register(command{name: "selftest", usage: "prove a harness guard on the device: `selftest hang` launches a kernel that never returns", run: runSelftest})
}

// runSelftest launches selftest_spin, which never returns, and waits for it:
// the watchdog must end the process with status 1 and one clear line. If
// this function ever returns, the watchdog did not work.
func runSelftest(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("selftest", stderr)
	backend := fs.String("backend", "auto", "device backend: auto, cuda, hip or none")
	device := deviceFlag(fs)
	buildDir := fs.String("build", defaultBuildDir(), "code object directory")
	watchdog := fs.Duration("watchdog", 5*time.Second, "watchdog timeout for the hung kernel")
	if len(args) == 0 || args[0] != "hang" {
		return ExitUsage, usagef("usage: parharness selftest hang [--watchdog 5s]")
	}
	if err := parse(fs, args[1:]); err != nil {
		return ExitUsage, err
	}
	denv := openDevice(*backend, *device, *buildDir)
	defer denv.close()
	if denv.dev == nil {
		return ExitUsage, fmt.Errorf("%v", denv.devErr)
	}
	// The argument types are checked before anything is allocated.
	f, err := denv.loader.Checked("selftest_spin", []any{gpu.Ptr(0), gpu.Ptr(0)})
	if err != nil {
		return ExitUsage, err
	}
	flag, err := denv.dev.Malloc(8)
	if err != nil {
		return ExitUsage, err
	}
	if err := denv.dev.Memset(flag, 0, 8); err != nil {
		return ExitUsage, err
	}
	spinArgs := []any{flag, flag.Add(4)}
	gpu.SetWatchdog(*watchdog, func(what string, after time.Duration) {
		fmt.Fprintf(stdout, "selftest hang: the watchdog caught the hung kernel selftest_spin (%s, %s): PASS\n", what, after)
	})
	fmt.Fprintf(stdout, "selftest hang: launching selftest_spin, which never returns; the watchdog must end this process within %s\n", *watchdog)
	if err := denv.dev.Launch(f, gpu.D1(1), gpu.D1(32), 0, 0, spinArgs...); err != nil {
		return ExitUsage, err
	}
	err = denv.dev.Synchronize()
	return ExitFail, fmt.Errorf("selftest_spin returned (%v): the watchdog did not fire", err)
}
