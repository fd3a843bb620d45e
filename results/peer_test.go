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
