package i8

import (
	"encoding/binary"
	"math"
	"math/rand/v2"

	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/internal/par"
	"github.com/parharness/parharness/refimpl"
)

// The Go mirror of the I8 producers: what every producer kernel must
// write, as the bytes its device buffers hold. It composes refimpl's
// float32 rotation (RotRecords.RotateF32Into, the e4m3 producers' mirror
// too), the bf16 rounding of pass A (RoundRowsBF16, GroupAmax) and the
// int8 quantizers (QuantizeActGroupInt8 on the fp32 rotated rows,
// QuantizeActTokenInt8 on the bf16-rounded ones), whose row sums are
// exact integers in float32 and are written here as int32. Each task is
// one partition's block of up to 16 rows, written to its own rows of the
// outputs, so the bytes do not depend on how many CPUs run it.

// mirrorRows is the rows of one mirror task (one tile of the tiled layout).
const mirrorRows = 16

// i8Want is what each I8 producer Op must write, partition major.
type i8Want struct {
	groupCodes, groupScales, groupRSums []byte // OpGroup
	tokRow, tokTiled                    []byte // OpPassC, OpToken codes, row-major [P,M,K] / tiled [P,Mpad,K]
	tokScales, tokRSums                 []byte // [P,M] f32, [P,M,G] i32
	// xrBuf, gamaxBuf are pass A's rows and group amaxes (pass C's inputs)
	// followed by rowsPastM rows of the 0xFF poison; xr, gamax their starts.
	xrBuf, gamaxBuf, xr, gamax []byte
}

// rowsPastM is the number of rows past each output that must stay poisoned.
const rowsPastM = 3

func newI8Want(K, P, M int) *i8Want {
	G := K / refimpl.GroupSize
	w := &i8Want{
		groupCodes: make([]byte, P*M*K), groupScales: make([]byte, 4*P*M*G), groupRSums: make([]byte, 4*P*M*G),
		tokRow: make([]byte, P*M*K), tokTiled: make([]byte, P*refimpl.PadRows(M)*K),
		tokScales: make([]byte, 4*P*M), tokRSums: make([]byte, 4*P*M*G),
		xrBuf: make([]byte, 2*(P*M*K+rowsPastM*K)), gamaxBuf: make([]byte, 4*(P*M*G+rowsPastM*G)),
	}
	w.xr, w.gamax = w.xrBuf[:2*P*M*K], w.gamaxBuf[:4*P*M*G]
	for _, tail := range [][]byte{w.xrBuf[len(w.xr):], w.gamaxBuf[len(w.gamax):]} {
		for i := range tail {
			tail[i] = 0xFF
		}
	}
	return w
}

// buildI8Mirror computes the mirror of one case on every CPU: x [M, K]
// bf16 rows rotated by each of rr's P partitions.
func buildI8Mirror(rr *refimpl.RotRecords, x []uint16, M int) *i8Want {
	K, P, G := rr.K, rr.P, rr.K/refimpl.GroupSize
	w := newI8Want(K, P, M)
	Mpad := refimpl.PadRows(M)
	blocks := (M + mirrorRows - 1) / mirrorRows
	par.For(P*blocks, func(t int) {
		p, m0 := t/blocks, (t%blocks)*mirrorRows
		n := min(mirrorRows, M-m0)
		row := p*M + m0
		v := make([]float32, n*K)
		rr.RotateF32Into(v, x[m0*K:(m0+n)*K], n, p)
		gq := refimpl.QuantizeActGroupInt8(v, n, K)
		copy(w.groupCodes[row*K:], gq.Codes)
		gates.PutF32(w.groupScales[4*row*G:], gq.GroupScale)
		putI32(w.groupRSums[4*row*G:], gq.RowSums)
		h, f := refimpl.RoundRowsBF16(v)
		gates.PutU16(w.xr[2*row*K:], h)
		gates.PutF32(w.gamax[4*row*G:], refimpl.GroupAmax(f, n, K))
		tq := refimpl.QuantizeActTokenInt8(f, n, K)
		copy(w.tokRow[row*K:], tq.Codes)
		gates.PutF32(w.tokScales[4*row:], tq.TokenScale)
		putI32(w.tokRSums[4*row*G:], tq.RowSums)
		tiled := w.tokTiled[p*Mpad*K : (p+1)*Mpad*K]
		for i := 0; i < n; i++ {
			for k, c := range tq.Codes[i*K : (i+1)*K] {
				tiled[refimpl.TiledOffset(m0+i, k, K)] = c
			}
		}
	})
	return w
}

// putI32 writes row sums (exact integers held in float32) as int32.
func putI32(dst []byte, v []float32) {
	for i, x := range v {
		binary.LittleEndian.PutUint32(dst[4*i:], uint32(int32(x)))
	}
}

// Activation distributions of the producer cases.
//   - normal: a log-normal row scale times N(0, 1);
//   - outlier: 1% of values x1000 (most codes of such a group near 0);
//   - subnormal: whole rows and groups in the bf16/float32 subnormal range
//     (a kernel that flushes denormals changes the bytes);
//   - ties: drawn with tieRotation, see there.
var producerDists = []string{"normal", "subnormal", "outlier"}

// randomActivations draws bf16 rows [M, K] of dist; row m draws from its
// own stream (PCG(seed, m)).
func randomActivations(rng *rand.Rand, M, K int, dist string) []uint16 {
	seed := rng.Uint64()
	x := make([]uint16, M*K)
	par.For(M, func(m int) {
		r := rand.New(rand.NewPCG(seed, uint64(m)))
		if dist == "ties" {
			tieRow(r, x[m*K:(m+1)*K])
			return
		}
		rowScale := math.Exp(r.NormFloat64())
		for k := 0; k < K; k++ {
			v := r.NormFloat64() * rowScale
			switch dist {
			case "subnormal":
				g := k / refimpl.GroupSize
				if m%2 == 0 || g%3 == 0 || r.IntN(4) != 0 {
					v *= 1e-39
				}
			case "outlier":
				if r.IntN(100) == 0 {
					v *= 1000
				}
			}
			x[m*K+k] = refimpl.F64ToBF16(v)
		}
	})
	return x
}

// tieChannelScale is the channel scale of the odd groups of tieRotation.
const tieChannelScale = 0x1p-14

// tieRotation is the rotation of the "ties" case: no Givens rotation (all
// angles 0, so every layer passes values through unchanged), unit channel
// scales in even groups and 2^-14 in odd ones. With tieRow's values:
//   - even groups: channel 0 is ±127·2^e and the others (j + 1/2)·2^e, so
//     the group scale (and, e being the row's, the token scale) is exactly
//     2^e and every other code an exact tie: round half away from zero
//     differs from round half to even on about half of them;
//   - odd groups: channel 0 is 38·2^-133 (a bf16 subnormal), the others
//     j·2^-133 with j <= 38, so the rotated values are 4j·2^-149 and the
//     group scale 152/127 · 2^-149 rounds to 2^-149: codes up to 152 must
//     clamp to 127 (a clamp to 128 writes 0x80). After pass A's bf16
//     rounding these values are 0, so the per-token codes there are 0.
func tieRotation(K int) *refimpl.Rotation {
	r := refimpl.IdentityRotation(K, refimpl.DefaultKrot)
	for k := range r.ChannelScales {
		if (k/refimpl.GroupSize)%2 == 1 {
			r.ChannelScales[k] = tieChannelScale
		}
	}
	return r
}

// tieRow fills one row for tieRotation (see there).
func tieRow(r *rand.Rand, row []uint16) {
	e := r.IntN(21) - 10
	sign := func() float64 { return float64(1 - 2*r.IntN(2)) }
	for k := range row {
		g, c := k/refimpl.GroupSize, k%refimpl.GroupSize
		var v float64
		switch {
		case g%2 == 0 && c == 0:
			v = sign() * 127 * math.Ldexp(1, e)
		case g%2 == 0:
			v = sign() * (float64(r.IntN(127)) + 0.5) * math.Ldexp(1, e)
		case c == 0:
			v = sign() * 38 * math.Ldexp(1, -133)
		default:
			v = sign() * float64(r.IntN(39)) * math.Ldexp(1, -133)
		}
		row[k] = refimpl.F64ToBF16(v)
	}
}
