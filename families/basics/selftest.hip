// selftest.hip: kernels that misbehave on purpose, so the harness can prove
// its own guards work (gate harness-selftest, command `parharness selftest`).
//
// Entry points:
//   selftest_fill     writes v to buf[lo..hi) (hi past n overruns, lo < 0 underruns)
//   selftest_spin     spins until *flag != 0, which never happens: a hung kernel
//   selftest_empty    does nothing: the launch floor of a graph node
#include "arch/arch.h"

KERNEL LAUNCH_BOUNDS(256) void selftest_fill(u8 *buf, i32 lo, i32 hi, u32 v) {
  i32 i = lo + (i32)(bid_x() * bdim_x() + tid_x());
  if (i < hi) buf[i] = (u8)v;
}

KERNEL LAUNCH_BOUNDS(32) void selftest_spin(volatile u32 *flag, u32 *out) {
  u32 n = 0;
  while (*flag == 0u) n++;
  out[0] = n;
}

// The launch floor: a kernel that does nothing. `bench2 launch` times it in
// a graph, the least any kernel node costs on the device.
KERNEL LAUNCH_BOUNDS(256) void selftest_empty(u32 *out, u32 never) {
  if (never == 0x5EEDu && tid_x() == 1000u) out[0] = 1;
}
