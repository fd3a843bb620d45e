package gates

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The fixtures are cuobjdump -sass of pq_gemm_dec_wg_m8 and _m64 as ptxas
// (CUDA 13, H200 image, 2026-12-02) compiled them, encodings stripped:
// "overlap" is the body that converted the next group while the ops were
// in flight (ptxas allocated the in-flight A registers to the next
// group's address arithmetic, weight loads and conversion: the H200 gate
// failures), "serial" the one that waits first.
func readSASSFixture(t *testing.T, name string) string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "sass", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSASSWGMMAFixtures(t *testing.T) {
	for _, tc := range []struct {
		file, fn string
		hazard   bool
	}{
		{"wg-m8-overlap.sass.gz", "pq_gemm_dec_wg_m8", true},
		{"wg-m64-overlap.sass.gz", "pq_gemm_dec_wg_m64", true},
		{"wg-m8-serial.sass.gz", "pq_gemm_dec_wg_m8", false},
		{"wg-m64-serial.sass.gz", "pq_gemm_dec_wg_m64", false},
	} {
		t.Run(tc.file, func(t *testing.T) {
			funcs, err := ParseSASS(readSASSFixture(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			fn, ok := funcs[tc.fn]
			if !ok {
				t.Fatalf("%s not in the fixture", tc.fn)
			}
			n := 0
			for _, in := range fn {
				if _, _, _, g := gmmaOperands(in); g {
					n++
				}
			}
			if n == 0 {
				t.Fatal("no GMMA parsed")
			}
			hz, err := SASSWGMMAHazards(fn)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(hz) > 0; got != tc.hazard {
				t.Fatalf("hazards %v (%d), want %v; first %v", got, len(hz), tc.hazard, hz)
			}
			if tc.hazard {
				for _, h := range hz {
					if h.Role != "A" {
						t.Fatalf("the fixture's hazards are A writes (address arithmetic, LDS, F2FP into the in-flight operand), got %v", h)
					}
				}
				t.Logf("%d hazards, first: %v", len(hz), hz[0])
			}
		})
	}
}

// A small synthetic loop: one group of two QGMMA (the second closes it),
// a wait, and planted accesses between issue and wait.
const sassLoop = `	Function : k
        /*0000*/                   MOV R2, RZ ;
        /*0010*/                   WARPGROUP.ARRIVE ;
        /*0020*/                   QGMMA.64x8x32.F32.E4M3.E4M3 R24, R28, gdesc[UR16], RZ, !UPT ;
        /*0030*/                   QGMMA.64x8x32.F32.E4M3.E4M3 R24, R32, gdesc[UR16], R24, gsb0 ;
        /*0040*/                   PLANT
        /*0050*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*0060*/                   FADD R3, R24, R25 ;
        /*0070*/                   MOV R28, R3 ;
        /*0080*/               @P0 BRA 0x10 ;
        /*0090*/                   EXIT ;
`

func TestSASSWGMMAPlanted(t *testing.T) {
	for _, tc := range []struct {
		name, plant string
		reg         int
		role        string
	}{
		{"clean", "NOP ;", -1, ""},
		{"A write", "F2FP.SATFINITE.E4M3.F16.UNPACK_B_MERGE_C R31, R17, R58 ;", 31, "A"},
		{"A write second op", "IADD3 R34, R1, 0x1, RZ ;", 34, "A"},
		{"A pair write", "IMAD.WIDE.U32 R30, R1, 0x4, RZ ;", 31, "A"},
		{"A quad load", "LDS.128 R32, [R1] ;", 35, "A"},
		{"D read", "FMUL R3, R26, R4 ;", 26, "D"},
		{"D write", "MOV R27, RZ ;", 27, "D"},
		{"D store", "STS [R1], R25 ;", 25, "D"},
		{"shfl dest", "SHFL.IDX PT, R29, R1, 0x0, 0x1f ;", 29, "A"},
		{"A read is fine", "MOV R5, R28 ;", -1, ""},
		{"other register", "MOV R36, RZ ;", -1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			funcs, err := ParseSASS(strings.Replace(sassLoop, "PLANT", tc.plant, 1))
			if err != nil {
				t.Fatal(err)
			}
			hz, err := SASSWGMMAHazards(funcs["k"])
			if err != nil {
				t.Fatal(err)
			}
			if tc.reg < 0 {
				if len(hz) > 0 {
					t.Fatalf("want none, got %v", hz)
				}
				return
			}
			for _, h := range hz {
				if h.Reg == tc.reg && h.Role == tc.role && h.At.Addr == 0x40 {
					return
				}
			}
			t.Fatalf("want R%d (%s) at 0x40, got %v", tc.reg, tc.role, hz)
		})
	}
}

// The wait's depth counts groups: a write after a DEPBAR.LE 1 that leaves
// only a newer group pending is safe for the older op, and unsafe when the
// op's own group is the pending one; the loop back edge is followed.
func TestSASSWGMMADepth(t *testing.T) {
	const two = `	Function : k
        /*0000*/                   QGMMA.64x8x32.F32.E4M3.E4M3 R24, R28, gdesc[UR16], RZ, !UPT, gsb0 ;
        /*0010*/                   QGMMA.64x8x32.F32.E4M3.E4M3 R40, R32, gdesc[UR16], RZ, !UPT, gsb0 ;
        /*0020*/                   WARPGROUP.DEPBAR.LE gsb0, 0x1 ;
        /*0030*/                   MOV R28, RZ ;
        /*0040*/                   MOV R32, RZ ;
        /*0050*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*0060*/                   EXIT ;
`
	funcs, err := ParseSASS(two)
	if err != nil {
		t.Fatal(err)
	}
	hz, err := SASSWGMMAHazards(funcs["k"])
	if err != nil {
		t.Fatal(err)
	}
	if len(hz) != 1 || hz[0].Reg != 32 || hz[0].Op.Addr != 0x10 {
		t.Fatalf("want only R32 of the second op, got %v", hz)
	}
	back := `	Function : k
        /*0000*/                   F2FP.SATFINITE.E4M3.F16.UNPACK_B_MERGE_C R28, R17, R58 ;
        /*0010*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*0020*/                   QGMMA.64x8x32.F32.E4M3.E4M3 R24, R28, gdesc[UR16], RZ, !UPT, gsb0 ;
        /*0030*/                   BRA.DIV UR6, 0x0 ;
        /*0040*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*0050*/                   EXIT ;
`
	funcs, err = ParseSASS(back)
	if err != nil {
		t.Fatal(err)
	}
	if hz, err = SASSWGMMAHazards(funcs["k"]); err != nil || len(hz) != 1 || hz[0].At.Addr != 0 {
		t.Fatalf("want the loop-carried write at 0x0, got %v %v", hz, err)
	}
}

func TestParseSASSErrors(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"no function", "        /*0000*/ NOP ;\n", "before any"},
		{"address order", "\tFunction : k\n        /*0010*/ NOP ;\n        /*0000*/ NOP ;\n", "after"},
		{"twice", "\tFunction : k\n\tFunction : k\n", "twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSASS(tc.text)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
	funcs, _ := ParseSASS("\tFunction : k\n        /*0000*/ BRA 0x100 ;\n        /*0010*/ QGMMA.64x8x32.F32.E4M3.E4M3 R24, R28, gdesc[UR16], RZ, !UPT, gsb0 ;\n        /*0020*/ BRA 0x100 ;\n")
	if _, err := SASSWGMMAHazards(funcs["k"]); err == nil || !strings.Contains(err.Error(), "branch target") {
		t.Fatalf("a branch out of the function: err %v", err)
	}
}

func FuzzParseSASS(f *testing.F) {
	f.Add(sassLoop)
	f.Add("\tFunction : k\n        /*0000*/ @!P0 BRA.DIV UR6, 0x0 ;\n")
	f.Fuzz(func(t *testing.T, text string) {
		funcs, err := ParseSASS(text)
		if err != nil {
			return
		}
		for _, fn := range funcs {
			for i := 1; i < len(fn); i++ {
				if fn[i].Addr <= fn[i-1].Addr {
					t.Fatalf("addresses out of order: %v", fn)
				}
			}
			_, _ = SASSWGMMAHazards(fn) // must not panic or loop
		}
	})
}
