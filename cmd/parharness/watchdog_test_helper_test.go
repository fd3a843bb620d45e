package main

import (
	"fmt"
	"os"
	"time"

	"github.com/parharness/parharness/gpu"
)

func hangUnderWatchdog() {
	gpu.SetWatchdog(200*time.Millisecond, func(what string, after time.Duration) {
		fmt.Fprintln(os.Stderr, "hang handler ran")
	})
	gpu.GuardForTest("test wait", func() error { time.Sleep(time.Hour); return nil })
}
