package kernels

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/internal/amdgpu"
)

// Kernel signatures, read from the code objects themselves, so that every
// launch is checked against the parameters the compiled kernel declares: a
// launch with an argument missing, one too many, or of the wrong width
// would otherwise run with garbage in its last parameters (or fault) and
// show up, if at all, as a wrong result far from its cause.
//
// PTX declares each parameter's width and type (".param .u64 name"), not
// whether a 64-bit integer is a pointer; the AMDGPU metadata declares the
// size and the value kind (global_buffer for pointers, by_value).

// Param is one declared kernel parameter.
type Param struct {
	Bytes int
	// Class is what the code object says the parameter is: "ptr" (AMDGPU
	// global_buffer), "int" (PTX .u32/.s32/.b32/.u64/.s64/.b64), "float"
	// (PTX .f32/.f64), "value" (AMDGPU by_value: integer or float) or the
	// raw PTX type or AMDGPU value kind for anything else.
	Class string
}

func (p Param) String() string { return fmt.Sprintf("%s/%dB", p.Class, p.Bytes) }

// Signature is one kernel's declared parameters, or why they cannot be
// read (a parameter the harness cannot pass): that kernel's launches fail
// with Err, the module's other kernels are unaffected.
type Signature struct {
	Params []Param
	Err    error
}

var (
	ptxEntry     = regexp.MustCompile(`(?m)^\s*(?:\.(?:visible|weak)\s+)?\.entry\s+([A-Za-z_$][\w$]*)\s*\(([^)]*)\)`)
	ptxParam     = regexp.MustCompile(`^\.param\s+(\.[a-z0-9]+)\s+[A-Za-z_$][\w$]*$`)
	ptxAggregate = regexp.MustCompile(`^\.param\s+\.align\s+\d+\s+\.b8\s+[A-Za-z_$][\w$]*\[(\d+)\]$`)
)

// PTXSignatures returns the parameters of every .entry in a PTX module.
// Scalars get their width and class; a by-value aggregate (.align N .b8
// name[SIZE]) gets class "aggregate", which no Go argument matches.
func PTXSignatures(ptx []byte) map[string]Signature {
	out := map[string]Signature{}
	for _, m := range ptxEntry.FindAllSubmatch(ptx, -1) {
		name := string(m[1])
		sig := Signature{Params: []Param{}}
		for i, decl := range strings.Split(string(m[2]), ",") {
			decl = strings.Join(strings.Fields(decl), " ")
			if decl == "" {
				continue
			}
			if am := ptxAggregate.FindStringSubmatch(decl); am != nil {
				var n int
				fmt.Sscan(am[1], &n)
				sig.Params = append(sig.Params, Param{Bytes: n, Class: "aggregate"})
				continue
			}
			pm := ptxParam.FindStringSubmatch(decl)
			if pm == nil {
				sig.Err = fmt.Errorf("PTX entry %s: parameter %d %q is not a form the harness reads", name, i, decl)
				break
			}
			p, ok := ptxParamTypes[pm[1]]
			if !ok {
				sig.Err = fmt.Errorf("PTX entry %s: parameter %d has type %s, which the harness cannot pass", name, i, pm[1])
				break
			}
			sig.Params = append(sig.Params, p)
		}
		if sig.Err != nil {
			sig.Params = nil
		}
		out[name] = sig
	}
	return out
}

var ptxParamTypes = map[string]Param{
	".u32": {4, "int"}, ".s32": {4, "int"}, ".b32": {4, "int"},
	".u64": {8, "int"}, ".s64": {8, "int"}, ".b64": {8, "int"},
	".f32": {4, "float"}, ".f64": {8, "float"},
}

// AMDGPUSignatures returns the explicit parameters of every kernel in an
// AMDGPU code object, from its metadata note (an unreadable note is an
// error for the whole object).
func AMDGPUSignatures(img []byte) (map[string]Signature, error) {
	co, err := amdgpu.ReadKernels(img)
	if err != nil {
		return nil, err
	}
	out := map[string]Signature{}
	for _, k := range co.Kernels {
		ps := []Param{}
		for _, a := range k.Explicit() {
			class := a.ValueKind
			switch a.ValueKind {
			case "global_buffer":
				class = "ptr"
			case "by_value":
				class = "value"
			}
			ps = append(ps, Param{Bytes: a.Size, Class: class})
		}
		out[k.Name] = Signature{Params: ps}
	}
	return out, nil
}

// Signatures reads the parameters of every kernel of a code object for
// codeArch (PTX text for sm_*, an AMDGPU ELF otherwise).
func Signatures(img []byte, codeArch string) (map[string]Signature, error) {
	if Ext(codeArch) == ".ptx" {
		return PTXSignatures(img), nil
	}
	return AMDGPUSignatures(img)
}

// argParam is what a Go launch argument is, as a parameter.
func argParam(a any) (Param, error) {
	switch a.(type) {
	case gpu.Ptr:
		return Param{8, "ptr"}, nil
	case int32, uint32:
		return Param{4, "int"}, nil
	case int64, uint64:
		return Param{8, "int"}, nil
	case float32:
		return Param{4, "float"}, nil
	case float64:
		return Param{8, "float"}, nil
	}
	return Param{}, fmt.Errorf("type %T is not a kernel argument type (gpu.Ptr, int32, uint32, int64, uint64, float32, float64)", a)
}

// compatible reports whether an argument may be passed for a parameter:
// the widths must match, and the classes where both sides know them (a PTX
// integer parameter takes a pointer, since PTX does not mark pointers).
func compatible(arg, p Param) bool {
	if arg.Bytes != p.Bytes {
		return false
	}
	switch p.Class {
	case "ptr":
		return arg.Class == "ptr"
	case "int":
		return arg.Class == "int" || (arg.Class == "ptr" && p.Bytes == 8)
	case "float":
		return arg.Class == "float"
	case "value":
		return arg.Class != "ptr"
	}
	return false
}

// CheckArgs compares a launch's arguments with the kernel's declared
// parameters and says which argument is wrong, and how.
func CheckArgs(kernel string, params []Param, args []any) error {
	if len(args) != len(params) {
		return fmt.Errorf("kernel %s launched with %d arguments, its code object declares %d parameters %v: fix the launch (or rebuild with `make kernels` if the source changed)", kernel, len(args), len(params), params)
	}
	for i, a := range args {
		ap, err := argParam(a)
		if err != nil {
			return fmt.Errorf("kernel %s argument %d: %v", kernel, i, err)
		}
		if !compatible(ap, params[i]) {
			return fmt.Errorf("kernel %s argument %d is %T (%v), its code object declares parameter %d as %v", kernel, i, a, ap, i, params[i])
		}
	}
	return nil
}
