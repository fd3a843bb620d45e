package amdgpu

import "fmt"

// Problems lists what the static resource gate objects to in k, one short
// phrase each, or nil when there is nothing:
//
//   - "uses 64 bytes of scratch"       .private_segment_fixed_size > 0
//   - "spills 3 VGPRs" / "spills 1 SGPR" spill counts > 0
//   - "uses a dynamic stack ..."        .uses_dynamic_stack is true
//   - "wave size 64, expected 32 on gfx12"
//
// The first three are scratch use (spilled registers live in scratch too)
// and are accepted when allowScratch is true, for kernels declared to need
// it. The wave size is always checked: wave32 on gfx10 and later, wave64
// before; a kernel without a known Arch is only checked for 32 or 64.
func (k Kernel) Problems(allowScratch bool) []string {
	var p []string
	if !allowScratch {
		if k.ScratchBytes > 0 {
			p = append(p, fmt.Sprintf("uses %d bytes of scratch", k.ScratchBytes))
		}
		if k.VGPRSpill > 0 {
			p = append(p, fmt.Sprintf("spills %d %s", k.VGPRSpill, plural(k.VGPRSpill, "VGPR")))
		}
		if k.SGPRSpill > 0 {
			p = append(p, fmt.Sprintf("spills %d %s", k.SGPRSpill, plural(k.SGPRSpill, "SGPR")))
		}
		if k.UsesDynamicStack != nil && *k.UsesDynamicStack {
			p = append(p, "uses a dynamic stack (scratch of a size unknown at compile time)")
		}
	}
	if want := expectedWave(k.Arch); want != 0 {
		if k.WavefrontSize != want {
			p = append(p, fmt.Sprintf("wave size %d, expected %d on %s", k.WavefrontSize, want, Family(k.Arch)))
		}
	} else if k.WavefrontSize != 32 && k.WavefrontSize != 64 {
		p = append(p, fmt.Sprintf("wave size %d, expected 32 or 64", k.WavefrontSize))
	}
	return p
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
