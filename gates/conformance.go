package gates

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/floats"

	"github.com/parharness/parharness/checkpoint"
	"github.com/parharness/parharness/refimpl"
)

// The conformance check compares the Go references with outputs computed by
// ParoQuant's own code. The identity gate's two sides are both the
// project's, so a convention its loader, unpack and rotation share (a
// flipped rotation sign, i and j swapped, the layers reversed, a wrong theta
// index, pairs read as global indices, channel scales divided or applied
// after the rotation, plain nibble order, zeros read plus one) cancels out
// of it. Here the same code runs on a small ParoQuant checkpoint and must
// reproduce ParoQuant's results (gates/testdata/paroquant; its README.md
// and manifest.json give the provenance):
//
//   - the checkpoint loads with checkpoint.LoadLinear, and holds exactly the
//     linear prefixes, dtypes and shapes the manifest lists;
//   - the codes q and zeros z (refimpl.UnpackAWQ) equal ParoQuant's, and the
//     dequantized weight W_deq (QWeight.DequantRow) equals AutoAWQ's bit
//     for bit;
//   - the rotated activations xr = rot_p(x ⊙ channel_scales_p)
//     (refimpl.ForwardPartitions) and y = xr·W_deqᵀ per partition,
//     concatenated along N (refimpl.GEMMRef on the merged weight), agree
//     with ParoQuant's to 1e-12 in the manifest's metric: every row's
//     ‖d‖₂ ≤ 1e-12·‖ref‖₂, and max|d| ≤ 1e-12·max|ref| over the file.
//
// Data that is missing, does not match its sha256, or is not what the
// manifest describes is a goldenDataError: the check could not run (the
// gate reports ERROR). A result that differs is a failure (FAIL).

// conformanceTol is the relative tolerance of xr and y. Both sides are
// float64 evaluations of the same formula; only the order of additions,
// fused multiply-adds and the last bits of sin and cos may differ, about
// 1e-16 to 1e-15 relative. 1e-12 leaves three orders of magnitude for that;
// a misread convention gives 0.27 to 1.7 on these files (the manifest's
// figures; conformance_test.go plants each misreading).
const conformanceTol = 1e-12

// paroManifestSHA256 pins manifest.json, and through its sha256 entries
// every file of the data set: a file changed without a new pin is refused.
const paroManifestSHA256 = "0e066a4c62fb5525e1075753d36a6d5bb8aa5dda6b8a1cc9707c4e8614c035c9"

//go:embed testdata/paroquant/manifest.json testdata/paroquant/paro_kit.safetensors testdata/paroquant/*.npy
var paroGoldensEmbed embed.FS

// paroGoldensFS is the data set embedded in the binary, so the gate runs
// wherever the binary does.
func paroGoldensFS() fs.FS {
	sub, err := fs.Sub(paroGoldensEmbed, "testdata/paroquant")
	if err != nil {
		panic(err) // a constant, valid path
	}
	return sub
}

// goldenDataError says the conformance data could not be used: the check
// could not run, which is not a mismatch.
type goldenDataError struct {
	File    string // the file within the data set
	Problem string
	Err     error // the underlying error, if any (fs.ErrNotExist for a missing file)
}

func (e *goldenDataError) Error() string {
	return fmt.Sprintf("ParoQuant conformance data: %s: %s", e.File, e.Problem)
}

func (e *goldenDataError) Unwrap() error { return e.Err }

// paroManifest is the part of manifest.json the check reads.
type paroManifest struct {
	Format     string `json:"format"`
	Checkpoint struct {
		File      string `json:"file"`
		Bytes     int    `json:"bytes"`
		SHA256    string `json:"sha256"`
		GroupSize int    `json:"group_size"`
		Bits      int    `json:"bits"`
		Krot      int    `json:"krot"`
	} `json:"checkpoint"`
	Provenance struct {
		Date      string `json:"date"`
		ParoQuant struct {
			Commit  string `json:"commit"`
			Version string `json:"version"`
		} `json:"paroquant"`
	} `json:"provenance"`
	Tolerances struct {
		Rel struct {
			Value float64 `json:"value"`
		} `json:"rel_1e-12"`
	} `json:"tolerances"`
	Cases []paroCase `json:"cases"`
}

type paroCase struct {
	Name             string     `json:"name"`
	K                int        `json:"K"`
	M                int        `json:"M"`
	N                int        `json:"N"`
	P                int        `json:"P"`
	PartitionSizes   []int      `json:"partition_sizes"`
	PartitionColumns [][2]int   `json:"partition_columns"`
	Projections      []paroProj `json:"projections"`
	Files            map[string]paroFile
}

type paroProj struct {
	Prefix  string `json:"prefix"`
	N       int    `json:"N"`
	Tensors map[string]struct {
		DType string `json:"dtype"`
		Shape []int  `json:"shape"`
	} `json:"tensors"`
}

type paroFile struct {
	File      string `json:"file"`
	DType     string `json:"dtype"`
	Shape     []int  `json:"shape"`
	Bytes     int    `json:"bytes"`
	SHA256    string `json:"sha256"`
	Tolerance struct {
		Exact bool    `json:"exact"`
		Rel   float64 `json:"rel"`
	} `json:"tolerance"`
}

// paroGoldens is the verified data set.
type paroGoldens struct {
	manifest paroManifest
	ckpt     []byte // the safetensors file
	cases    []*paroGoldenCase
}

type paroGoldenCase struct {
	paroCase
	x, xr, wdeq, y []float64
	q, z           [][]uint8 // per projection
}

// loadParoGoldens reads and verifies the data set in fsys against the
// pinned manifest.
func loadParoGoldens(fsys fs.FS) (*paroGoldens, error) {
	return loadParoGoldensPinned(fsys, paroManifestSHA256)
}

// loadParoGoldensPinned is loadParoGoldens with the manifest's sha256
// given (tests that alter the manifest pin their own).
func loadParoGoldensPinned(fsys fs.FS, manifestSHA string) (*paroGoldens, error) {
	// readPinned reads a file whose size (-1: any) and sha256 are given by
	// by (the manifest, or the gate's pin of the manifest itself).
	readPinned := func(name, by string, size int, sum string) ([]byte, error) {
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, &goldenDataError{File: name, Problem: "cannot be read: " + err.Error(), Err: err}
		}
		if size >= 0 && len(b) != size {
			return nil, &goldenDataError{File: name, Problem: fmt.Sprintf("%d bytes, %s says %d", len(b), by, size)}
		}
		if got := sha256.Sum256(b); hex.EncodeToString(got[:]) != sum {
			return nil, &goldenDataError{File: name, Problem: fmt.Sprintf("sha256 %x, %s says %s: the file is corrupt or was changed", got, by, sum)}
		}
		return b, nil
	}
	read := func(name string, size int, sum string) ([]byte, error) {
		return readPinned(name, "the manifest", size, sum)
	}
	const manifestName = "manifest.json"
	mb, err := readPinned(manifestName, "the gate's pin", -1, manifestSHA)
	if err != nil {
		return nil, err
	}
	g := &paroGoldens{}
	if err := json.Unmarshal(mb, &g.manifest); err != nil {
		return nil, &goldenDataError{File: manifestName, Problem: "not valid JSON: " + err.Error(), Err: err}
	}
	if err := g.manifest.validate(); err != nil {
		return nil, &goldenDataError{File: manifestName, Problem: err.Error()}
	}
	m := &g.manifest
	if g.ckpt, err = read(m.Checkpoint.File, m.Checkpoint.Bytes, m.Checkpoint.SHA256); err != nil {
		return nil, err
	}
	for _, c := range m.Cases {
		gc := &paroGoldenCase{paroCase: c}
		f64 := func(key string) ([]float64, error) {
			f := c.Files[key]
			b, err := read(f.File, f.Bytes, f.SHA256)
			if err != nil {
				return nil, err
			}
			return npyAs[float64](f, b)
		}
		u8 := func(key string) ([]uint8, error) {
			f := c.Files[key]
			b, err := read(f.File, f.Bytes, f.SHA256)
			if err != nil {
				return nil, err
			}
			return npyAs[uint8](f, b)
		}
		for _, t := range []struct {
			key string
			dst *[]float64
		}{{"x", &gc.x}, {"xr", &gc.xr}, {"wdeq", &gc.wdeq}, {"y", &gc.y}} {
			if *t.dst, err = f64(t.key); err != nil {
				return nil, err
			}
		}
		for p := range c.Projections {
			q, err := u8(fmt.Sprintf("q_p%d", p))
			if err != nil {
				return nil, err
			}
			z, err := u8(fmt.Sprintf("z_p%d", p))
			if err != nil {
				return nil, err
			}
			gc.q, gc.z = append(gc.q, q), append(gc.z, z)
		}
		g.cases = append(g.cases, gc)
	}
	return g, nil
}

// npyAs parses a verified file and checks it is the array the manifest
// describes.
func npyAs[T npyElem](f paroFile, b []byte) ([]T, error) {
	if f.DType != npyDescr[T]() {
		return nil, &goldenDataError{File: f.File, Problem: fmt.Sprintf("the manifest says dtype %s, want %s", f.DType, npyDescr[T]())}
	}
	shape, data, err := readNPY[T](f.File, b)
	if err != nil {
		return nil, &goldenDataError{File: f.File, Problem: strings.TrimPrefix(err.Error(), f.File+": "), Err: err}
	}
	if !slices.Equal(shape, f.Shape) {
		return nil, &goldenDataError{File: f.File, Problem: fmt.Sprintf("shape %v, the manifest says %v", shape, f.Shape)}
	}
	return data, nil
}

// validate checks that the manifest describes what the check compares: the
// format, the quantization the references implement, and per case the
// files and shapes that follow from K, M and the partition widths.
func (m *paroManifest) validate() error {
	if m.Format != "paroquant-goldens/1" {
		return fmt.Errorf("format %q, want paroquant-goldens/1", m.Format)
	}
	ck := m.Checkpoint
	if ck.File == "" || ck.GroupSize != refimpl.GroupSize || ck.Bits != 4 || ck.Krot <= 0 {
		return fmt.Errorf("checkpoint %q: group size %d, %d-bit, krot %d: want a file, group size %d, 4-bit, krot > 0",
			ck.File, ck.GroupSize, ck.Bits, ck.Krot, refimpl.GroupSize)
	}
	if m.Tolerances.Rel.Value != conformanceTol {
		return fmt.Errorf("relative tolerance %g, the check uses %g", m.Tolerances.Rel.Value, conformanceTol)
	}
	if len(m.Cases) == 0 {
		return errors.New("no cases")
	}
	for _, c := range m.Cases {
		if err := c.validate(); err != nil {
			return fmt.Errorf("case %s: %v", c.Name, err)
		}
	}
	return nil
}

func (c *paroCase) validate() error {
	if c.K <= 0 || c.K%refimpl.GroupSize != 0 || c.M <= 0 || c.P != len(c.Projections) || c.P == 0 ||
		len(c.PartitionSizes) != c.P || len(c.PartitionColumns) != c.P {
		return fmt.Errorf("case K=%d M=%d P=%d with %d projections, %d partition sizes, %d column ranges: inconsistent",
			c.K, c.M, c.P, len(c.Projections), len(c.PartitionSizes), len(c.PartitionColumns))
	}
	G := c.K / refimpl.GroupSize
	want := map[string]struct {
		dtype string
		shape []int
		rel   bool
	}{
		"x":    {"<f8", []int{c.M, c.K}, false},
		"xr":   {"<f8", []int{c.P, c.M, c.K}, true},
		"wdeq": {"<f8", []int{c.N, c.K}, false},
		"y":    {"<f8", []int{c.M, c.N}, true},
	}
	off := 0
	for p, pr := range c.Projections {
		if pr.N != c.PartitionSizes[p] || c.PartitionColumns[p] != [2]int{off, off + pr.N} || pr.N <= 0 || pr.N%8 != 0 {
			return fmt.Errorf("projection %d (%s): N=%d, partition size %d, columns %v: inconsistent (want columns [%d %d])",
				p, pr.Prefix, pr.N, c.PartitionSizes[p], c.PartitionColumns[p], off, off+pr.N)
		}
		suffixes := []string{checkpoint.SufChannelScales, checkpoint.SufPairs, checkpoint.SufQWeight, checkpoint.SufQZeros, checkpoint.SufScales, checkpoint.SufTheta}
		if len(pr.Tensors) != len(suffixes) {
			return fmt.Errorf("projection %d (%s) lists %d tensors, want the %d of a 4-bit ParoQuant linear", p, pr.Prefix, len(pr.Tensors), len(suffixes))
		}
		for _, suf := range suffixes {
			if _, ok := pr.Tensors[pr.Prefix+suf]; !ok {
				return fmt.Errorf("projection %d lists no tensor %s", p, pr.Prefix+suf)
			}
		}
		off += pr.N
		want[fmt.Sprintf("q_p%d", p)] = struct {
			dtype string
			shape []int
			rel   bool
		}{"|u1", []int{c.K, pr.N}, false}
		want[fmt.Sprintf("z_p%d", p)] = struct {
			dtype string
			shape []int
			rel   bool
		}{"|u1", []int{G, pr.N}, false}
	}
	if off != c.N {
		return fmt.Errorf("partitions sum to N=%d, the case says N=%d", off, c.N)
	}
	if len(c.Files) != len(want) {
		return fmt.Errorf("%d files, want %d (x, xr, wdeq, y and q_p*, z_p* per projection)", len(c.Files), len(want))
	}
	for key, w := range want {
		f, ok := c.Files[key]
		switch {
		case !ok:
			return fmt.Errorf("no file %q", key)
		case f.File == "" || f.DType != w.dtype || !slices.Equal(f.Shape, w.shape):
			return fmt.Errorf("file %q is %q %s %v, want %s %v", key, f.File, f.DType, f.Shape, w.dtype, w.shape)
		case w.rel && f.Tolerance.Rel != conformanceTol:
			return fmt.Errorf("file %q has tolerance rel %g, the check uses %g", key, f.Tolerance.Rel, conformanceTol)
		case !w.rel && !f.Tolerance.Exact:
			return fmt.Errorf("file %q is not marked exact, the check compares it bit for bit", key)
		}
	}
	return nil
}

// paroReading is the reading of a ParoQuant projection that the check puts
// to the test. The gate checks projectReading, the project's own; the tests
// replace parts of it with misreadings to show the check catches each.
type paroReading struct {
	Codes    func(l *checkpoint.Linear) []uint8          // q [K, N] from qweight
	Zeros    func(l *checkpoint.Linear) []uint8          // z [K/128, N] from qzeros, as stored
	Weight   func(l *checkpoint.Linear) *refimpl.QWeight // what W_deq and y are computed from
	Rotation func(l *checkpoint.Linear) *refimpl.Rotation
	// Forward returns the rotated activations [P, M, K] of x [M, K], one
	// block per partition's rotation.
	Forward func(x []float64, M int, rots []*refimpl.Rotation) []float64
}

var projectReading = paroReading{
	Codes:    func(l *checkpoint.Linear) []uint8 { return refimpl.UnpackAWQ(l.QWeight, l.K, l.N) },
	Zeros:    func(l *checkpoint.Linear) []uint8 { return refimpl.UnpackAWQ(l.QZeros, l.K/refimpl.GroupSize, l.N) },
	Weight:   (*checkpoint.Linear).QWeightRef,
	Rotation: (*checkpoint.Linear).Rotation,
	Forward:  refimpl.ForwardPartitions,
}

// conformanceMetric names a gate metric: per case, tensor and figure.
func conformanceMetric(c, tensor, figure string) string {
	return "conformance/" + c + "/" + tensor + "/" + figure
}

// check loads the checkpoint with the project's loader, runs rd on every
// case and reports each difference from ParoQuant's outputs to r.
func (g *paroGoldens) check(r Reporter, rd paroReading) {
	m := &g.manifest
	f, err := checkpoint.Parse(m.Checkpoint.File, g.ckpt)
	if err != nil {
		r.Failf("conformance: the checkpoint loader refuses %s (its sha256 matches the manifest): %v", m.Checkpoint.File, err)
		return
	}
	d, err := checkpoint.NewDir(m.Checkpoint.File, f)
	if err != nil {
		r.Failf("conformance: %v", err)
		return
	}
	defer d.Close()

	var want []string
	for _, c := range m.Cases {
		for _, p := range c.Projections {
			want = append(want, p.Prefix)
		}
	}
	sort.Strings(want)
	want = slices.Compact(want)
	if got := d.LinearPrefixes(); !slices.Equal(got, want) {
		r.Failf("conformance: %s: the loader lists the linears %s, the manifest %s", m.Checkpoint.File, strings.Join(got, ", "), strings.Join(want, ", "))
	}
	var sum conformanceSummary
	for _, c := range g.cases {
		g.checkCase(r, d, c, rd, &sum)
	}
	r.Metric("conformance/worst_rel", sum.worstRel)
	r.Metric("conformance/mismatches", float64(sum.mismatches))
}

// conformanceSummary is the headline over all cases: the largest relative
// figure of xr and y, and the count of exact values that differ.
type conformanceSummary struct {
	worstRel   float64
	mismatches int
}

func (g *paroGoldens) checkCase(r Reporter, d *checkpoint.Dir, c *paroGoldenCase, rd paroReading, sum *conformanceSummary) {
	ws := make([]*refimpl.QWeight, c.P)
	rots := make([]*refimpl.Rotation, c.P)
	for p, pr := range c.Projections {
		for _, name := range slices.Sorted(maps.Keys(pr.Tensors)) {
			w := pr.Tensors[name]
			info, ok := d.Info(name)
			if !ok {
				r.Failf("%s: the loader finds no tensor %s in %s", c.Name, name, d.Path)
				continue
			}
			if string(info.DType) != w.DType || !slices.Equal(info.Shape, w.Shape) {
				r.Failf("%s: tensor %s is %s %v as loaded, the manifest says %s %v", c.Name, name, info.DType, info.Shape, w.DType, w.Shape)
			}
		}
		l, err := d.LoadLinear(pr.Prefix)
		if err != nil {
			r.Failf("%s: projection %d: %v", c.Name, p, err)
			return
		}
		if l.K != c.K || l.N != pr.N || l.Krot != g.manifest.Checkpoint.Krot || l.Bits != 4 {
			r.Failf("%s: %s loads as K=%d N=%d krot=%d %d-bit, the manifest says K=%d N=%d krot=%d 4-bit",
				c.Name, pr.Prefix, l.K, l.N, l.Krot, l.Bits, c.K, pr.N, g.manifest.Checkpoint.Krot)
			return
		}
		sum.mismatches += exactCodes(r, c.Name, fmt.Sprintf("q_p%d", p), rd.Codes(l), c.q[p], pr.N, "k", "n")
		sum.mismatches += exactCodes(r, c.Name, fmt.Sprintf("z_p%d", p), rd.Zeros(l), c.z[p], pr.N, "g", "n")
		ws[p], rots[p] = rd.Weight(l), rd.Rotation(l)
	}

	// W_deq [N, K], partitions stacked along N.
	wdeq := make([]float64, 0, c.N*c.K)
	row := make([]float64, c.K)
	for p, w := range ws {
		for n := 0; n < c.Projections[p].N; n++ {
			w.DequantRow(n, row)
			wdeq = append(wdeq, row...)
		}
	}
	sum.mismatches += exactFloats(r, c, "wdeq", wdeq, c.wdeq)

	xr := rd.Forward(c.x, c.M, rots)
	sum.worstRel = max(sum.worstRel, relRows(r, c, "xr", xr, c.xr, c.K, func(i int) string { return fmt.Sprintf("p=%d, m=%d", i/c.M, i%c.M) }, "k"))

	merged, err := refimpl.MergeQWeights(ws...)
	if err != nil {
		r.Failf("%s: merging the %d partitions: %v", c.Name, c.P, err)
		return
	}
	y := refimpl.GEMMRef(xr, c.M, merged, c.PartitionSizes, refimpl.Subset{})
	sum.worstRel = max(sum.worstRel, relRows(r, c, "y", y, c.y, c.N, func(i int) string { return fmt.Sprintf("m=%d", i) }, "n"))
}

// exactCodes compares codes [rows, width] element by element; the
// mismatch count is the metric, and the result.
func exactCodes(r Reporter, caseName, tensor string, got, want []uint8, width int, rowAxis, colAxis string) int {
	if len(got) != len(want) {
		r.Failf("%s: %s: %d values, ParoQuant's has %d", caseName, tensor, len(got), len(want))
		return len(want)
	}
	bad, first := 0, -1
	for i := range got {
		if got[i] != want[i] {
			if bad == 0 {
				first = i
			}
			bad++
		}
	}
	r.Metric(conformanceMetric(caseName, tensor, "mismatches"), float64(bad))
	if bad > 0 {
		r.Failf("%s: %s: %d of %d values differ from ParoQuant's; first at [%s=%d, %s=%d]: got %d, want %d",
			caseName, tensor, bad, len(got), rowAxis, first/width, colAxis, first%width, got[first], want[first])
	}
	return bad
}

// exactFloats compares float64 values [N, K] bit for bit and returns the
// count that differ.
func exactFloats(r Reporter, c *paroGoldenCase, tensor string, got, want []float64) int {
	if len(got) != len(want) {
		r.Failf("%s: %s: %d values, the reference file has %d", c.Name, tensor, len(got), len(want))
		return len(want)
	}
	bad, first := 0, -1
	for i := range got {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			if bad == 0 {
				first = i
			}
			bad++
		}
	}
	r.Metric(conformanceMetric(c.Name, tensor, "mismatches"), float64(bad))
	if bad > 0 {
		r.Failf("%s: %s: %d of %d values differ from AutoAWQ's (compared bit for bit); first at [n=%d, k=%d]: got %v, want %v",
			c.Name, tensor, bad, len(got), first/c.K, first%c.K, got[first], want[first])
	}
	return bad
}

// relRows compares got with ref in the manifest's metric: rows of width w,
// every row's ‖d‖₂ ≤ tol·‖ref‖₂, and max|d| ≤ tol·max|ref| over the whole
// tensor. It records the worst row's ‖d‖₂/‖ref‖₂ and max|d|/max|ref|, and
// names the worst offending row and element. It returns the larger figure.
func relRows(r Reporter, c *paroGoldenCase, tensor string, got, ref []float64, w int, rowName func(int) string, colAxis string) float64 {
	if len(got) != len(ref) {
		r.Failf("%s: %s: %d values, ParoQuant's has %d", c.Name, tensor, len(got), len(ref))
		return math.Inf(1)
	}
	d := make([]float64, len(got))
	for i := range got {
		d[i] = got[i] - ref[i]
	}
	argmaxAbs := func(v []float64) int {
		at := 0
		for i, x := range v {
			if !(math.Abs(x) <= math.Abs(v[at])) { // a NaN wins
				at = i
			}
		}
		return at
	}
	ratio := func(num, den float64) float64 {
		if num == 0 {
			return 0
		}
		return num / den // +Inf for a zero reference, NaN stays NaN
	}

	worstRow, worst, badRows := -1, 0.0, 0
	for i := 0; i < len(d)/w; i++ {
		nd, nr := floats.Norm(d[i*w:(i+1)*w], 2), floats.Norm(ref[i*w:(i+1)*w], 2)
		rel := ratio(nd, nr)
		if !(nd <= conformanceTol*nr) {
			badRows++
		}
		if worstRow < 0 || !(rel <= worst) {
			worstRow, worst = i, rel
		}
	}
	r.Metric(conformanceMetric(c.Name, tensor, "worst_row_rel"), worst)
	if badRows > 0 {
		dr, rr, gr := d[worstRow*w:(worstRow+1)*w], ref[worstRow*w:(worstRow+1)*w], got[worstRow*w:(worstRow+1)*w]
		k := argmaxAbs(dr)
		r.Failf("%s: %s: %d of %d rows differ from ParoQuant's by more than %g relative; worst row [%s]: ‖d‖₂/‖ref‖₂ = %.3g; its largest difference at %s=%d: got %.17g, want %.17g",
			c.Name, tensor, badRows, len(d)/w, conformanceTol, rowName(worstRow), worst, colAxis, k, gr[k], rr[k])
	}

	i, j := argmaxAbs(d), argmaxAbs(ref)
	maxRel := ratio(math.Abs(d[i]), math.Abs(ref[j]))
	r.Metric(conformanceMetric(c.Name, tensor, "max_abs_rel"), maxRel)
	if !(math.Abs(d[i]) <= conformanceTol*math.Abs(ref[j])) {
		r.Failf("%s: %s: max|d| = %.3g at [%s, %s=%d] (got %.17g, want %.17g) exceeds %g·max|ref| = %g·%.6g",
			c.Name, tensor, math.Abs(d[i]), rowName(i/w), colAxis, i%w, got[i], ref[i], conformanceTol, conformanceTol, math.Abs(ref[j]))
	}
	return max(worst, maxRel)
}

// identityConformance runs the conformance check on the embedded data as
// part of the identity gate: data that cannot be used stops the gate with
// ERROR, a difference fails it.
func identityConformance(t *T, fsys fs.FS) {
	g, err := loadParoGoldens(fsys)
	if err != nil {
		t.Unavailablef("conformance check could not run: %v (the data is committed in gates/testdata/paroquant and embedded at build time: rebuild from a clean checkout)", err)
	}
	g.check(t, projectReading)
	pq := g.manifest.Provenance.ParoQuant
	t.Logf("conformance: %d cases against ParoQuant %s (%.7s) outputs of %s: q, z and W_deq exact, xr and y to %g",
		len(g.cases), pq.Version, pq.Commit, g.manifest.Provenance.Date, conformanceTol)
}
