package normrot

import (
	"strings"
	"testing"

	"github.com/parharness/parharness/families/internal/faketest"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/internal/fakegpu"
)

// standIn is a fake-device Exec that writes what a correct kernel of
// this family (or the unfused chain's producers) writes for one case,
// from the mirror, with one planted fault.
type standIn struct {
	w     want
	fault string // "": none; "producer-byte": the unfused producer's codes off by one byte; "past-M": the fused token kernel writes a row past M
}

func (s standIn) exec(d *fakegpu.Device, l fakegpu.Launch) error {
	put := func(arg int, data []byte) error {
		m, err := d.Mem(l.Args[arg].(gpu.Ptr), len(data))
		if err != nil {
			return err
		}
		copy(m, data)
		return nil
	}
	var plan [][2]any // (argument index, bytes)
	w := s.w
	switch {
	case l.Kernel == "pq_addnorm":
		plan = [][2]any{{3, w.hs}, {4, w.res}}
	case l.Kernel == "pq_addnorm_rotq_group":
		plan = [][2]any{{6, w.hs}, {7, w.res}, {8, w.GroupCodes}, {9, w.GroupScales}, {10, w.GroupRSums}}
	case strings.HasPrefix(l.Kernel, "pq_addnorm_rotq_token_w"):
		codes := w.TokCodesRow
		if l.Args[13].(uint32) == 1 {
			codes = w.TokCodesTiled
		}
		if s.fault == "past-M" {
			codes = append(append([]byte{}, codes...), 0)
		}
		plan = [][2]any{{6, w.hs}, {7, w.res}, {8, codes}, {9, w.TokScales}, {10, w.TokRSums}}
	case l.Kernel == "pq_rotq_group" || l.Kernel == "pq_rotq_token":
		codes, scale, rsum := w.GroupCodes, w.GroupScales, w.GroupRSums
		if l.Kernel == "pq_rotq_token" {
			codes, scale, rsum = w.TokCodesRow, w.TokScales, w.TokRSums
			if l.Args[9].(uint32) == 1 {
				codes = w.TokCodesTiled
			}
		}
		if s.fault == "producer-byte" {
			codes = append([]byte{}, codes...)
			codes[len(codes)/2] ^= 1
		}
		plan = [][2]any{{4, codes}, {5, scale}, {6, rsum}}
	}
	for _, p := range plan {
		if err := put(p[0].(int), p[1].([]byte)); err != nil {
			return err
		}
	}
	return nil
}

// With kernels that write the mirror's bytes the gate passes; a unfused
// producer one byte off fails the fused == unfused comparison (and only
// it: the fused kernels still equal the mirror); a write past M fails.
func TestGatePassesCorrectKernelsAndCatchesFaults(t *testing.T) {
	for _, fault := range []string{"", "producer-byte", "past-M"} {
		t.Run("fault="+fault, func(t *testing.T) {
			env, dev := faketest.Env(t, fakeTargets[0])
			c := normCase{K: 384, P: 2, M: 5, dist: "cancel"}
			in, err := prepareCase(9, c)
			if err != nil {
				t.Fatal(err)
			}
			dev.Exec = standIn{w: in.want, fault: fault}.exec
			res := gates.RunGate(env, gates.Gate{Name: "normrot-standin", Device: true, Run: func(t *gates.T) { runCase(t, c, 9, in) }})
			all := strings.Join(append([]string{res.Reason}, res.Failures...), "\n")
			switch fault {
			case "":
				if res.Status != gates.Pass {
					t.Fatalf("correct kernels: %s: %s", res.Status, all)
				}
			case "producer-byte":
				if res.Status != gates.Fail || !strings.Contains(all, "unfused pq_addnorm + pq_rotq_group") || !strings.Contains(all, "unfused pq_addnorm + pq_rotq_token") {
					t.Fatalf("a wrong unfused producer: %s: %s", res.Status, all)
				}
				if strings.Contains(all, "pq_addnorm_rotq_group row K=") {
					t.Errorf("the fused kernel's own check failed too: %s", all)
				}
			case "past-M":
				if res.Status != gates.Fail || !strings.Contains(all, "past the end of the output") {
					t.Fatalf("a write past M: %s: %s", res.Status, all)
				}
			}
		})
	}
}
