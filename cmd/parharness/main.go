// Command parharness gates and benchmarks the ParoQuant W4A8 GPU kernels.
//
//	parharness gate [--quick|--full] [--only REGEX] [--json FILE]
//	parharness devices
//	parharness resources
//	parharness list
//
// See README.md and `parharness help`.
package main

import (
	"os"
	"runtime"
)

// CUDA contexts and HIP's current device belong to an OS thread: the whole
// program drives the device from the main goroutine, locked to one thread.
func init() { runtime.LockOSThread() }

func main() { os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr)) }
