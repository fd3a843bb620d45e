package gates

import (
	"strings"
	"testing"
)

// Synthetic llvm-objdump-19 -d --mcpu=gfx1201 text in the real format
// (tab, mnemonic, operands, "// ADDR: ENCODING" and, for branches, the
// "<symbol+0xoff>" annotation). Branch immediates are SOPP simm16 dword
// offsets from PC+4, printed unsigned as objdump does.
const (
	// k_loop: a k loop at +0x8..+0x18 closed by s_cbranch_scc1 -5
	// (0x18 + 4 - 20 = +0x8) with the WMMA at +0xc.
	disWMMAInLoop = `
build/gfx1201/gemm.co:	file format elf64-amdgpu

Disassembly of section .text:

0000000000001000 <k_loop>:
	s_load_b64 s[2:3], s[0:1], 0x0                             // 000000001000: F4000080 F8000000
	v_mov_b32_e32 v8, 0                                        // 000000001004: 7E100280
	s_add_co_i32 s4, s4, 1                                     // 000000001008: 81048104
	v_wmma_f32_16x16x16_fp8_fp8 v[8:15], v[0:1], v[2:3], v[8:15] // 00000000100C: CC440008 1C220500
	s_cmp_lt_u32 s4, s5                                        // 000000001010: BF0A0504
	s_delay_alu instid0(SALU_CYCLE_1)// 000000001014: BF870009
	s_cbranch_scc1 65531                                       // 000000001018: BFA2FFFB <k_loop+0x8>
	s_endpgm                                                   // 00000000101C: BFB00000
`
	// k_straight: the WMMA runs once after the only loop (which spans
	// +0x4..+0x8 and a forward branch that is no loop).
	disWMMAOutsideLoop = `
0000000000002000 <k_straight>:
	s_mov_b32 s4, 0                                            // 000000002000: BE840080
	s_add_co_i32 s4, s4, 1                                     // 000000002004: 81048104
	s_cbranch_scc1 65534                                       // 000000002008: BFA2FFFE <k_straight+0x4>
	s_cbranch_execz 1                                          // 00000000200C: BFA50001 <k_straight+0x14>
	v_wmma_f32_16x16x16_fp8_fp8 v[8:15], v[0:1], v[2:3], 0     // 000000002010: CC440008 1A020500
	s_endpgm                                                   // 000000002014: BFB00000
`
	// k_thread: a backward branch spans the WMMA but closes no loop (the
	// block layout llvm emits for a jump-threaded chain of ifs: the entry
	// reaches the branch without passing its target, and from the target
	// control only runs forward to s_endpgm), so no loop holds it.
	disBackwardNoCycle = `
0000000000004000 <k_thread>:
	s_cmp_eq_u32 s0, 0                                         // 000000004000: BF068000
	s_cbranch_scc1 3                                           // 000000004004: BFA20003 <k_thread+0x14>
	v_wmma_f32_16x16x16_fp8_fp8 v[8:15], v[0:1], v[2:3], v[8:15] // 000000004008: CC440008 1C220500
	s_branch 3                                                 // 00000000400C: BFA00003 <k_thread+0x1c>
	s_nop 0                                                    // 000000004010: BF800000
	s_mov_b32 s1, 0                                            // 000000004014: BE810080
	s_branch 65532                                             // 000000004018: BFA0FFFC <k_thread+0x8>
	s_endpgm                                                   // 00000000401C: BFB00000
`
	// k_dead: the WMMA loop sits after s_endpgm, where control never goes
	// (a loop the compiler left unreachable); the live code has no WMMA.
	disWMMALoopDead = `
0000000000005000 <k_dead>:
	s_mov_b32 s4, 0                                            // 000000005000: BE840080
	s_endpgm                                                   // 000000005004: BFB00000
	v_wmma_f32_16x16x16_fp8_fp8 v[8:15], v[0:1], v[2:3], v[8:15] // 000000005008: CC440008 1C220500
	s_add_co_i32 s4, s4, 1                                     // 00000000500C: 81048104
	s_cbranch_scc1 65533                                       // 000000005010: BFA2FFFD <k_dead+0x8>
	s_endpgm                                                   // 000000005014: BFB00000
`
	// k_emul: the matrix op is a call into an FMA loop; no WMMA anywhere.
	// Its loop branch is printed with a symbolic target only.
	disNoWMMA = `
0000000000003000 <k_emul>:
	s_swappc_b64 s[30:31], s[2:3]                              // 000000003000: BE9E4802
	s_cbranch_scc0 k_emul+0x0                                  // 000000003004: BFA1FFFE <k_emul>
	s_endpgm                                                   // 000000003008: BFB00000

0000000000003100 <mma_emul>:
	v_fmac_f32_e32 v0, v1, v2                                  // 000000003100: 56000501
	s_setpc_b64 s[30:31]                                       // 000000003104: BE80481E
`
)

func TestParseObjdumpBranchTargets(t *testing.T) {
	syms, err := ParseObjdump(disWMMAInLoop + disWMMAOutsideLoop + disNoWMMA)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range syms {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, ","); got != "k_loop,k_straight,k_emul,mma_emul" {
		t.Fatalf("symbols %s", got)
	}
	want := map[string][]uint64{ // branch address -> target
		"k_loop":     {0x1018, 0x1008},
		"k_straight": {0x2008, 0x2004, 0x200c, 0x2014},
		"k_emul":     {0x3004, 0x3000},
	}
	for _, s := range syms {
		var got []uint64
		for _, in := range s.Insts {
			if IsBranch(in.Mnemonic) {
				if !in.HasTarget {
					t.Errorf("%s: branch at 0x%x has no target", s.Name, in.Addr)
				}
				got = append(got, in.Addr, in.Target)
			}
		}
		w := want[s.Name]
		if len(got) != len(w) {
			t.Errorf("%s: branches %x, want %x", s.Name, got, w)
			continue
		}
		for i := range w {
			if got[i] != w[i] {
				t.Errorf("%s: branches %x, want %x", s.Name, got, w)
				break
			}
		}
	}
}

func TestMatrixInLoop(t *testing.T) {
	cases := []struct {
		name, text, sym string
		matrix          int
		pass            bool
		why             string // substring of the failure
		hotInsts        int
	}{
		{"wmma in loop", disWMMAInLoop, "k_loop", 1, true, "", 5},
		{"wmma outside any loop", disWMMAOutsideLoop, "k_straight", 1, false, "none inside a loop", 0},
		{"no wmma", disNoWMMA, "k_emul", 0, false, "no " + wmmaFP8, 0},
		{"backward branch closing no cycle", disBackwardNoCycle, "k_thread", 1, false, "1 backward branches closing none", 0},
		{"wmma loop in unreachable code", disWMMALoopDead, "k_dead", 1, false, "none inside a loop", 0},
	}
	for _, c := range cases {
		syms, err := ParseObjdump(c.text)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var s *Symbol
		for i := range syms {
			if syms[i].Name == c.sym {
				s = &syms[i]
			}
		}
		if s == nil {
			t.Fatalf("%s: no symbol %s", c.name, c.sym)
		}
		rep := AnalyzeMatrixLoops(*s, wmmaFP8)
		msg := CheckMatrixInLoop(rep, wmmaFP8)
		if rep.Matrix != c.matrix || (msg == "") != c.pass || !strings.Contains(msg, c.why) {
			t.Errorf("%s: %d matrix instructions, verdict %q; want %d, pass=%v (%q)", c.name, rep.Matrix, msg, c.matrix, c.pass, c.why)
		}
		if c.pass && (rep.Hot == nil || rep.Hot.Insts != c.hotInsts || rep.Hot.Matrix != 1) {
			t.Errorf("%s: hot loop %+v, want %d instructions holding 1 WMMA", c.name, rep.Hot, c.hotInsts)
		}
	}
}

func TestParseObjdumpRejectsGarbage(t *testing.T) {
	for _, text := range []string{
		"\tv_mov_b32 v0, 0 // 000000001000: 7E000280\n",                           // before any symbol
		"0000000000001000 <k>:\n\tv_mov_b32 v0, 0\n",                              // no address comment
		"0000000000001000 <k>:\n\ts_branch somewhere // 000000001000: BFA00000\n", // no target
		"0000000000001000 <k>:\n\ts_branch x // 000000001000: BFA00000 <nowhere+0x4>\n",
	} {
		if _, err := ParseObjdump(text); err == nil {
			t.Errorf("no error for %q", text)
		}
	}
}

// The objdump parser and the loop analysis never panic on any text, and a
// branch target is only ever set on a branch.
func FuzzParseObjdump(f *testing.F) {
	f.Add(disWMMAInLoop)
	f.Add(disWMMAOutsideLoop + disNoWMMA)
	f.Add("0000000000001000 <k>:\n\ts_branch 65535 // 000000001004: BFA0FFFF <k+0x0>\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, text string) {
		syms, err := ParseObjdump(text)
		if err != nil {
			return
		}
		for _, s := range syms {
			for _, in := range s.Insts {
				if in.HasTarget && !IsBranch(in.Mnemonic) {
					t.Fatalf("%s: non-branch %q at %#x has a target", s.Name, in.Mnemonic, in.Addr)
				}
			}
			// The loop analysis takes any parsed symbol without panicking.
			CheckMatrixInLoop(AnalyzeMatrixLoops(s, "v_wmma"), "v_wmma")
		}
	})
}
