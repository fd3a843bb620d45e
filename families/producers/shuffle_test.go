package producers

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/parharness/parharness/refimpl"
)

// The kernel decodes the control words with its own #defines; they must be
// the bits refimpl.BuildShuffleRecords writes.
func TestShuffleCtrlBitsMatchKernel(t *testing.T) {
	src, err := os.ReadFile("producers.hip")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]uint32{"SH_B1": refimpl.ShflB1, "SH_B2": refimpl.ShflB2, "SH_B3": refimpl.ShflB3, "SH_B4": refimpl.ShflB4, "SH_SWAP": refimpl.ShflSwap} {
		m := regexp.MustCompile(`(?m)^#define ` + name + ` \(1u << (\d+)\)`).FindSubmatch(src)
		if m == nil {
			t.Fatalf("producers.hip: no #define %s (1u << n)", name)
		}
		if n, _ := strconv.Atoi(string(m[1])); uint32(1)<<n != want {
			t.Errorf("%s is 1<<%d in the kernel, %#x in refimpl", name, n, want)
		}
	}
	// The select network, the shuffle sources and the swap, statement by
	// statement: the ones ShuffleSends and RotateWarp model (an edit to the
	// kernel's network must change the emulator, and this list, with it).
	norm := strings.Join(strings.Fields(string(src)), " ")
	for _, stmt := range []string{
		"float u = (w & SH_B1) ? X1 : X0, v = (w & SH_B2) ? X3 : X2;",
		"float u2 = (w & SH_B1) ? X0 : X1, v2 = (w & SH_B2) ? X2 : X3;",
		"float Y0 = shfl_idx_f32((w & SH_B3) ? v : u, w & 31u);",
		"float Y1 = shfl_idx_f32((w & SH_B3) ? u : v, (w >> 5) & 31u);",
		"float Y2 = shfl_idx_f32((w & SH_B4) ? v2 : u2, (w >> 10) & 31u);",
		"float Y3 = shfl_idx_f32((w & SH_B4) ? u2 : v2, (w >> 15) & 31u);",
		"float Z2 = (w & SH_SWAP) ? Y3 : Y2, Z3 = (w & SH_SWAP) ? Y2 : Y3;",
		"X0 = __builtin_fmaf(q.x, Y0, pA);", "X2 = __builtin_fmaf(q.x, Z2, -qA);",
		"X1 = __builtin_fmaf(q.z, Y1, pB);", "X3 = __builtin_fmaf(q.z, Z3, -qB);",
		"float pA = q.y * Z2, qA = q.y * Y0, pB = q.w * Z3, qB = q.w * Y1;",
	} {
		if !strings.Contains(norm, stmt) {
			t.Errorf("producers.hip no longer has %q (the network RotateWarp emulates)", stmt)
		}
	}
	if refimpl.ShflSrcBits != 5 {
		t.Errorf("refimpl.ShflSrcBits = %d; the kernel reads 5-bit source lanes at bits 0, 5, 10, 15", refimpl.ShflSrcBits)
	}
}
