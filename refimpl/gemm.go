package refimpl

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"strings"
	"sync"

	"gonum.org/v1/gonum/mat"
)

// Subset selects the rows and columns of an output a reference computes.
// A nil Rows (Cols) means every row (column). Indices are ascending and
// distinct.
type Subset struct {
	Rows, Cols []int
	Seed       uint64 // the seed RandomSubset drew it with, for the record
}

// Full reports whether the subset is the whole output.
func (s Subset) Full() bool { return s.Rows == nil && s.Cols == nil }

// RandomSubset draws a seeded subset of maxRows of M rows and maxCols of N
// columns (maxRows <= 0 or >= M keeps every row, likewise columns),
// stratified: the range is cut into k equal strata [i·n/k, (i+1)·n/k) and
// exactly one index is taken in each, so no stretch of the output longer
// than two strata goes unchecked (with maxCols = N/16 every 16-column tile
// has a checked column). The first stratum gives the first row (column)
// and the last the last, so the edges of the output (rows past a tile, the
// last partition) are always checked.
func RandomSubset(M, N, maxRows, maxCols int, seed uint64) Subset {
	rng := rand.New(rand.NewPCG(seed, 0x5ab5e7))
	return Subset{Rows: pick(rng, M, maxRows), Cols: pick(rng, N, maxCols), Seed: seed}
}

// TileIndices returns one index in every tile of width tile over [0, n)
// (the last tile may be partial), seeded: with rows and columns both
// taken this way, every tile x tile block of an output has a checked
// element, so a wrong value confined to one tile of any kernel tiling
// that is a multiple of tile cannot go unseen. The first and last index
// are always included.
func TileIndices(n, tile int, seed uint64) []int {
	rng := rand.New(rand.NewPCG(seed, 0x711e))
	var out []int
	for lo := 0; lo < n; lo += tile {
		hi := min(n, lo+tile)
		out = append(out, lo+rng.IntN(hi-lo))
	}
	out[0] = 0
	if out[len(out)-1] != n-1 {
		out = append(out, n-1)
	}
	return out
}

// Union returns the sorted union of index sets (nil, meaning all, wins).
func Union(sets ...[]int) []int {
	seen := map[int]bool{}
	for _, s := range sets {
		if s == nil {
			return nil
		}
		for _, i := range s {
			seen[i] = true
		}
	}
	out := make([]int, 0, len(seen))
	for i := range seen {
		out = append(out, i)
	}
	sort.Ints(out)
	return out
}

// WithCols returns s with the columns cols added (when s selects a subset
// of the columns; a nil Cols already has them all).
func (s Subset) WithCols(cols ...int) Subset {
	if s.Cols == nil {
		return s
	}
	set := map[int]bool{}
	for _, c := range append(append([]int{}, s.Cols...), cols...) {
		set[c] = true
	}
	out := make([]int, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	sort.Ints(out)
	s.Cols = out
	return s
}

func pick(rng *rand.Rand, n, k int) []int {
	if k <= 0 || k >= n {
		return nil
	}
	out := make([]int, k)
	for i := range out {
		lo, hi := i*n/k, (i+1)*n/k
		switch i {
		case 0:
			out[i] = 0
		case k - 1:
			out[i] = n - 1
		default:
			out[i] = lo + rng.IntN(hi-lo)
		}
	}
	return out
}

// Describe says what part of an [M, N] output the subset covers, for the
// gate log and the results record.
func (s Subset) Describe(M, N int) string {
	if s.Full() {
		return fmt.Sprintf("all %d rows x %d columns", M, N)
	}
	part := func(sel []int, n int, what string) string {
		if sel == nil {
			return fmt.Sprintf("all %d %s", n, what)
		}
		return fmt.Sprintf("%d of %d %s", len(sel), n, what)
	}
	return fmt.Sprintf("%s x %s (seeded stratified subset, seed %#x)", part(s.Rows, M, "rows"), part(s.Cols, N, "columns"), s.Seed)
}

// RowsOf returns the selected rows of an M-row output.
func (s Subset) RowsOf(M int) []int { return orAll(s.Rows, M) }

// ColsOf returns the selected columns of an N-column output.
func (s Subset) ColsOf(N int) []int { return orAll(s.Cols, N) }

func orAll(sel []int, n int) []int {
	if sel != nil {
		return sel
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	return all
}

// Gather returns the selected elements of a full [M, N] output, row-major
// [len(rows), len(cols)], so a kernel's output compares with GEMMRef's.
func (s Subset) Gather(full []float64, M, N int) []float64 {
	rows, cols := s.RowsOf(M), s.ColsOf(N)
	out := make([]float64, 0, len(rows)*len(cols))
	for _, m := range rows {
		for _, n := range cols {
			out = append(out, full[m*N+n])
		}
	}
	return out
}

// gemmBlock is the number of output columns dequantized at once: a [K, 256]
// float64 block is 10 MiB at K = 5120, so memory stays bounded for any N.
const gemmBlock = 256

// GEMMRef is the float64 reference of a (merged) quantized GEMM:
//
//	y[m, n] = Σ_k a[p(n), m, k] · w[n, k]
//
// where a [P, M, K] holds the dequantized activations of each partition
// (QuantAct.Dequant, one per partition, concatenated), w is the dequantized
// weight (QWeight.Dequant) and p(n) is the partition of column n, parts
// giving the partition widths along N (nil: one partition). It computes the
// rows and columns of sel and returns them row-major [len(rows), len(cols)].
//
// The dense products run through gonum/mat's Dense.Mul (its Dgemm) on blocks of 256 columns,
// with one block per worker (GOMAXPROCS workers). The result is exact up to
// float64 summation roundoff (relative ~1e-16·√K), far below any tolerance
// of a float32-accumulating kernel.
func GEMMRef(a []float64, M int, w *QWeight, parts []int, sel Subset) []float64 {
	ref, _, _, _ := gemmRef(a, M, w, parts, sel, false)
	return ref
}

// GEMMRefWithMags returns GEMMRef's result and, for the same elements, the
// magnitudes of the terms a kernel adds up, which bound its summation
// error (unlike |y| they do not shrink when the terms cancel). mag is for a
// kernel that folds the zero point as a row-sum correction
// (docs/formats.md):
//
//	mag[m, n] = Σ_g |s[g,n]| · ( Σ_{k in g} |q[k,n] − h|·|a[p(n),m,k]|
//	                             + |z[g,n] − h|·|Σ_{k in g} a[p(n),m,k]| )
//
// with h = 2^(Bits−1) (8 for 4-bit codes); magAbs, the same with Σ|a| in
// place of |Σa|, is for a kernel that takes the codes as q − z directly
// (|q − z| <= |q − h| + |z − h|); magUns, mag plus
// h · Σ_g |s[g,n]| · (Σ_{k in g} |a| + |Σ_{k in g} a|), is for a kernel
// that sums the unsigned codes q (0..2^Bits − 1) and subtracts z·Σa in
// its fold (q <= |q − h| + h, z <= |z − h| + h). mag >= |y|, and magAbs
// and magUns >= mag, in float64. The magnitude products cost about as much
// as the result; the weights are decoded once for all.
func GEMMRefWithMags(a []float64, M int, w *QWeight, parts []int, sel Subset) (ref, mag, magAbs, magUns []float64) {
	return gemmRef(a, M, w, parts, sel, true)
}

func gemmRef(a []float64, M int, w *QWeight, parts []int, sel Subset, withMag bool) (out, mag, magAbs, magUns []float64) {
	if parts == nil {
		parts = []int{w.N}
	}
	K, G, P := w.K, w.Groups(), len(parts)
	hCode := 8.0 // h of the magnitudes: 2^(Bits−1)
	if w.Bits == 5 {
		hCode = 16
	}
	if len(a) != P*M*K {
		panic(fmt.Sprintf("refimpl: GEMMRef: %d activation values, want P*M*K = %d*%d*%d", len(a), P, M, K))
	}
	sum := 0
	for _, n := range parts {
		if n <= 0 || n%8 != 0 {
			panic(fmt.Sprintf("refimpl: GEMMRef: partition widths %v must be positive multiples of 8", parts))
		}
		sum += n
	}
	if sum != w.N {
		panic(fmt.Sprintf("refimpl: GEMMRef: partitions %v sum to %d, weight N = %d", parts, sum, w.N))
	}
	rows, cols := sel.RowsOf(M), sel.ColsOf(w.N)
	R, C := len(rows), len(cols)
	out = make([]float64, R*C)

	// Selected activation rows per partition, [R, K] each; for the
	// magnitude, [R, K+G]: |a| then |Σ_{k in g} a| per group.
	ap := make([][]float64, P)
	for p := range ap {
		if sel.Rows == nil {
			ap[p] = a[p*M*K : (p+1)*M*K]
			continue
		}
		ap[p] = make([]float64, R*K)
		for i, m := range rows {
			copy(ap[p][i*K:(i+1)*K], a[(p*M+m)*K:(p*M+m+1)*K])
		}
	}
	// For magAbs, [R, G]: Σ_{k in g} |a| − |Σ_{k in g} a| per group (the
	// zero-point term's difference between the two magnitudes); for
	// magUns, [R, G]: Σ_{k in g} |a| + |Σ_{k in g} a|.
	var aa, ad, au [][]float64
	if withMag {
		mag, magAbs, magUns = make([]float64, R*C), make([]float64, R*C), make([]float64, R*C)
		aa, ad, au = make([][]float64, P), make([][]float64, P), make([][]float64, P)
		for p := range aa {
			aa[p], ad[p], au[p] = make([]float64, R*(K+G)), make([]float64, R*G), make([]float64, R*G)
			for i := 0; i < R; i++ {
				src, dst := ap[p][i*K:(i+1)*K], aa[p][i*(K+G):(i+1)*(K+G)]
				for g := 0; g < G; g++ {
					s, sa := 0.0, 0.0
					for k := g * GroupSize; k < (g+1)*GroupSize; k++ {
						dst[k] = math.Abs(src[k])
						s += src[k]
						sa += dst[k]
					}
					dst[K+g] = math.Abs(s)
					ad[p][i*G+g] = sa - math.Abs(s)
					au[p][i*G+g] = sa + math.Abs(s)
				}
			}
		}
	}

	// Work items: runs of up to gemmBlock selected columns inside one
	// partition.
	type item struct {
		p  int
		ci int // first index into cols/out columns
		nb int
	}
	var items []item
	start := 0
	for p, width := range parts {
		end := start + width
		i := sort.SearchInts(cols, start)
		for i < C && cols[i] < end {
			j := i
			for j < C && j-i < gemmBlock && cols[j] < end {
				j++
			}
			items = append(items, item{p: p, ci: i, nb: j - i})
			i = j
		}
		start = end
	}

	work := make(chan item)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(items)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var d colDecoder
			wb := make([]float64, K*gemmBlock)
			var mb, hb []float64
			if withMag {
				mb, hb = make([]float64, (K+G)*gemmBlock), make([]float64, G*gemmBlock)
			}
			cb := make([]float64, R*gemmBlock)
			for it := range work {
				ns := cols[it.ci : it.ci+it.nb]
				wk := wb[:K*it.nb]
				var wm []float64
				if withMag {
					wm = mb[:(K+G)*it.nb]
				}
				d.decode(w, ns, wk, wm)
				c := cb[:R*it.nb]
				mulInto(c, R, K, it.nb, ap[it.p], wk)
				for r := 0; r < R; r++ {
					copy(out[r*C+it.ci:r*C+it.ci+it.nb], c[r*it.nb:(r+1)*it.nb])
				}
				if !withMag {
					continue
				}
				mulInto(c, R, K+G, it.nb, aa[it.p], wm)
				for r := 0; r < R; r++ {
					copy(mag[r*C+it.ci:r*C+it.ci+it.nb], c[r*it.nb:(r+1)*it.nb])
				}
				mulInto(c, R, G, it.nb, ad[it.p], wm[K*it.nb:(K+G)*it.nb])
				for r := 0; r < R; r++ {
					for j := 0; j < it.nb; j++ {
						magAbs[r*C+it.ci+j] = mag[r*C+it.ci+j] + c[r*it.nb+j]
					}
				}
				wh := hb[:G*it.nb] // |s[g, n]| · h
				for g := 0; g < G; g++ {
					for j, n := range ns {
						wh[g*it.nb+j] = math.Abs(w.Scales[g*w.N+n]) * hCode
					}
				}
				mulInto(c, R, G, it.nb, au[it.p], wh)
				for r := 0; r < R; r++ {
					for j := 0; j < it.nb; j++ {
						magUns[r*C+it.ci+j] = mag[r*C+it.ci+j] + c[r*it.nb+j]
					}
				}
			}
		}()
	}
	for _, it := range items {
		work <- it
	}
	close(work)
	wg.Wait()
	return out, mag, magAbs, magUns
}

// colDecoder dequantizes a block of (not necessarily contiguous) weight
// columns; its scratch is reused across blocks.
type colDecoder struct {
	off       []int  // per column: word offset in a row of QWeight
	sh        []uint // per column: nibble shift (AWQ order)
	lut, mlut []float64
}

// decode writes wk[k*nb+j] = w[ns[j], k] for the nb = len(ns) columns ns
// and, when wm is not nil, the magnitude weights of GEMMRefWithMags:
// wm[k*nb+j] = |s|·|q − h| for k < K and wm[(K+g)*nb+j] = |s|·|z − h|.
func (d *colDecoder) decode(w *QWeight, ns []int, wk, wm []float64) {
	nb, K, wpr := len(ns), w.K, w.N/8
	nq := 16
	if w.Bits == 5 {
		nq = 32
	}
	h := nq / 2
	if cap(d.off) < nb {
		d.off, d.sh = make([]int, nb), make([]uint, nb)
		d.lut, d.mlut = make([]float64, nb*32), make([]float64, nb*32)
	}
	off, sh, lut, mlut := d.off[:nb], d.sh[:nb], d.lut[:nb*nq], d.mlut[:nb*nq]
	for j, n := range ns {
		off[j], sh[j] = n/8, 4*awqSlot[n%8]
	}
	for g := 0; g < w.Groups(); g++ {
		for j, n := range ns {
			s, z := w.Scales[g*w.N+n], w.Zero(g, n)
			for q := 0; q < nq; q++ {
				lut[j*nq+q] = float64(q-z) * s
			}
			if wm != nil {
				as := math.Abs(s)
				for q := 0; q < nq; q++ {
					mlut[j*nq+q] = as * math.Abs(float64(q-h))
				}
				wm[(K+g)*nb+j] = as * math.Abs(float64(z-h))
			}
		}
		for k := g * GroupSize; k < (g+1)*GroupSize; k++ {
			row := w.QWeight[k*wpr : (k+1)*wpr]
			dst := wk[k*nb : (k+1)*nb]
			var hi []int32
			if w.Bits == 5 {
				hi = w.QHigh[k*(w.N/32) : (k+1)*(w.N/32)]
			}
			var mdst []float64
			if wm != nil {
				mdst = wm[k*nb : (k+1)*nb]
			}
			for j := range dst {
				q := int(uint32(row[off[j]]) >> sh[j] & 0xF)
				if hi != nil {
					q |= int(PlaneBit(hi, ns[j])) << 4
				}
				dst[j] = lut[j*nq+q]
				if mdst != nil {
					mdst[j] = mlut[j*nq+q]
				}
			}
		}
	}
}

// RelErr is ||got - ref||₂ / ||ref||₂, the GEMM gate's figure of merit
// (docs/gates.md). A NaN anywhere in got gives NaN, which fails every
// "rel <= tol" test; an Inf gives +Inf. A zero ref gives 0 if got is zero
// too and +Inf otherwise. It panics if the lengths differ.
func RelErr(got, ref []float64) float64 {
	if len(got) != len(ref) {
		panic(fmt.Sprintf("refimpl: RelErr of %d values against %d", len(got), len(ref)))
	}
	for _, g := range got {
		if g != g {
			return math.NaN()
		}
		if math.IsInf(g, 0) {
			return math.Inf(1)
		}
	}
	diff := make([]float64, len(got))
	for i := range got {
		diff[i] = got[i] - ref[i]
	}
	num, den := norm2(diff), norm2(ref)
	if den == 0 {
		if num == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return num / den
}

// RelErrBF16 is RelErr for a bf16 output given as its bits.
func RelErrBF16(got []uint16, ref []float64) float64 {
	g := make([]float64, len(got))
	for i, v := range got {
		g[i] = BF16ToF64(v)
	}
	return RelErr(g, ref)
}

// Bf16Floor is the relative error of rounding the reference itself to bf16,
// ||bf16(ref) - ref||₂ / ||ref||₂: no bf16 output can be expected to do
// better, so GEMM gates pass at a stated multiple of it (1.5× by default).
func Bf16Floor(ref []float64) float64 {
	r := make([]float64, len(ref))
	for i, v := range ref {
		r[i] = RoundBF16(v)
	}
	return RelErr(r, ref)
}

// norm2 is the Euclidean norm, scaled so that neither overflow nor
// underflow of the squares can spoil it.
func norm2(x []float64) float64 {
	amax := 0.0
	for _, v := range x {
		amax = math.Max(amax, math.Abs(v))
	}
	if amax == 0 || math.IsInf(amax, 0) {
		return amax
	}
	s := 0.0
	for _, v := range x {
		t := v / amax
		s += t * t
	}
	return amax * math.Sqrt(s)
}

// FormatBad lists up to max elements of got that differ from want by more
// than tol·max|want|, as "[i] got g want w" (for gate failure messages), with
// the total count.
func FormatBad(got, want []float64, tol float64, max int) (string, int) {
	scale := 0.0
	for _, v := range want {
		scale = math.Max(scale, math.Abs(v))
	}
	var b strings.Builder
	n := 0
	for i := range got {
		if d := math.Abs(got[i] - want[i]); d > tol*scale || got[i] != got[i] {
			if n < max {
				fmt.Fprintf(&b, " [%d] got %.9g want %.9g;", i, got[i], want[i])
			}
			n++
		}
	}
	return strings.TrimSuffix(b.String(), ";"), n
}

// mulInto sets c ([r, n], row-major) to a ([r, k]) times b ([k, n]) in
// fp64, through gonum/mat over the slices as they are (no copies).
func mulInto(c []float64, r, k, n int, a, b []float64) {
	if r == 0 || k == 0 || n == 0 {
		clear(c[:r*n])
		return
	}
	mat.NewDense(r, n, c[:r*n]).Mul(mat.NewDense(r, k, a[:r*k]), mat.NewDense(k, n, b[:k*n]))
}
