package textutil

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/parharness/parharness/internal/golden"
)

func gateLike(plain bool) *Table {
	t := &Table{Header: []string{"gate", "status", "seconds", "key figures", "reason / first failure"}, Shrink: []int{3, 4}, Plain: plain,
		Align: []tw.Align{tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignLeft, tw.AlignLeft}}
	t.Append("e4m3-go-oracle", "PASS", "12.46", "mismatches=0 inputs=4294967296", "")
	t.Append("identity", "PASS", "2.82", "rel{shape=qwen38-27b-tp1/attn_o}=4.821e-15 rel{shape=qwen38-27b-tp1/attn_qkv}=4.821e-15 rel{shape=qwen38-27b-tp1/gdn_in_qkvz}=4.9e-15 rel{shape=qwen38-27b-tp1/gdn_out}=5e-15", "")
	t.Append("ptxas-sm90a", "SKIP", "0.00", "", "ptxas is neither on PATH nor at /usr/local/cuda/bin/ptxas: the CUDA toolkit's ptxas is needed (the H200 image has it)")
	t.Append("gemm", "FAIL", "40.10", "worst_rel_over_floor=3.2 cases=42", "qkv decode M=9 normal seed=1504454448422521356 pq_gemm_dec_m16 S=2 cluster (law): rel 4.1e-3 > 1.5 x floor 2.7e-3 (12 elements off by > 8 floor x max|ref|: m=3 n=17 got 1.5 want 1.25)")
	return t
}

// Every line of a rendered table fits the width, at every width down to
// what the narrowest columns allow.
func TestTableFits(t *testing.T) {
	for _, plain := range []bool{false, true} {
		for _, width := range []int{160, 100, 80, 60} {
			t.Run(fmt.Sprintf("plain=%v/width=%d", plain, width), func(t *testing.T) {
				var b bytes.Buffer
				if err := gateLike(plain).Render(&b, width); err != nil {
					t.Fatal(err)
				}
				for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
					if w := twwidth.Width(l); w > width {
						t.Errorf("%d columns > %d: %q", w, width, l)
					}
				}
				for _, want := range []string{"e4m3-go-oracle", "ptxas-sm90a", "identity", "gemm"} {
					if !strings.Contains(b.String(), want) {
						t.Errorf("%q is not in the table:\n%s", want, b.String())
					}
				}
			})
		}
	}
}

// The layout of a gate table at 100 columns, and uncut at width 0.
func TestTableGolden(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plain bool
		width int
	}{{"box-100", false, 100}, {"plain-80", true, 80}, {"box-unlimited", false, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := gateLike(tc.plain).Render(&b, tc.width); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "table-"+tc.name+".txt"), b.Bytes())
		})
	}
}

func TestWrap(t *testing.T) {
	for _, tc := range []struct {
		s        string
		width    int
		maxLines int
		want     []string
	}{
		{"a bb ccc dddd", 6, 0, []string{"a bb", "ccc", "dddd"}},
		{"/usr/local/cuda/bin/ptxas", 10, 0, []string{"/usr/", "local/", "cuda/bin/", "ptxas"}},
		{"/usr/local/cuda/bin/ptxas", 8, 0, []string{"/usr/", "local/", "cuda/", "bin/", "ptxas"}},
		{"abcdefghij", 4, 0, []string{"abcd", "efgh", "ij"}},
		{"one two three four five", 9, 2, []string{"one two", "three…"}},
		{"one two threefour five", 9, 2, []string{"one two", "threefou…"}},
		{"line one\nline two", 20, 0, []string{"line one", "line two"}},
		{"", 5, 0, []string{""}},
	} {
		t.Run(tc.s, func(t *testing.T) {
			got := wrap(tc.s, tc.width, tc.maxLines)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("wrap(%q, %d, %d) = %q, want %q", tc.s, tc.width, tc.maxLines, got, tc.want)
			}
		})
	}
}
