package gates

import "github.com/parharness/parharness/gpu"

// Shadow is b's device copy of its input (0: none), for the input check's
// tests.
func (b *Buffer) Shadow() gpu.Ptr { return b.shadow }
