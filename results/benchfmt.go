package results

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WriteBenchfmt writes doc in the Go benchmark format so that benchstat
// (golang.org/x/perf/cmd/benchstat) compares two runs with no flags:
//
//	Unit GB/s better=higher
//	device: NVIDIA H200 sm_90
//	suite: dec
//	Benchmarkdec/kernel=w4a8_gemm/shape=mlp_down/M=8/variant=v3/regime=cold 1 12300 ns/op 3456 GB/s
//
// The only configuration keys are the ones that say what was measured
// (device and suite), never the ones that say when or by what build (tool,
// commit, date, seed, a partial mark): benchstat splits its tables by
// configuration, so a key that differs between runs would leave nothing
// to compare. The commit and date stay in the results JSON.
//
// One line per sample, so benchstat sees every rep (it computes its own
// median and Mann-Whitney test; the verdicts of `parharness diff` also
// require the identical-code control, which benchstat does not know).
// The name is "Benchmark" + the record's Key with the suite verbatim;
// spaces and slashes inside names become "_". Times are ns/op (benchstat
// shows sec/op); GB/s and TFLOP/s follow from each sample's time where the
// record counts bytes or flops, declared higher-is-better by Unit lines.
func WriteBenchfmt(w io.Writer, doc *Document) error {
	if doc == nil {
		return errors.New("results: benchfmt: nil document")
	}
	bw := bufio.NewWriter(w)
	d := *doc
	d.Records = append([]Record(nil), doc.Records...)
	d.Sort()
	var hasBytes, hasFlops bool
	for _, r := range d.Records {
		hasBytes = hasBytes || r.Bytes > 0
		hasFlops = hasFlops || r.Flops > 0
	}
	if hasBytes {
		bw.WriteString("Unit GB/s better=higher\n")
	}
	if hasFlops {
		bw.WriteString("Unit TFLOP/s better=higher\n")
	}
	// A configuration line holds until it is changed: written where the
	// value changes (records are sorted by suite; a merged document's
	// records name their device).
	conf := map[string]string{}
	set := func(key, val string) {
		val = strings.TrimSpace(strings.ReplaceAll(val, "\n", " "))
		if old, ok := conf[key]; ok && old == val {
			return
		}
		conf[key] = val
		fmt.Fprintf(bw, "%s: %s\n", key, val)
	}
	for i := range d.Records {
		r := &d.Records[i]
		set("device", d.deviceOf(r))
		set("suite", r.Suite)
		name := "Benchmark" + benchName(r.Suite) + "/kernel=" + benchName(r.Kernel) + "/shape=" + benchName(r.Shape) +
			"/M=" + strconv.Itoa(r.M) + "/variant=" + benchName(r.Variant) + "/regime=" + benchName(r.Regime)
		for _, us := range r.SamplesUS {
			if us <= 0 {
				continue
			}
			fmt.Fprintf(bw, "%s 1 %s ns/op", name, num(us*1e3))
			if r.Bytes > 0 {
				fmt.Fprintf(bw, " %s GB/s", num(float64(r.Bytes)/us/1e3))
			}
			if r.Flops > 0 {
				fmt.Fprintf(bw, " %s TFLOP/s", num(float64(r.Flops)/us/1e6))
			}
			bw.WriteString("\n")
		}
	}
	return bw.Flush()
}

// deviceOf names the device that measured r: the document's, or in a
// document that merges several devices' runs, the run r names.
func (d *Document) deviceOf(r *Record) string {
	name := func(dv *Device) string { return strings.TrimSpace(dv.Name + " " + dv.Arch) }
	if d.Device != nil {
		return name(d.Device)
	}
	for _, run := range d.DeviceRuns {
		if run.Selector == r.Device && run.Device != nil {
			return name(run.Device)
		}
	}
	if r.Device != "" {
		return "device " + r.Device
	}
	return "unknown"
}

// benchName keeps a name one field and one name part.
func benchName(s string) string {
	if s == "" {
		return "_"
	}
	return strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' || r == '\t' || r == '\n' || r == '\r' {
			return '_'
		}
		return r
	}, s)
}

func num(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
