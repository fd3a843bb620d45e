package main

// The kernel families: families/all imports each, and each registers its
// kernels, gates and bench suites from its own folder.
import _ "github.com/parharness/parharness/families/all"
