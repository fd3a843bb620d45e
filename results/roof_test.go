package results

import (
	"math"
	"path/filepath"
	"testing"
)

// roofRec is a roof record of n bytes at us µs in regime.
func roofRec(suite, regime string, n int64, us float64) Record {
	return Record{Suite: suite, Kernel: "read_v4x4", Variant: "read", Regime: regime, Bytes: n, TrimmedMeanUS: us, Flags: []string{FlagRoof}}
}

func TestRoofFits(t *testing.T) {
	const fixed, rate = 5.0, 3000.0 // µs, GB/s
	line := func(n int64) float64 { return fixed + float64(n)/(1e3*rate) }
	sizes := []int64{18 << 20, 21 << 20, 22 << 20, 44 << 20}
	t.Run("a line through exact points", func(t *testing.T) {
		d := &Document{}
		for _, n := range sizes {
			d.Records = append(d.Records, roofRec("dec", "isolated", n, line(n)), roofRec("dec", "isolated", n, line(n)))
		}
		fits := d.RoofFits("dec")
		if len(fits) != 1 {
			t.Fatalf("%d fits, want 1", len(fits))
		}
		f := fits[0]
		if f.Regime != "isolated" || f.Cells != 8 || f.Sizes != 4 || math.Abs(f.FixedUS-fixed) > 1e-6 || math.Abs(f.RateGBps-rate) > 1e-3 || f.MaxResidUS > 1e-6 {
			t.Errorf("fit %+v, want %g µs + %g GB/s over 8 cells of 4 sizes", f, fixed, rate)
		}
		n, ok := f.BytesFrom(0.75 * rate)
		if !ok || math.Abs(float64(n)/(1e3*f.At(n))-0.75*rate) > 1e-6 {
			t.Errorf("BytesFrom(%g) = %g, %v: a read of that size reaches %g GB/s", 0.75*rate, n, ok, n/(1e3*f.At(n)))
		}
		if _, ok := f.BytesFrom(rate); ok {
			t.Error("BytesFrom(the rate itself) reports a size")
		}
	})
	t.Run("what is left out", func(t *testing.T) {
		failed := roofRec("dec", "cold", sizes[1], 1)
		failed.Check = &Check{Status: CheckFail}
		notRoof := roofRec("dec", "cold", sizes[2], 1)
		notRoof.Flags = nil
		d := &Document{Records: []Record{
			roofRec("dec", "cold", sizes[0], line(sizes[0])), failed, notRoof, // one size left: no fit
			roofRec("pre", "cold", sizes[3], line(sizes[3])),                               // another suite
			roofRec("dec", "falling", sizes[0], 9), roofRec("dec", "falling", sizes[3], 8), // no rate
		}}
		if fits := d.RoofFits("dec"); len(fits) != 0 {
			t.Errorf("fits %+v, want none", fits)
		}
	})
	t.Run("the H100 sweep of 2026-12-06", func(t *testing.T) {
		d, err := Read(filepath.Join("2026-12-06h", "call1", "dec.json"))
		if err != nil {
			t.Fatal(err)
		}
		fits := d.RoofFits("dec")
		want := []RoofFit{{Regime: "cold", FixedUS: 2.69, RateGBps: 3178}, {Regime: "isolated", FixedUS: 5.14, RateGBps: 3160}}
		if len(fits) != 2 {
			t.Fatalf("fits %+v, want cold and isolated", fits)
		}
		for i, w := range want {
			f := fits[i]
			if f.Regime != w.Regime || f.Cells != 44 || f.Sizes != 4 || math.Abs(f.FixedUS-w.FixedUS) > 0.01 || math.Abs(f.RateGBps-w.RateGBps) > 1 || f.MaxResidUS > 0.3 {
				t.Errorf("%s: %+v, want %.2f µs + %.0f GB/s over 44 cells of 4 sizes", w.Regime, f, w.FixedUS, w.RateGBps)
			}
		}
	})
}
