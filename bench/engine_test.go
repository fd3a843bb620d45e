package bench

import (
	"strings"
	"testing"
)

func TestCheckCold(t *testing.T) {
	const llc = 60 << 20
	p := Point{Kernel: "k", Shape: "s", M: 8, Regime: Cold, Footprint: 1 << 20, Copies: 100}
	if err := CheckCold(p, llc); err == nil || !strings.Contains(err.Error(), "cold regime leaked") {
		t.Fatalf("100 x 1 MiB against a 60 MiB cache accepted: %v", err)
	}
	p.Copies = CopiesFor(p.Footprint, llc)
	if err := CheckCold(p, llc); err != nil {
		t.Fatalf("CopiesFor's count rejected: %v", err)
	}
	if int64(p.Copies)*p.Footprint < 3*llc {
		t.Fatalf("CopiesFor(%d) = %d copies: %d bytes, below 3x LLC", p.Footprint, p.Copies, int64(p.Copies)*p.Footprint)
	}
	hot := Point{Regime: Hot, Footprint: 1, Copies: 1}
	if err := CheckCold(hot, llc); err != nil {
		t.Fatalf("hot point checked as cold: %v", err)
	}
	if err := CheckCold(Point{Regime: Cold, Footprint: 1 << 30, Copies: 1}, 0); err == nil {
		t.Fatalf("unknown LLC accepted for a cold point")
	}
}

func TestRoundUp(t *testing.T) {
	for _, c := range [][3]int{{20, 7, 21}, {21, 7, 21}, {1, 1, 1}, {0, 5, 0}} {
		if got := roundUp(c[0], c[1]); got != c[2] {
			t.Errorf("roundUp(%d, %d) = %d, want %d", c[0], c[1], got, c[2])
		}
	}
}
