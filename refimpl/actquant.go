package refimpl

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
)

// ActKind is the activation code format.
type ActKind uint8

const (
	ActE4M3 ActKind = iota // fp8 e4m3 codes, scale = amax/448
	ActInt8                // int8 codes -127..127 (two's complement bytes), scale = amax/127
)

func (k ActKind) String() string {
	switch k {
	case ActE4M3:
		return "e4m3"
	case ActInt8:
		return "int8"
	}
	return fmt.Sprintf("ActKind(%d)", uint8(k))
}

// gridMax is the largest code magnitude of the kind: 448 or 127.
func (k ActKind) gridMax() float32 {
	if k == ActInt8 {
		return Int8Max
	}
	return E4M3MaxFinite
}

// QuantAct is what an activation producer writes for rows [M, K]: codes,
// scales (exactly one of GroupScale and TokenScale is set) and the per-group
// row sums of the decoded codes that the GEMM's zero-point fold needs
// (docs/formats.md). For a merged linear, M counts P*M rows (partition
// major), as the producer sees them.
type QuantAct struct {
	M, K       int
	Kind       ActKind
	Codes      []uint8   // [M, K]
	GroupScale []float32 // [M, K/128], per-group mode
	TokenScale []float32 // [M], per-token mode
	RowSums    []float32 // [M, K/128]: Σ of the decoded codes of each group
}

// PerToken reports whether the scales are per token.
func (q *QuantAct) PerToken() bool { return q.TokenScale != nil }

// CodeValue is the decoded code at (m, k): its e4m3 value or int8 integer.
func (q *QuantAct) CodeValue(m, k int) float64 {
	c := q.Codes[m*q.K+k]
	if q.Kind == ActInt8 {
		return float64(int8(c))
	}
	return float64(DecodeE4M3(c))
}

// Scale is the activation scale that applies at (m, k).
func (q *QuantAct) Scale(m, k int) float64 {
	if q.TokenScale != nil {
		return float64(q.TokenScale[m])
	}
	return float64(q.GroupScale[m*(q.K/GroupSize)+k/GroupSize])
}

// Dequant returns a[m, k] = code value × scale, [M, K], exact in float64
// (a code has at most 8 significant bits and a scale 24).
func (q *QuantAct) Dequant() []float64 {
	a := make([]float64, q.M*q.K)
	for m := 0; m < q.M; m++ {
		for k := 0; k < q.K; k++ {
			a[m*q.K+k] = q.CodeValue(m, k) * q.Scale(m, k)
		}
	}
	return a
}

// Validate checks the slice lengths.
func (q *QuantAct) Validate() error {
	G := q.K / GroupSize
	switch {
	case q.M < 0 || q.K <= 0 || q.K%GroupSize != 0:
		return fmt.Errorf("refimpl: activations [%d, %d]: K must be a positive multiple of %d", q.M, q.K, GroupSize)
	case len(q.Codes) != q.M*q.K:
		return fmt.Errorf("refimpl: activations have %d codes, want %d", len(q.Codes), q.M*q.K)
	case (q.GroupScale == nil) == (q.TokenScale == nil):
		return errors.New("refimpl: activations need exactly one of GroupScale and TokenScale")
	case q.GroupScale != nil && len(q.GroupScale) != q.M*G:
		return fmt.Errorf("refimpl: activations have %d group scales, want %d", len(q.GroupScale), q.M*G)
	case q.TokenScale != nil && len(q.TokenScale) != q.M:
		return fmt.Errorf("refimpl: activations have %d token scales, want %d", len(q.TokenScale), q.M)
	case len(q.RowSums) != q.M*G:
		return fmt.Errorf("refimpl: activations have %d row sums, want %d", len(q.RowSums), q.M*G)
	}
	return nil
}

// QuantizeActGroup is the Go mirror of the per-group e4m3 producer on rows
// x [M, K] (float32, already channel-scaled and rotated). For each row m and
// group g, in float32:
//
//	amax  = max over the group of |x|      (NaN elements ignored: "a > amax"
//	                                        from 0; max is exact, so any
//	                                        reduction order gives the same bits)
//	scale = amax / 448                     (one correctly rounded division)
//	code  = EncodeE4M3(x / scale)          (correctly rounded division, then the
//	                                        e4m3 contract); all codes 0x00 when
//	                                        scale == 0 (all-zero group, or
//	                                        amax < 448·2^-150)
//	rs    = float32(S) / 512, S = Σ_k 512·DecodeE4M3(code) as an integer
//
// Note: the row sum is the exact integer sum of the decoded codes in units of
// 2^-9 (every e4m3 value is a multiple of 2^-9; |S| < 2^25 fits an int32),
// rounded once to float32 (RNE; exact up to |S| ≤ 2^24) and scaled by a power
// of two (exact). Summing in float32 instead would make the bits depend on
// the reduction order. Note: the scale is amax/448, not amax*(1/448.f) (a
// rounded reciprocal differs in the last bit for some amax); and the codes
// divide by the stored scale, so that code×scale is the best e4m3
// approximation of x that this scale allows. An Inf in a group gives scale
// Inf and all-zero codes in that group (per token: in that row).
func QuantizeActGroup(x []float32, M, K int) *QuantAct {
	return quantizeAct(x, M, K, ActE4M3, false)
}

// QuantizeActToken is the Go mirror of the per-token e4m3 producer. It is
// QuantizeActGroup with one scale per row:
//
//	asg[g] = amax_g / 448                  (as in QuantizeActGroup)
//	As     = max over g of asg[g]          (== (max amax)/448: rounding is monotonic)
//	code   = EncodeE4M3(x / As)            (0x00 for the whole row when As == 0)
//	rs[g]  = float32(S_g) / 512            (per group, as in QuantizeActGroup)
func QuantizeActToken(x []float32, M, K int) *QuantAct {
	return quantizeAct(x, M, K, ActE4M3, true)
}

// QuantizeActGroupInt8 is the per-group int8 producer mirror: scale =
// amax/127 (Int8Scale), code = QuantizeInt8(x, scale), rs = float32(Σ codes)
// (an exact integer sum, |Σ| ≤ 16256).
func QuantizeActGroupInt8(x []float32, M, K int) *QuantAct {
	return quantizeAct(x, M, K, ActInt8, false)
}

// QuantizeActTokenInt8 is the per-token int8 producer mirror: As = max over g
// of amax_g/127, code = QuantizeInt8(x, As), row sums per group as in
// QuantizeActGroupInt8.
func QuantizeActTokenInt8(x []float32, M, K int) *QuantAct {
	return quantizeAct(x, M, K, ActInt8, true)
}

func quantizeAct(x []float32, M, K int, kind ActKind, perToken bool) *QuantAct {
	if K <= 0 || K%GroupSize != 0 || len(x) != M*K {
		panic(fmt.Sprintf("refimpl: quantizing %d values as [%d, %d] (K a multiple of %d)", len(x), M, K, GroupSize))
	}
	G := K / GroupSize
	q := &QuantAct{M: M, K: K, Kind: kind, Codes: make([]uint8, M*K), RowSums: make([]float32, M*G)}
	gs := GroupAmax(x, M, K)
	for i := range gs {
		gs[i] /= kind.gridMax()
	}
	if perToken {
		q.TokenScale = make([]float32, M)
		for m := range q.TokenScale {
			var as float32
			for _, s := range gs[m*G : (m+1)*G] {
				if s > as {
					as = s
				}
			}
			q.TokenScale[m] = as
		}
	} else {
		q.GroupScale = gs
	}
	for m := 0; m < M; m++ {
		for g := 0; g < G; g++ {
			scale := q.tokenOrGroupScale(m, g)
			var sum int64
			for k := g * GroupSize; k < (g+1)*GroupSize; k++ {
				i := m*K + k
				switch kind {
				case ActE4M3:
					var c uint8
					if scale != 0 {
						c = EncodeE4M3(x[i] / scale)
					}
					q.Codes[i] = c
					sum += int64(DecodeE4M3(c) * 512)
				case ActInt8:
					c := QuantizeInt8(x[i], scale)
					q.Codes[i] = uint8(c)
					sum += int64(c)
				}
			}
			rs := float32(sum)
			if kind == ActE4M3 {
				rs /= 512
			}
			q.RowSums[m*G+g] = rs
		}
	}
	return q
}

func (q *QuantAct) tokenOrGroupScale(m, g int) float32 {
	if q.TokenScale != nil {
		return q.TokenScale[m]
	}
	return q.GroupScale[m*(q.K/GroupSize)+g]
}

// Act64 is the float64 semantic version of an activation quantization: what
// the producer means, free of any float32 op order.
type Act64 struct {
	M, K     int
	Kind     ActKind
	PerToken bool
	Scales   []float64 // [M, K/128] or [M]: amax/448 (or /127) in float64
	Values   []float64 // [M, K]: the code values, nearest grid point to x/scale
	RowSums  []float64 // [M, K/128]: exact Σ of Values per group
	A        []float64 // [M, K]: Values × scale
}

// QuantizeAct64 quantizes x [M, K] in float64: scale = amax/448 (e4m3) or
// amax/127 (int8) per group or per token (the max of the group scales), each
// value rounded to the nearest grid point of x/scale (e4m3: ties to the even
// code, saturating at ±448; int8: ties to even, clamped to ±127), row sums
// exact. Zero scales give zero values.
func QuantizeAct64(x []float64, M, K int, kind ActKind, perToken bool) *Act64 {
	if K <= 0 || K%GroupSize != 0 || len(x) != M*K {
		panic(fmt.Sprintf("refimpl: quantizing %d values as [%d, %d]", len(x), M, K))
	}
	G := K / GroupSize
	r := &Act64{M: M, K: K, Kind: kind, PerToken: perToken, Values: make([]float64, M*K), RowSums: make([]float64, M*G), A: make([]float64, M*K)}
	gs := make([]float64, M*G)
	for m := 0; m < M; m++ {
		for g := 0; g < G; g++ {
			amax := 0.0
			for _, v := range x[m*K+g*GroupSize : m*K+(g+1)*GroupSize] {
				amax = math.Max(amax, math.Abs(v))
			}
			gs[m*G+g] = amax / float64(kind.gridMax())
		}
	}
	r.Scales = gs
	if perToken {
		r.Scales = make([]float64, M)
		for m := range r.Scales {
			for _, s := range gs[m*G : (m+1)*G] {
				r.Scales[m] = math.Max(r.Scales[m], s)
			}
		}
	}
	for m := 0; m < M; m++ {
		for k := 0; k < K; k++ {
			g := k / GroupSize
			s := r.Scales[m]
			if !perToken {
				s = r.Scales[m*G+g]
			}
			var v float64
			if s != 0 {
				if kind == ActInt8 {
					v = math.Max(-Int8Max, math.Min(Int8Max, math.RoundToEven(x[m*K+k]/s)))
				} else {
					v = NearestE4M3(x[m*K+k] / s)
				}
			}
			r.Values[m*K+k] = v
			r.RowSums[m*G+g] += v
			r.A[m*K+k] = v * s
		}
	}
	return r
}

var e4m3Table = sync.OnceValue(E4M3OracleTable)

// NearestE4M3 rounds a float64 to the nearest e4m3 value (ties to the even
// code), saturating at ±448; NaN gives 0 and a zero result is +0.
func NearestE4M3(v float64) float64 {
	if v != v {
		return 0
	}
	t := e4m3Table()
	a := math.Abs(v)
	if a >= E4M3MaxFinite {
		return math.Copysign(E4M3MaxFinite, v)
	}
	c := sort.SearchFloat64s(t, a) // first t[c] >= a
	if c > 0 {
		below, above := a-t[c-1], t[c]-a
		if below < above || (below == above && (c-1)%2 == 0) {
			c--
		}
	}
	if t[c] == 0 {
		return 0
	}
	return math.Copysign(t[c], v)
}

// CheckActQuant checks a producer's output against the float64 semantics of
// its inputs x (the values it quantized), independently of any op order:
//   - each scale is float32(amax/448) (or /127), the correctly rounded
//     quotient (per token: the max over groups);
//   - each code value is the nearest grid point to the exact x/scale; where
//     it is not, x/scale must lie within 2^-22 relative of the midpoint
//     between the two grid points (the float32 quotient may round onto or
//     across a tie: a double rounding the contract accepts);
//   - each row sum is float32 of the exact sum of the decoded codes.
//
// It returns nil or an error listing the count and the first few
// violations by (m, k) or (m, g).
func CheckActQuant(x []float32, q *QuantAct) error {
	if err := q.Validate(); err != nil {
		return err
	}
	if len(x) != q.M*q.K {
		return fmt.Errorf("refimpl: %d inputs for activations [%d, %d]", len(x), q.M, q.K)
	}
	var bad []string
	nbad := 0
	report := func(format string, args ...any) {
		nbad++
		if len(bad) < 8 {
			bad = append(bad, fmt.Sprintf(format, args...))
		}
	}
	K, G := q.K, q.K/GroupSize
	gm := float64(q.Kind.gridMax())
	for m := 0; m < q.M; m++ {
		tok := 0.0
		for g := 0; g < G; g++ {
			amax := 0.0
			for _, v := range x[m*K+g*GroupSize : m*K+(g+1)*GroupSize] {
				if a := math.Abs(float64(v)); a > amax { // NaN ignored, as the mirror
					amax = a
				}
			}
			want := float32(amax / gm)
			tok = math.Max(tok, float64(want))
			if q.GroupScale != nil && q.GroupScale[m*G+g] != want {
				report("scale[%d,%d] = %g (%#08x), want amax/%g = %g (%#08x)", m, g, q.GroupScale[m*G+g],
					math.Float32bits(q.GroupScale[m*G+g]), gm, want, math.Float32bits(want))
			}
		}
		if q.TokenScale != nil && q.TokenScale[m] != float32(tok) {
			report("token scale[%d] = %g, want max_g amax_g/%g = %g", m, q.TokenScale[m], gm, tok)
		}
		for g := 0; g < G; g++ {
			scale := float64(q.tokenOrGroupScale(m, g))
			exact := 0.0
			for k := g * GroupSize; k < (g+1)*GroupSize; k++ {
				got := q.CodeValue(m, k)
				exact += got
				xv := float64(x[m*K+k])
				if xv != xv || scale == 0 || math.IsInf(scale, 0) {
					if got != 0 {
						report("code[%d,%d] = %g for x = %g, scale %g: want 0", m, k, got, xv, scale)
					}
					continue
				}
				r := xv / scale
				var want float64
				if q.Kind == ActInt8 {
					want = math.Max(-Int8Max, math.Min(Int8Max, math.RoundToEven(r)))
				} else {
					want = NearestE4M3(r)
				}
				if got == want {
					continue
				}
				mid := (got + want) / 2
				if math.Abs(r) >= gm || math.Abs(r-mid) > math.Abs(mid)*0x1p-22 {
					report("code[%d,%d] decodes to %g, want %g (x = %g, x/scale = %.10g)", m, k, got, want, xv, r)
				}
			}
			if rs := q.RowSums[m*G+g]; rs != float32(exact) {
				report("rowsum[%d,%d] = %g, want %g (exact sum %g)", m, g, rs, float32(exact), exact)
			}
		}
	}
	if nbad == 0 {
		return nil
	}
	return fmt.Errorf("refimpl: %d activation quantization violations; first: %s", nbad, strings.Join(bad, "; "))
}
