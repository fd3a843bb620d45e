package kernels

import (
	"os"
	"strings"
	"testing"

	"github.com/parharness/parharness/gpu"
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
`
	sigs, err := PTXSignatures([]byte(ptx))
	if err != nil {
		t.Fatal(err)
	}
	if got := sigs["k_two"]; len(got) != 3 || got[0] != (Param{8, "int"}) || got[1] != (Param{4, "int"}) || got[2] != (Param{4, "float"}) {
		t.Errorf("k_two: %v", got)
	}
	if got, ok := sigs["k_none"]; !ok || len(got) != 0 {
		t.Errorf("k_none: %v, %v", got, ok)
	}
	for _, bad := range []string{
		".visible .entry a(\n.param .align 8 .b8 a_param_0[16]\n)",
		".visible .entry a(\n.param .pred a_param_0\n)",
	} {
		if _, err := PTXSignatures([]byte(bad)); err == nil || !strings.Contains(err.Error(), "PTX entry a: parameter 0") {
			t.Errorf("%q: error %v", bad, err)
		}
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

// Every registered kernel's signature reads from both targets' code objects
// (where `make kernels` built them), and the two targets declare the same
// parameter widths: one source, one argument list.
func TestBuiltSignaturesAgreeAcrossTargets(t *testing.T) {
	read := func(arch, module string) map[string][]Param {
		img, err := os.ReadFile(ObjectPath("../build", arch, module))
		if err != nil {
			t.Skipf("%v (run make kernels)", err)
		}
		sigs, err := Signatures(img, arch)
		if err != nil {
			t.Fatalf("%s %s: %v", arch, module, err)
		}
		return sigs
	}
	for _, mod := range Modules() {
		nv, amd := read("sm_90a", mod), read("gfx1201", mod)
		for _, k := range All() {
			if k.Module != mod {
				continue
			}
			a, okA := nv[k.Name]
			b, okB := amd[k.Name]
			if !okA && k.ForArch("sm_90a") || !okB && k.ForArch("gfx1201") {
				t.Errorf("%s: missing from a code object (sm_90a %v, gfx1201 %v)", k.Name, okA, okB)
				continue
			}
			if !okA || !okB {
				continue
			}
			if len(a) != len(b) {
				t.Errorf("%s: %d parameters on sm_90a, %d on gfx1201", k.Name, len(a), len(b))
				continue
			}
			for i := range a {
				if a[i].Bytes != b[i].Bytes {
					t.Errorf("%s parameter %d: %v on sm_90a, %v on gfx1201", k.Name, i, a[i], b[i])
				}
			}
		}
	}
}

func FuzzPTXSignatures(f *testing.F) {
	f.Add([]byte(".visible .entry k(\n.param .u64 a,\n.param .u32 b\n)\n"))
	f.Add([]byte(".entry k()"))
	f.Add([]byte(".visible .entry k(.param .align 4 .b8 x[8])"))
	f.Fuzz(func(t *testing.T, b []byte) {
		sigs, err := PTXSignatures(b)
		if err != nil {
			return
		}
		for name, ps := range sigs {
			for _, p := range ps {
				if p.Bytes != 4 && p.Bytes != 8 {
					t.Fatalf("%s: parameter %v", name, p)
				}
			}
		}
	})
}
