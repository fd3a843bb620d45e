package amdgpu

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"math"
	"sort"
)

// Helpers that build small ELF files and MessagePack payloads for the
// bad-input tests, so that the tests do not depend on a toolchain.

type testSection struct {
	name  string
	typ   elf.SectionType
	align uint64
	data  []byte
}

// buildELF returns a 64-bit little-endian ELF relocatable with the given
// header fields and sections (plus the null section and .shstrtab), and no
// program headers.
func buildELF(machine elf.Machine, osabi byte, abiVersion byte, flags uint32, secs []testSection) []byte {
	le := binary.LittleEndian
	var body bytes.Buffer
	body.Write(make([]byte, 64)) // header, filled in below
	type placed struct {
		nameOff, off uint64
		s            testSection
	}
	var shstr bytes.Buffer
	shstr.WriteByte(0)
	var ps []placed
	for _, s := range append(secs, testSection{name: ".shstrtab", typ: elf.SHT_STRTAB, align: 1}) {
		nameOff := uint64(shstr.Len())
		shstr.WriteString(s.name)
		shstr.WriteByte(0)
		ps = append(ps, placed{nameOff: nameOff, s: s})
	}
	ps[len(ps)-1].s.data = shstr.Bytes()
	for i := range ps {
		for body.Len()%8 != 0 {
			body.WriteByte(0)
		}
		ps[i].off = uint64(body.Len())
		body.Write(ps[i].s.data)
	}
	for body.Len()%8 != 0 {
		body.WriteByte(0)
	}
	shoff := uint64(body.Len())
	body.Write(make([]byte, 64)) // SHN_UNDEF
	for _, p := range ps {
		var sh [64]byte
		le.PutUint32(sh[0:], uint32(p.nameOff))
		le.PutUint32(sh[4:], uint32(p.s.typ))
		le.PutUint64(sh[24:], p.off)
		le.PutUint64(sh[32:], uint64(len(p.s.data)))
		le.PutUint64(sh[48:], p.s.align)
		body.Write(sh[:])
	}
	b := body.Bytes()
	copy(b, elf.ELFMAG)
	b[4], b[5], b[6], b[7], b[8] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), 1, osabi, abiVersion
	le.PutUint16(b[16:], uint16(elf.ET_REL))
	le.PutUint16(b[18:], uint16(machine))
	le.PutUint32(b[20:], 1)
	le.PutUint64(b[40:], shoff)
	le.PutUint32(b[48:], flags)
	le.PutUint16(b[52:], 64)
	le.PutUint16(b[58:], 64)
	le.PutUint16(b[60:], uint16(len(ps)+1))
	le.PutUint16(b[62:], uint16(len(ps)))
	return b
}

// noteRecord encodes one ELF note with 4-byte padding.
func noteRecord(owner string, typ uint32, desc []byte) []byte {
	var b bytes.Buffer
	name := append([]byte(owner), 0)
	var h [12]byte
	binary.LittleEndian.PutUint32(h[0:], uint32(len(name)))
	binary.LittleEndian.PutUint32(h[4:], uint32(len(desc)))
	binary.LittleEndian.PutUint32(h[8:], typ)
	b.Write(h[:])
	b.Write(name)
	for b.Len()%4 != 0 {
		b.WriteByte(0)
	}
	b.Write(desc)
	for b.Len()%4 != 0 {
		b.WriteByte(0)
	}
	return b.Bytes()
}

// amdgpuELF builds a gfx1201 HSA code object whose only section is a .note
// holding notes.
func amdgpuELF(flags uint32, notes ...[]byte) []byte {
	var secs []testSection
	if len(notes) > 0 {
		secs = append(secs, testSection{name: ".note", typ: elf.SHT_NOTE, align: 4, data: bytes.Join(notes, nil)})
	}
	secs = append(secs, testSection{name: ".text", typ: elf.SHT_PROGBITS, align: 256, data: []byte{0, 0, 0xb0, 0xbf}})
	return buildELF(elf.EM_AMDGPU, elfOSABIAMDGPUHSA, 3, flags, secs)
}

// encodeMsgpack is a minimal MessagePack encoder for test payloads: maps
// with string keys (written in sorted order), arrays, strings, booleans,
// nil and integers (in the smallest encoding, as LLVM writes them).
func encodeMsgpack(v any) []byte {
	var b bytes.Buffer
	var enc func(v any)
	be := binary.BigEndian
	enc = func(v any) {
		switch x := v.(type) {
		case nil:
			b.WriteByte(0xc0)
		case bool:
			if x {
				b.WriteByte(0xc3)
			} else {
				b.WriteByte(0xc2)
			}
		case string:
			switch n := len(x); {
			case n < 32:
				b.WriteByte(0xa0 | byte(n))
			case n < 256:
				b.Write([]byte{0xd9, byte(n)})
			default:
				b.WriteByte(0xda)
				b.Write(be.AppendUint16(nil, uint16(n)))
			}
			b.WriteString(x)
		case int:
			switch {
			case x >= 0 && x < 128, x < 0 && x >= -32:
				b.WriteByte(byte(int8(x)))
			case x >= 0 && x <= math.MaxUint8:
				b.Write([]byte{0xcc, byte(x)})
			case x >= 0 && x <= math.MaxUint16:
				b.WriteByte(0xcd)
				b.Write(be.AppendUint16(nil, uint16(x)))
			case x >= 0 && x <= math.MaxUint32:
				b.WriteByte(0xce)
				b.Write(be.AppendUint32(nil, uint32(x)))
			default:
				b.WriteByte(0xd3)
				b.Write(be.AppendUint64(nil, uint64(x)))
			}
		case []any:
			if len(x) < 16 {
				b.WriteByte(0x90 | byte(len(x)))
			} else {
				b.WriteByte(0xdc)
				b.Write(be.AppendUint16(nil, uint16(len(x))))
			}
			for _, e := range x {
				enc(e)
			}
		case map[string]any:
			if len(x) < 16 {
				b.WriteByte(0x80 | byte(len(x)))
			} else {
				b.WriteByte(0xde)
				b.Write(be.AppendUint16(nil, uint16(len(x))))
			}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				enc(k)
				enc(x[k])
			}
		default:
			panic(fmt.Sprintf("encodeMsgpack: unsupported %T", v))
		}
	}
	enc(v)
	return b.Bytes()
}

// testKernelMap is one well-formed amdhsa.kernels entry.
func testKernelMap() map[string]any {
	return map[string]any{
		".name": "k", ".symbol": "k.kd",
		".vgpr_count": 2, ".sgpr_count": 6,
		".group_segment_fixed_size": 0, ".private_segment_fixed_size": 0,
		".vgpr_spill_count": 0, ".sgpr_spill_count": 0,
		".wavefront_size": 32, ".max_flat_workgroup_size": 1024,
		".kernarg_segment_size": 20, ".uses_dynamic_stack": false,
		".kernarg_segment_align": 8,
	}
}

// testMetadata is a well-formed metadata map with the given kernels.
func testMetadata(kernels ...map[string]any) map[string]any {
	ks := make([]any, len(kernels))
	for i, k := range kernels {
		ks[i] = k
	}
	return map[string]any{
		"amdhsa.target":  "amdgcn-amd-amdhsa--gfx1201",
		"amdhsa.version": []any{1, 2},
		"amdhsa.kernels": ks,
	}
}

func metadataELF(md any) []byte {
	return amdgpuELF(MachGFX1201, noteRecord(noteOwner, ntAMDGPUMetadata, encodeMsgpack(md)))
}
