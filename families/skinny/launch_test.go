package skinny

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/internal/golden"
	"github.com/parharness/parharness/kernels"
)

// The launch geometry of every registered kernel on the gate's shapes, with
// the bytes a call must move: a change shows up as a reviewed golden diff.
func TestLaunchGeometryGolden(t *testing.T) {
	shs, err := Shapes()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "%-20s %5s %5s %3s  %-16s %9s %7s %10s %10s\n", "shape", "N", "K", "M", "kernel", "grid", "blocks", "shared B", "bytes/call")
	for _, s := range shs {
		for _, M := range []int{1, 8, 64} {
			for _, k := range Kernels(M, "", true) {
				kern, grid, block, shared, _, err := Launch(s, M, Args{Kernel: k.Name})
				if err != nil {
					t.Fatal(err)
				}
				if block != gpu.D1(BlockThreads(k)) {
					t.Errorf("%s: block %v", kern, block)
				}
				fmt.Fprintf(&buf, "%-20s %5d %5d %3d  %-16s %4dx%-4d %7d %10d %10d\n", s.Label, s.N, s.K, M, kern, grid.X, grid.Y, grid.X*grid.Y, shared, PointBytes(s, M))
			}
		}
	}
	golden.Check(t, filepath.Join("testdata", "launch_geometry.txt"), buf.Bytes())
}

// Launch refuses what the contract refuses, with a *ContractError naming
// the argument, and lays out the arguments in the kernel's order.
func TestLaunchContract(t *testing.T) {
	ba := Shape{"ba", 48, 5120}
	for _, tc := range []struct {
		name   string
		s      Shape
		M      int
		kernel string
		arg    string // "": accepted
	}{
		{"deployed", ba, 8, "", ""},
		{"n16 on N=48", ba, 64, "skinny_bf16_n16", ""},
		{"K not a slice multiple", Shape{"k", 48, 5000}, 1, "", "K"},
		{"N not an n-tile multiple", Shape{"n", 44, 5120}, 1, "", "N"},
		{"N=40 for the 16-column tile", Shape{"n", 40, 5120}, 1, "skinny_bf16_n16", "N"},
		{"M=0", ba, 0, "skinny_bf16_n8", "M"},
		{"M=65", ba, 65, "", "M"},
		{"another family's kernel", ba, 1, "pq_gemm_dec_m8", "kernel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kern, grid, _, shared, args, err := Launch(tc.s, tc.M, Args{X: 1, W: 2, Out: 3, WS: 4, Counters: 5, Kernel: tc.kernel})
			var ce *ContractError
			if tc.arg != "" {
				if !errors.As(err, &ce) || ce.Arg != tc.arg {
					t.Fatalf("err = %v, want a contract error on %s", err, tc.arg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			k, _ := kernels.Lookup(kern)
			if want := (gpu.Dim3{X: uint32(tc.s.N / NTile(k)), Y: uint32(tc.s.K / Slice), Z: 1}); grid != want {
				t.Errorf("grid %v, want %v", grid, want)
			}
			if shared != 2*Slice*tc.M {
				t.Errorf("shared %d, want %d", shared, 2*Slice*tc.M)
			}
			want := []any{gpu.Ptr(1), gpu.Ptr(2), gpu.Ptr(3), gpu.Ptr(4), gpu.Ptr(5), uint32(tc.M), uint32(tc.s.N), uint32(tc.s.K)}
			if fmt.Sprint(args) != fmt.Sprint(want) {
				t.Errorf("args %v, want %v", args, want)
			}
		})
	}
}

// The x slice of the largest M fits the default dynamic shared memory of
// a CUDA launch (48 KiB without opting in) and gfx1201's 64 KiB LDS, with
// the static counter word beside it.
func TestSharedMemoryFits(t *testing.T) {
	if b := SharedBytes(MaxM, 1) + 16; b > 48<<10 {
		t.Errorf("M=%d: %d bytes of shared memory, above 48 KiB", MaxM, b)
	}
	if b := SharedBytes(ClusterMaxM, ClusterMaxJ) + 4*ClusterMaxM*8; b > 48<<10 {
		t.Errorf("cluster form, M=%d J=%d: %d bytes of shared memory, above 48 KiB", ClusterMaxM, ClusterMaxJ, b)
	}
}
