package int5

import (
	"os"
	"testing"
)

// The list's random planes and the quick sweep's range are cut for the
// CPU tests (the structured planes still run in full).
func TestMain(m *testing.M) {
	listRandom, quickIters = 4096, 1
	os.Exit(m.Run())
}
