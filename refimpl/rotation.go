package refimpl

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
)

// DefaultKrot is the number of rotation layers in ParoQuant checkpoints.
const DefaultKrot = 8

// PairsPerGroup is the number of disjoint pairs per 128-group and layer.
const PairsPerGroup = GroupSize / 2

// MaxRotationsPerLaunch is the number of distinct rotations (partitions after
// merging identical neighbours) one GEMM launch supports.
const MaxRotationsPerLaunch = 3

// Rotation is one projection's learned transform of the activations
// (docs/formats.md): multiply by the channel scales (stored
// pre-inverted), then apply layers r = 0..Krot-1 of Givens rotations. In
// layer r and group g (features g*128 .. g*128+127), pair t rotates the
// features i = Pairs[r*K + g*128 + 2t] and j = Pairs[r*K + g*128 + 2t + 1]
// (indices local to the group) by θ = Theta[r*K/2 + g*64 + t]:
//
//	x_i' =  c*x_i + s*x_j
//	x_j' = -s*x_i + c*x_j        (c = cos θ, s = sin θ)
//
// Each layer's pairs are disjoint (a permutation of 0..127 per group), so the
// pairs of one layer commute; layers do not. Angles and scales are the fp16
// checkpoint values, exact in float64; everything here runs in float64.
//
// A Rotation must not be modified after its first use: the cos/sin of every
// angle are computed once and cached.
type Rotation struct {
	K, Krot       int
	Pairs         []int16   // [Krot, K], local indices
	Theta         []float64 // [Krot, K/2], radians
	ChannelScales []float64 // [K], multiply the activations

	cache atomic.Pointer[rotCache]
}

type rotCache struct{ cos, sin []float64 }

// Validate checks the dimensions and that every layer of every group is a
// permutation of 0..127, naming the first layer and group that is not.
func (r *Rotation) Validate() error {
	if r.K <= 0 || r.K%GroupSize != 0 {
		return fmt.Errorf("refimpl: rotation K=%d is not a positive multiple of %d", r.K, GroupSize)
	}
	if r.Krot < 0 {
		return fmt.Errorf("refimpl: rotation Krot=%d", r.Krot)
	}
	if len(r.Pairs) != r.Krot*r.K || len(r.Theta) != r.Krot*r.K/2 || len(r.ChannelScales) != r.K {
		return fmt.Errorf("refimpl: rotation K=%d Krot=%d has %d pairs, %d angles, %d channel scales; want %d, %d, %d",
			r.K, r.Krot, len(r.Pairs), len(r.Theta), len(r.ChannelScales), r.Krot*r.K, r.Krot*r.K/2, r.K)
	}
	for l := 0; l < r.Krot; l++ {
		for g := 0; g < r.K/GroupSize; g++ {
			if err := CheckPairLayer(r.Pairs[l*r.K+g*GroupSize : l*r.K+(g+1)*GroupSize]); err != nil {
				return fmt.Errorf("refimpl: rotation layer %d group %d: %w", l, g, err)
			}
		}
	}
	return nil
}

// CheckPairLayer checks that one group's 128 pair indices of one layer are a
// permutation of 0..127.
func CheckPairLayer(p []int16) error {
	if len(p) != GroupSize {
		return fmt.Errorf("%d indices, want %d", len(p), GroupSize)
	}
	var seen [GroupSize]int
	for pos, v := range p {
		if v < 0 || v >= GroupSize {
			return fmt.Errorf("index %d at position %d is out of 0..127", v, pos)
		}
		if seen[v] != 0 {
			return fmt.Errorf("index %d appears at positions %d and %d: not a permutation of 0..127", v, seen[v]-1, pos)
		}
		seen[v] = pos + 1
	}
	return nil
}

func (r *Rotation) trig() *rotCache {
	if c := r.cache.Load(); c != nil {
		return c
	}
	c := &rotCache{cos: make([]float64, len(r.Theta)), sin: make([]float64, len(r.Theta))}
	for i, th := range r.Theta {
		c.sin[i], c.cos[i] = math.Sincos(th)
	}
	r.cache.Store(c)
	return c
}

func (r *Rotation) checkLen(x []float64) {
	if len(x) != r.K {
		panic(fmt.Sprintf("refimpl: rotation of K=%d applied to %d values", r.K, len(x)))
	}
}

// Pair is pair t of layer l in group g: its channels i and j (local to the
// group) and its angle, as the tensors lay them out (see Rotation).
func (r *Rotation) Pair(l, g, t int) (i, j int, theta float64) {
	o := l*r.K + g*GroupSize + 2*t
	return int(r.Pairs[o]), int(r.Pairs[o+1]), r.Theta[l*r.K/2+g*PairsPerGroup+t]
}

// applyLayer rotates x by layer l, with the angles negated when inverse.
func (r *Rotation) applyLayer(x []float64, l int, inverse bool) {
	t := r.trig()
	K := r.K
	for g := 0; g < K/GroupSize; g++ {
		base := g * GroupSize
		pairs := r.Pairs[l*K+base : l*K+base+GroupSize]
		for p := 0; p < PairsPerGroup; p++ {
			a := l*K/2 + g*PairsPerGroup + p
			c, s := t.cos[a], t.sin[a]
			if inverse {
				s = -s
			}
			i, j := base+int(pairs[2*p]), base+int(pairs[2*p+1])
			xi, xj := x[i], x[j]
			x[i] = c*xi + s*xj
			x[j] = -s*xi + c*xj
		}
	}
}

// Rotate applies the rotation layers 0..Krot-1 to x in place (no channel
// scales).
func (r *Rotation) Rotate(x []float64) {
	r.checkLen(x)
	for l := 0; l < r.Krot; l++ {
		r.applyLayer(x, l, false)
	}
}

// Unrotate applies the inverse of Rotate in place: layers Krot-1..0 with
// negated angles. Rotate is orthogonal, so this is also Rotateᵀ.
func (r *Rotation) Unrotate(x []float64) {
	r.checkLen(x)
	for l := r.Krot - 1; l >= 0; l-- {
		r.applyLayer(x, l, true)
	}
}

// Forward is the activation transform: x ⊙ channel_scales, then Rotate.
func (r *Rotation) Forward(x []float64) {
	r.checkLen(x)
	for k, s := range r.ChannelScales {
		x[k] *= s
	}
	r.Rotate(x)
}

// Inverse undoes Forward: Unrotate, then divide by the channel scales.
func (r *Rotation) Inverse(x []float64) {
	r.Unrotate(x)
	for k, s := range r.ChannelScales {
		x[k] /= s
	}
}

// EffectiveRow turns a dequantized weight row w[n, :] into the row of the
// equivalent unrotated weight, in place: W_eff[n] = channel_scales ⊙
// Unrotate(w[n]). Then x·W_eff[n] = Forward(x)·w[n] for every x, which is
// the inference identity the "identity" gate checks.
func (r *Rotation) EffectiveRow(w []float64) {
	r.Unrotate(w)
	for k, s := range r.ChannelScales {
		w[k] *= s
	}
}

// ForwardPartitions applies each partition's rotation to the same
// activations x [M, K], returning the rotated activations [P, M, K].
func ForwardPartitions(x []float64, M int, rots []*Rotation) []float64 {
	if len(rots) == 0 {
		panic("refimpl: ForwardPartitions without rotations")
	}
	K := rots[0].K
	if len(x) != M*K {
		panic(fmt.Sprintf("refimpl: ForwardPartitions: %d values for [%d, %d]", len(x), M, K))
	}
	out := make([]float64, len(rots)*M*K)
	for p, r := range rots {
		if r.K != K {
			panic(fmt.Sprintf("refimpl: ForwardPartitions: partition %d has K=%d, partition 0 K=%d", p, r.K, K))
		}
		dst := out[p*M*K : (p+1)*M*K]
		copy(dst, x)
		for m := 0; m < M; m++ {
			r.Forward(dst[m*K : (m+1)*K])
		}
	}
	return out
}

// IdentityRotation is a rotation that changes nothing: unit channel scales,
// pairs (0,1), (2,3), ... with angle 0.
func IdentityRotation(K, krot int) *Rotation {
	r := &Rotation{K: K, Krot: krot, Pairs: make([]int16, krot*K), Theta: make([]float64, krot*K/2), ChannelScales: make([]float64, K)}
	for i := range r.Pairs {
		r.Pairs[i] = int16(i % GroupSize)
	}
	for i := range r.ChannelScales {
		r.ChannelScales[i] = 1
	}
	return r
}

// SameRotation reports whether two rotations are identical: same K and Krot,
// the same pair indices in the same positions, the same angles and the same
// channel scales. It is the test a loader uses to merge adjacent partitions
// (q, k and v of a GDN in_proj_qkv share one rotation). It is deliberately
// strict: two rotations that act the same but are stored differently (a
// pair written (j,i), pairs listed in another order, -0 vs +0 aside) count
// as different, which only costs a partition, never a wrong result.
func SameRotation(a, b *Rotation) bool {
	if a == b {
		return true
	}
	if a.K != b.K || a.Krot != b.Krot || len(a.Pairs) != len(b.Pairs) ||
		len(a.Theta) != len(b.Theta) || len(a.ChannelScales) != len(b.ChannelScales) {
		return false
	}
	for i := range a.Pairs {
		if a.Pairs[i] != b.Pairs[i] {
			return false
		}
	}
	for i := range a.Theta {
		if a.Theta[i] != b.Theta[i] {
			return false
		}
	}
	for i := range a.ChannelScales {
		if a.ChannelScales[i] != b.ChannelScales[i] {
			return false
		}
	}
	return true
}

// Linear is a (possibly merged) quantized linear as one launch sees it: the
// weight concatenated along N, the partition widths, and one rotation per
// partition.
type Linear struct {
	W     *QWeight
	Parts []int // widths along N, summing to W.N
	Rots  []*Rotation
}

// Validate checks the weight, the partitions and the rotations.
func (l *Linear) Validate() error {
	if err := l.W.Validate(); err != nil {
		return err
	}
	if len(l.Parts) != len(l.Rots) || len(l.Parts) == 0 {
		return fmt.Errorf("refimpl: linear has %d partitions and %d rotations", len(l.Parts), len(l.Rots))
	}
	sum := 0
	for p, n := range l.Parts {
		if n <= 0 || n%8 != 0 {
			return fmt.Errorf("refimpl: partition %d has width %d, want a positive multiple of 8", p, n)
		}
		sum += n
		if err := l.Rots[p].Validate(); err != nil {
			return fmt.Errorf("partition %d: %w", p, err)
		}
		if l.Rots[p].K != l.W.K {
			return fmt.Errorf("refimpl: partition %d rotation has K=%d, weight K=%d", p, l.Rots[p].K, l.W.K)
		}
	}
	if sum != l.W.N {
		return fmt.Errorf("refimpl: partitions sum to %d, weight N=%d", sum, l.W.N)
	}
	return nil
}

// MergeIdentical returns the linear with adjacent partitions that share an
// identical rotation (SameRotation) merged into one, and an error if more
// than MaxRotationsPerLaunch distinct partitions remain.
func (l *Linear) MergeIdentical() (*Linear, error) {
	out := &Linear{W: l.W}
	for p, n := range l.Parts {
		if last := len(out.Rots) - 1; last >= 0 && SameRotation(out.Rots[last], l.Rots[p]) {
			out.Parts[last] += n
			continue
		}
		out.Parts = append(out.Parts, n)
		out.Rots = append(out.Rots, l.Rots[p])
	}
	if len(out.Parts) > MaxRotationsPerLaunch {
		return out, fmt.Errorf("refimpl: %d distinct adjacent rotations after merging, one launch takes at most %d", len(out.Parts), MaxRotationsPerLaunch)
	}
	return out, nil
}

// Partition returns the partition that output column n belongs to.
func (l *Linear) Partition(n int) int { return partitionOf(l.Parts, n) }

func partitionOf(parts []int, n int) int {
	for p, w := range parts {
		if n < w {
			return p
		}
		n -= w
	}
	panic(fmt.Sprintf("refimpl: column past the partitions %v", parts))
}

// RandomRotation draws a ParoQuant-like rotation for tests and benches:
// per-group random permutations per layer, fp16 angles ~ N(0, 0.3), fp16
// channel scales in [0.5, 1.5). (checkpoint.Synthetic draws whole
// checkpoints; this is the rotation alone.)
func RandomRotation(rng *rand.Rand, K int) *Rotation {
	r := &Rotation{K: K, Krot: DefaultKrot, Pairs: make([]int16, DefaultKrot*K),
		Theta: make([]float64, DefaultKrot*K/2), ChannelScales: make([]float64, K)}
	for l := 0; l < r.Krot; l++ {
		for g := 0; g < K/GroupSize; g++ {
			for i, p := range rng.Perm(GroupSize) {
				r.Pairs[l*K+g*GroupSize+i] = int16(p)
			}
		}
	}
	for i := range r.Theta {
		r.Theta[i] = RoundF16(rng.NormFloat64() * 0.3)
	}
	for i := range r.ChannelScales {
		r.ChannelScales[i] = RoundF16(0.5 + rng.Float64())
	}
	return r
}
