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
	t := newTable(stdout)
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
	k := newTable(stdout)
	k.Header("kernel", "source", "allowed scratch", "what it does")
	for _, kn := range kernels.All() {
		src := "hipsrc/" + kn.Module + ".hip"
		if kn.OnlyArch != "" {
			src += " (" + kn.OnlyArch + " only)"
		}
		k.Append(kn.Name, src, kn.AllowScratch, kn.Doc)
	}
	k.Render()
	return ExitOK, nil
}

func runDevices(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("devices", stderr)
	backend := fs.String("backend", "auto", "device backend: auto, cuda, hip or none")
	if err := parse(fs, args); err != nil {
		return ExitUsage, err
	}
	sess := openSession(*backend, defaultBuildDir())
	defer sess.close()
	if sess.dev == nil {
		fmt.Fprintf(stdout, "no device: %v\n", sess.devErr)
		return ExitUsage, nil
	}
	i := sess.dev.Info()
	fmt.Fprintf(stdout, "backend   %s (%s)\nname      %s\narch      %s (code objects: build/%s)\nSMs/CUs   %d\nclock     %d MHz (memory %d MHz, %d-bit bus)\nL2        %d bytes (cold-regime LLC %d bytes)\nmemory    %d bytes\n",
		i.Backend, i.Driver, i.Name, i.Arch, i.CodeArch(), i.SMs, i.ClockMHz, i.MemClockMHz, i.MemBusBits, i.L2Bytes, i.LLCBytes, i.TotalMem)
	return ExitOK, nil
}
