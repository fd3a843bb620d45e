package gpu

import "unsafe"

// ptrAt turns a C address into an unsafe.Pointer (for reading C strings the
// driver owns). Kept in one place so `go vet`'s unsafeptr note has one home.
func ptrAt(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }
