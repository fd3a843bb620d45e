// verify.hip: a device-side comparison of two buffers, so a gate can check
// after every launch that a kernel left its inputs as they were uploaded
// without reading them back to the host (a gate re-reads tens of MB of
// weights per launch otherwise).
//
// Entry points:
//   buf_diff  the lowest byte index < n at which a and b differ, min'd into
//             *first (the caller sets it to ~0: no difference). a and b are
//             16-byte aligned; n need not be a multiple of 16.
#include "arch/arch.h"

KERNEL LAUNCH_BOUNDS(256) void buf_diff(const u8 *__restrict__ a, const u8 *__restrict__ b, u64 n, u64 *first) {
  const u64 none = ~(u64)0;
  const u64 stride = (u64)gdim_x() * bdim_x();
  const u64 t = (u64)bid_x() * bdim_x() + tid_x();
  const u64 nv = n / 16u;
  const u32x4v *av = (const u32x4v *)a, *bv = (const u32x4v *)b;
  // A thread's indices only grow, so its first difference is its lowest.
  u64 lo = none;
  for (u64 i = t; i < nv && lo == none; i += stride) {
    const u32x4v d = av[i] ^ bv[i];
    const u32 w[4] = {d.x, d.y, d.z, d.w};
    for (u32 j = 0; j < 4u; j++) {
      // Little-endian: byte k of a word is bits 8k..8k+7.
      if (w[j] != 0u && lo == none) lo = 16u * i + 4u * j + (u32)__builtin_ctz(w[j]) / 8u;
    }
  }
  for (u64 i = 16u * nv + t; i < n && lo == none; i += stride) {
    if (a[i] != b[i]) lo = i;
  }
  if (lo != none) atomic_min_u64(first, lo);
}
