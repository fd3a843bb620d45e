package results

import (
	"bytes"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"

	"github.com/parharness/parharness/internal/golden"
)

// readBenchfmt reads benchfmt text with x/perf's reader: every result's
// samples by "file config | name | unit", the file configuration keys
// seen, and the unit metadata.
func readBenchfmt(t *testing.T, text []byte) (map[string][]float64, map[string]bool, benchfmt.UnitMetadataMap) {
	t.Helper()
	rd := benchfmt.NewReader(bytes.NewReader(text), "run.txt")
	got := map[string][]float64{}
	keys := map[string]bool{}
	units := benchfmt.UnitMetadataMap{}
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.Result:
			var conf []string
			for _, c := range rec.Config {
				if c.File {
					keys[c.Key] = true
					conf = append(conf, c.Key+"="+string(c.Value))
				}
			}
			sort.Strings(conf)
			for _, v := range rec.Values {
				k := strings.Join(conf, ",") + " | " + string(rec.Name) + " | " + v.Unit
				got[k] = append(got[k], v.Value)
			}
		case *benchfmt.UnitMetadata:
			units[rec.UnitMetadataKey] = rec
		case *benchfmt.SyntaxError:
			t.Errorf("benchfmt: %v", rec)
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	return got, keys, units
}

func benchfmtOf(t *testing.T, doc *Document) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteBenchfmt(&buf, doc); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// The benchfmt text reads back through x/perf's reader: one result per
// sample, each sample's time as written (sec/op), only the device and
// suite as configuration, GB/s and TFLOP/s higher-is-better.
func TestBenchfmt(t *testing.T) {
	doc := synthetic()
	text := benchfmtOf(t, doc)
	golden.Check(t, filepath.Join("testdata", "benchfmt.txt"), text)

	got, keys, units := readBenchfmt(t, text)
	if want := []string{"device", "suite"}; !slices.Equal(slices.Sorted(maps.Keys(keys)), want) {
		t.Errorf("configuration keys %v, want %v", slices.Sorted(maps.Keys(keys)), want)
	}
	for _, u := range []string{"GB/s", "TFLOP/s"} {
		if units.GetBetter(u) != 1 {
			t.Errorf("%s: better %d, want higher (+1)", u, units.GetBetter(u))
		}
	}
	for _, r := range doc.Records {
		name := "decode/kernel=" + r.Kernel + "/shape=" + r.Shape + "/M=" + strconv.Itoa(r.M) + "/variant=" + r.Variant + "/regime=" + r.Regime
		k := "device=NVIDIA H200 sm_90,suite=decode | " + name + " | sec/op"
		secs := got[k]
		if len(secs) != len(r.SamplesUS) {
			t.Errorf("%s: %d samples read back, want %d", k, len(secs), len(r.SamplesUS))
			continue
		}
		for i, us := range r.SamplesUS {
			if math.Abs(secs[i]*1e6-us) > 1e-5*us {
				t.Errorf("%s sample %d: %g s read back, wrote %g µs", name, i, secs[i], us)
			}
		}
	}
}

// Two runs of the same sweep (another build, date, seed, a partial run)
// write benchfmt that benchstat compares with no -ignore: every result of
// one has its twin, same configuration and name, in the other, and
// benchmath's U test sees a 10% slowdown and no change where there is none.
func TestBenchfmtRunsCompare(t *testing.T) {
	old, new := synthetic(), synthetic()
	new.Tool, new.Commit, new.Date, new.Seed = "parharness v0.2.0", "fedcba9876543210fedcba9876543210fedcba98-dirty", "2026-12-24T08:00:00Z", 99
	new.Partial, new.PartialReason = true, "interrupted by SIGINT"
	new.Device.Driver, new.Device.Clocks = "580.1", nil
	slow := 0
	for i, us := range new.Records[slow].SamplesUS {
		new.Records[slow].SamplesUS[i] = 1.1 * us
	}
	a, _, _ := readBenchfmt(t, benchfmtOf(t, old))
	b, _, _ := readBenchfmt(t, benchfmtOf(t, new))
	ka, kb := slices.Sorted(maps.Keys(a)), slices.Sorted(maps.Keys(b))
	if len(ka) == 0 || !slices.Equal(ka, kb) {
		t.Fatalf("the runs' benchmarks differ in configuration or name:\nold %v\nnew %v", ka, kb)
	}
	r := old.Records[slow]
	slowName := "decode/kernel=" + r.Kernel + "/shape=" + r.Shape + "/M=" + strconv.Itoa(r.M) + "/variant=" + r.Variant + "/regime=" + r.Regime + " | sec/op"
	thr := benchmath.DefaultThresholds
	for _, k := range ka {
		if !strings.HasSuffix(k, " | sec/op") {
			continue
		}
		c := benchmath.AssumeNothing.Compare(benchmath.NewSample(a[k], &thr), benchmath.NewSample(b[k], &thr))
		if want := strings.HasSuffix(k, slowName); (c.P < c.Alpha) != want {
			t.Errorf("%s: p=%.3g, want a significant change %v", k, c.P, want)
		}
	}
}
