package amdgpu

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parharness/parharness/internal/golden"
)

const (
	coPath     = "testdata/kern.co"
	goldenPath = "testdata/kern.golden.json"
)

func readCO(t testing.TB) []byte {
	t.Helper()
	img, err := os.ReadFile(coPath)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// goldenJSON renders what the golden file records: the parsed code object
// and each kernel's Problems(false). Struct fields marshal in declaration
// order and map keys sorted, so the output is stable.
func goldenJSON(t testing.TB, img []byte) []byte {
	t.Helper()
	co, err := ReadKernels(img)
	if err != nil {
		t.Fatalf("ReadKernels: %v", err)
	}
	problems := map[string][]string{}
	for _, k := range co.Kernels {
		problems[k.Name] = k.Problems(false)
	}
	out, err := json.MarshalIndent(struct {
		CodeObject *CodeObject         `json:"code_object"`
		Problems   map[string][]string `json:"problems_without_scratch_allowance"`
	}{co, problems}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

func TestGolden(t *testing.T) {
	golden.Check(t, goldenPath, goldenJSON(t, readCO(t)))
}

// The figures the rest of the project relies on, spelled out so that a
// golden regenerated carelessly cannot hide a regression.
func TestGoldenFigures(t *testing.T) {
	co, err := ReadKernels(readCO(t))
	if err != nil {
		t.Fatal(err)
	}
	if co.Target != "amdgcn-amd-amdhsa--gfx1201" || co.Arch != "gfx1201" || co.Mach != 0x04e ||
		co.CodeObjectVersion != 5 || !reflect.DeepEqual(co.Version, []int{1, 2}) {
		t.Fatalf("header: target %q arch %q mach %#x cov %d version %v", co.Target, co.Arch, co.Mach, co.CodeObjectVersion, co.Version)
	}
	byName := map[string]Kernel{}
	for _, k := range co.Kernels {
		byName[k.Name] = k
	}
	if len(byName) != 4 {
		t.Fatalf("want 4 kernels, got %d", len(co.Kernels))
	}
	plain := byName["plain_add"]
	if plain.ScratchBytes != 0 || plain.VGPRSpill != 0 || plain.LDSBytes != 0 || plain.WavefrontSize != 32 ||
		plain.Symbol != "plain_add.kd" || plain.KernargBytes != 20 || len(plain.Problems(false)) != 0 {
		t.Errorf("plain_add: %+v %v", plain, plain.Problems(false))
	}
	if s := byName["scratch_array"]; s.ScratchBytes == 0 || len(s.Problems(false)) == 0 || len(s.Problems(true)) != 0 {
		t.Errorf("scratch_array should use scratch: %+v %v", s, s.Problems(false))
	}
	if l := byName["lds_reverse"]; l.LDSBytes != 1024 || l.ScratchBytes != 0 || len(l.Problems(false)) != 0 {
		t.Errorf("lds_reverse: %+v %v", l, l.Problems(false))
	}
	if s := byName["spill_vgprs"]; s.VGPRSpill == 0 || s.VGPRCount > 8 {
		t.Errorf("spill_vgprs should spill VGPRs within 8: %+v", s)
	}
	for _, k := range co.Kernels {
		if k.UsesDynamicStack == nil || *k.UsesDynamicStack || k.Arch != "gfx1201" || k.AGPRCount != nil {
			t.Errorf("%s: dynamic stack %v arch %q agpr %v", k.Name, k.UsesDynamicStack, k.Arch, k.AGPRCount)
		}
	}
}

// TestRebuildMatchesGolden rebuilds testdata/kern.hip with the command in
// testdata/README.md and checks the fresh object parses to the golden
// figures (the bytes differ: clang names a per-build __hip_cuid symbol).
func TestRebuildMatchesGolden(t *testing.T) {
	clang, err := exec.LookPath("clang++-19")
	if err != nil {
		t.Skip("clang++-19 not on PATH")
	}
	if testing.Short() {
		t.Skip("-short")
	}
	out := filepath.Join(t.TempDir(), "kern.co")
	cmd := exec.Command(clang, "-x", "hip", "--offload-arch=gfx1201", "--cuda-device-only",
		"--no-gpu-bundle-output", "-nogpuinc", "-nogpulib", "-O3", "-c", "kern.hip", "-o", out)
	cmd.Dir = "testdata"
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd, err, msg)
	}
	img, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, want := goldenJSON(t, img), goldenJSON(t, readCO(t))
	if !bytes.Equal(got, want) {
		t.Fatalf("rebuilding testdata/kern.hip gives different metadata than testdata/kern.co:\n%s\nvs\n%s\nrebuild kern.co per testdata/README.md and rerun with -update", got, want)
	}
}

// TestSegmentOnly drops the section headers: the note must then be found
// through the PT_NOTE segment.
func TestSegmentOnly(t *testing.T) {
	img := readCO(t)
	want, err := ReadKernels(img)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadKernels(stripSectionHeaders(img))
	if err != nil {
		t.Fatalf("without section headers: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("without section headers:\n%+v\nwant\n%+v", got, want)
	}
}

func stripSectionHeaders(img []byte) []byte {
	b := bytes.Clone(img)
	binary.LittleEndian.PutUint64(b[40:], 0) // e_shoff
	binary.LittleEndian.PutUint16(b[60:], 0) // e_shnum
	binary.LittleEndian.PutUint16(b[62:], 0) // e_shstrndx
	return b
}

func TestArch(t *testing.T) {
	img := readCO(t)
	if arch, err := Arch(img); err != nil || arch != "gfx1201" {
		t.Fatalf("Arch(testdata code object) = %q, %v; want gfx1201", arch, err)
	}
	if _, err := Arch([]byte("not an elf")); err == nil || !strings.Contains(err.Error(), "not an ELF") {
		t.Fatalf("non-ELF: %v", err)
	}
	if _, err := Arch(buildELF(elf.EM_AMDGPU, elfOSABIAMDGPUHSA, 3, 0x0ff, nil)); err == nil ||
		!strings.Contains(err.Error(), "not a known AMDGCN processor") {
		t.Fatalf("unknown mach: %v", err)
	}
}

// x86ELF is the start of an x86-64 executable: /bin/true's when present,
// else a minimal one built here.
func x86ELF(t *testing.T) []byte {
	if b, err := os.ReadFile("/bin/true"); err == nil && len(b) > 64 {
		return b
	}
	return buildELF(elf.EM_X86_64, 0, 0, 0, []testSection{{name: ".text", typ: elf.SHT_PROGBITS, align: 16, data: []byte{0xc3}}})
}

func TestBadInputs(t *testing.T) {
	img := readCO(t)
	missingSpill := testKernelMap()
	delete(missingSpill, ".vgpr_spill_count")
	missingName := testKernelMap()
	delete(missingName, ".name")
	stringCount := testKernelMap()
	stringCount[".sgpr_count"] = "six"
	negative := testKernelMap()
	negative[".private_segment_fixed_size"] = -4
	noTarget := testMetadata(testKernelMap())
	delete(noTarget, "amdhsa.target")
	gfx1200 := testMetadata(testKernelMap())
	gfx1200["amdhsa.target"] = "amdgcn-amd-amdhsa--gfx1200"
	goodDesc := encodeMsgpack(testMetadata(testKernelMap()))
	wrongOSABI := bytes.Clone(img)
	wrongOSABI[7] = 0
	x86 := x86ELF(t)

	cases := []struct {
		name string
		img  []byte
		want string
	}{
		{"empty", nil, "not an ELF file (empty input)"},
		{"text", []byte("#!/bin/sh\necho hello\n"), "not an ELF file"},
		{"truncated header", img[:40], "truncated ELF file: 40 bytes"},
		{"truncated section headers", img[:len(img)-100], fmt.Sprintf("truncated ELF file: %d bytes, its header tables run past the end", len(img)-100)},
		{"truncated sections", truncateKeepingHeaders(img, 0xe80), "truncated code object: section .text needs bytes up to"},
		{"x86 ELF", x86, "ELF machine is EM_X86_64 (62), not EM_AMDGPU (224)"},
		{"x86 ELF first bytes", x86[:64], "ELF machine is EM_X86_64 (62), not EM_AMDGPU (224)"},
		{"wrong OS ABI", wrongOSABI, "want ELFOSABI_AMDGPU_HSA (64)"},
		{"no note", amdgpuELF(MachGFX1201), "no NT_AMDGPU_METADATA note"},
		{"other notes only", amdgpuELF(MachGFX1201, noteRecord("AMD", ntAMDGPUMetadata, goodDesc), noteRecord(noteOwner, 33, goodDesc)), "no NT_AMDGPU_METADATA note"},
		{"two metadata notes", amdgpuELF(MachGFX1201, noteRecord(noteOwner, ntAMDGPUMetadata, goodDesc), noteRecord(noteOwner, ntAMDGPUMetadata, goodDesc)), "2 NT_AMDGPU_METADATA notes"},
		{"note overruns section", amdgpuELF(MachGFX1201, noteRecord(noteOwner, ntAMDGPUMetadata, goodDesc)[:40]), "malformed note in section .note"},
		{"msgpack invalid byte", amdgpuELF(MachGFX1201, noteRecord(noteOwner, ntAMDGPUMetadata, []byte{0xc1})), "malformed msgpack in NT_AMDGPU_METADATA note: invalid type byte 0xc1"},
		{"msgpack truncated", amdgpuELF(MachGFX1201, noteRecord(noteOwner, ntAMDGPUMetadata, goodDesc[:len(goodDesc)/2])), "malformed msgpack in NT_AMDGPU_METADATA note: truncated"},
		{"msgpack trailing data", amdgpuELF(MachGFX1201, noteRecord(noteOwner, ntAMDGPUMetadata, append(bytes.Clone(goodDesc), 0xc0))), "malformed msgpack in NT_AMDGPU_METADATA note: 1 trailing bytes"},
		{"metadata not a map", metadataELF([]any{1}), "metadata: top level is an array, want a map"},
		{"no target", metadataELF(noTarget), "metadata: missing amdhsa.target"},
		{"kernel missing spill count", metadataELF(testMetadata(testKernelMap(), missingSpill)), `metadata: kernel 1 ("k"): missing .vgpr_spill_count`},
		{"kernel missing name", metadataELF(testMetadata(missingName)), "metadata: kernel 0: missing .name"},
		{"kernel count is a string", metadataELF(testMetadata(stringCount)), `kernel 0 ("k"): .sgpr_count is a string, want an integer`},
		{"kernel negative scratch", metadataELF(testMetadata(negative)), `.private_segment_fixed_size is -4, out of range`},
		{"kernel not a map", metadataELF(map[string]any{"amdhsa.target": "amdgcn-amd-amdhsa--gfx1201", "amdhsa.version": []any{1, 2}, "amdhsa.kernels": []any{nil}}), "metadata: kernel 0: entry is nil, want a map"},
		{"mach disagrees with target", metadataELF(gfx1200), `e_flags say gfx1201 (EF_AMDGPU_MACH 0x04e) but amdhsa.target is "amdgcn-amd-amdhsa--gfx1200"`},
		{"unknown mach", amdgpuELF(0x0fd, noteRecord(noteOwner, ntAMDGPUMetadata, goodDesc)), "EF_AMDGPU_MACH 0x0fd is not a known AMDGCN processor"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			co, err := ReadKernels(c.img)
			if err == nil {
				t.Fatalf("no error; got %+v", co)
			}
			msg := err.Error()
			if !strings.Contains(msg, c.want) {
				t.Fatalf("error %q does not contain %q", msg, c.want)
			}
			if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "amdgpu: ") {
				t.Fatalf("error is not one line starting with amdgpu: %q", msg)
			}
			t.Log(msg)
			if errors.Is(err, errPanic) {
				t.Fatalf("parser panicked: %v", err)
			}
		})
	}
}

// truncateKeepingHeaders cuts the file at n but keeps its section header
// table and section name table (moved up to n), so that the ELF opens and
// the sections after n overrun the file.
func truncateKeepingHeaders(img []byte, n int) []byte {
	le := binary.LittleEndian
	shoff := le.Uint64(img[40:])
	shnum := uint64(le.Uint16(img[60:]))
	shstrndx := uint64(le.Uint16(img[62:]))
	headers := bytes.Clone(img[shoff : shoff+64*shnum])
	strHdr := headers[64*shstrndx:]
	strOff, strSize := le.Uint64(strHdr[24:]), le.Uint64(strHdr[32:])
	b := append(bytes.Clone(img[:n]), img[strOff:strOff+strSize]...)
	le.PutUint64(strHdr[24:], uint64(n))
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	le.PutUint64(b[40:], uint64(len(b)))
	return append(b, headers...)
}

// A hand-built object parses: AGPR count and integer booleans are accepted,
// target features are ignored in the processor check.
func TestSyntheticObject(t *testing.T) {
	k := testKernelMap()
	k[".agpr_count"] = 4
	k[".uses_dynamic_stack"] = 1
	k[".private_segment_fixed_size"] = 70000 // uint32 encoding
	md := testMetadata(k)
	md["amdhsa.target"] = "amdgcn-amd-amdhsa--gfx1201:xnack-"
	co, err := ReadKernels(metadataELF(md))
	if err != nil {
		t.Fatal(err)
	}
	got := co.Kernels[0]
	if got.AGPRCount == nil || *got.AGPRCount != 4 || got.UsesDynamicStack == nil || !*got.UsesDynamicStack ||
		got.ScratchBytes != 70000 || got.Arch != "gfx1201" {
		t.Fatalf("%+v", got)
	}
	want := []string{"uses 70000 bytes of scratch", "uses a dynamic stack (scratch of a size unknown at compile time)"}
	if p := got.Problems(false); !reflect.DeepEqual(p, want) {
		t.Fatalf("Problems(false) = %q, want %q", p, want)
	}
}

func TestProblems(t *testing.T) {
	yes := true
	cases := []struct {
		k            Kernel
		allowScratch bool
		want         []string
	}{
		{Kernel{Arch: "gfx1201", WavefrontSize: 32}, false, nil},
		{Kernel{Arch: "gfx1201", WavefrontSize: 32, ScratchBytes: 64}, false, []string{"uses 64 bytes of scratch"}},
		{Kernel{Arch: "gfx1201", WavefrontSize: 32, ScratchBytes: 64, VGPRSpill: 3, SGPRSpill: 1}, false,
			[]string{"uses 64 bytes of scratch", "spills 3 VGPRs", "spills 1 SGPR"}},
		{Kernel{Arch: "gfx1201", WavefrontSize: 32, ScratchBytes: 64, VGPRSpill: 3, UsesDynamicStack: &yes}, true, nil},
		{Kernel{Arch: "gfx1201", WavefrontSize: 64}, true, []string{"wave size 64, expected 32 on gfx12"}},
		{Kernel{Arch: "gfx1100", WavefrontSize: 64}, false, []string{"wave size 64, expected 32 on gfx11"}},
		{Kernel{Arch: "gfx942", WavefrontSize: 64}, false, nil},
		{Kernel{Arch: "gfx90a", WavefrontSize: 32}, false, []string{"wave size 32, expected 64 on gfx9"}},
		{Kernel{WavefrontSize: 16}, false, []string{"wave size 16, expected 32 or 64"}},
		{Kernel{WavefrontSize: 64}, false, nil},
	}
	for _, c := range cases {
		if got := c.k.Problems(c.allowScratch); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v allowScratch=%v: got %q, want %q", c.k, c.allowScratch, got, c.want)
		}
	}
}

func TestMachAndFamily(t *testing.T) {
	for mach, name := range map[uint32]string{0x04e: "gfx1201", 0x048: "gfx1200", 0x041: "gfx1100", 0x036: "gfx1030", 0x04c: "gfx942", 0x14e: "gfx1201", 0x0ff: ""} {
		if got := MachName(mach); got != name {
			t.Errorf("MachName(%#x) = %q, want %q", mach, got, name)
		}
	}
	for arch, fam := range map[string]string{"gfx1201": "gfx12", "gfx12-generic": "gfx12", "gfx10-3-generic": "gfx10", "gfx90a": "gfx9", "gfx942": "gfx9", "gfx600": "gfx6", "gfx": "", "sm_90": "", "gfxab": "", "gfx1x-generic": ""} {
		if got := Family(arch); got != fam {
			t.Errorf("Family(%q) = %q, want %q", arch, got, fam)
		}
	}
}

// .args: explicit arguments in order, hidden ones filtered by Explicit, and
// malformed entries named by index.
func TestKernelArgs(t *testing.T) {
	k := testKernelMap()
	k[".args"] = []any{
		map[string]any{".size": 8, ".offset": 0, ".value_kind": "global_buffer", ".name": "x"},
		map[string]any{".size": 4, ".offset": 8, ".value_kind": "by_value"},
		map[string]any{".size": 8, ".offset": 16, ".value_kind": "hidden_global_offset_x"},
	}
	co, err := ReadKernels(metadataELF(testMetadata(k)))
	if err != nil {
		t.Fatal(err)
	}
	got := co.Kernels[0].Explicit()
	if len(co.Kernels[0].Args) != 3 || len(got) != 2 || got[0] != (Arg{8, 0, "global_buffer"}) || got[1] != (Arg{4, 8, "by_value"}) {
		t.Fatalf("args %+v, explicit %+v", co.Kernels[0].Args, got)
	}
	for _, c := range []struct {
		args any
		want string
	}{
		{"x", ".args is a string, want an array"},
		{[]any{7}, ".args[0]: entry is"},
		{[]any{map[string]any{".offset": 0, ".value_kind": "by_value"}}, ".args[0]: missing .size"},
		{[]any{map[string]any{".size": 4, ".offset": 0}}, ".args[0]: missing .value_kind"},
		{[]any{map[string]any{".size": 4, ".offset": 0, ".value_kind": 3}}, ".value_kind is"},
	} {
		k[".args"] = c.args
		if _, err := ReadKernels(metadataELF(testMetadata(k))); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf(".args %v: error %v, want %q", c.args, err, c.want)
		}
	}
}
