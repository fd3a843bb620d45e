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
// (golang.org/x/perf/cmd/benchstat) can compare two runs:
//
//	tool: parharness v0.1.0
//	commit: 1a2b3c4
//	device: NVIDIA H200 sm_90
//	Benchmarkdecode/kernel=w4a8_gemm/shape=mlp_down/M=8/variant=v3/regime=cold 1 12.3 us/op 3456 GB/s
//
// one line per sample, so benchstat sees every rep (it computes its own
// median and Mann-Whitney test; the verdicts of `parharness diff` also
// require the identical-code control, which benchstat does not know).
// The name is "Benchmark" + the record's Key with the suite verbatim;
// spaces and slashes inside names become "_". GB/s and TFLOP/s follow
// from each sample's time where the record counts bytes or flops.
func WriteBenchfmt(w io.Writer, doc *Document) error {
	if doc == nil {
		return errors.New("results: benchfmt: nil document")
	}
	bw := bufio.NewWriter(w)
	conf := func(key, val string) {
		if val = strings.TrimSpace(strings.ReplaceAll(val, "\n", " ")); val != "" {
			fmt.Fprintf(bw, "%s: %s\n", key, val)
		}
	}
	conf("tool", doc.Tool)
	conf("commit", doc.Commit)
	conf("date", doc.Date)
	if d := doc.Device; d != nil {
		conf("device", d.Name+" "+d.Arch)
		conf("backend", d.Backend)
		conf("driver", d.Driver)
	}
	conf("seed", strconv.FormatUint(doc.Seed, 10))
	if doc.Partial {
		conf("partial", "true")
	}

	d := *doc
	d.Records = append([]Record(nil), doc.Records...)
	d.Sort()
	for i := range d.Records {
		r := &d.Records[i]
		name := "Benchmark" + benchName(r.Suite) + "/kernel=" + benchName(r.Kernel) + "/shape=" + benchName(r.Shape) +
			"/M=" + strconv.Itoa(r.M) + "/variant=" + benchName(r.Variant) + "/regime=" + benchName(r.Regime)
		for _, us := range r.SamplesUS {
			if us <= 0 {
				continue
			}
			fmt.Fprintf(bw, "%s 1 %s us/op", name, num(us))
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
