// copy.hip: device copies, the bandwidth ceiling and the bench engine's
// first subject.
//
// Entry points:
//   copy_v4        dst[i] = src[i] over n 16-byte vectors, grid-stride; the
//                  copy-bandwidth ceiling every GB/s figure is compared with
//   copy_v4_extra  copy_v4, then copies the first `extra` vectors again: a
//                  variant made deliberately slower by a known amount of
//                  traffic, to prove the A/B protocol calls it slower
#include "arch/arch.h"

KERNEL LAUNCH_BOUNDS(256) void copy_v4(const u32x4v *__restrict__ src, u32x4v *__restrict__ dst, u64 n) {
  u64 stride = (u64)gdim_x() * bdim_x();
  for (u64 i = (u64)bid_x() * bdim_x() + tid_x(); i < n; i += stride) dst[i] = src[i];
}

KERNEL LAUNCH_BOUNDS(256) void copy_v4_extra(const u32x4v *__restrict__ src, u32x4v *__restrict__ dst, u64 n,
                                             u64 extra) {
  u64 stride = (u64)gdim_x() * bdim_x();
  u64 total = n + extra;
  for (u64 i = (u64)bid_x() * bdim_x() + tid_x(); i < total; i += stride) {
    u64 j = i < n ? i : i - n;
    dst[j] = src[j];
  }
}
