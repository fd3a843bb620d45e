package e4m3

import (
	"os"
	"testing"
)

// The lanes gate's random words are cut for the CPU tests (the structured
// inputs, every 16-bit half pattern, still run in full).
func TestMain(m *testing.M) {
	laneRandom = 4096
	os.Exit(m.Run())
}
