package results

import (
	"errors"
	"testing"
)

func TestCaseKey(t *testing.T) {
	c := NewCase("shape", "tp1/down", "mode", "decode", "M", 24)
	for _, tc := range []struct {
		name, got, want string
	}{
		{"key", c.With("kernel", "k").With("S", 3).Key("rel"), "rel{shape=tp1/down,mode=decode,M=24,kernel=k,S=3}"},
		{"stem unchanged", c.Key("pdl_pairs"), "pdl_pairs{shape=tp1/down,mode=decode,M=24}"},
		{"no labels", Case{}.Key("cases"), "cases"},
		{"string", c.String(), "shape=tp1/down,mode=decode,M=24"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
	// With copies: two cases from one stem do not share labels.
	a, b := c.With("kernel", "a"), c.With("kernel", "b")
	if v, _ := a.Get("kernel"); v != "a" {
		t.Errorf("a's kernel is %q after b was made from the same stem", v)
	}
	if v, _ := b.Get("kernel"); v != "b" {
		t.Errorf("b's kernel is %q", v)
	}
}

func TestCheckMetricKey(t *testing.T) {
	for _, tc := range []struct {
		key string
		ok  bool
	}{
		{"worst_rel_over_floor", true},
		{"rel{shape=qkv,mode=decode,M=1,dist=normal,kernel=pq_gemm_dec_m8,S=2,launch=cluster}", true},
		{"regs{kernel=copy_v4}", true},
		{"worst_err_over_tol{K=17408}", true},
		{"rel.qkv decode M=1 normal seed=1504454448422521378 pq_gemm_dec_m8 S=2", false}, // the old, seeded form
		{"rel{shape=qkv,seed=7}", false},
		{"rel{shape=qkv,s=1504454448422521378}", false}, // a seed without the word
		{"rel{shape=q,kv}", false},
		{"rel{shape=q{k}v}", false},
		{"rel{shape=a=b}", false},
		{"rel{}", false},
		{"{shape=qkv}", false},
		{"rel}", false},
		{"", false},
	} {
		t.Run(tc.key, func(t *testing.T) {
			err := CheckMetricKey(tc.key)
			if (err == nil) != tc.ok {
				t.Fatalf("CheckMetricKey = %v, want ok=%v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrMetricKey) {
				t.Errorf("error %v does not wrap ErrMetricKey", err)
			}
		})
	}
}

// A key CheckMetricKey accepts reads back as itself.
func FuzzParseMetricKey(f *testing.F) {
	for _, s := range []string{"cases", "rel{shape=qkv,M=1}", "x{a=}", "x{=a}", "a{b=c,d}", "}{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		metric, c, err := ParseMetricKey(key)
		if err != nil {
			if !errors.Is(err, ErrMetricKey) {
				t.Fatalf("error %v does not wrap ErrMetricKey", err)
			}
			return
		}
		if CheckMetricKey(key) == nil && c.Key(metric) != key {
			t.Fatalf("%q reads back as %q", key, c.Key(metric))
		}
	})
}
