package gates

import (
	"fmt"

	"github.com/parharness/parharness/internal/par"
)

// CompareBytes compares a downloaded output with the bytes it must hold:
// want, then untouched poison past it (rows past M). Elements are elem
// bytes; where names element i in a message. Equal downloads are
// confirmed in one pass over every CPU (par.Equal); only one that differs
// is walked element by element for the count and the first three.
func CompareBytes(r Reporter, what string, got, want []byte, elem int, where func(i int) string) {
	if len(got) < len(want) {
		r.Failf("%s: %d bytes downloaded, the mirror has %d", what, len(got), len(want))
		return
	}
	if !par.Equal(got[:len(want)], want) {
		bad, first := 0, ""
		for i := 0; i < len(want); i += elem {
			if string(got[i:i+elem]) != string(want[i:i+elem]) {
				if bad < 3 {
					first += fmt.Sprintf(" [%s: got %x want %x]", where(i/elem), got[i:i+elem], want[i:i+elem])
				}
				bad++
			}
		}
		r.Failf("%s: %d of %d elements differ;%s", what, bad, len(want)/elem, first)
	}
	if i := FirstWritten(got, len(want)); i >= 0 {
		r.Failf("%s: byte %d past the end of the output (rows past M) was written (%#02x)", what, i, got[i])
	}
}
