package gpu

import (
	"fmt"
	"testing"
)

// vendorGemmCaseOnDevice runs one vendor plan (cuBLASLt or hipBLASLt)
// directly and captured into a graph, and checks y both times. fp8 inputs
// are re-encoded to e4m3fnuz where hipBLASLt needs that type (gfx94x).
func vendorGemmCaseOnDevice(t *testing.T, d Device, b VendorGEMM, stream Stream, typ GemmType, M, N, K int) (err error) {
	xb, wb, want := gemmOperands(typ, M, N, K)
	if typ == GemmFP8 && d.Info().Backend == "hip" && HipFP8IsFNUZ(d.Info().Arch) {
		for _, buf := range [][]byte{xb, wb} {
			for i, c := range buf {
				buf[i] = fnuzOfOCP[c]
			}
		}
	}
	nx, nw, ny := GemmBytes(typ, M, N, K)
	var bufs [3]Ptr
	for i, n := range []int{nx, nw, ny} {
		if bufs[i], err = d.Malloc(n); err != nil {
			return err
		}
		defer d.Free(bufs[i])
	}
	x, w, y := bufs[0], bufs[1], bufs[2]
	if err := d.HtoD(x, xb); err != nil {
		return err
	}
	if err := d.HtoD(w, wb); err != nil {
		return err
	}
	p, err := b.PlanGEMM(d, typ, M, N, K)
	if err != nil {
		return err
	}
	defer p.Close()
	t.Logf("%s %v M=%d N=%d K=%d: workspace %d bytes, waves %.3f", b.Name(), typ, M, N, K, p.WorkspaceBytes(), p.Waves())
	out := make([]byte, ny)
	run := func(what string, enqueue func() error) error {
		if err := d.Memset(y, 0xff, ny); err != nil {
			return err
		}
		if err := d.Synchronize(); err != nil {
			return err
		}
		if err := enqueue(); err != nil {
			return err
		}
		if err := d.StreamSynchronize(stream); err != nil {
			return err
		}
		if err := d.DtoH(out, y); err != nil {
			return err
		}
		if err := checkY(out, want, N); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	}
	if err := run("direct", func() error { return p.Enqueue(x, w, y, stream) }); err != nil {
		return err
	}
	return run("graph", func() error {
		if err := d.BeginCapture(stream); err != nil {
			return err
		}
		eqErr := p.Enqueue(x, w, y, stream)
		g, err := d.EndCapture(stream)
		if eqErr != nil {
			return fmt.Errorf("enqueue under capture: %w", eqErr)
		}
		if err != nil {
			return err
		}
		// Replay twice, and wait for both before destroying the graph.
		for i := 0; i < 2; i++ {
			if err := g.Launch(stream); err != nil {
				g.Destroy()
				return err
			}
		}
		if err := d.StreamSynchronize(stream); err != nil {
			g.Destroy()
			return err
		}
		return g.Destroy()
	})
}
