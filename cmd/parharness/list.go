package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/kernels"
)

func init() {
	register(command{name: "list", usage: "print the gate and kernel registries", run: runList})
	register(command{name: "devices", usage: "open the device and print what it is, or why none opened", run: runDevices})
}

func runList(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("list", stderr)
	if err := parse(fs, args); err != nil {
		return ExitUsage, err
	}
	t := newTable(stdout).Shrink(3).Lines(-1)
	t.Header("gate", "suites", "device", "proves")
	for _, g := range gates.All() {
		var s []string
		if g.Suites&gates.Quick != 0 {
			s = append(s, "quick")
		}
		if g.Suites&gates.Full != 0 {
			s = append(s, "full")
		}
		dev := ""
		if g.Device {
			dev = "GPU"
		}
		t.Append(g.Name, strings.Join(s, ","), dev, g.Proves)
	}
	t.Render()
	// Four columns, so the registry fits 100 columns: the registry row's
	// facts share one cell.
	k := newTable(stdout).Shrink(3, 2, 1).Lines(-1)
	k.Header("kernel", "family/op (tag), role, M, status, caps", "targets (matrix op)", "what it does")
	for _, kn := range kernels.All() {
		row := fmt.Sprintf("%s/%s (%s), %s, M %s, %s", kn.Family, kn.Op, kn.Tag, kn.Role, kernelMRange(kn), kn.Status)
		if c := kn.Caps.String(); c != "" {
			row += ", " + c
		}
		k.Append(kn.Name, row, kernelTargets(kn), kn.Doc)
	}
	k.Render()
	return ExitOK, nil
}

func runDevices(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("devices", stderr)
	backend := fs.String("backend", "auto", "device backend: auto, cuda, hip or none")
	device := deviceFlag(fs)
	if err := parse(fs, args); err != nil {
		return ExitUsage, err
	}
	denv := openDevice(*backend, *device, defaultBuildDir())
	defer denv.close()
	if denv.dev == nil {
		fmt.Fprintf(stdout, "no device: %v\n", denv.devErr)
		return ExitUsage, nil
	}
	i := denv.dev.Info()
	fmt.Fprintf(stdout, "backend   %s (%s)\nname      %s\narch      %s (code objects: build/%s)\nSMs/CUs   %d\nclock     %d MHz (memory %d MHz, %d-bit bus)\nL2        %d bytes (cold-regime LLC %d bytes)\nmemory    %d bytes\n",
		i.Backend, i.Driver, i.Name, i.Arch, i.CodeArch(), i.SMs, i.ClockMHz, i.MemClockMHz, i.MemBusBits, i.L2Bytes, i.LLCBytes, i.TotalMem)
	return ExitOK, nil
}

// kernelMRange renders a kernel's M range ("any", "1..8", "33..64").
func kernelMRange(k kernels.Kernel) string {
	switch {
	case k.MinM == 0 && k.MaxM == 0:
		return "any"
	case k.MaxM == 0:
		return fmt.Sprintf(">=%d", k.MinM)
	}
	return fmt.Sprintf("%d..%d", max(k.MinM, 1), k.MaxM)
}

// kernelTargets renders the code archs that have a kernel, each with the
// matrix op its row declares there.
func kernelTargets(k kernels.Kernel) string {
	var out []string
	for _, a := range kernels.CodeArchs {
		if !k.ForArch(a) {
			continue
		}
		if op := k.MatrixOp[a]; op != "" {
			a += " " + op
		}
		out = append(out, a)
	}
	return strings.Join(out, ", ")
}
