package checkpoint

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/parharness/parharness/refimpl"
)

// Tensor name suffixes of one ParoQuant linear (docs/formats.md), after
// a prefix such as "model.layers.0.mlp.gate_proj.".
const (
	SufQWeight       = "qweight"        // I32 [K, N/8], AWQ packed codes
	SufQZeros        = "qzeros"         // I32 [K/128, N/8], AWQ packed raw zeros
	SufScales        = "scales"         // F16 [K/128, N]
	SufPairs         = "pairs"          // I16 [krot, K], group-local indices
	SufTheta         = "theta"          // F16 [krot, K/2]
	SufChannelScales = "channel_scales" // F16 [1, K], pre-inverted
	SufQWeightHi     = "qweight_hi"     // I32 [K, N/32], fifth-bit plane (int5 checkpoints only)
	SufQZerosHi      = "qzeros_hi"      // I32 [K/128, N/32], fifth-bit plane of the zeros
)

// Linear is one ParoQuant linear as stored: raw tensors, fp16 values kept as
// their bits. Bits is 5 when the fifth-bit planes qweight_hi and qzeros_hi
// are present (this project's int5 format, refimpl/int5.go: the low nibbles
// stay in qweight and qzeros as for int4), 4 otherwise.
type Linear struct {
	Prefix     string
	K, N, Krot int
	Bits       int

	QWeight, QZeros     []int32
	QWeightHi, QZerosHi []int32  // nil for 4-bit
	Scales              []uint16 // fp16 bits [K/128, N]
	Pairs               []int16  // [Krot, K]
	Theta               []uint16 // fp16 bits [Krot, K/2]
	ChannelScales       []uint16 // fp16 bits [K]
}

// LoadLinear loads and validates the linear at prefix from path, a
// safetensors file or a directory of shards.
func LoadLinear(path, prefix string) (*Linear, error) {
	d, err := OpenDir(path)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.LoadLinear(prefix)
}

// LoadLinear loads and validates the linear at prefix (its tensors may sit
// in any of the files). Either fifth-bit plane present makes it an int5
// linear, which then needs both. Errors name the tensor (the prefix names
// the model layer), and for a rotation problem the rotation layer and group.
func (d *Dir) LoadLinear(prefix string) (*Linear, error) {
	l := &Linear{Prefix: prefix, Bits: 4}
	get := func(suf string, dt DType) (*Tensor, error) {
		t, err := d.Tensor(prefix + suf)
		if err != nil {
			return nil, err
		}
		if t.DType != dt {
			return nil, fmt.Errorf("checkpoint: %s: dtype %s, want %s", t.Name, t.DType, dt)
		}
		return t, nil
	}
	shape := func(t *Tensor, want ...int) error {
		if fmt.Sprint(t.Shape) != fmt.Sprint(want) {
			return fmt.Errorf("checkpoint: %s: shape %v, want %v (K=%d, N=%d, krot=%d)", t.Name, t.Shape, want, l.K, l.N, l.Krot)
		}
		return nil
	}

	qw, err := get(SufQWeight, I32)
	if err != nil {
		return nil, err
	}
	if len(qw.Shape) != 2 || qw.Shape[0] <= 0 || qw.Shape[0]%refimpl.GroupSize != 0 || qw.Shape[1] <= 0 {
		return nil, fmt.Errorf("checkpoint: %s: shape %v, want [K, N/8] with K a positive multiple of %d", qw.Name, qw.Shape, refimpl.GroupSize)
	}
	l.K, l.N = qw.Shape[0], 8*qw.Shape[1]
	G := l.K / refimpl.GroupSize
	pairs, err := get(SufPairs, I16)
	if err != nil {
		return nil, err
	}
	if len(pairs.Shape) != 2 || pairs.Shape[0] <= 0 {
		return nil, fmt.Errorf("checkpoint: %s: shape %v, want [krot, K=%d]", pairs.Name, pairs.Shape, l.K)
	}
	l.Krot = pairs.Shape[0]
	if err := shape(pairs, l.Krot, l.K); err != nil {
		return nil, err
	}

	type spec struct {
		suf   string
		dt    DType
		shape []int
		dst   any
	}
	specs := []spec{
		{SufQZeros, I32, []int{G, l.N / 8}, &l.QZeros},
		{SufScales, F16, []int{G, l.N}, &l.Scales},
		{SufTheta, F16, []int{l.Krot, l.K / 2}, &l.Theta},
		{SufChannelScales, F16, []int{1, l.K}, &l.ChannelScales},
	}
	if d.Has(prefix+SufQWeightHi) || d.Has(prefix+SufQZerosHi) {
		if l.N%32 != 0 {
			return nil, fmt.Errorf("checkpoint: %s: int5 planes need N=%d to be a multiple of 32", prefix+SufQWeightHi, l.N)
		}
		l.Bits = 5
		specs = append(specs,
			spec{SufQWeightHi, I32, []int{l.K, l.N / 32}, &l.QWeightHi},
			spec{SufQZerosHi, I32, []int{G, l.N / 32}, &l.QZerosHi})
	}
	if l.QWeight, err = qw.Int32s(); err != nil {
		return nil, err
	}
	if l.Pairs, err = pairs.Int16s(); err != nil {
		return nil, err
	}
	for _, s := range specs {
		t, err := get(s.suf, s.dt)
		if err != nil {
			return nil, err
		}
		if err := shape(t, s.shape...); err != nil {
			return nil, err
		}
		switch dst := s.dst.(type) {
		case *[]int32:
			*dst, err = t.Int32s()
		case *[]uint16:
			*dst, err = t.Bits16(s.dt)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := l.Validate(); err != nil {
		return nil, err
	}
	return l, nil
}

// Validate checks the lengths and the value invariants a kernel relies on:
// every pairs layer of every group is a permutation of 0..127, angles and
// scales are finite, channel scales are finite and nonzero. Errors name the
// tensor (and the layer and group, or the index).
func (l *Linear) Validate() error {
	G := l.K / refimpl.GroupSize
	name := func(suf string) string { return l.Prefix + suf }
	switch {
	case l.K <= 0 || l.K%refimpl.GroupSize != 0 || l.N <= 0 || l.N%8 != 0 || l.Krot <= 0:
		return fmt.Errorf("checkpoint: %s: K=%d N=%d krot=%d: want K a multiple of 128, N of 8, krot > 0", l.Prefix, l.K, l.N, l.Krot)
	case len(l.QWeight) != l.K*l.N/8:
		return fmt.Errorf("checkpoint: %s: %d words, want %d", name(SufQWeight), len(l.QWeight), l.K*l.N/8)
	case len(l.QZeros) != G*l.N/8:
		return fmt.Errorf("checkpoint: %s: %d words, want %d", name(SufQZeros), len(l.QZeros), G*l.N/8)
	case len(l.Scales) != G*l.N:
		return fmt.Errorf("checkpoint: %s: %d values, want %d", name(SufScales), len(l.Scales), G*l.N)
	case len(l.Pairs) != l.Krot*l.K:
		return fmt.Errorf("checkpoint: %s: %d values, want %d", name(SufPairs), len(l.Pairs), l.Krot*l.K)
	case len(l.Theta) != l.Krot*l.K/2:
		return fmt.Errorf("checkpoint: %s: %d values, want %d", name(SufTheta), len(l.Theta), l.Krot*l.K/2)
	case len(l.ChannelScales) != l.K:
		return fmt.Errorf("checkpoint: %s: %d values, want %d", name(SufChannelScales), len(l.ChannelScales), l.K)
	}
	switch {
	case l.Bits != 4 && l.Bits != 5:
		return fmt.Errorf("checkpoint: %s: %d-bit weights, want 4 or 5", l.Prefix, l.Bits)
	case l.Bits == 4 && (l.QWeightHi != nil || l.QZerosHi != nil):
		return fmt.Errorf("checkpoint: %s: a 4-bit linear carries fifth-bit planes (%s, %s)", l.Prefix, name(SufQWeightHi), name(SufQZerosHi))
	case l.Bits == 5 && l.N%32 != 0:
		return fmt.Errorf("checkpoint: %s: int5 planes need N=%d to be a multiple of 32", name(SufQWeightHi), l.N)
	case l.Bits == 5 && len(l.QWeightHi) != l.K*l.N/32:
		return fmt.Errorf("checkpoint: %s: %d words, want K*N/32 = %d", name(SufQWeightHi), len(l.QWeightHi), l.K*l.N/32)
	case l.Bits == 5 && len(l.QZerosHi) != G*l.N/32:
		return fmt.Errorf("checkpoint: %s: %d words, want K/128*N/32 = %d", name(SufQZerosHi), len(l.QZerosHi), G*l.N/32)
	}
	for r := 0; r < l.Krot; r++ {
		for g := 0; g < G; g++ {
			if err := refimpl.CheckPairLayer(l.Pairs[r*l.K+g*refimpl.GroupSize : r*l.K+(g+1)*refimpl.GroupSize]); err != nil {
				return fmt.Errorf("checkpoint: %s: layer %d group %d: %v", name(SufPairs), r, g, err)
			}
		}
	}
	finite := func(suf string, v []uint16, nonzero bool) error {
		for i, h := range v {
			f := refimpl.F16ToF64(h)
			if math.IsNaN(f) || math.IsInf(f, 0) || (nonzero && f == 0) {
				return fmt.Errorf("checkpoint: %s: element %d is %g (fp16 %#04x)", name(suf), i, f, h)
			}
		}
		return nil
	}
	if err := finite(SufScales, l.Scales, false); err != nil {
		return err
	}
	if err := finite(SufTheta, l.Theta, false); err != nil {
		return err
	}
	return finite(SufChannelScales, l.ChannelScales, true)
}

// QWeightRef returns the weight for the references (fp16 scales widened).
func (l *Linear) QWeightRef() *refimpl.QWeight {
	w := &refimpl.QWeight{K: l.K, N: l.N, Bits: l.Bits, QWeight: l.QWeight, QZeros: l.QZeros, QHigh: l.QWeightHi, ZHigh: l.QZerosHi,
		Scales: make([]float64, len(l.Scales))}
	for i, h := range l.Scales {
		w.Scales[i] = refimpl.F16ToF64(h)
	}
	return w
}

// Rotation returns the rotation for the references (fp16 angles and channel
// scales widened exactly).
func (l *Linear) Rotation() *refimpl.Rotation {
	r := &refimpl.Rotation{K: l.K, Krot: l.Krot, Pairs: l.Pairs, Theta: make([]float64, len(l.Theta)), ChannelScales: make([]float64, l.K)}
	for i, h := range l.Theta {
		r.Theta[i] = refimpl.F16ToF64(h)
	}
	for i, h := range l.ChannelScales {
		r.ChannelScales[i] = refimpl.F16ToF64(h)
	}
	return r
}

// Tensors returns the linear's tensors under its prefix, ready for Write.
func (l *Linear) Tensors() []*Tensor {
	G := l.K / refimpl.GroupSize
	p := l.Prefix
	ts := []*Tensor{
		NewInt32(p+SufQWeight, []int{l.K, l.N / 8}, l.QWeight),
		NewInt32(p+SufQZeros, []int{G, l.N / 8}, l.QZeros),
		NewBits16(p+SufScales, F16, []int{G, l.N}, l.Scales),
		NewInt16(p+SufPairs, []int{l.Krot, l.K}, l.Pairs),
		NewBits16(p+SufTheta, F16, []int{l.Krot, l.K / 2}, l.Theta),
		NewBits16(p+SufChannelScales, F16, []int{1, l.K}, l.ChannelScales),
	}
	if l.Bits == 5 {
		ts = append(ts, NewInt32(p+SufQWeightHi, []int{l.K, l.N / 32}, l.QWeightHi), NewInt32(p+SufQZerosHi, []int{G, l.N / 32}, l.QZerosHi))
	}
	return ts
}

// LinearPrefixes lists the prefixes of every quantized linear in the
// checkpoint (names ending in ".qweight"), sorted.
func (d *Dir) LinearPrefixes() []string {
	var out []string
	for n := range d.where {
		if p, ok := strings.CutSuffix(n, "."+SufQWeight); ok {
			out = append(out, p+".")
		}
	}
	sort.Strings(out)
	return out
}

// Synthetic draws a 4-bit linear of K inputs and N outputs with the
// statistics of the real checkpoint, from seed:
//   - codes uniform in 0..15;
//   - zeros: 38% equal 8, 60% uniform over 2..14 without 8, 2% at the
//     extremes 0, 1 or 15;
//   - scales log-uniform in 1e-3..1e-2, rounded to fp16;
//   - pairs a fresh random permutation per group and layer (krot = 8);
//   - angles N(0, 0.3) rounded to fp16, 3% exactly 0 (padding pairs);
//   - channel scales exp(N(0, 0.25)) rounded to fp16: positive, around 1
//     (stored pre-inverted, like the real ones).
//
// The prefix is empty; set it before writing.
func Synthetic(K, N int, seed uint64) *Linear { return synthetic(K, N, 4, seed) }

// SyntheticInt5 is Synthetic with 5-bit codes (uniform 0..31) and zeros
// (38% equal 16, the rest mostly 4..28), in the fifth-bit plane layout.
func SyntheticInt5(K, N int, seed uint64) *Linear { return synthetic(K, N, 5, seed) }

func synthetic(K, N, bits int, seed uint64) *Linear {
	if K <= 0 || K%refimpl.GroupSize != 0 || N <= 0 || N%8 != 0 || (bits == 5 && N%32 != 0) {
		panic(fmt.Sprintf("checkpoint: Synthetic K=%d N=%d bits=%d: K must be a multiple of 128, N of 8 (32 for int5)", K, N, bits))
	}
	rng := rand.New(rand.NewPCG(seed, 0x9a7090))
	G := K / refimpl.GroupSize
	krot := refimpl.DefaultKrot
	l := &Linear{K: K, N: N, Krot: krot, Bits: bits}

	if bits == 4 { // every word is 8 valid codes: draw the words directly
		l.QWeight = make([]int32, K*N/8)
		for i := 0; i < len(l.QWeight); i += 2 {
			u := rng.Uint64()
			l.QWeight[i] = int32(uint32(u))
			if i+1 < len(l.QWeight) {
				l.QWeight[i+1] = int32(uint32(u >> 32))
			}
		}
	}
	mid := 1 << (bits - 1)  // 8 or 16
	step := 1 << (bits - 4) // 1 or 2: int5 zeros spread twice as wide
	zeros := make([]uint8, G*N)
	for i := range zeros {
		switch u := rng.Float64(); {
		case u < 0.38:
			zeros[i] = uint8(mid)
		case u < 0.98:
			z := mid
			for z == mid {
				z = (2 + rng.IntN(13)) * step // 2..14 (int5: 4..28)
			}
			zeros[i] = uint8(z)
		default:
			zeros[i] = []uint8{0, 1, uint8(1<<bits - 1)}[rng.IntN(3)]
		}
	}
	if bits == 5 {
		codes := make([]uint8, K*N)
		for i := range codes {
			codes[i] = uint8(rng.IntN(32))
		}
		l.QWeight, l.QWeightHi = refimpl.PackInt5(codes, K, N)
		l.QZeros, l.QZerosHi = refimpl.PackInt5(zeros, G, N)
	} else {
		l.QZeros = refimpl.PackAWQ(zeros, G, N)
	}
	l.Scales = make([]uint16, G*N)
	for i := range l.Scales {
		l.Scales[i] = refimpl.F64ToF16(1e-3 * math.Exp(math.Ln10*rng.Float64()))
	}
	l.Pairs = make([]int16, krot*K)
	for r := 0; r < krot; r++ {
		for g := 0; g < G; g++ {
			for i, v := range rng.Perm(refimpl.GroupSize) {
				l.Pairs[r*K+g*refimpl.GroupSize+i] = int16(v)
			}
		}
	}
	l.Theta = make([]uint16, krot*K/2)
	for i := range l.Theta {
		if rng.Float64() >= 0.03 {
			l.Theta[i] = refimpl.F64ToF16(0.3 * rng.NormFloat64())
		}
	}
	l.ChannelScales = make([]uint16, K)
	for i := range l.ChannelScales {
		l.ChannelScales[i] = refimpl.F64ToF16(math.Exp(0.25 * rng.NormFloat64()))
	}
	return l
}
