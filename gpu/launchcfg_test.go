package gpu

import (
	"testing"
	"unsafe"
)

// The PDL launch hands these structs to the driver by pointer: their layout
// must be cuda.h's CUlaunchConfig and CUlaunchAttribute on 64-bit hosts.
func TestLaunchConfigLayout(t *testing.T) {
	var c cuLaunchConfig
	var a cuLaunchAttribute
	for _, x := range []struct {
		what      string
		got, want uintptr
	}{
		{"sizeof(CUlaunchConfig)", unsafe.Sizeof(c), 56},
		{"offsetof(hStream)", unsafe.Offsetof(c.stream), 32},
		{"offsetof(attrs)", unsafe.Offsetof(c.attrs), 40},
		{"offsetof(numAttrs)", unsafe.Offsetof(c.numAttrs), 48},
		{"sizeof(CUlaunchAttribute)", unsafe.Sizeof(a), 72},
		{"offsetof(value)", unsafe.Offsetof(a.value), 8},
	} {
		if x.got != x.want {
			t.Errorf("%s = %d, want %d", x.what, x.got, x.want)
		}
	}
}

func TestLaunchOptsString(t *testing.T) {
	for _, c := range []struct {
		o    LaunchOpts
		want string
	}{
		{LaunchOpts{}, "opts{}"},
		{LaunchOpts{PDL: true}, "opts{pdl}"},
		{LaunchOpts{Cluster: Dim3{1, 2, 1}}, "opts{cluster 1x2x1}"},
		{LaunchOpts{PDL: true, Cluster: Dim3{1, 4, 1}}, "opts{pdl cluster 1x4x1}"},
	} {
		if got := c.o.String(); got != c.want {
			t.Errorf("%#v.String() = %q, want %q", c.o, got, c.want)
		}
	}
}
