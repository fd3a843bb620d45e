package gates

import (
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/parharness/parharness/checkpoint"
	"github.com/parharness/parharness/refimpl"
	"github.com/parharness/parharness/shapes"
)

// The "identity" gate checks the ParoQuant inference identity
// (docs/formats.md) in float64 on every W4A8 linear of the deployed shapes:
//
//	rot(x ⊙ channel_scales) · dequant(Q)ᵀ  ==  x · W_effᵀ
//
// with W_eff[n] = channel_scales ⊙ Unrotate(dequant(Q)[n]). The left side
// runs the way the kernels do (activations rotated forward per partition,
// then refimpl.GEMMRef on the merged AWQ weight); the right side moves the
// rotation onto each weight row with the inverse layers. Both sides agree
// to float64 roundoff only if the rotation's sign and layer order, the
// inverse, the channel-scale placement, the AWQ nibble order, the raw
// zeros, the partition split and the checkpoint's tensor layout are all
// consistent.
//
// Both sides are the project's code, so a convention they share cancels
// out: the gate first runs the conformance check (conformance.go), which
// compares the same loader, unpack, dequant, rotation and GEMM reference
// with outputs of ParoQuant's own code on a small embedded checkpoint.
//
// Note: the full products would cost N·K rotations of weight rows; the gate
// takes a few activation rows and a seeded subset of output columns per
// partition (always including each partition's first and last column), and
// logs what it covered. The synthetic weights are full-size, so the packed
// layout is exercised at the deployed K and N.

// identityTol is the pass threshold: both sides are float64 sums of K
// products of O(1) terms after 8 orthogonal layers; roundoff is ~1e-15
// (worst measured 7.3e-15, TP=1 mlp_down, H200 quick run 2026-11-29,
// results/h200-2026-11-29/quick.json; the gate is host-only arithmetic).
// 1e-12 leaves over 100× of that, and a wrong layer order or sign gives
// O(1e-3) and more (identity_test.go).
const identityTol = 1e-12

func init() {
	Register(Gate{
		Name: "identity",
		Proves: "y = rot(x ⊙ channel_scales)·dequant(Q)ᵀ equals x·W_effᵀ to rel ≤ 1e-12 in fp64 on every W4A8 linear " +
			"of the TP=1 and TP=2 shapes (synthetic weights; with --checkpoint, the checkpoint's linears at the TP=1 shapes, every partition of a merged linear required): " +
			"rotation, inverse, channel scales, AWQ unpack, zeros and partitions agree; " +
			"and the loader, unpack, dequant, rotation and GEMM reference reproduce ParoQuant's own outputs on the embedded conformance checkpoint " +
			"(q, z, W_deq exact; xr and y to 1e-12 per row)",
		Suites:   Quick | Full,
		Device:   false,
		Headline: []string{"conformance/worst_rel", "conformance/mismatches"},
		Run:      runIdentity,
	})
}

// identityPlan says how much of each linear the gate computes.
type identityPlan struct {
	M    int // activation rows
	Cols int // output columns per partition
}

func runIdentity(t *T) {
	plan := identityPlan{M: 4, Cols: 48}
	if t.Full() {
		plan = identityPlan{M: 8, Cols: 256}
	}
	start := time.Now()
	identityConformance(t, paroGoldensFS())
	if dir := t.Env().Checkpoint; dir != "" {
		identityCheckpoint(t, dir, plan)
	} else {
		identitySynthetic(t, plan)
	}
	t.Logf("identity: %d rows, up to %d seeded output columns per partition (first and last always), %.2fs",
		plan.M, plan.Cols, time.Since(start).Seconds())
}

func identitySynthetic(t *T, plan identityPlan) {
	t.Logf("weights: synthetic full-size ParoQuant linears (checkpoint.Synthetic), one seed per partition from the gate seed %#x", t.Seed())
	for _, name := range shapes.Builtins() {
		set, err := shapes.Builtin(name)
		t.Check(err, "load shapes "+name)
		for _, l := range set.Linears {
			if !l.IsW4A8() {
				t.Logf("%s/%s: %s linear, not a W4A8 GEMM: no rotation to check", set.Name, l.Name, l.Kind)
				continue
			}
			parts := make([]*checkpoint.Linear, l.P())
			for p, part := range l.Parts {
				parts[p] = checkpoint.Synthetic(l.K, part.N(), SeedFor(t.Seed(), fmt.Sprintf("%s/%s/%d", set.Name, l.Name, p)))
			}
			identityCase(t, set.Name+"/"+l.Name, parts, plan)
		}
	}
}

// identityCase checks one (merged) linear and records its rel.
func identityCase(t *T, label string, parts []*checkpoint.Linear, plan identityPlan) {
	seed := SeedFor(t.Seed(), label)
	c := NewCase("shape", label)
	t.CaseSeed(c, seed)
	rel, err := identityRel(parts, plan, seed)
	if err != nil {
		t.Failf("%s: %v", label, err)
		return
	}
	t.Metric(c.Key("rel"), rel)
	if !(rel <= identityTol) { // NaN fails too
		t.Failf("%s: rel %.3g > %g (seed %#x, M=%d, K=%d, N=%s)", label, rel, identityTol, seed, plan.M, parts[0].K, widthsString(parts))
	}
}

func widthsString(parts []*checkpoint.Linear) string {
	s := make([]string, len(parts))
	for i, p := range parts {
		s[i] = strconv.Itoa(p.N)
	}
	return strings.Join(s, "+")
}

// identityRel computes both sides of the identity on a seeded subset and
// returns their relative difference.
func identityRel(parts []*checkpoint.Linear, plan identityPlan, seed uint64) (float64, error) {
	K := parts[0].K
	ws := make([]*refimpl.QWeight, len(parts))
	rots := make([]*refimpl.Rotation, len(parts))
	widths := make([]int, len(parts))
	var cols []int
	off := 0
	for p, l := range parts {
		if err := l.Validate(); err != nil {
			return 0, err
		}
		if l.K != K {
			return 0, fmt.Errorf("partition %d has K=%d, partition 0 K=%d", p, l.K, K)
		}
		ws[p], rots[p], widths[p] = l.QWeightRef(), l.Rotation(), l.N
		for _, c := range refimpl.RandomSubset(1, l.N, 0, plan.Cols, seed+uint64(p)).ColsOf(l.N) {
			cols = append(cols, off+c)
		}
		off += l.N
	}
	w, err := refimpl.MergeQWeights(ws...)
	if err != nil {
		return 0, err
	}
	x := identityActivations(plan.M, K, seed)

	// Left: rotate the activations of each partition, then the quantized GEMM.
	sel := refimpl.Subset{Cols: cols, Seed: seed} // base seed: partition p's columns were drawn with seed+p
	left := refimpl.GEMMRef(refimpl.ForwardPartitions(x, plan.M, rots), plan.M, w, widths, sel)

	// Right: unrotate each selected weight row, scale it, and multiply x.
	right := make([]float64, plan.M*len(cols))
	row := make([]float64, K)
	for j, n := range cols {
		p, local := 0, n
		for local >= widths[p] {
			local -= widths[p]
			p++
		}
		ws[p].DequantRow(local, row)
		rots[p].EffectiveRow(row)
		for m := 0; m < plan.M; m++ {
			s := 0.0
			for k, v := range x[m*K : (m+1)*K] {
				s += v * row[k]
			}
			right[m*len(cols)+j] = s
		}
	}
	return refimpl.RelErr(left, right), nil
}

// identityActivations draws M rows of K features, never zeros only: a
// normal row, an outlier-heavy row, a small-magnitude row and a row with
// exact zeros, repeating.
func identityActivations(M, K int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 0x1de7))
	x := make([]float64, M*K)
	for m := 0; m < M; m++ {
		for k := 0; k < K; k++ {
			v := rng.NormFloat64()
			switch m % 4 {
			case 1:
				if rng.IntN(50) == 0 {
					v *= 100
				}
			case 2:
				v *= 1e-3
			case 3:
				if k%2 == 0 {
					v = 0
				}
			}
			x[m*K+k] = v
		}
	}
	return x
}

var layerRE = regexp.MustCompile(`\.layers\.([0-9]+)\.`)

// identityCheckpoint runs the identity on the real checkpoint's linears:
// for each W4A8 linear of the TP=1 shapes (a checkpoint is unsharded) and
// each partition, the lowest-numbered layer whose tensor prefix ends in the
// partition's proj suffix. A linear whose K or N differs from the shapes
// file fails the gate: the shapes file is wrong for this checkpoint.
func identityCheckpoint(t *T, dir string, plan identityPlan) {
	d, err := checkpoint.OpenDir(dir)
	t.Check(err, "open --checkpoint")
	defer d.Close()
	prefixes := d.LinearPrefixes()
	set, err := shapes.Builtin("qwen38-27b-tp1")
	t.Check(err, "load shapes")
	t.Logf("weights: checkpoint %s (%d quantized linears); shapes %s (TP=2 shapes are per-rank slices of the same tensors)", dir, len(prefixes), set.Name)
	var wanted []string
	checked := 0
	for _, l := range set.W4A8() {
		var parts []*checkpoint.Linear
		var found, missing []string
		for p, part := range l.Parts {
			wanted = append(wanted, part.Proj)
			prefix := lowestLayer(prefixes, part.Proj)
			if prefix == "" {
				missing = append(missing, part.Proj)
				continue
			}
			lin, err := d.LoadLinear(prefix)
			if err != nil {
				t.Failf("%s/%s partition %d: %v", set.Name, l.Name, p, err)
				continue
			}
			if lin.K != l.K || lin.N != part.N() {
				t.Failf("%s/%s partition %d: checkpoint %s is K=%d N=%d, the shapes file says K=%d N=%d",
					set.Name, l.Name, p, prefix, lin.K, lin.N, l.K, part.N())
				continue
			}
			parts = append(parts, lin)
			found = append(found, prefix)
		}
		if len(parts) == 0 {
			t.Logf("%s: no tensors for %s in the checkpoint", l.Name, strings.Join(missing, ", "))
			continue
		}
		if len(parts) != len(l.Parts) {
			// A merged linear checked on some of its partitions would prove
			// nothing about the merge: refuse it.
			t.Failf("%s: the checkpoint has %s but not %s (or they failed to load): a partial merge is not checked",
				l.Name, strings.Join(found, " + "), strings.Join(missing, ", "))
			continue
		}
		t.Logf("%s: checking %s", l.Name, strings.Join(found, " + "))
		identityCase(t, "checkpoint/"+l.Name, parts, plan)
		checked++
	}
	if checked == 0 {
		example := "none"
		if len(prefixes) > 0 {
			example = strings.Join(prefixes[:min(3, len(prefixes))], ", ")
		}
		t.Skipf("checkpoint %s has no quantized linear whose name ends in one of %s (its linears: %s); "+
			"point --checkpoint at a ParoQuant checkpoint or leave it empty for synthetic weights", dir, strings.Join(wanted, ", "), example)
	}
}

// lowestLayer picks the prefix ending in "."+proj+"." with the smallest
// layer number ("model.layers.3.mlp.down_proj." before "...layers.10...").
func lowestLayer(prefixes []string, proj string) string {
	var cands []string
	for _, p := range prefixes {
		if strings.HasSuffix(p, "."+proj+".") {
			cands = append(cands, p)
		}
	}
	layer := func(p string) int {
		if m := layerRE.FindStringSubmatch(p); m != nil {
			n, _ := strconv.Atoi(m[1])
			return n
		}
		return math.MaxInt
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if li, lj := layer(cands[i]), layer(cands[j]); li != lj {
			return li < lj
		}
		return cands[i] < cands[j]
	})
	if len(cands) == 0 {
		return ""
	}
	return cands[0]
}
