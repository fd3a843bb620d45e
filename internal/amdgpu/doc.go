// Package amdgpu reads the resource metadata that LLVM writes into an AMDGPU
// code object, so that the static resource gate can reject a kernel that
// uses scratch memory or spills registers before it ever runs on a GPU.
//
// # What the metadata is
//
// An AMDGPU code object is an ELF file (e_machine EM_AMDGPU = 224, OS ABI
// ELFOSABI_AMDGPU_HSA = 64) holding the machine code of one or more kernels
// for one GPU processor. The processor is also recorded in the low byte of
// e_flags (EF_AMDGPU_MACH; 0x04e is gfx1201). Next to the code, the
// compiler writes a note record, owner "AMDGPU" and type NT_AMDGPU_METADATA
// (32), in the .note section and its PT_NOTE segment. The note's descriptor
// is a MessagePack map, the "code object metadata": amdhsa.version,
// amdhsa.target (e.g. "amdgcn-amd-amdhsa--gfx1201") and amdhsa.kernels, a
// list with one map per kernel. Each kernel map records the figures that the
// register allocator and frame lowering settled on:
//
//	.vgpr_count / .sgpr_count / .agpr_count   registers used
//	.vgpr_spill_count / .sgpr_spill_count     registers spilled
//	.private_segment_fixed_size               scratch bytes per work-item
//	.group_segment_fixed_size                 LDS bytes per work-group
//	.uses_dynamic_stack                       stack of unknown size (v5)
//	.wavefront_size, .max_flat_workgroup_size, .kernarg_segment_size
//
// The authority for all of this is LLVM's "User Guide for AMDGPU Backend"
// (llvm/docs/AMDGPUUsage.rst, https://llvm.org/docs/AMDGPUUsage.html):
// sections "ELF Code Object" (header fields, EF_AMDGPU_MACH), "Note Records"
// (NT_AMDGPU_METADATA), "Code Object V3 Metadata" (the kernel map keys) and
// "Code Object V5 Metadata" (amdhsa.version [1, 2], .uses_dynamic_stack);
// the EF_AMDGPU_MACH values are those of llvm/include/llvm/BinaryFormat/ELF.h.
// The project builds its kernels with clang-19 for gfx1201 (RDNA4), which
// emits code object v5 (e_ident ABI version 3); the exact command is in
// testdata/README.md.
//
// # Why the gate cares
//
// Scratch ("private segment") is per-lane memory backed by VRAM through the
// cache hierarchy. A non-zero .private_segment_fixed_size means the kernel
// keeps a stack frame there: either a local array the compiler could not
// promote to registers or registers spilled because the kernel needed more
// than the allocator could give it. Either way, values that should sit in
// the register file go out to memory and back, a performance cliff on RDNA4
// that no amount of tuning elsewhere recovers. The gate therefore requires
// zero scratch, zero spills and no dynamic stack unless a kernel is declared
// to allow scratch (Kernel.Problems), and checks that gfx12 kernels run in
// wave32, the mode the project's kernels are written for.
//
// The package is pure Go: debug/elf for the container and
// github.com/vmihailenco/msgpack/v5, walked strictly (msgpack.go), for the
// note, so no LLVM tool is needed
// at gate time. Any panic from parsing hostile input is recovered and
// returned as an error.
package amdgpu
