// Package textutil holds small text helpers shared by the table printers.
package textutil

import "bytes"

// TrimTrailingSpace removes the padding table printers leave at line ends,
// so that golden files and diffs of the output stay clean.
func TrimTrailingSpace(p []byte) []byte {
	lines := bytes.Split(p, []byte("\n"))
	for i, l := range lines {
		lines[i] = bytes.TrimRight(l, " ")
	}
	return bytes.Join(lines, []byte("\n"))
}
