package gates

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/parharness/parharness/checkpoint"
	"github.com/parharness/parharness/refimpl"
)

// conformanceMetrics is the number of metrics the check records: per case
// q and z mismatches per projection, wdeq mismatches, and two figures each
// for xr and y (c0 and c1 have one projection, c2 three); and the two
// headline figures over all cases.
const conformanceMetrics = (2 + 5) + (2 + 5) + (6 + 5) + 2

var conformanceCases = []string{"c0_down_K256_N128", "c1_oproj_K384_N256", "c2_qkv_K256_N256_P3"}

// runConformance runs the check with reading rd on the embedded data inside
// a gate, so the result has the statuses and metrics the gate reports.
func runConformance(t *testing.T, rd paroReading) Result {
	t.Helper()
	g, err := loadParoGoldens(paroGoldensFS())
	if err != nil {
		t.Fatal(err)
	}
	return RunGate(&Env{}, Gate{Name: "conformance-under-test", Run: func(gt *T) { g.check(gt, rd) }})
}

func TestConformanceProjectReadingPasses(t *testing.T) {
	res := runConformance(t, projectReading)
	if res.Status != Pass {
		t.Fatalf("status %s: %s\n%s", res.Status, res.Reason, strings.Join(res.Failures, "\n"))
	}
	if len(res.Metrics) != conformanceMetrics {
		t.Errorf("%d metrics, want %d: %v", len(res.Metrics), conformanceMetrics, res.Metrics)
	}
	for name, v := range res.Metrics {
		switch {
		case strings.HasSuffix(name, "/mismatches") && v != 0,
			strings.HasSuffix(name, "_rel") && !(v <= conformanceTol):
			t.Errorf("%s = %g", name, v)
		}
		if strings.HasSuffix(name, "_rel") {
			t.Logf("%s = %.3g", name, v)
		}
	}
}

// The identity gate runs the check on the embedded data and passes.
func TestIdentityGateRunsConformance(t *testing.T) {
	res := RunGate(&Env{}, Gate{Name: "identity-conformance", Run: func(gt *T) { identityConformance(gt, paroGoldensFS()) }})
	if res.Status != Pass || len(res.Metrics) != conformanceMetrics {
		t.Fatalf("status %s %s, %d metrics", res.Status, res.Reason, len(res.Metrics))
	}
	if notes := strings.Join(res.Notes, "\n"); !strings.Contains(notes, "ParoQuant v0.1.16 (f74a96c)") {
		t.Errorf("notes do not name the provenance: %s", notes)
	}
}

// Every file in testdata/paroquant on disk matches the manifest's size and
// sha256, the manifest matches the pin, and no file is unaccounted for.
func TestConformanceDataSHA256(t *testing.T) {
	dir := filepath.Join("testdata", "paroquant")
	mb, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(mb); hex.EncodeToString(sum[:]) != paroManifestSHA256 {
		t.Fatalf("manifest.json sha256 %x, pinned %s", sum, paroManifestSHA256)
	}
	var m paroManifest
	if err := json.Unmarshal(mb, &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]paroFile{m.Checkpoint.File: {File: m.Checkpoint.File, Bytes: m.Checkpoint.Bytes, SHA256: m.Checkpoint.SHA256}}
	for _, c := range m.Cases {
		for _, f := range c.Files {
			want[f.File] = f
		}
	}
	if len(want) != 23 { // the checkpoint and 22 arrays
		t.Errorf("the manifest lists %d files, want 23", len(want))
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, e := range ents {
		name := e.Name()
		if name == "manifest.json" || name == "README.md" {
			continue
		}
		f, ok := want[name]
		if !ok {
			t.Errorf("%s is not in the manifest", name)
			continue
		}
		seen++
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(b); len(b) != f.Bytes || hex.EncodeToString(sum[:]) != f.SHA256 {
			t.Errorf("%s: %d bytes sha256 %x, the manifest says %d bytes %s", name, len(b), sum, f.Bytes, f.SHA256)
		}
	}
	if seen != len(want) {
		t.Errorf("%d of the manifest's %d files are present", seen, len(want))
	}
}

// The manifest's cases are the data README's: the same names, prefixes
// and sizes.
func TestConformanceCasesAreTheREADMEs(t *testing.T) {
	g, err := loadParoGoldens(paroGoldensFS())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"c0_down_K256_N128 K=256 M=4 N=[128] model.layers.0.mlp.down_proj.",
		"c1_oproj_K384_N256 K=384 M=4 N=[256] model.layers.0.self_attn.o_proj.",
		"c2_qkv_K256_N256_P3 K=256 M=4 N=[128 64 64] model.layers.1.self_attn.q_proj. model.layers.1.self_attn.k_proj. model.layers.1.self_attn.v_proj.",
	}
	var got []string
	for _, c := range g.cases {
		s := fmt.Sprintf("%s K=%d M=%d N=%v", c.Name, c.K, c.M, c.PartitionSizes)
		for _, p := range c.Projections {
			s += " " + p.Prefix
		}
		got = append(got, s)
	}
	if !slices.Equal(got, want) {
		t.Errorf("cases\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// misreading names one plausible wrong reading of a ParoQuant checkpoint.
type misreading string

const (
	readCorrectly        misreading = "none"
	rotationSignFlipped  misreading = "rotation sign flipped"
	pairIJSwapped        misreading = "i and j of a pair swapped"
	layersReversed       misreading = "rotation layers in reverse order"
	thetaTransposed      misreading = "theta indexed as [K/2, krot]"
	pairsGlobal          misreading = "pair indices read as global, not within the group"
	channelScalesDivided misreading = "channel scales divided instead of multiplied"
	channelScalesAfter   misreading = "channel scales applied after the rotation"
	nibblesPlainOrder    misreading = "nibbles in plain order, not AWQ's [0,2,4,6,1,3,5,7]"
	zerosPlusOne         misreading = "zeros read plus one"
)

// rotationMisreadingSet is what a misread rotation changes: xr, and y
// through it.
const rotationMisreadingSet = "xr y"

// misreader is a second reader of the checkpoint, written in the test from
// the format's description (testdata/paroquant/README.md), with one
// misreading planted: each misreading is one wrong line. Read correctly it
// passes the check, so a failure is the misreading's alone.
func misreader(mis misreading) paroReading {
	unpack := func(words []int32, rows, n int) []uint8 {
		order := refimpl.AWQOrder
		if mis == nibblesPlainOrder {
			order = [8]int{0, 1, 2, 3, 4, 5, 6, 7}
		}
		codes := make([]uint8, rows*n)
		for r := 0; r < rows; r++ {
			for c := 0; c < n/8; c++ {
				w := uint32(words[r*(n/8)+c])
				for i := 0; i < 8; i++ {
					codes[r*n+8*c+order[i]] = uint8(w >> (4 * i) & 0xF)
				}
			}
		}
		return codes
	}
	codes := func(l *checkpoint.Linear) []uint8 { return unpack(l.QWeight, l.K, l.N) }
	zeros := func(l *checkpoint.Linear) []int {
		raw := unpack(l.QZeros, l.K/refimpl.GroupSize, l.N)
		z := make([]int, len(raw))
		for i, v := range raw {
			z[i] = int(v)
			if mis == zerosPlusOne {
				z[i]++
			}
		}
		return z
	}
	return paroReading{
		Codes: codes,
		Zeros: func(l *checkpoint.Linear) []uint8 {
			z := zeros(l)
			out := make([]uint8, len(z))
			for i, v := range z {
				out[i] = uint8(v)
			}
			return out
		},
		// The weight as this reader decodes it, held in refimpl's 5-bit
		// layout, which has room for a zero of 16 (15 read plus one), so
		// that W_deq and y go through the project's dequant and GEMMRef.
		Weight: func(l *checkpoint.Linear) *refimpl.QWeight {
			G := l.K / refimpl.GroupSize
			w := l.QWeightRef()
			z := zeros(l)
			z5 := make([]uint8, len(z))
			for i, v := range z {
				z5[i] = uint8(v)
			}
			w.Bits = 5
			w.QWeight, w.QHigh = refimpl.PackInt5(codes(l), l.K, l.N)
			w.QZeros, w.ZHigh = refimpl.PackInt5(z5, G, l.N)
			return w
		},
		Rotation: (*checkpoint.Linear).Rotation, // fp16 values widened: nothing to misread
		Forward: func(x []float64, M int, rots []*refimpl.Rotation) []float64 {
			K := rots[0].K
			out := make([]float64, len(rots)*M*K)
			for p, r := range rots {
				scale := func(v []float64) {
					for k := range v {
						if mis == channelScalesDivided {
							v[k] /= r.ChannelScales[k]
						} else {
							v[k] *= r.ChannelScales[k]
						}
					}
				}
				for m := 0; m < M; m++ {
					v := out[(p*M+m)*K : (p*M+m+1)*K]
					copy(v, x[m*K:(m+1)*K])
					if mis != channelScalesAfter {
						scale(v)
					}
					for step := 0; step < r.Krot; step++ {
						layer := step
						if mis == layersReversed {
							layer = r.Krot - 1 - step
						}
						for g := 0; g < K/refimpl.GroupSize; g++ {
							base := g * refimpl.GroupSize
							if mis == pairsGlobal {
								base = 0
							}
							for t := 0; t < refimpl.PairsPerGroup; t++ {
								o := layer*K + g*refimpl.GroupSize + 2*t
								i, j := base+int(r.Pairs[o]), base+int(r.Pairs[o+1])
								if mis == pairIJSwapped {
									i, j = j, i
								}
								a := layer*K/2 + g*refimpl.PairsPerGroup + t
								if mis == thetaTransposed {
									a = (g*refimpl.PairsPerGroup+t)*r.Krot + layer
								}
								s, c := math.Sincos(r.Theta[a])
								if mis == rotationSignFlipped {
									s = -s
								}
								xi, xj := v[i], v[j]
								v[i] = xi*c + xj*s
								v[j] = -xi*s + xj*c
							}
						}
					}
					if mis == channelScalesAfter {
						scale(v)
					}
				}
			}
			return out
		},
	}
}

// Each misreading fails the check, on exactly the tensors it touches, in
// every case, by far more than the tolerance; read correctly, the test's
// reader passes.
// (Swapping i and j is the flipped sign in disguise: rotating (j, i) by θ
// is rotating (i, j) by −θ. Both are listed: a loader can make either.)
func TestConformanceCatchesMisreadings(t *testing.T) {
	for _, tc := range []struct {
		mis   misreading
		fails string // the tensors that must fail, space separated
	}{
		{readCorrectly, ""},
		{rotationSignFlipped, rotationMisreadingSet},
		{pairIJSwapped, rotationMisreadingSet},
		{layersReversed, rotationMisreadingSet},
		{thetaTransposed, rotationMisreadingSet},
		{pairsGlobal, rotationMisreadingSet},
		{channelScalesDivided, rotationMisreadingSet},
		{channelScalesAfter, rotationMisreadingSet},
		{nibblesPlainOrder, "q z wdeq y"},
		{zerosPlusOne, "z wdeq y"},
	} {
		t.Run(string(tc.mis), func(t *testing.T) {
			res := runConformance(t, misreader(tc.mis))
			failing := strings.Fields(tc.fails)
			if len(failing) == 0 {
				if res.Status != Pass {
					t.Fatalf("the correct reading: status %s: %s", res.Status, res.Reason)
				}
				return
			}
			if res.Status != Fail {
				t.Fatalf("status %s, want FAIL: %s", res.Status, res.Reason)
			}
			minRel := math.Inf(1)
			for name, v := range res.Metrics {
				parts := strings.Split(name, "/") // conformance/CASE/TENSOR/FIGURE
				if len(parts) == 2 {              // the headline over all cases
					exactBad := slices.ContainsFunc(failing, func(s string) bool { return s == "q" || s == "z" || s == "wdeq" })
					if name == "conformance/mismatches" && (v != 0) != exactBad || name == "conformance/worst_rel" && !(v > 1e-3) {
						t.Errorf("headline %s = %g", name, v)
					}
					continue
				}
				tensor := parts[2] // q_p0 and z_p1 count as q and z
				if strings.HasPrefix(tensor, "q_p") || strings.HasPrefix(tensor, "z_p") {
					tensor = tensor[:1]
				}
				bad := slices.Contains(failing, tensor)
				figure := parts[3]
				switch {
				case figure == "mismatches" && bad && v == 0:
					t.Errorf("%s = 0: the misreading should change it", name)
				case figure == "mismatches" && !bad && v != 0:
					t.Errorf("%s = %g: the misreading does not touch it", name, v)
				case figure != "mismatches" && bad && !(v > 1e-3):
					t.Errorf("%s = %g: want > 1e-3", name, v)
				case figure != "mismatches" && !bad && !(v <= conformanceTol):
					t.Errorf("%s = %g: the misreading does not touch it", name, v)
				}
				if figure != "mismatches" && bad {
					minRel = min(minRel, v)
				}
			}
			if len(res.Metrics) != conformanceMetrics {
				t.Errorf("%d metrics, want %d", len(res.Metrics), conformanceMetrics)
			}
			msgs := strings.Join(res.Failures, "\n")
			for _, c := range conformanceCases {
				if !strings.Contains(msgs, c+": ") {
					t.Errorf("no failure names case %s:\n%s", c, msgs)
				}
			}
			for _, tensor := range failing {
				if !strings.Contains(msgs, ": "+tensor) {
					t.Errorf("no failure names tensor %s:\n%s", tensor, msgs)
				}
			}
			if !strings.Contains(res.Reason, "got ") || !strings.Contains(res.Reason, "want ") {
				t.Errorf("reason gives no values: %s", res.Reason)
			}
			t.Logf("smallest relative figure of the failing tensors %.3g; first failure: %s", minRel, res.Reason)
		})
	}
}

// The comparisons are as tight as stated: one ulp in W_deq fails, and a
// row of xr fails at 2e-12 of its norm and passes at 1e-13; the messages
// name the case, tensor, element and both values.
func TestConformanceComparisonBoundaries(t *testing.T) {
	load := func(t *testing.T) *paroGoldens {
		g, err := loadParoGoldens(paroGoldensFS())
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	run := func(g *paroGoldens) Result {
		return RunGate(&Env{}, Gate{Name: "boundary", Run: func(gt *T) { g.check(gt, projectReading) }})
	}
	t.Run("wdeq one ulp", func(t *testing.T) {
		g := load(t)
		c := g.cases[1]
		i := 3*c.K + 5
		for c.wdeq[i] == 0 {
			i++
		}
		was := c.wdeq[i]
		c.wdeq[i] = math.Nextafter(was, math.Inf(1))
		res := run(g)
		want := fmt.Sprintf("c1_oproj_K384_N256: wdeq: 1 of %d values differ from AutoAWQ's (compared bit for bit); first at [n=%d, k=%d]: got %v, want %v",
			c.N*c.K, i/c.K, i%c.K, was, c.wdeq[i])
		if res.Status != Fail || res.Reason != want {
			t.Errorf("status %s\nreason %s\nwant   %s", res.Status, res.Reason, want)
		}
	})
	t.Run("z one code", func(t *testing.T) {
		g := load(t)
		c := g.cases[2]
		c.z[1][70] ^= 1 // projection 1, group 1, column 6
		res := run(g)
		if res.Status != Fail || !strings.Contains(res.Reason, "c2_qkv_K256_N256_P3: z_p1: 1 of 128 values differ from ParoQuant's; first at [g=1, n=6]: got ") {
			t.Errorf("status %s: %s", res.Status, res.Reason)
		}
	})
	for _, tc := range []struct {
		rel  float64
		fail bool
	}{{2e-12, true}, {1e-13, false}} {
		t.Run(fmt.Sprintf("xr row off by %g", tc.rel), func(t *testing.T) {
			g := load(t)
			c := g.cases[2]
			row := 1*c.M + 2 // partition 1, activation row 2
			ref := c.xr[row*c.K : (row+1)*c.K]
			ref[17] += tc.rel * normOf(ref)
			res := run(g)
			if !tc.fail {
				if res.Status != Pass {
					t.Errorf("status %s: %s", res.Status, res.Reason)
				}
				return
			}
			if res.Status != Fail || !strings.Contains(res.Reason, "c2_qkv_K256_N256_P3: xr: 1 of 12 rows differ from ParoQuant's by more than 1e-12 relative; worst row [p=1, m=2]") ||
				!strings.Contains(res.Reason, "its largest difference at k=17: got ") {
				t.Errorf("status %s: %s", res.Status, res.Reason)
			}
			if got := res.Metrics["conformance/c2_qkv_K256_N256_P3/xr/worst_row_rel"]; math.Abs(got-tc.rel) > 0.01*tc.rel {
				t.Errorf("worst_row_rel %g, want about %g", got, tc.rel)
			}
		})
	}
	t.Run("y max over the file", func(t *testing.T) {
		// A small element of y, off by 2e-12·max|y|: its row (whose norm
		// is larger) may pass, the file's max|d| must not.
		g := load(t)
		c := g.cases[0]
		big := 0.0
		for _, v := range c.y {
			big = max(big, math.Abs(v))
		}
		c.y[5] += 2e-12 * big
		res := run(g)
		if res.Status != Fail || !strings.Contains(strings.Join(res.Failures, "\n"), "c0_down_K256_N128: y: max|d| = ") ||
			!strings.Contains(strings.Join(res.Failures, "\n"), "at [m=0, n=5]") {
			t.Errorf("status %s: %v", res.Status, res.Failures)
		}
	})
}

func normOf(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}

// goldenFS is a writable copy of the embedded data, for planting faults.
func goldenFS(t *testing.T) fstest.MapFS {
	m := fstest.MapFS{}
	err := fs.WalkDir(paroGoldensFS(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(paroGoldensFS(), path)
		m[path] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// editManifest rewrites the manifest with edit and returns the new pin.
func editManifest(t *testing.T, m fstest.MapFS, edit func(map[string]any)) string {
	var doc map[string]any
	if err := json.Unmarshal(m["manifest.json"].Data, &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc)
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	m["manifest.json"] = &fstest.MapFile{Data: b}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func manifestFile(doc map[string]any, caseIdx int, key string) map[string]any {
	return doc["cases"].([]any)[caseIdx].(map[string]any)["files"].(map[string]any)[key].(map[string]any)
}

// Data that is missing, corrupt or not what the manifest says is a
// goldenDataError naming the file, and the gate reports ERROR, not FAIL.
func TestConformanceDataErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, m fstest.MapFS) (pin string)
		file  string
		want  string
	}{
		{"missing array", func(t *testing.T, m fstest.MapFS) string {
			delete(m, "c1_oproj_K384_N256.wdeq.npy")
			return paroManifestSHA256
		}, "c1_oproj_K384_N256.wdeq.npy", "cannot be read"},
		{"missing checkpoint", func(t *testing.T, m fstest.MapFS) string {
			delete(m, "paro_kit.safetensors")
			return paroManifestSHA256
		}, "paro_kit.safetensors", "cannot be read"},
		{"missing manifest", func(t *testing.T, m fstest.MapFS) string {
			delete(m, "manifest.json")
			return paroManifestSHA256
		}, "manifest.json", "cannot be read"},
		{"one byte flipped", func(t *testing.T, m fstest.MapFS) string {
			f := m["c2_qkv_K256_N256_P3.y.npy"]
			f.Data = slices.Clone(f.Data)
			f.Data[len(f.Data)-3] ^= 0x10
			return paroManifestSHA256
		}, "c2_qkv_K256_N256_P3.y.npy", "the file is corrupt or was changed"},
		{"truncated", func(t *testing.T, m fstest.MapFS) string {
			f := m["c0_down_K256_N128.q_p0.npy"]
			f.Data = f.Data[:len(f.Data)-1]
			return paroManifestSHA256
		}, "c0_down_K256_N128.q_p0.npy", "32895 bytes, the manifest says 32896"},
		{"manifest edited", func(t *testing.T, m fstest.MapFS) string {
			editManifest(t, m, func(doc map[string]any) {
				doc["tolerances"].(map[string]any)["rel_1e-12"].(map[string]any)["value"] = 1e-6
			})
			return paroManifestSHA256
		}, "manifest.json", "the gate's pin says 0e066a4c"},
		{"manifest with a looser tolerance, re-pinned", func(t *testing.T, m fstest.MapFS) string {
			return editManifest(t, m, func(doc map[string]any) {
				manifestFile(doc, 0, "y")["tolerance"].(map[string]any)["rel"] = 1e-6
			})
		}, "manifest.json", `case c0_down_K256_N128: file "y" has tolerance rel 1e-06, the check uses 1e-12`},
		{"manifest without a projection's theta, re-pinned", func(t *testing.T, m fstest.MapFS) string {
			return editManifest(t, m, func(doc map[string]any) {
				pr := doc["cases"].([]any)[2].(map[string]any)["projections"].([]any)[1].(map[string]any)
				delete(pr["tensors"].(map[string]any), "model.layers.1.self_attn.k_proj.theta")
			})
		}, "manifest.json", "case c2_qkv_K256_N256_P3: projection 1 (model.layers.1.self_attn.k_proj.) lists 5 tensors, want the 6"},
		{"an array of the wrong shape, hash consistent", func(t *testing.T, m fstest.MapFS) string {
			x := m["c0_down_K256_N128.x.npy"].Data
			m["c0_down_K256_N128.xr.npy"] = &fstest.MapFile{Data: x}
			return editManifest(t, m, func(doc map[string]any) {
				f := manifestFile(doc, 0, "xr")
				sum := sha256.Sum256(x)
				f["sha256"], f["bytes"] = hex.EncodeToString(sum[:]), len(x)
			})
		}, "c0_down_K256_N128.xr.npy", "shape [4 256], the manifest says [1 4 256]"},
		{"codes where floats belong, hash consistent", func(t *testing.T, m fstest.MapFS) string {
			q := m["c0_down_K256_N128.z_p0.npy"].Data
			m["c0_down_K256_N128.y.npy"] = &fstest.MapFile{Data: q}
			return editManifest(t, m, func(doc map[string]any) {
				f := manifestFile(doc, 0, "y")
				sum := sha256.Sum256(q)
				f["sha256"], f["bytes"] = hex.EncodeToString(sum[:]), len(q)
			})
		}, "c0_down_K256_N128.y.npy", "descr '|u1', want <f8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := goldenFS(t)
			pin := tc.plant(t, m)
			_, err := loadParoGoldensPinned(m, pin)
			var de *goldenDataError
			if !errors.As(err, &de) || de.File != tc.file || !strings.Contains(de.Problem, tc.want) {
				t.Fatalf("error %v, want a goldenDataError for %s saying %q", err, tc.file, tc.want)
			}
			if strings.HasPrefix(tc.name, "missing") && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a missing file: %v is not fs.ErrNotExist", err)
			}
			if pin != paroManifestSHA256 {
				return // the gate always checks against the real pin
			}
			res := RunGate(&Env{}, Gate{Name: "identity-conformance", Run: func(gt *T) { identityConformance(gt, m) }})
			if res.Status != Error || !strings.Contains(res.Reason, "conformance check could not run: ParoQuant conformance data: "+tc.file+": ") {
				t.Errorf("gate: status %s, reason %s", res.Status, res.Reason)
			}
		})
	}
}

// npyFile builds a .npy file as the format describes it: magic, version,
// little-endian header length, the header dict padded with spaces and
// ending in a newline, then the data.
func npyFile(major, minor byte, dict string, data []byte) []byte {
	var b bytes.Buffer
	b.WriteString("\x93NUMPY")
	b.WriteByte(major)
	b.WriteByte(minor)
	pad := (64 - (10+len(dict)+1)%64) % 64
	h := dict + strings.Repeat(" ", pad) + "\n"
	b.WriteByte(byte(len(h)))
	b.WriteByte(byte(len(h) >> 8))
	b.WriteString(h)
	b.Write(data)
	return b.Bytes()
}

func f64Bytes(v ...float64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		u := math.Float64bits(x)
		for j := 0; j < 8; j++ {
			b[8*i+j] = byte(u >> (8 * j))
		}
	}
	return b
}

func TestReadNPY(t *testing.T) {
	vals := []float64{1, -2.5, math.Pi, 0, math.SmallestNonzeroFloat64, math.Copysign(0, -1)}
	good := npyFile(1, 0, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", f64Bytes(vals...))
	shape, data, err := readNPY[float64]("good.npy", good)
	if err != nil || !slices.Equal(shape, []int{2, 3}) || len(data) != 6 {
		t.Fatalf("good: %v %v %v", shape, data, err)
	}
	for i := range vals {
		if math.Float64bits(data[i]) != math.Float64bits(vals[i]) {
			t.Errorf("element %d: %v, want %v", i, data[i], vals[i])
		}
	}
	u8 := npyFile(1, 0, "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", []byte{0, 7, 15})
	if shape, data, err := readNPY[uint8]("u8.npy", u8); err != nil || !slices.Equal(shape, []int{3}) || !slices.Equal(data, []uint8{0, 7, 15}) {
		t.Errorf("u8: %v %v %v", shape, data, err)
	}
	// A file numpy wrote: the header of a conformance array.
	z, _ := fs.ReadFile(paroGoldensFS(), "c0_down_K256_N128.z_p0.npy")
	if shape, data, err := readNPY[uint8]("z.npy", z); err != nil || !slices.Equal(shape, []int{2, 128}) || len(data) != 256 || slices.Max(data) > 15 {
		t.Errorf("numpy's file: %v %v", shape, err)
	}

	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "not an npy file"},
		{"bad magic", append([]byte("\x93NUMPX"), good[6:]...), "not an npy file"},
		{"version 2.0", npyFile(2, 0, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", f64Bytes(vals...)), "version 2.0, want 1.0"},
		{"wrong descr", npyFile(1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", f64Bytes(vals...)), "descr '<f4', want <f8"},
		{"big-endian", npyFile(1, 0, "{'descr': '>f8', 'fortran_order': False, 'shape': (2, 3), }", f64Bytes(vals...)), "descr '>f8', want <f8"},
		{"fortran order", npyFile(1, 0, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", f64Bytes(vals...)), "fortran_order is True"},
		{"scalar", npyFile(1, 0, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", f64Bytes(1)), "a scalar"},
		{"short data", good[:len(good)-8], "shape [2 3] needs more than the 40 data bytes present"},
		{"no data", good[:len(good)-48], "shape [2 3] needs more than the 0 data bytes present"},
		{"trailing data", append(slices.Clone(good), 0), "49 data bytes"},
		{"negative dimension", npyFile(1, 0, "{'descr': '<f8', 'fortran_order': False, 'shape': (-2, 3), }", f64Bytes(vals...)), "negative dimension"},
		{"huge shape", npyFile(1, 0, "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", f64Bytes(vals...)), "needs more than the 48 data bytes"},
		{"header without its newline", append([]byte("\x93NUMPY\x01\x00\x04\x00"), "{}  "...), "want a dict ending in a newline"},
		{"header past the end", append([]byte("\x93NUMPY\x01\x00\x40\x00"), "{}\n"...), "header of 64 bytes in a file of 13"},
		{"dict without a shape", npyFile(1, 0, "{'descr': '<f8', 'fortran_order': False, }", f64Bytes(vals...)), "not a readable npy file"},
		{"dict keys out of order", npyFile(1, 0, "{'shape': (2, 3), 'fortran_order': False, 'descr': '<f8', }", f64Bytes(vals...)), "bad.npy: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := readNPY[float64]("bad.npy", tc.b)
			if err == nil || !strings.HasPrefix(err.Error(), "bad.npy: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one naming bad.npy and saying %q", err, tc.want)
			}
		})
	}
}

// FuzzReadNPY: no input makes readNPY panic; every error names the file;
// an accepted file has exactly the elements its shape says.
//
//	go test ./gates -run X -fuzz FuzzReadNPY -fuzztime 60s -fuzzminimizetime 2s
func FuzzReadNPY(f *testing.F) {
	f.Add(npyFile(1, 0, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", f64Bytes(1, 2, 3, 4, 5, 6)))
	f.Add(npyFile(1, 0, "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", []byte{1, 2, 3}))
	f.Add(npyFile(1, 0, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 4), }", nil))
	for _, name := range []string{"c0_down_K256_N128.x.npy", "c0_down_K256_N128.z_p0.npy"} {
		b, err := fs.ReadFile(paroGoldensFS(), name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		check := func(shape []int, n int, err error) {
			if err != nil {
				if !strings.HasPrefix(err.Error(), "fuzz.npy: ") {
					t.Errorf("error does not name the file: %v", err)
				}
				return
			}
			want := 1
			for _, d := range shape {
				want *= d
			}
			if len(shape) == 0 || n != want {
				t.Errorf("accepted shape %v with %d elements", shape, n)
			}
		}
		shape, d8, err := readNPY[float64]("fuzz.npy", b)
		check(shape, len(d8), err)
		shape, d1, err := readNPY[uint8]("fuzz.npy", b)
		check(shape, len(d1), err)
	})
}
