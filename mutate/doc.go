// Package mutate is the project's mutation testing of its own kernels:
// it plants one small bug at a time in the kernel sources, builds each
// mutant's code object, and runs the gates meant to catch it, so a gate
// suite that passes is known to fail on the bug classes it claims to see.
//
// # The model
//
// A Source is a kernel source scanned into a code view (comments, literal
// bodies and preprocessor lines blanked), tokens, the file-scope functions
// and the compile targets of every line (its #if defined(__NVPTX__) /
// defined(__AMDGCN__) nesting). An Operator is one rule of the catalogue
// (Operators): a name, the bug it plants and the exact textual rewrite.
// A site is one place an operator applies inside a function body; a
// Mutant is one chosen site: an Edit of one line, with the function it is
// in. Generate picks at most Options.PerOpFile sites per operator and
// file, spread over the file's functions, deterministically: the same
// sources and options give the same list and the same IDs. An ID is
// content-derived (file stem, operator, a hash of the file, function and
// the line before and after), so it survives edits elsewhere in the file.
//
// Build writes every mutant's source to a temporary directory and compiles
// only the modules it changes (the .hip file itself, or every module that
// includes a mutated header) with the Makefile's flags, as
// scripts/broken-variant.sh does. A mutant the compiler refuses is
// BuildFailed with the first error line; one whose objects equal the
// unmutated ones byte for byte is BuildIdentical and never runs. The
// changed objects are stored gzip-compressed beside a Manifest.
//
// Run, on the GPU machine, first runs the gates on the unmutated build (the
// control, which must pass), then for each mutant a gate process on a copy
// of the base build with the mutant's objects in place: the device gates
// of the families whose modules changed (Registry). A gate FAIL kills the
// mutant; so do a hang (the gate's watchdog, or the run's timeout), a
// device fault, a crash, and a module the driver could not load (reported
// apart: "could not run"). A mutant every gate passes survives; the report
// lists survivors with their lines, and an explanation file marks those
// judged equivalent. The kill ratio counts killed over killed plus
// survived.
package mutate
