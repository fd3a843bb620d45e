package results

import "testing"

func TestPeerRowsPairByRegime(t *testing.T) {
	ctl := &Control{}
	d := &Document{Records: []Record{
		{Suite: "dec", Kernel: "pq_gemm_dec", Variant: "law", Shape: "qkv", M: 1, Regime: Cold, TrimmedMeanUS: 9, Control: ctl},
		{Suite: "dec", Kernel: "pq_gemm_dec", Variant: "S1", Shape: "qkv", M: 1, Regime: Cold, TrimmedMeanUS: 20},
		{Suite: "dec", Kernel: "cublaslt_fp8", Variant: "cublaslt", Shape: "qkv", M: 1, Regime: Cold, TrimmedMeanUS: 10},
		{Suite: "dec", Kernel: "pq_gemm_dec", Variant: "law", Shape: "qkv", M: 1, Regime: Isolated, TrimmedMeanUS: 12, Control: ctl},
		{Suite: "dec", Kernel: "cublaslt_fp8", Variant: "cublaslt", Shape: "qkv", M: 1, Regime: Isolated, TrimmedMeanUS: 12},
	}}
	rows := d.PeerRows("dec")
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2 (one per regime): %+v", len(rows), rows)
	}
	if rows[0].Regime != Cold || rows[0].Ratio != 0.9 || rows[1].Regime != Isolated || rows[1].Ratio != 1 {
		t.Errorf("rows %+v", rows)
	}
}

// The fastest checked record of each cell, whatever its kernel or variant,
// faces the peer; unchecked (attribution) and failed records never do.
func TestBestPeerRowsTakeTheFastestChecked(t *testing.T) {
	pass, none, fail := &Check{Status: CheckPass}, &Check{Status: CheckNone}, &Check{Status: CheckFail}
	d := &Document{Records: []Record{
		{Suite: "dec", Kernel: "pq_gemm_dec", Variant: "S4", Shape: "qkv", M: 1, Regime: Cold, TrimmedMeanUS: 9, Check: pass},
		{Suite: "dec", Kernel: "pq_gemm_dec", Variant: "wpS2", Shape: "qkv", M: 1, Regime: Cold, TrimmedMeanUS: 6, Check: pass},
		{Suite: "dec", Kernel: "pq_gemm_dec", Variant: "memonly", Shape: "qkv", M: 1, Regime: Cold, TrimmedMeanUS: 3, Check: none},
		{Suite: "dec", Kernel: "pq_gemm_dec", Variant: "broken", Shape: "qkv", M: 1, Regime: Cold, TrimmedMeanUS: 2, Check: fail},
		{Suite: "dec", Kernel: "pq_gemm_dec", Variant: "read", Shape: "qkv", M: 1, Regime: Cold, TrimmedMeanUS: 4, GBps: 2000, Check: pass, Flags: []string{FlagRoof}},
		{Suite: "dec", Kernel: "cublaslt_fp8", Variant: "cublaslt", Shape: "qkv", M: 1, Regime: Cold, TrimmedMeanUS: 12},
		{Suite: "dec", Kernel: "pq_gemm_dec", Variant: "S4", Shape: "qkv", M: 64, Regime: Cold, TrimmedMeanUS: 20, Check: pass},
	}}
	rows := d.BestPeerRows("dec")
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1 (M = 64 has no peer): %+v", len(rows), rows)
	}
	if r := rows[0]; r.Variant != "wpS2" || r.KernelUS != 6 || r.Ratio != 0.5 || r.RoofGBps != 2000 {
		t.Errorf("row %+v, want wpS2 at 6 µs, ratio 0.5, the read roof's 2000 GB/s beside it (a roof is never the cell's kernel)", r)
	}
	// PeerRows pairs only records carrying a control (a point's first
	// variant), which a roof never is: none here.
	if rows := d.PeerRows("dec"); len(rows) != 0 {
		t.Errorf("PeerRows without a baseline record: %+v", rows)
	}
}
