package gpu

import "testing"

func TestProfilerInjected(t *testing.T) {
	for _, c := range []struct {
		name string
		env  []string
		want bool
	}{
		{"clean", []string{"PATH=/usr/bin", "HOME=/root", "LD_PRELOAD="}, false},
		{"ncu", []string{"CUDA_INJECTION64_PATH=/opt/nvidia/nsight-compute/target/linux-desktop-glibc_2_11_3-x64/libTreeLauncherTargetInjection.so"}, true},
		{"rocprof", []string{"HSA_TOOLS_LIB=/opt/rocm/lib/librocprofiler64.so"}, true},
		{"preload-sanitizer", []string{"LD_PRELOAD=/usr/local/cuda/compute-sanitizer/libsanitizer-public.so"}, true},
		{"preload-other", []string{"LD_PRELOAD=/usr/lib/libjemalloc.so"}, false},
		{"empty-var", []string{"CUDA_INJECTION64_PATH="}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := ProfilerInjected(c.env); (got != "") != c.want {
				t.Errorf("ProfilerInjected(%v) = %q, want detected=%v", c.env, got, c.want)
			}
		})
	}
}

func TestThrottleNames(t *testing.T) {
	if got := ThrottleNames(0x1 | 0x4 | 0x40); len(got) != 2 || got[0] != "sw_power_cap" || got[1] != "hw_thermal_slowdown" {
		t.Errorf("ThrottleNames = %v", got)
	}
}
