package gpu

import (
	"fmt"
	"runtime"
)

// The vendor "Lt" GEMM plan, shared by the cuBLASLt (cublaslt.go) and
// hipBLASLt (hipblaslt.go) bindings. The two libraries have the same call
// sequence (descriptor, three matrix layouts, a preference, a heuristic
// query, then one matmul per enqueue) and differ only in symbol names, enum
// values and the layout of their algorithm and heuristic-result structs.
// Each binding hands the plan an ltCalls table with those bound in; the
// plan logic, its error paths and its cleanup live here once and are tested
// on the CPU against a fake table (blaslt_test.go).

// MaxGemmWorkspace bounds the workspace a plan may ask for (and allocate):
// 32 MiB, what NVIDIA recommends for Hopper.
const MaxGemmWorkspace = 32 << 20

// heuristicRequest is how many candidate algorithms Plan asks for; it takes
// the first usable one (the heuristic orders them by estimated time).
const heuristicRequest = 8

// GemmType picks the operand types of a plan. The output is always bf16,
// accumulation fp32, alpha = 1, beta = 0.
type GemmType int

const (
	// GemmFP8: x and w fp8 e4m3, y bf16.
	GemmFP8 GemmType = iota + 1
	// GemmBF16: x, w and y bf16.
	GemmBF16
)

func (t GemmType) String() string {
	switch t {
	case GemmFP8:
		return "fp8e4m3"
	case GemmBF16:
		return "bf16"
	}
	return fmt.Sprintf("GemmType(%d)", int(t))
}

// InBytes is the size of one element of x and w.
func (t GemmType) InBytes() int {
	if t == GemmFP8 {
		return 1
	}
	return 2
}

// GemmBytes is the size of x[M,K], w[N,K] and y[M,N] (bf16) for a type.
func GemmBytes(t GemmType, M, N, K int) (x, w, y int) {
	return M * K * t.InBytes(), N * K * t.InBytes(), M * N * 2
}

// matLayout is one MatrixLayoutCreate call: a column-major rows×cols matrix
// with leading dimension ld (in elements).
type matLayout struct {
	rows, cols uint64
	ld         int64
}

// gemmLayouts are the layouts of A (w's bytes), B (x's bytes) and C = D
// (y's bytes) for y[M,N] = x[M,K]·w[N,K]ᵀ, with transa = T, transb = N;
// see the derivation at the top of cublaslt.go.
func gemmLayouts(M, N, K int) (a, b, d matLayout) {
	a = matLayout{rows: uint64(K), cols: uint64(N), ld: int64(K)}
	b = matLayout{rows: uint64(K), cols: uint64(M), ld: int64(K)}
	d = matLayout{rows: uint64(N), cols: uint64(M), ld: int64(N)}
	return
}

// ltAlgo holds a library's algorithm struct as its heuristic returned it
// (cublasLtMatmulAlgo_t: 64 bytes; hipblasLtMatmulAlgo_t: 24), 8-byte
// aligned; matmul gets a pointer to it.
type ltAlgo [8]uint64

// ltCandidate is one heuristic result, library-neutral.
type ltCandidate struct {
	algo    ltAlgo
	wsBytes uintptr
	ok      bool // the result's state is the library's success status
	waves   float32
}

// ltCalls is one Lt library as the plan uses it. Every call returns nil or
// an *Error naming the C function and status.
type ltCalls struct {
	lib     string // "cuBLASLt", "hipBLASLt": in errors
	backend string // the device backend the library works with

	// inType is the library's data-type enum of x and w for t on arch;
	// outType is bf16's; typeName names a data-type enum value.
	inType   func(t GemmType, arch string) (int32, error)
	outType  int32
	typeName func(int32) string

	// descCreateTN creates a matmul descriptor with fp32 compute and scale
	// into *op and sets transa = T, transb = N.
	descCreateTN func(op *uintptr) error
	descDestroy  func(op uintptr) error

	layoutCreate  func(h *uintptr, typ int32, lay matLayout) error
	layoutDestroy func(h uintptr) error

	prefCreate  func(pref *uintptr) error
	prefSetMaxW func(pref uintptr, bytes uint64) error // MAX_WORKSPACE_BYTES
	prefDestroy func(pref uintptr) error

	// heuristic asks for up to heuristicRequest algorithms of D = op(A)·op(B)
	// with C = D.
	heuristic func(handle, op, a, b, d, pref uintptr) ([]ltCandidate, error)

	// matmul enqueues D = alpha·op(A)·op(B) + beta·C.
	matmul func(handle, op uintptr, alpha, beta *float32, a, aDesc, b, bDesc, c, cDesc, d, dDesc uintptr,
		algo *ltAlgo, ws, wsBytes, stream uintptr) error

	// notSupported is the library's NOT_SUPPORTED status as an *Error of
	// its heuristic call, with msg.
	notSupported func(msg string) error

	destroy func(handle uintptr) error
}

// ltHandle is an open library handle with its calls.
type ltHandle struct {
	calls  *ltCalls
	handle uintptr
}

// Name is the library's name ("cuBLASLt", "hipBLASLt").
func (h *ltHandle) Name() string { return h.calls.lib }

// Close destroys the handle once (hipblasLtDestroy also synchronises the
// device). Close the plans first.
func (h *ltHandle) Close() error {
	if h.handle == 0 {
		return nil
	}
	err := h.calls.destroy(h.handle)
	h.handle = 0
	return err
}

// GemmPlan is a GEMM shape and type ready to enqueue on a vendor Lt
// library: descriptors, the chosen algorithm and its workspace, kept for
// reuse.
type GemmPlan struct {
	h        *ltHandle
	dev      Device
	arch     string
	t        GemmType
	inType   int32 // the library's data-type enum of x and w
	M, N, K  int
	op       uintptr // matmul descriptor
	a, bl, d uintptr // matrix layouts of A (w), B (x), C = D (y)
	algo     ltAlgo
	ws       Ptr
	wsBytes  int
	waves    float32
	alpha    float32
	beta     float32
	closed   bool
}

// PlanGEMM creates the descriptors of y[M,N] = x[M,K]·w[N,K]ᵀ for type t,
// asks the heuristic for an algorithm with at most MaxGemmWorkspace of
// workspace, and allocates that workspace on dev; on any failure what was
// created is destroyed again. fp8 (and, for the fast kernels, bf16) wants
// K and N multiples of 16 and 16-byte aligned buffers; a shape or type no
// algorithm takes fails here with the library's NOT_SUPPORTED. On HIP the
// fp8 element type follows dev's arch (HipFP8IsFNUZ). dev must be the
// device current on this OS thread.
func (h *ltHandle) PlanGEMM(dev Device, t GemmType, M, N, K int) (*GemmPlan, error) {
	c := h.calls
	if h.handle == 0 {
		return nil, fmt.Errorf("gpu: %s handle is closed", c.lib)
	}
	info := dev.Info()
	if info.Backend != c.backend {
		return nil, fmt.Errorf("gpu: %s needs the %s backend, device is %q", c.lib, c.backend, info.Backend)
	}
	in, err := c.inType(t, info.Arch)
	if err != nil {
		return nil, err
	}
	if M <= 0 || N <= 0 || K <= 0 || M > 1<<31-1 || N > 1<<31-1 || K > 1<<31-1 {
		return nil, fmt.Errorf("gpu: GEMM shape M=%d N=%d K=%d out of range", M, N, K)
	}
	p := &GemmPlan{h: h, dev: dev, arch: info.Arch, t: t, inType: in, M: M, N: N, K: K, alpha: 1, beta: 0}
	ok := false
	defer func() {
		if !ok {
			p.Close()
		}
	}()
	if err := c.descCreateTN(&p.op); err != nil {
		return nil, err
	}
	la, lb, ld := gemmLayouts(M, N, K)
	for _, m := range []struct {
		h   *uintptr
		typ int32
		lay matLayout
	}{{&p.a, in, la}, {&p.bl, in, lb}, {&p.d, c.outType, ld}} {
		if err := c.layoutCreate(m.h, m.typ, m.lay); err != nil {
			return nil, err
		}
	}

	var pref uintptr
	if err := c.prefCreate(&pref); err != nil {
		return nil, err
	}
	defer c.prefDestroy(pref)
	if err := c.prefSetMaxW(pref, MaxGemmWorkspace); err != nil {
		return nil, err
	}
	cands, err := c.heuristic(h.handle, p.op, p.a, p.bl, p.d, pref)
	if err != nil {
		if se, isStatus := err.(*Error); isStatus {
			se.Msg += " (" + p.what() + ")"
		}
		return nil, err
	}
	pick := -1
	for i, cd := range cands {
		if cd.ok && cd.wsBytes <= MaxGemmWorkspace {
			pick = i
			break
		}
	}
	if pick < 0 {
		return nil, c.notSupported(fmt.Sprintf("no usable algorithm among %d returned for %s", len(cands), p.what()))
	}
	p.algo = cands[pick].algo
	p.waves = cands[pick].waves
	p.wsBytes = int(cands[pick].wsBytes)
	if p.wsBytes > 0 {
		if p.ws, err = dev.Malloc(p.wsBytes); err != nil {
			p.wsBytes = 0
			return nil, fmt.Errorf("%s workspace: %w", c.lib, err)
		}
	}
	ok = true
	return p, nil
}

// what names the plan's GEMM in errors.
func (p *GemmPlan) what() string {
	return fmt.Sprintf("%v (%s) TN GEMM M=%d N=%d K=%d on %s", p.t, p.h.calls.typeName(p.inType), p.M, p.N, p.K, p.arch)
}

// InDataType names the library's data type of x and w (e.g.
// CUDA_R_8F_E4M3, HIP_R_8F_E4M3_FNUZ).
func (p *GemmPlan) InDataType() string { return p.h.calls.typeName(p.inType) }

// WorkspaceBytes is the device workspace the chosen algorithm uses.
func (p *GemmPlan) WorkspaceBytes() int { return p.wsBytes }

// Waves is the heuristic's wavesCount for the chosen algorithm (1.0: one
// full wave of the device).
func (p *GemmPlan) Waves() float32 { return p.waves }

// Enqueue enqueues y = x·wᵀ on stream s: one matmul, no allocation and no
// synchronisation, so it may be captured into a graph. x, w and y are
// device buffers of GemmBytes(t, M, N, K).
func (p *GemmPlan) Enqueue(x, w, y Ptr, s Stream) error {
	if p.closed || p.h.handle == 0 {
		return fmt.Errorf("gpu: GEMM plan or its %s handle is closed", p.h.calls.lib)
	}
	err := p.h.calls.matmul(p.h.handle, p.op, &p.alpha, &p.beta,
		uintptr(w), p.a, uintptr(x), p.bl,
		uintptr(y), p.d, uintptr(y), p.d,
		&p.algo, uintptr(p.ws), uintptr(p.wsBytes), uintptr(s))
	runtime.KeepAlive(p)
	if err != nil {
		return fmt.Errorf("%v GEMM M=%d N=%d K=%d: %w", p.t, p.M, p.N, p.K, err)
	}
	return nil
}

// Close destroys the descriptors and frees the workspace; the first error
// is returned and the rest is still released. The caller makes sure no
// enqueued or captured use of the plan is still to run.
func (p *GemmPlan) Close() error {
	if p.closed {
		return nil
	}
	p.closed = true
	c := p.h.calls
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	for _, h := range []*uintptr{&p.a, &p.bl, &p.d} {
		if *h != 0 {
			keep(c.layoutDestroy(*h))
			*h = 0
		}
	}
	if p.op != 0 {
		keep(c.descDestroy(p.op))
		p.op = 0
	}
	if p.ws != 0 {
		keep(p.dev.Free(p.ws))
		p.ws = 0
	}
	return first
}
