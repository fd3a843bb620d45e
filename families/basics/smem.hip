// smem.hip: shared-memory poison, so a gate sees what a kernel makes of
// shared memory it never wrote.
//
// Neither backend clears shared memory between the kernels of one context:
// a block starts with whatever the SM's last block left there. The gates
// launch smem_fill before every kernel under test, one block an SM at the
// largest block the device allows, so every byte a kernel reads without
// writing first is the poison byte (0xFF: NaN as fp8 e4m3, fp16, bf16 and
// fp32), not zeros that hide the read.
//
// Entry points:
//   smem_fill   fills its n bytes of dynamic shared memory with the byte v
//   smem_count  never writes its n bytes of dynamic shared memory; adds the
//               count of those equal to v to count[0] and of zeros to
//               count[1]: the probe that shows the next kernel finds
//               smem_fill's poison (or a device that clears it)
#include "arch/arch.h"

KERNEL LAUNCH_BOUNDS(256) void smem_fill(u32 n, u32 v) {
  extern SHARED __attribute__((aligned(16))) u32 sf_smem[];
  volatile u32 *p = sf_smem; // volatile: stores nothing reads are kept
  u32 w = (v & 0xFFu) * 0x01010101u;
  for (u32 i = tid_x(); i < n / 4u; i += bdim_x()) p[i] = w;
}

KERNEL LAUNCH_BOUNDS(256) void smem_count(u32 n, u32 v, u64 *count) {
  extern SHARED __attribute__((aligned(16))) u32 sc_smem[];
  const volatile u32 *p = sc_smem; // volatile: the reads of unwritten memory are kept
  u64 hit = 0, zero = 0;
  for (u32 i = tid_x(); i < n / 4u; i += bdim_x()) {
    u32 x = p[i];
    for (u32 b = 0; b < 4u; b++) {
      u32 y = (x >> (8u * b)) & 0xFFu;
      hit += y == (v & 0xFFu) ? 1u : 0u;
      zero += y == 0u ? 1u : 0u;
    }
  }
  atomic_add_u64(&count[0], hit);
  atomic_add_u64(&count[1], zero);
}
