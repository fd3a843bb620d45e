package basics

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/parharness/parharness/families/internal/faketest"
)

// ReadSink is the kernel's block words, at vector counts
// below one block, between blocks, and wrapping the grid several times.
func TestReadSink(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 255, 256, 257, 3*256 + 5, 5 * 4 * 256, 7*4*256 + 33} {
		src := make([]byte, 16*n)
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		for _, blocks := range []int{1, 3, 4} {
			got, err := ReadSink(src, blocks)
			if err != nil {
				t.Fatal(err)
			}
			if want := faketest.ReadKernel(src, n, blocks, -1); string(got) != string(want) {
				t.Errorf("n=%d blocks=%d: host sink differs from the kernel's", n, blocks)
			}
		}
	}
	if _, err := ReadSink(make([]byte, 20), 1); err == nil || !strings.Contains(err.Error(), "16-byte") {
		t.Errorf("20 bytes: got %v, want a whole-vectors error", err)
	}
}
