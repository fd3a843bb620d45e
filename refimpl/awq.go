package refimpl

import (
	"errors"
	"fmt"
)

// GroupSize is the quantization group along K, for weights (zeros and
// scales) and for per-group activation scales alike.
const GroupSize = 128

// AWQOrder is the AWQ nibble order: nibble i (bits 4i..4i+3) of packed word
// c holds column 8c + AWQOrder[i].
var AWQOrder = [8]int{0, 2, 4, 6, 1, 3, 5, 7}

// awqSlot is the inverse of AWQOrder: column 8c+j sits in nibble awqSlot[j].
var awqSlot = [8]uint{0, 4, 1, 5, 2, 6, 3, 7}

// PackAWQ packs 4-bit codes [rows, n] (row-major, values 0..15) into AWQ
// words [rows, n/8]. It panics if n is not a multiple of 8 or a code is out
// of range (the low nibble of a 5-bit code is packed by PackInt5, int5.go).
func PackAWQ(codes []uint8, rows, n int) []int32 {
	checkPack(len(codes), rows, n, 8)
	words := make([]int32, rows*n/8)
	for idx, c := range codes {
		if c > 15 {
			panic(fmt.Sprintf("refimpl: PackAWQ: code %d at %d is not 4-bit", c, idx))
		}
		r, col := idx/n, idx%n
		words[r*(n/8)+col/8] |= int32(uint32(c) << (4 * awqSlot[col%8]))
	}
	return words
}

// UnpackAWQ unpacks AWQ words [rows, n/8] into codes [rows, n]. The word is
// read as unsigned (nibble 7 holds the int32 sign bit).
func UnpackAWQ(words []int32, rows, n int) []uint8 {
	checkPack(len(words)*8, rows, n, 8)
	codes := make([]uint8, rows*n)
	for r := 0; r < rows; r++ {
		for c := 0; c < n/8; c++ {
			w := uint32(words[r*(n/8)+c])
			for i := 0; i < 8; i++ {
				codes[r*n+8*c+AWQOrder[i]] = uint8(w >> (4 * i) & 0xF)
			}
		}
	}
	return codes
}

// AWQNibble returns column n's 4-bit code from a row of AWQ words.
func AWQNibble(row []int32, n int) uint8 {
	return uint8(uint32(row[n/8]) >> (4 * awqSlot[n%8]) & 0xF)
}

func checkPack(elems, rows, n, mult int) {
	if n%mult != 0 || rows < 0 || elems != rows*n {
		panic(fmt.Sprintf("refimpl: packing %d elements as [%d, %d] (N must be a multiple of %d)", elems, rows, n, mult))
	}
}

// QWeight is one quantized weight in checkpoint layout: group 128 along K,
// asymmetric 4- or 5-bit codes, fp16 group scales (held as their exact
// float64 values). For a merged linear it is the concatenation of its
// partitions along N (MergeQWeights).
type QWeight struct {
	K, N    int
	Bits    int       // 4 or 5
	QWeight []int32   // [K, N/8] AWQ words, low nibbles
	QZeros  []int32   // [K/128, N/8] AWQ words, raw zero points (no minus one)
	QHigh   []int32   // [K, N/32] fifth-bit plane of the codes; Bits == 5 only
	ZHigh   []int32   // [K/128, N/32] fifth-bit plane of the zeros; Bits == 5 only
	Scales  []float64 // [K/128, N]
}

// Groups is K / 128.
func (w *QWeight) Groups() int { return w.K / GroupSize }

// Validate checks dimensions and slice lengths.
func (w *QWeight) Validate() error {
	switch {
	case w.K <= 0 || w.K%GroupSize != 0:
		return fmt.Errorf("refimpl: QWeight K=%d is not a positive multiple of %d", w.K, GroupSize)
	case w.N <= 0 || w.N%8 != 0:
		return fmt.Errorf("refimpl: QWeight N=%d is not a positive multiple of 8", w.N)
	case w.Bits != 4 && w.Bits != 5:
		return fmt.Errorf("refimpl: QWeight Bits=%d, want 4 or 5", w.Bits)
	case len(w.QWeight) != w.K*w.N/8:
		return fmt.Errorf("refimpl: QWeight qweight has %d words, want K*N/8 = %d", len(w.QWeight), w.K*w.N/8)
	case len(w.QZeros) != w.Groups()*w.N/8:
		return fmt.Errorf("refimpl: QWeight qzeros has %d words, want K/128*N/8 = %d", len(w.QZeros), w.Groups()*w.N/8)
	case len(w.Scales) != w.Groups()*w.N:
		return fmt.Errorf("refimpl: QWeight scales has %d values, want K/128*N = %d", len(w.Scales), w.Groups()*w.N)
	}
	if w.Bits == 5 {
		switch {
		case w.N%32 != 0:
			return fmt.Errorf("refimpl: 5-bit QWeight N=%d is not a multiple of 32", w.N)
		case len(w.QHigh) != w.K*w.N/32:
			return fmt.Errorf("refimpl: QWeight code plane has %d words, want K*N/32 = %d", len(w.QHigh), w.K*w.N/32)
		case len(w.ZHigh) != w.Groups()*w.N/32:
			return fmt.Errorf("refimpl: QWeight zero plane has %d words, want K/128*N/32 = %d", len(w.ZHigh), w.Groups()*w.N/32)
		}
	} else if w.QHigh != nil || w.ZHigh != nil {
		return errors.New("refimpl: 4-bit QWeight carries fifth-bit planes")
	}
	return nil
}

// Code returns the weight code q[k, n].
func (w *QWeight) Code(k, n int) int {
	c := AWQNibble(w.QWeight[k*(w.N/8):], n)
	if w.Bits == 5 {
		c |= PlaneBit(w.QHigh[k*(w.N/32):], n) << 4
	}
	return int(c)
}

// Zero returns the zero point z[g, n].
func (w *QWeight) Zero(g, n int) int {
	z := AWQNibble(w.QZeros[g*(w.N/8):], n)
	if w.Bits == 5 {
		z |= PlaneBit(w.ZHigh[g*(w.N/32):], n) << 4
	}
	return int(z)
}

// Dequant returns w[n, k] = (q[k, n] - z[k/128, n]) * s[k/128, n], exact in
// float64.
func (w *QWeight) Dequant(n, k int) float64 {
	g := k / GroupSize
	return float64(w.Code(k, n)-w.Zero(g, n)) * w.Scales[g*w.N+n]
}

// DequantRow writes the dequantized weight row w[n, 0..K) into dst.
func (w *QWeight) DequantRow(n int, dst []float64) {
	for k := 0; k < w.K; k++ {
		dst[k] = w.Dequant(n, k)
	}
}

// MergeQWeights concatenates weights with the same K and Bits along N, as a
// loader merges q/k/v or gate/up into one launch. A single weight is
// returned as is (validated), not copied.
func MergeQWeights(ws ...*QWeight) (*QWeight, error) {
	if len(ws) == 0 {
		return nil, errors.New("refimpl: MergeQWeights of nothing")
	}
	if len(ws) == 1 {
		return ws[0], ws[0].Validate()
	}
	out := &QWeight{K: ws[0].K, Bits: ws[0].Bits}
	for i, w := range ws {
		if err := w.Validate(); err != nil {
			return nil, fmt.Errorf("partition %d: %w", i, err)
		}
		if w.K != out.K || w.Bits != out.Bits {
			return nil, fmt.Errorf("refimpl: MergeQWeights: partition %d is K=%d %d-bit, partition 0 K=%d %d-bit", i, w.K, w.Bits, out.K, out.Bits)
		}
		out.N += w.N
	}
	G := out.Groups()
	out.QWeight = mergeRows(ws, out.K, func(w *QWeight) ([]int32, int) { return w.QWeight, w.N / 8 })
	out.QZeros = mergeRows(ws, G, func(w *QWeight) ([]int32, int) { return w.QZeros, w.N / 8 })
	if out.Bits == 5 {
		out.QHigh = mergeRows(ws, out.K, func(w *QWeight) ([]int32, int) { return w.QHigh, w.N / 32 })
		out.ZHigh = mergeRows(ws, G, func(w *QWeight) ([]int32, int) { return w.ZHigh, w.N / 32 })
	}
	out.Scales = make([]float64, 0, G*out.N)
	for g := 0; g < G; g++ {
		for _, w := range ws {
			out.Scales = append(out.Scales, w.Scales[g*w.N:(g+1)*w.N]...)
		}
	}
	return out, nil
}

func mergeRows(ws []*QWeight, rows int, get func(*QWeight) ([]int32, int)) []int32 {
	total := 0
	for _, w := range ws {
		_, width := get(w)
		total += rows * width
	}
	out := make([]int32, 0, total)
	for r := 0; r < rows; r++ {
		for _, w := range ws {
			s, width := get(w)
			out = append(out, s[r*width:(r+1)*width]...)
		}
	}
	return out
}
