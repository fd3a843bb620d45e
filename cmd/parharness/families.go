package main

// The kernel families: each registers its kernels, gates and bench suites
// from its own folder. A new family is one folder and one line here.
import (
	_ "github.com/parharness/parharness/families/basics"
	_ "github.com/parharness/parharness/families/e4m3"
	_ "github.com/parharness/parharness/families/ewrot"
	_ "github.com/parharness/parharness/families/gemm"
	_ "github.com/parharness/parharness/families/i8"
	_ "github.com/parharness/parharness/families/int5"
	_ "github.com/parharness/parharness/families/normrot"
	_ "github.com/parharness/parharness/families/producers"
	_ "github.com/parharness/parharness/families/skinny"
)
