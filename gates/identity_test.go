package gates

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"

	"github.com/parharness/parharness/checkpoint"
	"github.com/parharness/parharness/refimpl"
)

func identityGate(t *testing.T) Gate {
	for _, g := range All() {
		if g.Name == "identity" {
			return g
		}
	}
	t.Fatal("identity gate is not registered")
	return Gate{}
}

// identityRels is the identity's own metrics, without the conformance
// check's.
func identityRels(res Result) map[string]float64 {
	out := map[string]float64{}
	for name, v := range res.Metrics {
		if strings.HasPrefix(name, "rel{") {
			out[name] = v
		}
	}
	return out
}

func TestIdentityGateSynthetic(t *testing.T) {
	if testing.Short() {
		t.Skip("full-size synthetic weights")
	}
	res := RunGate(&Env{Seed: 42}, identityGate(t))
	if res.Status != Pass {
		t.Fatalf("status %s: %s %v", res.Status, res.Reason, res.Failures)
	}
	rels := identityRels(res)
	if len(rels) != 12 { // 6 W4A8 linears x 2 TP sets
		t.Errorf("%d identity metrics, want 12: %v", len(rels), rels)
	}
	for name, rel := range rels {
		if !(rel <= identityTol) || rel == 0 {
			t.Errorf("%s: rel %g", name, rel)
		}
	}
	if n := len(res.Metrics) - len(rels); n != conformanceMetrics {
		t.Errorf("%d conformance metrics, want %d: %v", n, conformanceMetrics, res.Metrics)
	}
	t.Logf("%.2fs; notes: %s", res.Seconds, strings.Join(res.Notes, " | "))
}

// The identity separates the conventions: with the layers applied in
// reverse order, or the angles negated, on the activation side only, the two
// sides disagree at O(1).
func TestIdentityCatchesBrokenConventions(t *testing.T) {
	l := checkpoint.Synthetic(256, 64, 1)
	if rel, err := identityRel([]*checkpoint.Linear{l}, identityPlan{M: 2, Cols: 16}, 7); err != nil || rel > identityTol {
		t.Fatalf("good linear: rel %g, %v", rel, err)
	}
	r, w := l.Rotation(), l.QWeightRef()
	row := make([]float64, 256)
	w.DequantRow(5, row)
	weff := append([]float64(nil), row...)
	r.EffectiveRow(weff)
	x := identityActivations(1, 256, 3)
	want := floats.Dot(x, weff)
	side := func(rot *refimpl.Rotation) float64 {
		a := append([]float64(nil), x...)
		rot.Forward(a)
		return floats.Dot(a, row)
	}
	if got := side(r); math.Abs(got-want) > 1e-12*math.Abs(want) {
		t.Fatalf("identity: %g vs %g", got, want)
	}
	rev := &refimpl.Rotation{K: r.K, Krot: r.Krot, Pairs: make([]int16, len(r.Pairs)), Theta: make([]float64, len(r.Theta)), ChannelScales: r.ChannelScales}
	neg := &refimpl.Rotation{K: r.K, Krot: r.Krot, Pairs: r.Pairs, Theta: make([]float64, len(r.Theta)), ChannelScales: r.ChannelScales}
	for layer := 0; layer < r.Krot; layer++ {
		src := r.Krot - 1 - layer
		copy(rev.Pairs[layer*r.K:(layer+1)*r.K], r.Pairs[src*r.K:(src+1)*r.K])
		copy(rev.Theta[layer*r.K/2:(layer+1)*r.K/2], r.Theta[src*r.K/2:(src+1)*r.K/2])
	}
	for i, th := range r.Theta {
		neg.Theta[i] = -th
	}
	for name, bad := range map[string]*refimpl.Rotation{"reversed layers": rev, "negated angles": neg} {
		if got := side(bad); math.Abs(got-want) < 1e-3*math.Abs(want) {
			t.Errorf("%s: %g vs %g: the identity does not notice", name, got, want)
		}
	}
}

func TestIdentityGateCheckpoint(t *testing.T) {
	dir := t.TempDir()
	// q, k and v of the TP=1 attention at their real size, k in two layers
	// (the gate takes the lowest), under a VLM-style prefix.
	write := func(dir string, names []string, widths []int) {
		var ts []*checkpoint.Tensor
		for i, name := range names {
			l := checkpoint.Synthetic(5120, widths[i], uint64(i))
			l.Prefix = name
			ts = append(ts, l.Tensors()...)
		}
		if err := checkpoint.Write(filepath.Join(dir, "model-00001-of-00001.safetensors"), ts, nil); err != nil {
			t.Fatal(err)
		}
	}
	write(dir, []string{
		"model.language_model.layers.11.self_attn.k_proj.",
		"model.language_model.layers.3.self_attn.q_proj.",
		"model.language_model.layers.3.self_attn.k_proj.",
		"model.language_model.layers.3.self_attn.v_proj.",
	}, []int{1024, 12288, 1024, 1024})
	res := RunGate(&Env{Seed: 1, Checkpoint: dir}, identityGate(t))
	if rels := identityRels(res); res.Status != Pass || len(rels) != 1 || !(rels["rel{shape=checkpoint/attn_qkv}"] <= identityTol) {
		t.Fatalf("status %s %s %v metrics %v", res.Status, res.Reason, res.Failures, res.Metrics)
	}
	notes := strings.Join(res.Notes, "\n")
	if !strings.Contains(notes, "layers.3.self_attn.q_proj. + model.language_model.layers.3.self_attn.k_proj. + model.language_model.layers.3.self_attn.v_proj.") {
		t.Errorf("notes do not say what was checked:\n%s", notes)
	}

	// A merged linear with a partition missing fails, naming it (a partial
	// merge proves nothing about the merge).
	partial := t.TempDir()
	write(partial, []string{"model.layers.3.self_attn.k_proj.", "model.layers.3.self_attn.v_proj."}, []int{1024, 1024})
	res = RunGate(&Env{Seed: 1, Checkpoint: partial}, identityGate(t))
	if res.Status != Fail || !strings.Contains(res.Reason, "but not self_attn.q_proj") {
		t.Errorf("partial merge: %s %s", res.Status, res.Reason)
	}

	// A linear whose shape disagrees with the shapes file fails, naming it.
	bad := t.TempDir()
	l := checkpoint.Synthetic(256, 64, 9)
	l.Prefix = "model.layers.0.mlp.down_proj."
	checkpoint.Write(filepath.Join(bad, "m.safetensors"), l.Tensors(), nil)
	res = RunGate(&Env{Seed: 1, Checkpoint: bad}, identityGate(t))
	if res.Status != Fail || !strings.Contains(res.Reason, "model.layers.0.mlp.down_proj. is K=256 N=64") {
		t.Errorf("shape mismatch: %s %s", res.Status, res.Reason)
	}

	// Nothing recognisable: SKIP with the reason.
	other := t.TempDir()
	l.Prefix = "encoder.block.0.dense."
	checkpoint.Write(filepath.Join(other, "m.safetensors"), l.Tensors(), nil)
	res = RunGate(&Env{Seed: 1, Checkpoint: other}, identityGate(t))
	if res.Status != Skip || !strings.Contains(res.Reason, "encoder.block.0.dense.") {
		t.Errorf("unrelated checkpoint: %s %s", res.Status, res.Reason)
	}
}

func TestLowestLayer(t *testing.T) {
	ps := []string{"model.layers.10.mlp.down_proj.", "model.layers.2.mlp.down_proj.", "model.layers.2.mlp.up_proj.", "mtp.mlp.down_proj."}
	if got := lowestLayer(ps, "mlp.down_proj"); got != "model.layers.2.mlp.down_proj." {
		t.Errorf("lowestLayer = %q", got)
	}
	if got := lowestLayer(ps, "mlp.gate_proj"); got != "" {
		t.Errorf("lowestLayer of a missing proj = %q", got)
	}
}
