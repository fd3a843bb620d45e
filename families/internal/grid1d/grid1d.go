// Package grid1d is the launch geometry of the codec kernels that run one
// thread per element behind a guard (`if (i >= n) return`): e4m3_encode_list,
// e4m3_encode_range, pack_lanes, int5_unpack_list. Such a launch has
// ceil(n/Block) blocks of Block threads; its launch classes are whether it
// is one block or several and whether the last block is full or partial
// (the guard's off-by-one lives in the partial block, a block-index bug in
// the several-block launches). Cover picks the extra element counts a
// gate runs so that every class has a launch, the way internal/coverage
// derives the producers' and GEMMs' cases.
package grid1d

import (
	"fmt"

	"github.com/parharness/parharness/internal/coverage"
)

// Block is the threads per block of every guarded codec kernel (their
// LAUNCH_BOUNDS(256)).
const Block = 256

// Grid is the number of blocks covering n elements.
func Grid(n int) int { return (n + Block - 1) / Block }

// Class names the launch class of a launch of kernel with grid blocks of
// block threads over n elements. It is computed from the launch as made
// (not from n alone), so a launch whose grid does not match ceil(n/block)
// gets a class of its own, "grid-mismatch", that no coverage set contains.
func Class(kernel string, grid, block, n int) string {
	if block <= 0 || n <= 0 || grid != (n+block-1)/block {
		return fmt.Sprintf("%s grid-mismatch (grid %d, block %d, n %d)", kernel, grid, block, n)
	}
	blocks := "several"
	if grid == 1 {
		blocks = "one"
	}
	last := "full"
	if n%block != 0 {
		last = "partial"
	}
	return fmt.Sprintf("%s blocks=%s last=%s", kernel, blocks, last)
}

// Classes are the four classes of a guarded kernel, every one reachable
// (n = Block/2, Block, 2·Block + 1, 2·Block).
func Classes(kernel string) []string {
	var out []string
	for _, n := range []int{Block / 2, Block, 2*Block + 1, 2 * Block} {
		out = append(out, Class(kernel, Grid(n), Block, n))
	}
	return out
}

// Cover returns the element counts, smallest first, to launch besides the
// counts a gate already launches (have) so that every class of the kernel
// has a launch: the cheapest counts of 1..3·Block that reach a class not
// yet reached.
func Cover(kernel string, have ...int) []int {
	domain := make([]int, 3*Block)
	for i := range domain {
		domain[i] = i + 1
	}
	cands := append(append([]int(nil), have...), domain...)
	base := make([]int, len(have))
	for i := range base {
		base[i] = i
	}
	added, _ := coverage.Cover(base, len(cands), func(i int) []string {
		return []string{Class(kernel, Grid(cands[i]), Block, cands[i])}
	}, func(i int) float64 { return float64(cands[i]) })
	var out []int
	for _, i := range added {
		out = append(out, cands[i])
	}
	return out
}

// LaunchClass is the class of a recorded launch of a guarded kernel whose
// last argument is the element count n (a uint32, as every guarded codec
// kernel takes it).
func LaunchClass(kernel string, gridX, blockX int, args []any) (string, error) {
	if len(args) == 0 {
		return "", fmt.Errorf("%s: a launch without arguments: no element count", kernel)
	}
	n, ok := args[len(args)-1].(uint32)
	if !ok {
		return "", fmt.Errorf("%s: last argument %T, want the uint32 element count", kernel, args[len(args)-1])
	}
	return Class(kernel, gridX, blockX, int(n)), nil
}
