package gates

import (
	"strings"
	"testing"

	"github.com/parharness/parharness/kernels"
)

// A kernel as clang lays it out: a scope brace right after a label (inline
// asm), vector operands in braces, a rotated loop whose latch sits before
// its header and reaches it by falling through, and a guarded ret.
const ptxRotatedLoop = `
.version 8.4
.target sm_90a
.visible .entry k_rot(
	.param .u64 k_rot_param_0
)
{
	.reg .pred 	%p<4>;
	.reg .f32 	%f<9>;
	ld.param.u64 	%rd1, [k_rot_param_0];
	bra.uni 	$L__BB0_2;
$L__BB0_1:                             // latch
	add.s32 	%r1, %r1, 1;
	setp.eq.s32 	%p1, %r1, 8;
	@%p1 bra 	$L__BB0_3;
$L__BB0_2:                             // header
	// begin inline asm
	{
	.reg .pred p;
	setp.ne.b32 p, %r1, 0;
	}
	// end inline asm
	mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r2, %r3, %r4, %r5}, {%r6, %r7}, {%f5, %f6, %f7, %f8};
	bra.uni 	$L__BB0_1;
$L__BB0_3:
	@%p2 ret;
	st.global.f32 	[%rd1], %f1;
	ret;
}
.visible .entry k_flat()
{
	mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r2, %r3, %r4, %r5}, {%r6, %r7}, {%f5, %f6, %f7, %f8};
	@%p1 bra 	$L__BB1_1;
$L__BB1_1:
	ret;
}
`

func TestParsePTXLoops(t *testing.T) {
	syms, err := ParsePTX(ptxRotatedLoop)
	if err != nil {
		t.Fatal(err)
	}
	if len(syms) != 2 || syms[0].Name != "k_rot" || syms[1].Name != "k_flat" {
		t.Fatalf("symbols %+v", syms)
	}
	var ops []string
	for _, in := range syms[0].Insts {
		ops = append(ops, in.Mnemonic)
	}
	want := "ld.param.u64 bra.uni add.s32 setp.eq.s32 bra setp.ne.b32 mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 bra.uni ret st.global.f32 ret"
	if got := strings.Join(ops, " "); got != want {
		t.Fatalf("statements\n %s\nwant\n %s", got, want)
	}
	rep := AnalyzeMatrixLoops(syms[0], "mma.sync.aligned")
	if msg := CheckMatrixInLoop(rep, "mma.sync.aligned"); msg != "" || rep.Hot.Matrix != 1 {
		t.Errorf("rotated loop: %s (%+v)", msg, rep)
	}
	rep = AnalyzeMatrixLoops(syms[1], "mma.sync.aligned")
	if msg := CheckMatrixInLoop(rep, "mma.sync.aligned"); !strings.Contains(msg, "none inside a loop") {
		t.Errorf("straight-line kernel: %q", msg)
	}
}

func TestParsePTXErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{".visible .entry k()\n{\n\tbra.uni $L__nowhere;\n}\n", "unknown label $L__nowhere"},
		{".visible .entry k()\n{\n\tret;\n", "unbalanced"},
		{"}\n", "unbalanced"},
		{".visible .entry k()\n{\n\tbra;\n}\n", "bra without a target"},
	} {
		if _, err := ParsePTX(c.text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.text, err, c.want)
		}
	}
}

func FuzzParsePTX(f *testing.F) {
	f.Add(ptxRotatedLoop)
	f.Add(".visible .entry k()\n{\n$L1: { .reg .b32 r; }\n@%p bra $L1;\n}\n")
	f.Fuzz(func(t *testing.T, text string) {
		syms, err := ParsePTX(text)
		if err != nil {
			return
		}
		for _, s := range syms {
			for _, in := range s.Insts {
				if in.HasTarget && (!in.Branch || in.Target >= uint64(len(s.Insts))+1) {
					t.Fatalf("%s: %+v", s.Name, in)
				}
			}
			CheckMatrixInLoop(AnalyzeMatrixLoops(s, "mma"), "mma")
		}
	})
}

// A private array clang could not keep in registers (a .local depot) and an
// out-of-line call are what resources-ptx reports; AllowScratch excuses
// the first only.
func TestPTXResourceProblems(t *testing.T) {
	syms, err := ParsePTX(`.visible .entry k()
{
	.local .align 8 .b8 	__local_depot0[912];
	.reg .b64 	%SP;
	{ // callseq 0, 0
	.param .b64 param0;
	call.uni 	_Z6lambdav, (param0);
	} // callseq 0
	ret;
}
`)
	if err != nil {
		t.Fatal(err)
	}
	s := syms[0]
	if s.LocalBytes != 912 {
		t.Fatalf("LocalBytes %d, want 912", s.LocalBytes)
	}
	p := ptxResourceProblems(kernels.Kernel{Name: "k"}, s)
	if len(p) != 2 || !strings.Contains(p[0], "912 bytes of local memory") || !strings.Contains(p[1], "1 call(s)") {
		t.Errorf("problems %q", p)
	}
	if p := ptxResourceProblems(kernels.Kernel{Name: "k", AllowScratch: "test"}, s); len(p) != 1 {
		t.Errorf("with AllowScratch: %q", p)
	}
}

// Line info (.loc/.file, as -lineinfo builds have) and block comments do
// not disturb the statements; a label defined twice is refused, not
// silently rewired.
func TestParsePTXLineInfoCommentsLabels(t *testing.T) {
	withInfo := strings.ReplaceAll(ptxRotatedLoop, "\tadd.s32 \t%r1, %r1, 1;", "\t.loc\t1 12 3\n\tadd.s32 \t%r1, %r1, 1; /* { ; } */")
	withInfo = strings.Replace(withInfo, ".target sm_90a", ".target sm_90a\n.file\t1 \"producers.hip\"", 1)
	if !strings.Contains(withInfo, ".loc") || !strings.Contains(withInfo, ".file") {
		t.Fatal("the test text did not take the line info")
	}
	a, err := ParsePTX(ptxRotatedLoop)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParsePTX(withInfo)
	if err != nil {
		t.Fatal(err)
	}
	if len(a[0].Insts) != len(b[0].Insts) {
		t.Errorf("line info changed the statements: %d vs %d", len(a[0].Insts), len(b[0].Insts))
	}
	dup := ".visible .entry k()\n{\n$L: { $L: ret; }\n}\n"
	if _, err := ParsePTX(dup); err == nil || !strings.Contains(err.Error(), "label $L defined twice") {
		t.Errorf("duplicate label: %v", err)
	}
}
