package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/kernels"
)

func init() {
	register(command{name: "resources", usage: "registers, LDS/shared and scratch per kernel (gfx1201 metadata; the device's driver)", run: runResources})
}

func runResources(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("resources", stderr)
	backend := fs.String("backend", "auto", "device backend: auto, cuda, hip or none")
	device := deviceFlag(fs)
	buildDir := fs.String("build", defaultBuildDir(), "code object directory")
	if err := parse(fs, args); err != nil {
		return ExitUsage, err
	}
	code := ExitOK
	rows, problems, err := gates.StaticResources(*buildDir)
	if err != nil {
		fmt.Fprintf(stdout, "gfx1201: %v\n", err)
		code = ExitUsage
	} else {
		t := newTable(stdout)
		t.Header("kernel (gfx1201)", "VGPRs", "SGPRs", "LDS B", "scratch B", "VGPR spill", "SGPR spill", "wave", "max WG")
		for _, k := range rows {
			t.Append(k.Name, k.VGPRCount, k.SGPRCount, k.LDSBytes, k.ScratchBytes, k.VGPRSpill, k.SGPRSpill, k.WavefrontSize, k.MaxFlatWorkgroupSize)
		}
		t.Render()
		for _, p := range problems {
			fmt.Fprintf(stdout, "PROBLEM %s\n", p)
			code = ExitFail
		}
	}
	denv := openDevice(*backend, *device, *buildDir)
	defer denv.close()
	if denv.dev == nil {
		fmt.Fprintf(stdout, "live device: none (%v)\n", denv.devErr)
		return code, nil
	}
	arch := denv.dev.Info().Arch
	t := newTable(stdout)
	t.Header("kernel ("+arch+")", "registers", "shared B", "local B", "max threads", "note")
	for _, reg := range kernels.All() {
		f, err := denv.loader.Function(reg.Name)
		if errors.Is(err, kernels.ErrNotForArch) {
			t.Append(reg.Name, "", "", "", "", "not built for "+arch+" (only "+strings.Join(reg.Targets, ", ")+")")
			continue
		}
		if err != nil {
			t.Append(reg.Name, "", "", "", "", err.Error())
			code = ExitFail
			continue
		}
		a, err := f.Attrs()
		if err != nil {
			t.Append(reg.Name, "", "", "", "", err.Error())
			code = ExitFail
			continue
		}
		note := ""
		if a.LocalBytes > 0 && reg.AllowScratch == "" {
			note = "PROBLEM: local memory (spills/stack)"
			code = ExitFail
		}
		t.Append(reg.Name, a.Regs, a.SharedBytes, a.LocalBytes, a.MaxThreads, note)
	}
	t.Render()
	return code, nil
}
