package kernels

import (
	"strings"
	"testing"

	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/internal/fakegpu"
)

func TestPTXSignatures(t *testing.T) {
	ptx := `
.version 8.4
.target sm_90a
.visible .entry k_two(
	.param .u64 k_two_param_0,
	.param .u32 k_two_param_1,
	.param .f32 k_two_param_2
)
{ ret; }
.entry k_none()
{ ret; }
.weak .entry k_tmpl(
	.param .u64 k_tmpl_param_0
)
.visible .entry k_agg(
	.param .align 8 .b8 k_agg_param_0[16],
	.param .u32 k_agg_param_1
)
.visible .entry k_u16(
	.param .u16 k_u16_param_0
)
`
	sigs := PTXSignatures([]byte(ptx))
	if got := sigs["k_two"]; got.Err != nil || len(got.Params) != 3 || got.Params[0] != (Param{8, "int"}) || got.Params[1] != (Param{4, "int"}) || got.Params[2] != (Param{4, "float"}) {
		t.Errorf("k_two: %+v", got)
	}
	if got, ok := sigs["k_none"]; !ok || got.Err != nil || len(got.Params) != 0 {
		t.Errorf("k_none: %+v, %v", got, ok)
	}
	if got := sigs["k_tmpl"]; got.Err != nil || len(got.Params) != 1 {
		t.Errorf(".weak entry: %+v", got)
	}
	// An aggregate parameter reads (and no Go argument matches it); a
	// parameter type the harness cannot pass fails that kernel only.
	if got := sigs["k_agg"]; got.Err != nil || len(got.Params) != 2 || got.Params[0] != (Param{16, "aggregate"}) {
		t.Errorf("k_agg: %+v", got)
	} else if err := CheckArgs("k_agg", got.Params, []any{gpu.Ptr(1), uint32(1)}); err == nil {
		t.Error("a Ptr passed for a 16-byte aggregate")
	}
	if got := sigs["k_u16"]; got.Err == nil || !strings.Contains(got.Err.Error(), "PTX entry k_u16: parameter 0 has type .u16") {
		t.Errorf("k_u16: %+v", got)
	}
}

func TestCheckArgs(t *testing.T) {
	ptx := []Param{{8, "int"}, {4, "int"}, {4, "float"}}
	amd := []Param{{8, "ptr"}, {4, "value"}, {4, "value"}}
	for _, ps := range [][]Param{ptx, amd} {
		if err := CheckArgs("k", ps, []any{gpu.Ptr(1), uint32(2), float32(3)}); err != nil {
			t.Errorf("%v: %v", ps, err)
		}
		for _, c := range []struct {
			args []any
			want string
		}{
			{[]any{gpu.Ptr(1), uint32(2)}, "launched with 2 arguments, its code object declares 3"},
			{[]any{gpu.Ptr(1), int64(2), float32(3)}, "argument 1 is int64"},
			{[]any{gpu.Ptr(1), 2, float32(3)}, "argument 1: type int is not a kernel argument type"},
		} {
			if err := CheckArgs("k", ps, c.args); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v %v: error %v, want %q", ps, c.args, err, c.want)
			}
		}
	}
	// Where the code object knows: a pointer parameter takes only a Ptr, a
	// float parameter only a float; PTX cannot tell a pointer from a u64.
	if CheckArgs("k", amd, []any{uint64(1), uint32(2), float32(3)}) == nil {
		t.Error("AMDGPU pointer parameter took a uint64")
	}
	if CheckArgs("k", ptx, []any{gpu.Ptr(1), uint32(2), uint32(3)}) == nil {
		t.Error("PTX .f32 parameter took a uint32")
	}
	if CheckArgs("k", ptx, []any{uint64(1), uint32(2), float32(3)}) != nil {
		t.Error("PTX .u64 parameter refused a uint64")
	}
}

func FuzzPTXSignatures(f *testing.F) {
	f.Add([]byte(".visible .entry k(\n.param .u64 a,\n.param .u32 b\n)\n"))
	f.Add([]byte(".entry k()"))
	f.Add([]byte(".visible .entry k(.param .align 4 .b8 x[8])"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for name, sig := range PTXSignatures(b) {
			if sig.Err != nil && sig.Params != nil {
				t.Fatalf("%s: both an error and parameters", name)
			}
			for _, p := range sig.Params {
				if p.Class != "aggregate" && p.Bytes != 4 && p.Bytes != 8 {
					t.Fatalf("%s: parameter %v", name, p)
				}
			}
		}
	})
}

// A kernel whose parameters cannot be read fails its own launches only; the
// module's other kernels still check and launch.
func TestLoaderCheckedPerKernel(t *testing.T) {
	dir := t.TempDir()
	writePTX(t, dir, "tprod", ".version 8.4\n.target sm_90a\n"+
		".visible .entry t_readable(\n.param .u64 a,\n.param .u32 b\n)\n{ ret; }\n"+
		".visible .entry t_unreadable(\n.param .u16 a\n)\n{ ret; }\n")
	l := NewLoader(dir, fakegpu.New(gpu.Info{Backend: "cuda", Arch: "sm_90"}))
	if _, err := l.Checked("t_readable", []any{gpu.Ptr(1), uint32(2)}); err != nil {
		t.Errorf("readable kernel: %v", err)
	}
	if _, err := l.Checked("t_readable", []any{gpu.Ptr(1)}); err == nil || !strings.Contains(err.Error(), "launched with 1 arguments") {
		t.Errorf("short launch: %v", err)
	}
	if _, err := l.Checked("t_unreadable", []any{uint32(1)}); err == nil || !strings.Contains(err.Error(), "has type .u16") {
		t.Errorf("unreadable kernel: %v", err)
	}
	if _, err := l.Checked("t_absent", []any{}); err == nil || !strings.Contains(err.Error(), "declares no parameter list") {
		t.Errorf("kernel absent from the PTX: %v", err)
	}
}
