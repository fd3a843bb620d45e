// Package all links every kernel family into a binary or a test: each
// family registers its kernels, gates and bench suites from its own folder
// when imported. A new family is one folder and one line here; the command
// and the cross-family tests import this package, so no other list exists.
package all

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
	_ "github.com/parharness/parharness/families/wgmmaacc"
)
