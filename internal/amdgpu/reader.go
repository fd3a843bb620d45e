package amdgpu

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
)

const (
	// ntAMDGPUMetadata is the note type of the code object metadata
	// (AMDGPUUsage, "Note Records"); the note's owner is "AMDGPU".
	ntAMDGPUMetadata = 32
	noteOwner        = "AMDGPU"
	// elfOSABIAMDGPUHSA is ELFOSABI_AMDGPU_HSA; debug/elf has no name for it.
	elfOSABIAMDGPUHSA = 64
	targetPrefix      = "amdgcn-amd-amdhsa--"
)

// CodeObject is what ReadKernels finds in one AMDGPU code object.
type CodeObject struct {
	// Target is amdhsa.target, e.g. "amdgcn-amd-amdhsa--gfx1201"; it may
	// carry target features such as ":xnack-".
	Target string `json:"target"`
	// Version is amdhsa.version: [1, 2] for code object v5.
	Version []int `json:"version"`
	// CodeObjectVersion is from the ELF header's ABI version byte
	// (ELFABIVERSION_AMDGPU_HSA_V<n> is n-2): 5 for code object v5.
	CodeObjectVersion int `json:"code_object_version"`
	// Mach is e_flags & EF_AMDGPU_MACH (0x04e for gfx1201) and Arch its
	// processor name; ReadKernels checks that Arch is the processor named
	// by Target.
	Mach    uint32   `json:"mach"`
	Arch    string   `json:"arch"`
	Kernels []Kernel `json:"kernels"`
}

// Kernel holds one entry of amdhsa.kernels. Counts are per work-item for
// VGPRs, AGPRs and scratch, per wavefront for SGPRs and per work-group for
// LDS, as in AMDGPUUsage's "Code Object V3 Metadata" table.
type Kernel struct {
	Name   string `json:"name"`   // .name, the source-level name
	Symbol string `json:"symbol"` // .symbol, the kernel descriptor symbol ("<name>.kd")
	// Arch is the code object's processor (CodeObject.Arch), repeated here so
	// that Problems can judge the kernel on its own.
	Arch string `json:"arch"`

	VGPRCount int  `json:"vgpr_count"`           // .vgpr_count
	SGPRCount int  `json:"sgpr_count"`           // .sgpr_count
	AGPRCount *int `json:"agpr_count,omitempty"` // .agpr_count; only on processors with AGPRs

	LDSBytes     int `json:"lds_bytes"`     // .group_segment_fixed_size
	ScratchBytes int `json:"scratch_bytes"` // .private_segment_fixed_size
	VGPRSpill    int `json:"vgpr_spill"`    // .vgpr_spill_count
	SGPRSpill    int `json:"sgpr_spill"`    // .sgpr_spill_count

	WavefrontSize        int `json:"wavefront_size"`          // .wavefront_size
	MaxFlatWorkgroupSize int `json:"max_flat_workgroup_size"` // .max_flat_workgroup_size
	KernargBytes         int `json:"kernarg_bytes"`           // .kernarg_segment_size

	// UsesDynamicStack is .uses_dynamic_stack (code object v5); nil when the
	// metadata does not say.
	UsesDynamicStack *bool `json:"uses_dynamic_stack,omitempty"`

	// Args is .args: the kernel's arguments in kernarg order, the source's
	// explicit ones first, then the hidden ones the runtime fills (value
	// kinds hidden_*). Empty for a kernel without arguments.
	Args []Arg `json:"args,omitempty"`
}

// Arg is one .args entry (AMDGPUUsage, "Code Object V3 Metadata", kernel
// argument map).
type Arg struct {
	Size      int    `json:"size"`       // .size, bytes
	Offset    int    `json:"offset"`     // .offset in the kernarg segment
	ValueKind string `json:"value_kind"` // .value_kind: by_value, global_buffer, hidden_*, ...
}

// Explicit returns the arguments the source declares (not hidden_*).
func (k *Kernel) Explicit() []Arg {
	var out []Arg
	for _, a := range k.Args {
		if !strings.HasPrefix(a.ValueKind, "hidden_") {
			out = append(out, a)
		}
	}
	return out
}

// errPanic marks an error made from a recovered panic: a parser bug to fix
// (the fuzz test fails on it), reported to callers as a malformed input.
var errPanic = errors.New("internal error while parsing")

// ReadKernels parses an AMDGPU code object (an ELF file with EM_AMDGPU) and
// returns its target and per-kernel resource metadata, read from the
// NT_AMDGPU_METADATA note. Every error is one line that says what is wrong
// with the input. It never panics.
func ReadKernels(img []byte) (*CodeObject, error) {
	return guarded(func() (*CodeObject, error) { return readKernels(img) })
}

// Arch returns the processor (e.g. "gfx1201") an AMDGPU code object is
// built for, from the ELF header's EF_AMDGPU_MACH. Every error is one line
// that says what is wrong with the input. It never panics.
func Arch(img []byte) (string, error) {
	return guarded(func() (string, error) {
		if _, err := openAMDGPU(img); err != nil {
			return "", err
		}
		_, arch, err := headerArch(img)
		return arch, err
	})
}

// guarded runs a parser, turning a panic (a parser bug: the fuzz tests fail
// on errPanic) into a one-line malformed-input error.
func guarded[T any](parse func() (T, error)) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			var zero T
			v, err = zero, fmt.Errorf("amdgpu: malformed code object (%w: %v)", errPanic, r)
		}
	}()
	return parse()
}

// headerArch reads EF_AMDGPU_MACH from the ELF64 header of an image
// openAMDGPU accepted.
func headerArch(img []byte) (mach uint32, arch string, err error) {
	mach = binary.LittleEndian.Uint32(img[48:52]) & efAMDGPUMach // ELF64 e_flags
	if arch = MachName(mach); arch == "" {
		return mach, "", fmt.Errorf("amdgpu: e_flags processor EF_AMDGPU_MACH 0x%03x is not a known AMDGCN processor", mach)
	}
	return mach, arch, nil
}

func readKernels(img []byte) (*CodeObject, error) {
	f, err := openAMDGPU(img)
	if err != nil {
		return nil, err
	}
	mach, arch, err := headerArch(img)
	if err != nil {
		return nil, err
	}
	desc, err := metadataNote(f, img)
	if err != nil {
		return nil, err
	}
	raw, err := decodeMsgpack(desc)
	if err != nil {
		return nil, fmt.Errorf("amdgpu: malformed msgpack in NT_AMDGPU_METADATA note: %v", err)
	}
	co, err := parseMetadata(raw)
	if err != nil {
		return nil, fmt.Errorf("amdgpu: metadata: %v", err)
	}
	co.Mach, co.Arch = mach, arch
	co.CodeObjectVersion = int(f.ABIVersion) + 2
	proc, ok := strings.CutPrefix(co.Target, targetPrefix)
	if !ok {
		return nil, fmt.Errorf("amdgpu: metadata: amdhsa.target %q does not start with %q", co.Target, targetPrefix)
	}
	if i := strings.IndexByte(proc, ':'); i >= 0 {
		proc = proc[:i] // drop target features (":sramecc+:xnack-")
	}
	if proc != arch {
		return nil, fmt.Errorf("amdgpu: e_flags say %s (EF_AMDGPU_MACH 0x%03x) but amdhsa.target is %q", arch, mach, co.Target)
	}
	for i := range co.Kernels {
		co.Kernels[i].Arch = arch
	}
	return co, nil
}

// openAMDGPU checks that img is a complete 64-bit little-endian AMDGPU HSA
// ELF file and opens it.
func openAMDGPU(img []byte) (*elf.File, error) {
	if len(img) < 4 || string(img[:4]) != elf.ELFMAG {
		if len(img) == 0 {
			return nil, errors.New("amdgpu: not an ELF file (empty input)")
		}
		return nil, fmt.Errorf("amdgpu: not an ELF file (%d bytes, starts % x)", len(img), img[:min(len(img), 4)])
	}
	// Judge the machine from the raw header first, so that a foreign ELF is
	// called foreign even when it is cut short.
	if len(img) >= 20 {
		m := binary.LittleEndian.Uint16(img[18:])
		if elf.Data(img[elf.EI_DATA]) == elf.ELFDATA2MSB {
			m = binary.BigEndian.Uint16(img[18:])
		}
		if elf.Machine(m) != elf.EM_AMDGPU {
			return nil, fmt.Errorf("amdgpu: ELF machine is %v (%d), not EM_AMDGPU (224): not an AMDGPU code object", elf.Machine(m), m)
		}
	}
	if len(img) < 64 {
		return nil, fmt.Errorf("amdgpu: truncated ELF file: %d bytes, shorter than the 64-byte ELF64 header", len(img))
	}
	f, err := elf.NewFile(bytes.NewReader(img))
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("amdgpu: truncated ELF file: %d bytes, its header tables run past the end", len(img))
	}
	if err != nil {
		return nil, fmt.Errorf("amdgpu: malformed ELF file: %v", err)
	}
	if f.Class != elf.ELFCLASS64 || f.Data != elf.ELFDATA2LSB {
		return nil, fmt.Errorf("amdgpu: AMDGPU ELF is %v %v, want ELFCLASS64 ELFDATA2LSB", f.Class, f.Data)
	}
	if f.OSABI != elfOSABIAMDGPUHSA {
		return nil, fmt.Errorf("amdgpu: ELF OS ABI is %d, want ELFOSABI_AMDGPU_HSA (64): not an HSA code object", uint8(f.OSABI))
	}
	size := uint64(len(img))
	for _, s := range f.Sections {
		if s.Type == elf.SHT_NOBITS || s.Type == elf.SHT_NULL {
			continue
		}
		if s.Offset > size || s.FileSize > size-s.Offset {
			return nil, fmt.Errorf("amdgpu: truncated code object: section %s needs bytes up to %d, file has %d", s.Name, s.Offset+s.FileSize, size)
		}
	}
	for i, p := range f.Progs {
		if p.Off > size || p.Filesz > size-p.Off {
			return nil, fmt.Errorf("amdgpu: truncated code object: program header %d (%v) needs bytes up to %d, file has %d", i, p.Type, p.Off+p.Filesz, size)
		}
	}
	return f, nil
}

// metadataNote returns the descriptor of the one NT_AMDGPU_METADATA note,
// looked for in the SHT_NOTE sections, or in the PT_NOTE segments when the
// file has no section headers.
func metadataNote(f *elf.File, img []byte) ([]byte, error) {
	type noteBlock struct {
		where string
		data  []byte
		align uint64
	}
	var blocks []noteBlock
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOTE {
			continue
		}
		if s.Flags&elf.SHF_COMPRESSED != 0 {
			return nil, fmt.Errorf("amdgpu: note section %s is compressed; AMDGPU code objects never are", s.Name)
		}
		// openAMDGPU checked that sections and segments lie within img.
		d := img[s.Offset : s.Offset+s.FileSize]
		blocks = append(blocks, noteBlock{"section " + s.Name, d, s.Addralign})
	}
	if len(blocks) == 0 {
		for i, p := range f.Progs {
			if p.Type != elf.PT_NOTE {
				continue
			}
			d := img[p.Off : p.Off+p.Filesz]
			blocks = append(blocks, noteBlock{fmt.Sprintf("PT_NOTE segment %d", i), d, p.Align})
		}
	}
	var found []byte
	n := 0
	for _, b := range blocks {
		align := uint64(4)
		if b.align == 8 {
			align = 8
		}
		err := eachNote(b.data, align, func(name string, typ uint32, desc []byte) {
			if name == noteOwner && typ == ntAMDGPUMetadata {
				n++
				found = desc
			}
		})
		if err != nil {
			return nil, fmt.Errorf("amdgpu: malformed note in %s: %v", b.where, err)
		}
	}
	switch n {
	case 0:
		return nil, errors.New("amdgpu: no NT_AMDGPU_METADATA note (owner \"AMDGPU\", type 32) in the code object")
	case 1:
		return found, nil
	}
	return nil, fmt.Errorf("amdgpu: %d NT_AMDGPU_METADATA notes in the code object, want one", n)
}

// eachNote walks the note records in d (ELF note format: namesz, descsz and
// type as 32-bit words, then the name and descriptor, each padded to align).
func eachNote(d []byte, align uint64, fn func(name string, typ uint32, desc []byte)) error {
	pad := func(n uint64) uint64 { return (n + align - 1) &^ (align - 1) }
	size := uint64(len(d))
	for off := uint64(0); off < size; {
		if size-off < 12 {
			return fmt.Errorf("%d stray bytes at offset %d, too short for a note header", size-off, off)
		}
		namesz := uint64(binary.LittleEndian.Uint32(d[off:]))
		descsz := uint64(binary.LittleEndian.Uint32(d[off+4:]))
		typ := binary.LittleEndian.Uint32(d[off+8:])
		nameAt := off + 12
		descAt := nameAt + pad(namesz)
		if descAt > size || descsz > size-descAt {
			return fmt.Errorf("note at offset %d (name size %d, descriptor size %d) overruns the %d-byte block", off, namesz, descsz, size)
		}
		name := strings.TrimRight(string(d[nameAt:nameAt+namesz]), "\x00")
		fn(name, typ, d[descAt:descAt+descsz])
		next := descAt + pad(descsz)
		if next > size { // final padding may be missing
			next = size
		}
		off = next
	}
	return nil
}

// parseMetadata turns the decoded metadata map into a CodeObject (without
// the ELF header fields).
func parseMetadata(raw any) (*CodeObject, error) {
	top, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("top level is %s, want a map", typeName(raw))
	}
	co := &CodeObject{}
	v, ok := top["amdhsa.target"]
	if !ok {
		return nil, errors.New("missing amdhsa.target")
	}
	if co.Target, ok = v.(string); !ok {
		return nil, fmt.Errorf("amdhsa.target is %s, want a string", typeName(v))
	}
	v, ok = top["amdhsa.version"]
	if !ok {
		return nil, errors.New("missing amdhsa.version")
	}
	ver, ok := v.([]any)
	if !ok || len(ver) != 2 {
		return nil, fmt.Errorf("amdhsa.version is %s, want an array of two integers", describe(v))
	}
	for _, e := range ver {
		x, ok := asInt(e)
		if !ok || x < 0 || x > 1<<20 {
			return nil, fmt.Errorf("amdhsa.version is %s, want an array of two small integers", describe(v))
		}
		co.Version = append(co.Version, int(x))
	}
	v, ok = top["amdhsa.kernels"]
	if !ok {
		return nil, errors.New("missing amdhsa.kernels")
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("amdhsa.kernels is %s, want an array", typeName(v))
	}
	co.Kernels = make([]Kernel, 0, len(list))
	for i, e := range list {
		k, err := parseKernel(e)
		if err != nil {
			if k.Name != "" {
				return nil, fmt.Errorf("kernel %d (%q): %v", i, k.Name, err)
			}
			return nil, fmt.Errorf("kernel %d: %v", i, err)
		}
		co.Kernels = append(co.Kernels, k)
	}
	return co, nil
}

// describe is typeName, with the length for arrays.
func describe(v any) string {
	if a, ok := v.([]any); ok {
		return fmt.Sprintf("an array of %d", len(a))
	}
	return typeName(v)
}

// parseKernel reads one amdhsa.kernels entry. On error the returned Kernel
// carries the name if it was read, for the message.
func parseKernel(e any) (Kernel, error) {
	var k Kernel
	m, ok := e.(map[string]any)
	if !ok {
		return k, fmt.Errorf("entry is %s, want a map", typeName(e))
	}
	str := func(key string, dst *string) error {
		v, ok := m[key]
		if !ok {
			return fmt.Errorf("missing %s", key)
		}
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s is %s, want a string", key, typeName(v))
		}
		*dst = s
		return nil
	}
	if err := str(".name", &k.Name); err != nil {
		return k, err
	}
	if err := str(".symbol", &k.Symbol); err != nil {
		return k, err
	}
	ints := []struct {
		key string
		dst *int
	}{
		{".vgpr_count", &k.VGPRCount},
		{".sgpr_count", &k.SGPRCount},
		{".group_segment_fixed_size", &k.LDSBytes},
		{".private_segment_fixed_size", &k.ScratchBytes},
		// Optional in the specification, but LLVM always writes them and
		// the gate cannot vouch for a kernel without them.
		{".vgpr_spill_count", &k.VGPRSpill},
		{".sgpr_spill_count", &k.SGPRSpill},
		{".wavefront_size", &k.WavefrontSize},
		{".max_flat_workgroup_size", &k.MaxFlatWorkgroupSize},
		{".kernarg_segment_size", &k.KernargBytes},
	}
	for _, f := range ints {
		v, ok := m[f.key]
		if !ok {
			return k, fmt.Errorf("missing %s", f.key)
		}
		x, err := count(f.key, v)
		if err != nil {
			return k, err
		}
		*f.dst = x
	}
	if v, ok := m[".agpr_count"]; ok {
		x, err := count(".agpr_count", v)
		if err != nil {
			return k, err
		}
		k.AGPRCount = &x
	}
	if v, ok := m[".uses_dynamic_stack"]; ok {
		b, err := boolean(".uses_dynamic_stack", v)
		if err != nil {
			return k, err
		}
		k.UsesDynamicStack = &b
	}
	if v, ok := m[".args"]; ok {
		list, ok := v.([]any)
		if !ok {
			return k, fmt.Errorf(".args is %s, want an array", typeName(v))
		}
		for i, e := range list {
			a, err := parseArg(e)
			if err != nil {
				return k, fmt.Errorf(".args[%d]: %v", i, err)
			}
			k.Args = append(k.Args, a)
		}
	}
	return k, nil
}

// parseArg reads one .args entry: .size, .offset and .value_kind are
// required; the rest (.name, .type_name, .address_space, ...) is not read.
func parseArg(e any) (Arg, error) {
	var a Arg
	m, ok := e.(map[string]any)
	if !ok {
		return a, fmt.Errorf("entry is %s, want a map", typeName(e))
	}
	for _, f := range []struct {
		key string
		dst *int
	}{{".size", &a.Size}, {".offset", &a.Offset}} {
		v, ok := m[f.key]
		if !ok {
			return a, fmt.Errorf("missing %s", f.key)
		}
		x, err := count(f.key, v)
		if err != nil {
			return a, err
		}
		*f.dst = x
	}
	v, ok := m[".value_kind"]
	if !ok {
		return a, errors.New("missing .value_kind")
	}
	if a.ValueKind, ok = v.(string); !ok {
		return a, fmt.Errorf(".value_kind is %s, want a string", typeName(v))
	}
	return a, nil
}

// maxCount bounds every count; metadata values are 32-bit in LLVM.
const maxCount = 1<<32 - 1

func count(key string, v any) (int, error) {
	x, ok := asInt(v)
	if !ok {
		return 0, fmt.Errorf("%s is %s, want an integer", key, typeName(v))
	}
	if x < 0 || x > maxCount {
		return 0, fmt.Errorf("%s is %d, out of range", key, x)
	}
	return int(x), nil
}

// flag reads a boolean; older producers wrote 0/1 integers for booleans.
func boolean(key string, v any) (bool, error) {
	if b, ok := v.(bool); ok {
		return b, nil
	}
	if x, ok := asInt(v); ok && (x == 0 || x == 1) {
		return x == 1, nil
	}
	return false, fmt.Errorf("%s is %s, want a boolean", key, typeName(v))
}
