package gpu

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// planDevice is the part of a Device the shared plan uses: Info, Malloc
// and Free, with every live allocation tracked.
type planDevice struct {
	Device // nil: any other method panics
	info   Info
	next   Ptr
	live   map[Ptr]int
}

func (d *planDevice) Info() Info { return d.info }
func (d *planDevice) Malloc(n int) (Ptr, error) {
	d.next += 0x1000
	d.live[d.next] = n
	return d.next, nil
}
func (d *planDevice) Free(p Ptr) error {
	if _, ok := d.live[p]; !ok {
		return fmt.Errorf("free of %#x, not allocated", p)
	}
	delete(d.live, p)
	return nil
}

// fakeLt is an Lt library in Go: handles are counters, every create and
// destroy is logged, and failAt makes the named call fail.
type fakeLt struct {
	log    []string
	live   map[uintptr]string
	next   uintptr
	failAt string
	cands  []ltCandidate
	mm     []uintptr // the last matmul's pointer arguments
	algo   ltAlgo
	layout map[uintptr]string // layout handle -> its type and shape
	heur   []uintptr          // the heuristic's op, A, B, D handles
}

func (f *fakeLt) create(what string, h *uintptr) error {
	f.log = append(f.log, what)
	if f.failAt == what {
		return &Error{Func: what, Code: 7, CodeName: "FAKE_INVALID_VALUE"}
	}
	f.next++
	*h = f.next
	f.live[f.next] = what
	return nil
}

func (f *fakeLt) destroy(what string, h uintptr) error {
	f.log = append(f.log, what)
	if _, ok := f.live[h]; !ok {
		return fmt.Errorf("%s of %d: not live", what, h)
	}
	delete(f.live, h)
	return nil
}

func (f *fakeLt) calls() *ltCalls {
	return &ltCalls{
		lib: "fakeLt", backend: "fake",
		inType: func(t GemmType, arch string) (int32, error) {
			if t != GemmFP8 && t != GemmBF16 {
				return 0, errors.New("bad type")
			}
			return int32(t), nil
		},
		outType:      99,
		typeName:     func(v int32) string { return fmt.Sprintf("T%d", v) },
		descCreateTN: func(op *uintptr) error { return f.create("desc", op) },
		descDestroy:  func(op uintptr) error { return f.destroy("~desc", op) },
		layoutCreate: func(h *uintptr, typ int32, lay matLayout) error {
			if err := f.create("layout", h); err != nil {
				return err
			}
			f.layout[*h] = fmt.Sprintf("T%d %dx%d ld %d", typ, lay.rows, lay.cols, lay.ld)
			return nil
		},
		layoutDestroy: func(h uintptr) error { return f.destroy("~layout", h) },
		prefCreate:    func(p *uintptr) error { return f.create("pref", p) },
		prefSetMaxW: func(p uintptr, bytes uint64) error {
			if bytes != MaxGemmWorkspace {
				return fmt.Errorf("max workspace %d", bytes)
			}
			return nil
		},
		prefDestroy: func(p uintptr) error { return f.destroy("~pref", p) },
		heuristic: func(h, op, a, b, d, pref uintptr) ([]ltCandidate, error) {
			f.log = append(f.log, "heuristic")
			f.heur = []uintptr{op, a, b, d}
			if f.failAt == "heuristic" {
				return nil, &Error{Func: "heuristic", Code: 15, CodeName: "FAKE_NOT_SUPPORTED", Msg: "fake"}
			}
			return f.cands, nil
		},
		matmul: func(h, op uintptr, alpha, beta *float32, a, aDesc, b, bDesc, c, cDesc, d, dDesc uintptr, algo *ltAlgo, ws, wsBytes, stream uintptr) error {
			if *alpha != 1 || *beta != 0 {
				return fmt.Errorf("alpha %g beta %g", *alpha, *beta)
			}
			f.mm = []uintptr{a, aDesc, b, bDesc, c, cDesc, d, dDesc, ws, wsBytes, stream}
			f.algo = *algo
			return nil
		},
		notSupported: func(msg string) error {
			return &Error{Func: "heuristic", Code: 15, CodeName: "FAKE_NOT_SUPPORTED", Msg: msg}
		},
		destroy: func(h uintptr) error { return nil },
	}
}

func newFakeLt() (*fakeLt, *ltHandle, *planDevice) {
	f := &fakeLt{live: map[uintptr]string{}, layout: map[uintptr]string{}}
	return f, &ltHandle{calls: f.calls(), handle: 1000}, &planDevice{info: Info{Backend: "fake", Arch: "fx1"}, live: map[Ptr]int{}}
}

// The plan takes the first candidate that succeeded within the workspace
// bound, allocates its workspace, passes w as A, x as B and y as C and D
// with that algorithm, and Close releases everything it created.
func TestLtPlanPicksAndReleases(t *testing.T) {
	f, h, dev := newFakeLt()
	f.cands = []ltCandidate{
		{algo: ltAlgo{1}, ok: false},
		{algo: ltAlgo{2}, ok: true, wsBytes: MaxGemmWorkspace + 1},
		{algo: ltAlgo{3}, ok: true, wsBytes: 4096, waves: 1.5},
		{algo: ltAlgo{4}, ok: true},
	}
	p, err := h.PlanGEMM(dev, GemmFP8, 3, 32, 64)
	if err != nil {
		t.Fatal(err)
	}
	if p.WorkspaceBytes() != 4096 || p.Waves() != 1.5 || len(dev.live) != 1 || p.InDataType() != "T1" {
		t.Fatalf("pick: ws %d waves %g live %v type %s", p.WorkspaceBytes(), p.Waves(), dev.live, p.InDataType())
	}
	if _, ok := f.live[p.op]; !ok || len(f.live) != 4 { // desc + 3 layouts; the preference is gone
		t.Fatalf("live handles after plan: %v", f.live)
	}
	// y[3,32] = x[3,64]·w[32,64]ᵀ in column-major terms: A = w (K×N, ld K,
	// type in), B = x (K×M, ld K, type in), C = D = y (N×M, ld N, bf16).
	wantLayouts := map[uintptr]string{p.a: "T1 64x32 ld 64", p.bl: "T1 64x3 ld 64", p.d: "T99 32x3 ld 32"}
	for h, want := range wantLayouts {
		if f.layout[h] != want {
			t.Errorf("layout %d: %q, want %q", h, f.layout[h], want)
		}
	}
	if fmt.Sprint(f.heur) != fmt.Sprint([]uintptr{p.op, p.a, p.bl, p.d}) {
		t.Errorf("heuristic asked with %v, want op, A, B, D = %v", f.heur, []uintptr{p.op, p.a, p.bl, p.d})
	}
	if err := p.Enqueue(0x10, 0x20, 0x30, 7); err != nil {
		t.Fatal(err)
	}
	want := []uintptr{0x20, p.a, 0x10, p.bl, 0x30, p.d, 0x30, p.d, uintptr(p.ws), 4096, 7}
	if fmt.Sprint(f.mm) != fmt.Sprint(want) || f.algo[0] != 3 {
		t.Errorf("matmul args %v algo %d, want %v algo 3", f.mm, f.algo[0], want)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if len(f.live) != 0 || len(dev.live) != 0 {
		t.Errorf("after Close: handles %v, allocations %v", f.live, dev.live)
	}
	if err := p.Enqueue(0x10, 0x20, 0x30, 7); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Enqueue after Close: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// Every failure on the way leaves nothing behind and says what failed.
func TestLtPlanFailuresReleaseEverything(t *testing.T) {
	for _, c := range []struct {
		failAt string
		cands  []ltCandidate
		want   string
	}{
		{failAt: "desc", want: "desc"},
		{failAt: "layout", want: "layout"},
		{failAt: "pref", want: "pref"},
		{failAt: "heuristic", want: "fp8e4m3 (T1) TN GEMM M=3 N=32 K=64 on fx1"},
		{cands: []ltCandidate{{ok: false}, {ok: true, wsBytes: MaxGemmWorkspace + 1}}, want: "no usable algorithm among 2 returned for fp8e4m3 (T1) TN GEMM M=3 N=32 K=64 on fx1"},
	} {
		f, h, dev := newFakeLt()
		f.failAt, f.cands = c.failAt, c.cands
		_, err := h.PlanGEMM(dev, GemmFP8, 3, 32, 64)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("fail at %q: error %v, want it to say %q", c.failAt, err, c.want)
		}
		if len(f.live) != 0 || len(dev.live) != 0 {
			t.Errorf("fail at %q: left handles %v, allocations %v (log %v)", c.failAt, f.live, dev.live, f.log)
		}
	}
	_, h, dev := newFakeLt()
	if _, err := h.PlanGEMM(&planDevice{info: Info{Backend: "cuda"}}, GemmFP8, 1, 16, 16); err == nil || !strings.Contains(err.Error(), "needs the fake backend") {
		t.Errorf("wrong backend: %v", err)
	}
	if _, err := h.PlanGEMM(dev, GemmFP8, 0, 16, 16); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("M=0: %v", err)
	}
	h.Close()
	if _, err := h.PlanGEMM(dev, GemmFP8, 1, 16, 16); err == nil || !strings.Contains(err.Error(), "fakeLt handle is closed") {
		t.Errorf("closed handle: %v", err)
	}
}

// Both bindings fill every call of the table.
func TestLtCallTablesComplete(t *testing.T) {
	for _, c := range []*ltCalls{(&blasLtLib{}).calls(), (&hipBLASLtLib{}).calls()} {
		v := reflect.ValueOf(c).Elem()
		for i := 0; i < v.NumField(); i++ {
			if v.Field(i).IsZero() {
				t.Errorf("%s: call table field %s is not set", c.lib, v.Type().Field(i).Name)
			}
		}
	}
	if ae, ok := (&blasLtLib{}).calls().notSupported("m").(*Error); !ok || ae.CodeName != "CUBLAS_STATUS_NOT_SUPPORTED" {
		t.Errorf("cuBLASLt notSupported: %v", ae)
	}
	if ae, ok := (&hipBLASLtLib{}).calls().notSupported("m").(*Error); !ok || ae.CodeName != "HIPBLAS_STATUS_NOT_SUPPORTED" {
		t.Errorf("hipBLASLt notSupported: %v", ae)
	}
}
