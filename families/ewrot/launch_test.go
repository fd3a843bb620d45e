package ewrot

import (
	"testing"

	"github.com/parharness/parharness/gpu"
)

// Params.Check refuses what the kernels would run wrong; Launch refuses
// kernels of other families.
func TestParamsCheck(t *testing.T) {
	for _, c := range []struct {
		name string
		p    Params
		K    int
		ok   bool
	}{
		{"silu-mul", Params{Mode: SiluMul}, 8704, true},
		{"norm D=128", Params{Mode: GatedNorm, D: 128}, 3072, true},
		{"norm D=0", Params{Mode: GatedNorm}, 3072, false},
		{"norm D not dividing K", Params{Mode: GatedNorm, D: 256}, 640, false},
		{"norm D not a group multiple", Params{Mode: GatedNorm, D: 64}, 640, false},
		{"K not a group multiple", Params{Mode: SigmoidGate}, 100, false},
		{"mode 3", Params{Mode: 3}, 128, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.p.Check(c.K); (err == nil) != c.ok {
				t.Errorf("Check(K=%d) = %v, want ok=%v", c.K, err, c.ok)
			}
		})
	}
	if _, _, _, err := Launch("pq_rotq_group", 1, 128, 1, false, Params{}, Bufs{}); err == nil {
		t.Error("Launch of a producers kernel: no error")
	}
	if _, _, _, err := Launch("ew_rotq_token", 1, 17536, 1, false, Params{}, Bufs{}); err == nil {
		t.Error("per-token launch past MAXK: no error")
	}
	grid, block, _, err := Launch("ew_op_bf16", 9, 384, 1, false, Params{}, Bufs{})
	if err != nil || grid != (gpu.Dim3{X: 3, Y: 2, Z: 1}) || block.X != 256 {
		t.Errorf("ew_op_bf16 M=9 K=384: grid %v block %v err %v", grid, block, err)
	}
}
