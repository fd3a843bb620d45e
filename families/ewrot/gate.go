package ewrot

import (
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/parharness/parharness/families/internal/classes"
	"github.com/parharness/parharness/families/producers"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/internal/coverage"
	"github.com/parharness/parharness/internal/par"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/refimpl"
	"github.com/parharness/parharness/shapes"
)

// The ewrot gates.
//
// ewrot (device): for every op (Mode) on its deployed (K, P) (the linear it
// feeds, Mode.Linear, in the TP=2 set, and TP=1 when full), decode and
// prefill M (odd M included), and the cases classCover adds so every
// launch class of the domain runs (synthetic P > 1 and odd-G shapes, a
// two-group norm head): ew_op_bf16's rows, ew_rotq_group's and
// ew_rotq_token's (row-major and tiled) outputs equal the Go mirror byte
// for byte, with every output poisoned (0xFF) before each launch, rows
// past M untouched, outputs that are not the kernel's still poisoned, and
// canaries; and the fused kernels equal the unfused chain (ew_op_bf16,
// then the producers' baseline of the same Op on its rows, launched
// through producers.ProducerLaunch) byte for byte over whole downloads.
//
// ewrot-semantics (CPU, semantics.go): the mirror against fp64.

func init() {
	gates.Register(gates.Gate{Family: Family, Name: "ewrot", Headline: []string{"variant_runs", "cases"}, Suites: gates.Quick | gates.Full, Device: true, Run: gateEwrot,
		Proves: "the elementwise-fed producers (silu-mul, sigmoid gate, gated RMSNorm; decode band and per token, row-major and tiled) and the unfused op equal the Go mirror byte for byte on each op's deployed (K, P), decode and prefill M (odd M included), with poisoned outputs and untouched rows past M; fused equals ew_op_bf16 + the producers' kernel byte for byte"})
}

// Case is one gate case.
type Case struct {
	K, P, M int
	Params
	Dist string
}

func (c Case) String() string {
	return fmt.Sprintf("%s K=%d P=%d M=%d D=%d %s", c.Mode, c.K, c.P, c.M, c.D, c.Dist)
}

// SyntheticShapes are (K, P) pairs no op is deployed on that the class
// domain includes: several partitions, odd G, and (K=512) a gated norm
// head of two groups.
var SyntheticShapes = []shapes.KP{{K: 384, P: 3}, {K: 640, P: 1}, {K: 512, P: 2}}

// ClassMaxM is the largest M of the class domain (the prefill ladder's top).
const ClassMaxM = 8192

// deployedKP are the (K, P) pairs of the linear mode feeds in the sets.
func deployedKP(mode Mode, sets []string) []shapes.KP {
	var out []shapes.KP
	seen := map[shapes.KP]bool{}
	for _, name := range sets {
		l, ok := shapes.MustBuiltin(name).Linear(mode.Linear())
		if !ok {
			continue
		}
		kp := shapes.KP{K: l.K, P: l.P()}
		if !seen[kp] {
			seen[kp] = true
			out = append(out, kp)
		}
	}
	return out
}

// headDim is the norm head size of a case at K: the deployed one, or two
// groups on the synthetic K=512.
func headDim(K int) int {
	if K == 512 {
		return 2 * HeadDim
	}
	return HeadDim
}

func newCase(mode Mode, kp shapes.KP, M int, dist string) Case {
	return Case{K: kp.K, P: kp.P, M: M, Params: Params{Mode: mode, D: headDim(kp.K), Eps: float32(refimpl.RMSNormEps)}, Dist: dist}
}

// handCases: each op's deployed shapes times an M list (quick: both bands
// with odd M; full: both ladders whole plus odd M).
func handCases(full bool) []Case {
	sets := []string{"qwen38-27b-tp2"}
	Ms := []int{1, 5, 8, 64, 127, 200, 513}
	if full {
		sets = append(sets, "qwen38-27b-tp1")
		tp2 := shapes.MustBuiltin("qwen38-27b-tp2")
		Ms = append(append(append([]int{}, tp2.Ladder("decode")...), tp2.Ladder("prefill")...), 3, 77, 1023)
	}
	var out []Case
	i := 0
	for _, mode := range Modes {
		for _, kp := range deployedKP(mode, sets) {
			for _, M := range Ms {
				out = append(out, newCase(mode, kp, M, Dists[(i+i/len(Ms))%len(Dists)]))
				i++
			}
		}
	}
	return out
}

// ClassDomain is every case shape a producer may be launched with: each
// op's deployed (K, P) in every built-in set and SyntheticShapes, times
// M = 1..ClassMaxM.
func ClassDomain() []Case {
	var out []Case
	for _, mode := range Modes {
		kps := append(deployedKP(mode, shapes.Builtins()), SyntheticShapes...)
		for _, kp := range kps {
			for M := 1; M <= ClassMaxM; M++ {
				out = append(out, newCase(mode, kp, M, ""))
			}
		}
	}
	return out
}

// CaseKernels are the ewrot kernels a case at M runs on arch.
func CaseKernels(M int, arch string, full bool) []kernels.Kernel {
	return kernels.Select(kernels.Query{Family: Family, M: M, Arch: arch, Full: full, Roles: []kernels.Role{kernels.Baseline, kernels.Variant}})
}

// CaseClasses are the launch classes of every kernel a case runs on
// either target.
func CaseClasses(c Case, full bool) []string {
	return classes.Union(func(arch string) []kernels.Kernel { return CaseKernels(c.M, arch, full) }, func(k kernels.Kernel) []string {
		if k.Op == OpToken && producers.FusedTokenCheck(c.K) != nil {
			return nil
		}
		cls, err := LaunchClasses(k.Name, c.M, c.K, c.P, c.Mode)
		if err != nil {
			panic(err) // a registered kernel without classes is a programming error
		}
		return cls
	})
}

var (
	coverOnce [2]sync.Once
	coverAdds [2][]Case
)

// classCover is the cheapest set of domain cases (cost: rows times K times
// P plus a per-case overhead) that, added to base, reaches every class.
func classCover(base []Case, full bool) []Case {
	fi := map[bool]int{false: 0, true: 1}[full]
	coverOnce[fi].Do(func() {
		coverAdds[fi] = coverage.Extend(base, ClassDomain(), func(c Case) []string { return CaseClasses(c, full) },
			func(c Case) float64 { return float64((c.M + 32) * c.K * c.P) },
			func(j int, c Case) Case { c.Dist = Dists[j%len(Dists)]; return c })
	})
	return coverAdds[fi]
}

// Cases are the gate's cases: handCases plus classCover's.
func Cases(full bool) []Case {
	base := handCases(full)
	return append(base, classCover(base, full)...)
}

// rowsPastM is how many rows past M every output buffer has, poisoned and
// checked untouched.
const rowsPastM = 3

// Prepared is one case's host data: inputs, records and the mirror.
type Prepared struct {
	Case
	In   OpInputs
	Rots []*refimpl.Rotation
	RR   *refimpl.RotRecords
	Want Want
}

// Prepare draws a case's rotations and inputs from seed and builds its
// records and mirror (the decode-band outputs when withGroup).
func Prepare(seed uint64, c Case, withGroup bool) (*Prepared, error) {
	rng := rand.New(rand.NewPCG(seed, 0xe7))
	pc := &Prepared{Case: c, Rots: make([]*refimpl.Rotation, c.P)}
	for p := range pc.Rots {
		pc.Rots[p] = refimpl.RandomRotation(rng, c.K)
	}
	var err error
	if pc.RR, err = refimpl.BuildRotRecords(pc.Rots); err != nil {
		return nil, err
	}
	pc.In = RandomInputs(rng, c.Params, c.M, c.K, c.Dist)
	y := OpRows(c.Params, pc.In, c.M, c.K)
	pc.Want = BuildWant(pc.RR, y, c.M, c.K, c.P, withGroup)
	return pc, nil
}

// CompareOut compares a download (want, then untouched poison past it)
// element by element; elem is the element size, where names an index.
func CompareOut(r gates.Reporter, what string, got, want []byte, elem int, where func(i int) string) {
	if len(got) < len(want) {
		r.Failf("%s: %d bytes downloaded, the mirror has %d", what, len(got), len(want))
		return
	}
	if !par.Equal(got[:len(want)], want) {
		bad, first := 0, ""
		for i := 0; i+elem <= len(want); i += elem {
			if string(got[i:i+elem]) != string(want[i:i+elem]) {
				if bad < 3 {
					first += fmt.Sprintf(" [%s: got %x want %x]", where(i/elem), got[i:i+elem], want[i:i+elem])
				}
				bad++
			}
		}
		r.Failf("%s: %d of %d elements differ;%s", what, bad, len(want)/elem, first)
	}
	if i := gates.FirstWritten(got, len(want)); i >= 0 {
		r.Failf("%s: byte %d past the end of the output (rows past M) was written (%#02x)", what, i, got[i])
	}
}

// Outputs are the downloads of one launch's output buffers, each with its
// poisoned tail.
type Outputs struct{ Rows, Codes, Scale, RSum []byte }

func poisoned(r gates.Reporter, label, what string, b []byte) {
	if i := par.IndexNot(b, 0xFF); i >= 0 {
		r.Failf("%s: %s was written at byte %d (%#02x): not this kernel's output, every byte must still be the poison", label, what, i, b[i])
	}
}

// CheckOp compares what a kernel of op wrote with the mirror; outputs that
// are not op's must still hold the poison.
func CheckOp(r gates.Reporter, label, op string, tiled bool, M, K, P int, w Want, got Outputs) {
	G, Mpad := K/refimpl.GroupSize, refimpl.PadRows(M)
	at := func(perRow int) func(int) string {
		return func(i int) string {
			row := i / perRow
			return fmt.Sprintf("p=%d m=%d i=%d", row/M, row%M, i%perRow)
		}
	}
	switch op {
	case OpElementwise:
		CompareOut(r, label+" rows", got.Rows, w.Rows, 2, at(K))
		poisoned(r, label, "codes", got.Codes)
		poisoned(r, label, "scale", got.Scale)
		poisoned(r, label, "rsum", got.RSum)
	case OpGroup:
		CompareOut(r, label+" codes", got.Codes, w.GroupCodes, 1, at(K))
		CompareOut(r, label+" scales", got.Scale, w.GroupScales, 4, at(G))
		CompareOut(r, label+" row sums", got.RSum, w.GroupRSums, 4, at(G))
	case OpToken:
		if tiled {
			CompareOut(r, label+" codes", got.Codes, w.TokCodesTiled, 1, func(i int) string {
				return fmt.Sprintf("p=%d tiled byte %d", i/(Mpad*K), i%(Mpad*K))
			})
		} else {
			CompareOut(r, label+" codes", got.Codes, w.TokCodesRow, 1, at(K))
		}
		CompareOut(r, label+" token scales", got.Scale, w.TokScales, 4, func(i int) string { return fmt.Sprintf("p=%d m=%d", i/M, i%M) })
		CompareOut(r, label+" row sums", got.RSum, w.TokRSums, 4, at(G))
	default:
		r.Failf("%s: op %q has no check (families/ewrot/gate.go CheckOp)", label, op)
	}
}

// Layouts are the code layouts a kernel of op writes.
func Layouts(op string) []bool {
	if op == OpToken {
		return []bool{false, true}
	}
	return []bool{false}
}

// LayoutName names a layout in labels and bench variants.
func LayoutName(tiled bool) string {
	if tiled {
		return "tiled"
	}
	return "row"
}

// ProducerPeer is the producers' baseline kernel that, run on ew_op_bf16's
// rows, is the unfused chain of an ewrot Op.
func ProducerPeer(op string, M int, arch string) (kernels.Kernel, error) {
	pop := map[string]string{OpGroup: producers.OpGroup, OpToken: producers.OpToken}[op]
	if pop == "" {
		return kernels.Kernel{}, fmt.Errorf("ewrot: op %q has no producer peer", op)
	}
	return kernels.BaselineFor(producers.Family, pop, M, arch)
}

func gateEwrot(t *gates.T) {
	cases := Cases(t.Full())
	meter := t.Progress("cases", len(cases))
	work := func(c Case) float64 { return float64((c.M + 16) * c.K * c.P) } // mirror and downloads grow with the rows
	var total float64
	for _, c := range cases {
		total += work(c)
	}
	meter.SetWork(total)
	ran := 0
	type prep struct {
		pc  *Prepared
		err error
	}
	next := make(chan prep, 1)
	done := make(chan struct{})
	defer close(done)
	go func() { // one case ahead of the device
		for ci, c := range cases {
			pc, err := func() (pc *Prepared, err error) {
				defer func() {
					if r := recover(); r != nil {
						err = fmt.Errorf("panic: %v", r)
					}
				}()
				return Prepare(t.Seed()+uint64(ci), c, c.M <= GroupMaxM)
			}()
			select {
			case next <- prep{pc, err}:
			case <-done:
				return
			}
		}
	}()
	for ci, c := range cases {
		p := <-next
		t.Check(p.err, fmt.Sprintf("case %d (%s): inputs and mirror", ci, c))
		ran += RunCase(t, p.pc, t.Seed()+uint64(ci))
		t.Release()
		meter.Step(1, work(c))
	}
	t.Metric("cases", float64(len(cases)))
	t.Metric("variant_runs", float64(ran))
	t.Logf("%d cases (op x K x P x M x distribution), %d kernel runs checked, each fused run also against the unfused chain", len(cases), ran)
}

// RunCase runs and checks every ewrot kernel of one case, and each fused
// kernel against the unfused chain; it returns how many runs it checked.
func RunCase(t *gates.T, pc *Prepared, seed uint64) (ran int) {
	c := pc.Case
	K, P, M, G := c.K, c.P, c.M, c.K/refimpl.GroupSize
	Mpad := refimpl.PadRows(M)
	name := fmt.Sprintf("%s seed=%d", c, seed)
	arch := t.Device().Info().CodeArch()
	ba := t.Buffer("a", 2*len(pc.In.A))
	t.Upload(ba, gates.U16Bytes(pc.In.A))
	bb, bw := ba, ba // unused operands point at a (the kernels do not read them)
	if pc.In.B != nil {
		bb = t.Buffer("b", 2*len(pc.In.B))
		t.Upload(bb, gates.U16Bytes(pc.In.B))
	}
	if pc.In.W != nil {
		bw = t.Buffer("w", 2*len(pc.In.W))
		t.Upload(bw, gates.U16Bytes(pc.In.W))
	}
	idx, cs, chs := pc.RR.Bytes()
	bidx, bcs, bchs := t.Buffer("rot_idx", len(idx)), t.Buffer("rot_cs", len(cs)), t.Buffer("chs", len(chs))
	t.Upload(bidx, idx)
	t.Upload(bcs, cs)
	t.Upload(bchs, chs)
	rows := t.Buffer("rows", 2*(M*K+rowsPastM*K))
	codes := t.Buffer("codes", P*Mpad*K+rowsPastM*K)
	scale := t.Buffer("scale", 4*(P*M*G+rowsPastM*G))
	rsum := t.Buffer("rsum", 4*(P*M*G+rowsPastM*G))
	bufs := Bufs{A: ba.Ptr(), B: bb.Ptr(), W: bw.Ptr(), Idx: bidx.Ptr(), CS: bcs.Ptr(), ChS: bchs.Ptr(),
		Codes: codes.Ptr(), Scale: scale.Ptr(), RSum: rsum.Ptr(), Out: rows.Ptr()}
	download := func(b *gates.Buffer) []byte {
		h := make([]byte, b.N)
		t.DownloadInto(b, h)
		return h
	}
	outs := func() Outputs {
		return Outputs{Rows: download(rows), Codes: download(codes), Scale: download(scale), RSum: download(rsum)}
	}
	ks := CaseKernels(M, arch, t.Full())
	// The unfused op first: its rows are the producers' input below.
	var opDone bool
	for _, k := range ks {
		if k.Op != OpElementwise {
			continue
		}
		for _, b := range []*gates.Buffer{rows, codes, scale, rsum} {
			t.Poison(b, 0xFF)
		}
		grid, block, args, err := Launch(k.Name, M, K, P, false, c.Params, bufs)
		t.Check(err, name)
		t.Launch(k.Name, grid, block, 0, args...)
		CheckOp(t, k.Name+" "+name, k.Op, false, M, K, P, pc.Want, outs())
		ran++
		opDone = true
	}
	for _, k := range ks {
		if k.Op == OpElementwise || (k.Op == OpToken && producers.FusedTokenCheck(K) != nil) {
			continue
		}
		for _, tiled := range Layouts(k.Op) {
			label := fmt.Sprintf("%s %s %s", k.Name, LayoutName(tiled), name)
			for _, b := range []*gates.Buffer{codes, scale, rsum} {
				t.Poison(b, 0xFF)
			}
			grid, block, args, err := Launch(k.Name, M, K, P, tiled, c.Params, bufs)
			t.Check(err, name)
			t.Launch(k.Name, grid, block, 0, args...)
			fused := outs()
			CheckOp(t, label, k.Op, tiled, M, K, P, pc.Want, fused)
			CompareOut(t, label+" (the op's rows, an input here, left as ew_op_bf16 wrote them)", fused.Rows, pc.Want.Rows, 2, func(i int) string { return fmt.Sprint(i) })
			ran++
			if !opDone {
				continue
			}
			// The unfused chain on ew_op_bf16's rows, byte for byte with the fused run.
			peer, err := ProducerPeer(k.Op, M, arch)
			t.Check(err, label)
			for _, b := range []*gates.Buffer{codes, scale, rsum} {
				t.Poison(b, 0xFF)
			}
			grid, block, args, err = producers.ProducerLaunch(peer.Name, M, K, P, 0, tiled, producers.ProducerBufs{X: rows.Ptr(),
				Idx: bidx.Ptr(), CS: bcs.Ptr(), ChS: bchs.Ptr(), Codes: codes.Ptr(), Scale: scale.Ptr(), RSum: rsum.Ptr()})
			t.Check(err, label)
			t.Launch(peer.Name, grid, block, 0, args...)
			chain := outs()
			for _, d := range []struct {
				what      string
				got, want []byte
			}{{"codes", chain.Codes, fused.Codes}, {"scales", chain.Scale, fused.Scale}, {"row sums", chain.RSum, fused.RSum}} {
				if !par.Equal(d.got, d.want) {
					at := 0
					for at < len(d.got) && d.got[at] == d.want[at] {
						at++
					}
					t.Failf("%s: fused %s differ from the unfused chain (ew_op_bf16 + %s) at byte %d of %d", label, d.what, peer.Name, at, len(d.got))
				}
			}
			ran++
		}
	}
	return ran
}
