package gpu

import (
	"fmt"
	"strings"
)

// Profilers and sanitizers attach to a process through the driver's tool
// injection: NVIDIA's CUDA_INJECTION64_PATH (Nsight Compute, Nsight
// Systems and compute-sanitizer set it), ROCm's HSA_TOOLS_LIB and the
// rocprofiler/roctracer variables, or an LD_PRELOAD of a tool library.
// Times taken under one include the tool's overhead, so the bench refuses
// to time there unless told to, and then flags every record.
var injectionVars = []string{
	"CUDA_INJECTION64_PATH", "CUDA_INJECTION32_PATH", "NVTX_INJECTION64_PATH",
	"HSA_TOOLS_LIB", "ROCP_TOOL_LIB", "ROCPROFILER_LIBRARY", "ROCTRACER_LIBRARY", "ROCPROFILER_REGISTER_LIBRARY",
}

var preloadTools = []string{"sanitizer", "nsys", "ncu", "nvperf", "cupti", "rocprof", "roctracer", "omnitrace", "rocprofiler"}

// ProfilerInjected returns what in env (KEY=VALUE entries, as os.Environ)
// injects a profiler or sanitizer into this process, or "" if nothing.
func ProfilerInjected(env []string) string {
	var found []string
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || v == "" {
			continue
		}
		for _, name := range injectionVars {
			if k == name {
				found = append(found, fmt.Sprintf("%s=%s", k, v))
			}
		}
		if k == "LD_PRELOAD" {
			low := strings.ToLower(v)
			for _, t := range preloadTools {
				if strings.Contains(low, t) {
					found = append(found, "LD_PRELOAD="+v)
					break
				}
			}
		}
	}
	return strings.Join(found, ", ")
}
