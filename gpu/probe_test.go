package gpu

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestProbe(t *testing.T) {
	t.Setenv(CUBLASLtEnv, "")
	t.Setenv(HipBLASLtEnv, "")
	t.Setenv(HIPEnv, "")
	for _, c := range []struct {
		backend string
		libs    []string
	}{
		{"cuda", []string{cudaLibName, "cuBLASLt", "NVML"}},
		{"hip", []string{hipLibName, "hipBLASLt"}},
		{"", []string{cudaLibName, hipLibName, "cuBLASLt", "hipBLASLt", "NVML"}},
	} {
		t.Run("backend "+c.backend, func(t *testing.T) {
			rs := Probe(c.backend)
			var libs []string
			for _, r := range rs {
				libs = append(libs, r.Lib)
				t.Logf("%s", r)
				if strings.Contains(r.String(), "\n") {
					t.Errorf("report on more than one line: %q", r)
				}
				if r.Path == "" {
					// Nothing bound: the search's error, every candidate in it.
					var e *Error
					if !errors.As(r.Err, &e) {
						t.Errorf("%s: no path and no *Error: %v", r.Lib, r.Err)
					} else if e.Lib == r.Lib && len(e.Tried) == 0 {
						t.Errorf("%s: a failed search that lists nothing: %v", r.Lib, e)
					}
				}
			}
			if !reflect.DeepEqual(libs, c.libs) {
				t.Errorf("libraries %q, want %q", libs, c.libs)
			}
		})
	}
}

// On this machine Debian's ROCm 5.2 runtime is what the HIP search finds:
// the report says where it is, its version and why it was used.
func TestProbeHIPRuntimeVersion(t *testing.T) {
	debianHIPInstalled(t)
	fakeTree(t, nil) // no ROCm install
	t.Setenv("ROCM_PATH", "")
	t.Setenv(HIPEnv, "")
	r := Probe("hip")[0]
	if r.Path != "libamdhip64.so.5" || !strings.HasPrefix(r.Version, "5.") || !strings.Contains(r.Note, "older than 6") || r.Err != nil {
		t.Errorf("got %+v", r)
	}
	t.Logf("%s", r)
}
