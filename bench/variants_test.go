package bench

import (
	"errors"
	"strings"
	"testing"
)

func TestVariantList(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{[]string{"S1", "S2", "S3", "S4", "pdl"}, "S1..S4, pdl"},
		{[]string{"S1", "S2", "pdl"}, "S1, S2, pdl"},
		{[]string{"rpw1", "rpw2", "rpw4", "rpw8"}, "rpw1, rpw2, rpw4, rpw8"},
		{[]string{"v1", "v2", "v3", "x01", "x02", "x03"}, "v1..v3, x01, x02, x03"},
		{nil, ""},
	} {
		t.Run(tc.want, func(t *testing.T) {
			if got := VariantList(tc.in); got != tc.want {
				t.Errorf("VariantList(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestCheckVariants(t *testing.T) {
	s := Suite{Name: "x", Variants: func() []string { return []string{"copy", "copy+*", "blocks=*"} }}
	for _, tc := range []struct {
		names []string
		ok    bool
	}{
		{nil, true},
		{[]string{"copy", "copy+5%", "blocks=132"}, true},
		{[]string{"cpy"}, false},
		{[]string{""}, false},
		{[]string{"copy-identical"}, false},
	} {
		t.Run(strings.Join(tc.names, ","), func(t *testing.T) {
			err := s.CheckVariants(tc.names)
			if (err == nil) != tc.ok {
				t.Fatalf("CheckVariants(%q) = %v, want ok=%v", tc.names, err, tc.ok)
			}
			if err != nil && (!errors.Is(err, ErrUnknownVariant) || !strings.Contains(err.Error(), "copy, copy+*, blocks=*")) {
				t.Errorf("error %v: want ErrUnknownVariant listing the variants", err)
			}
		})
	}
}
