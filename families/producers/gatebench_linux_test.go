//go:build linux

package producers

import (
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/parharness/parharness/families/internal/faketest"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/internal/fakegpu"
	"github.com/parharness/parharness/kernels"
)

// The full gate's host cost on a fake device (Linux: thread CPU time).

// replayDevice is a fakegpu Exec that writes a case's mirror (the serial
// mirror of the inputs it reads from the device, built once per case on
// the launching thread) into every producer launch's outputs: a correct
// device that costs one mirror per case, for timing the gate's own host
// work (BenchmarkFullGate), not for proving it (the emulator above
// computes each kernel on its own).
type replayDevice struct {
	x         gpu.Ptr // the activations buffer of the case in memo
	memo      producerWant
	wall, cpu time.Duration // spent building mirrors, to leave out of the gate's figures
}

func (r *replayDevice) exec(d *fakegpu.Device, l fakegpu.Launch) error {
	k, _ := kernels.Lookup(l.Kernel)
	ptr := func(i int) gpu.Ptr { return l.Args[i].(gpu.Ptr) }
	arg := func(i int) int { return int(l.Args[i].(uint32)) }
	put := func(p gpu.Ptr, b []byte) {
		m, err := d.Mem(p, len(b))
		if err != nil {
			panic(err)
		}
		copy(m, b)
	}
	P := int(l.Grid.Y)
	if k.Op != OpPassC && k.Form != FormShuffle && ptr(0) != r.x {
		start := time.Now()
		mk := 6 // pass A's records and lane-row forms: M, K after XR, GAmax
		if k.Op == OpGroup || k.Op == OpToken {
			mk = 7
		}
		M, K := arg(mk), arg(mk+1)
		mem := func(p gpu.Ptr, n int) []byte {
			b, err := d.Mem(p, n)
			if err != nil {
				panic(err)
			}
			return b
		}
		c := producerCase{K: K, P: P, M: M}
		runtime.LockOSThread() // the thread's CPU time is the mirror's alone
		cpu0 := threadCPU()
		r.x, r.memo = ptr(0), buildSerialMirror(readRecords(mem, ptr(1), ptr(2), ptr(3), P, K), gates.U16s(mem(ptr(0), 2*M*K)), c, M <= GroupMaxM).want()
		r.cpu += threadCPU() - cpu0
		runtime.UnlockOSThread()
		r.wall += time.Since(start)
	}
	w := r.memo
	switch {
	case k.Op == OpGroup:
		put(ptr(4), w.GroupCodes)
		put(ptr(5), w.GroupScales)
		put(ptr(6), w.GroupRSums)
	case k.Op == OpPassA && k.Form == FormShuffle:
		put(ptr(5), w.xr)
		put(ptr(6), w.gamax)
	case k.Op == OpPassA:
		put(ptr(4), w.xr)
		put(ptr(5), w.gamax)
	default: // OpPassC (outputs at 2..4, layout at 7), OpToken (4..6, 9)
		o, layout := 4, 9
		if k.Op == OpPassC {
			o, layout = 2, 7
		}
		tiled := arg(layout)
		codes := w.TokCodesRow
		if tiled == 1 {
			codes = w.TokCodesTiled
		}
		put(ptr(o), codes)
		put(ptr(o+1), w.TokScales)
		put(ptr(o+2), w.TokRSums)
	}
	return nil
}

// threadCPU is the calling OS thread's CPU time (Linux RUSAGE_THREAD).
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1, &ru); err != nil { // RUSAGE_THREAD
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processCPU is the process's CPU time, every thread together.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFullGate times the whole full-suite producers gate on a fake
// device that replays the mirror (replayDevice): every case's inputs and
// mirror, uploads, poisons, launches, input re-reads, downloads and
// compares, as on a GPU but with host memory for device memory and
// memcpy for PCIe. The replay's own mirror building is measured apart
// (replay-cpu-s, replay-wall-s) and left out of gate-cpu-s and
// gate-wall-s, the gate's own CPU time (all threads) and wall time. It
// takes minutes: run it alone,
//
//	go test ./families/producers -run '^$' -bench FullGate -benchtime 1x
func BenchmarkFullGate(b *testing.B) {
	info := fakeTargets[0]
	for b.Loop() {
		env, dev := faketest.Env(b, info)
		r := &replayDevice{}
		dev.Exec = r.exec
		start, cpu0 := time.Now(), processCPU()
		res := gates.RunGate(env, gates.Gate{Name: "producers", Device: true, Run: gateProducers})
		wall, cpu := time.Since(start), processCPU()-cpu0
		if res.Status != gates.Pass {
			b.Fatalf("%s: %s", res.Status, res.Reason)
		}
		b.ReportMetric((wall - r.wall).Seconds(), "gate-wall-s")
		b.ReportMetric((cpu - r.cpu).Seconds(), "gate-cpu-s")
		b.ReportMetric(r.wall.Seconds(), "replay-wall-s")
		b.ReportMetric(r.cpu.Seconds(), "replay-cpu-s")
		b.ReportMetric(res.Metrics["variant_runs"], "variant-runs")
	}
}
