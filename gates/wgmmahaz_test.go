package gates

import (
	"strings"
	"testing"
)

// wgmmaLoop is a PTX entry whose loop issues a register-A wgmma and then
// runs BODY (the next iteration's work before its wait) and WAIT.
const wgmmaLoop = `.version 8.4
.target sm_90a
.address_size 64
.visible .entry k(
)
{
	.reg .b32 %r<8>;
	.reg .f32 %f<4>;
	.reg .b64 %rd<2>;
	.reg .pred %p<2>;
$L_top:
	BODY
	WAIT
	wgmma.fence.sync.aligned;
	{
	.reg .pred p;
	setp.ne.b32 p, %r6, 0;
	wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, %rd0, p, 1, 1, 0;
	}
	wgmma.commit_group.sync.aligned;
	@%p0 bra $L_top;
	wgmma.wait_group.sync.aligned 0;
	ret;
}
`

func TestWGMMAHazards(t *testing.T) {
	for _, c := range []struct {
		name, body, wait string
		want             []string // "reg role" of each hazard, in any order
	}{
		// The next iteration's conversion writes an A register before the
		// wait: the bug the wgmma decode kernel had.
		{"A written before the wait", "sub.f16x2 %r1, %r4, %r5;", "wgmma.wait_group.sync.aligned 0;", []string{"%r1 A"}},
		// Written after the wait that retires the op: legal.
		{"A written after the wait", "", "wgmma.wait_group.sync.aligned 0; mov.b32 %r1, %r4;", nil},
		// wait_group 1 may leave the op pending: the write still counts.
		{"wait_group 1 does not retire it", "", "wgmma.wait_group.sync.aligned 1; mov.b32 %r2, %r4;", []string{"%r2 A"}},
		// An accumulator written by another instruction in flight.
		{"D written before the wait", "mov.f32 %f2, 0f00000000;", "wgmma.wait_group.sync.aligned 0;", []string{"%f2 D"}},
		// A vector load into an A register.
		{"vector load into A", "ld.shared.v4.u32 {%r0, %r5, %r6, %r7}, [%r4];", "wgmma.wait_group.sync.aligned 0;", []string{"%r0 A"}},
		// Reads, stores and other registers are not writes to the op's.
		{"reads and stores only", "add.u32 %r4, %r1, %r2; st.shared.u32 [%r5], %r0;", "wgmma.wait_group.sync.aligned 0;", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := strings.NewReplacer("BODY", c.body, "WAIT", c.wait).Replace(wgmmaLoop)
			syms, err := ParsePTX(src)
			if err != nil {
				t.Fatal(err)
			}
			checkHazards(t, WGMMAHazards(syms[0]), c.want)
		})
	}
}

// The descriptor form (A in shared memory) has no A registers: only its
// accumulators are guarded.
func TestWGMMAHazardsDescriptorA(t *testing.T) {
	src := strings.NewReplacer("BODY", "mov.b32 %r0, %r4; mov.f32 %f0, 0f00000000;", "WAIT", "",
		"{%r0, %r1, %r2, %r3}, %rd0", "%rd1, %rd0").Replace(wgmmaLoop)
	syms, err := ParsePTX(src)
	if err != nil {
		t.Fatal(err)
	}
	hz := WGMMAHazards(syms[0])
	if len(hz) != 1 || hz[0].Reg != "%f0" || hz[0].Role != "D" {
		t.Errorf("hazards %v, want only %%f0 (D)", hz)
	}
}

// Two ops in two groups: wait_group 1 retires the first (one group was
// committed after its own) but not the second, on every path; a path that
// skips the second commit leaves the first pending too.
func TestWGMMAHazardsWaitDepth(t *testing.T) {
	const src = `.version 8.4
.target sm_90a
.address_size 64
.visible .entry k(
)
{
	.reg .b32 %r<12>;
	.reg .f32 %f<8>;
	.reg .b64 %rd<2>;
	.reg .pred %p<2>;
	wgmma.fence.sync.aligned;
	wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, %rd0, 1, 1, 1, 0;
	wgmma.commit_group.sync.aligned;
	SECOND
	wgmma.wait_group.sync.aligned 1;
	mov.b32 %r1, %r8;
	mov.b32 %r5, %r8;
	wgmma.wait_group.sync.aligned 0;
	ret;
}
`
	const second = `wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f4, %f5, %f6, %f7}, {%r4, %r5, %r6, %r7}, %rd0, 1, 1, 1, 0;
	@%p0 bra $L_skip;
	wgmma.commit_group.sync.aligned;
$L_skip:`
	for _, c := range []struct {
		name, second string
		want         []string
	}{
		{"second group committed", strings.Replace(second, "@%p0 bra $L_skip;", "", 1), []string{"%r5 A"}},
		{"second commit skipped on one path", second, []string{"%r1 A", "%r5 A"}},
		{"no second op", "", []string{"%r1 A"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			syms, err := ParsePTX(strings.Replace(src, "SECOND", c.second, 1))
			if err != nil {
				t.Fatal(err)
			}
			checkHazards(t, WGMMAHazards(syms[0]), c.want)
		})
	}
}

// checkHazards fails unless hz names exactly the "reg role" pairs of want,
// in any order.
func checkHazards(t *testing.T, hz []WGMMAHazard, want []string) {
	t.Helper()
	got := map[string]bool{}
	for _, h := range hz {
		got[h.Reg+" "+h.Role] = true
	}
	if len(got) != len(want) {
		t.Fatalf("hazards %v, want %v", hz, want)
	}
	for _, w := range want {
		if !got[w] {
			t.Errorf("missing hazard %s in %v", w, hz)
		}
	}
}
