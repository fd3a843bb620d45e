// arch.h: the small prelude every kernel source includes instead of vendor
// headers. It maps one vocabulary onto the two targets clang-19 builds:
//   AMD gfx1201 (RDNA4, wave32)   -- __AMDGCN__, HIP language mode
//   NVIDIA sm_90a (Hopper, warp32) -- __NVPTX__, CUDA language mode
// Kernel sources use this vocabulary on both targets. Where a kernel's
// algorithm itself differs (the GEMMs' matrix-op fragments, sm_90-only
// staging and clusters) the source has a body per target; what differs only
// in form (indices, syncs, shuffles, converts) lives here or in mma.h.
//
// Index:
//   qualifiers   KERNEL, DEVICE, SHARED, LAUNCH_BOUNDS(n)
//   indices      tid_x(), bid_x/y/z(), bdim_x(), gdim_x(), lane_id()
//   sync         block_sync(), warp_sync_all()
//   shuffles     shfl_idx_u32/f32(v, src), shfl_down_u32(v, d), shfl_xor_f32/i32(v, m), warp_sum_u32()
//   bits         f32_bits(x), bits_f32(u), bf16_to_f32(h), bf16_rne(x)
//   PDL          grid_dep_wait(), grid_dep_launch_dependents()
//   atomics      atomic_add_u64(), atomic_min_u32(), atomic_min_u64()
//   fp8          hw_e4m3x2_raw(lo, hi), hw_e4m3x2_sat(lo, hi), hw_e4m3_to_f32(c)
#pragma once

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef int i32;
// Four u32 in one vector register group: 16-byte loads and stores.
typedef u32 u32x4v __attribute__((ext_vector_type(4)));

#define KERNEL extern "C" __attribute__((global))
#define DEVICE __attribute__((device)) static inline __attribute__((always_inline))
#define SHARED __attribute__((shared))

#if defined(__AMDGCN__)
// Without the bound the AMDGPU backend assumes 1024 threads per block and
// budgets registers for it; every kernel states its block size.
#define LAUNCH_BOUNDS(n) __attribute__((amdgpu_flat_work_group_size(1, n)))

DEVICE u32 tid_x() { return __builtin_amdgcn_workitem_id_x(); }
DEVICE u32 bid_x() { return __builtin_amdgcn_workgroup_id_x(); }
DEVICE u32 bid_y() { return __builtin_amdgcn_workgroup_id_y(); }
DEVICE u32 bid_z() { return __builtin_amdgcn_workgroup_id_z(); }
DEVICE u32 bdim_x() { return __builtin_amdgcn_workgroup_size_x(); }
DEVICE u32 gdim_x() { return __builtin_amdgcn_grid_size_x() / __builtin_amdgcn_workgroup_size_x(); }
DEVICE u32 lane_id() { return __builtin_amdgcn_mbcnt_lo(~0u, 0u); } // wave32: lanes 0..31
DEVICE void block_sync() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
// No programmatic dependent launch on gfx12: stream order already holds.
DEVICE void grid_dep_wait() {}
DEVICE void grid_dep_launch_dependents() {}
// Lane src's v to every lane.
DEVICE u32 shfl_idx_u32(u32 v, u32 src) { return (u32)__builtin_amdgcn_ds_bpermute((int)(src << 2), (int)v); }
// Lane (lane ^ m)'s v (butterfly).
DEVICE float shfl_xor_f32(float v, u32 m) { return __builtin_bit_cast(float, shfl_idx_u32(__builtin_bit_cast(u32, v), lane_id() ^ m)); }
DEVICE i32 shfl_xor_i32(i32 v, u32 m) { return (i32)shfl_idx_u32((u32)v, lane_id() ^ m); }
// Warp-level barrier with memory ordering among the lanes (bar.warp.sync).
DEVICE void warp_sync_all() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront");
  __builtin_amdgcn_wave_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "wavefront");
}
DEVICE u32 shfl_down_u32(u32 v, u32 delta) {
  u32 src = lane_id() + delta;
  // ds_bpermute reads lane (addr/4); lanes past the wave read their own value.
  return (u32)__builtin_amdgcn_ds_bpermute((int)((src < 32 ? src : lane_id()) << 2), (int)v);
}
// Raw hardware convert: v_cvt_pk_fp8_f32 packs e4m3(lo) in byte 0 and
// e4m3(hi) in byte 1. Out-of-range behaviour is the hardware's.
DEVICE u32 hw_e4m3x2_raw(float lo, float hi) {
  return (u32)__builtin_amdgcn_cvt_pk_fp8_f32(lo, hi, 0, false) & 0xFFFFu;
}
// Saturating convert: clamp first so |x| >= 448 and Inf give 0x7E/0xFE on
// every gfx12 part regardless of its clamp mode (NaN is fixed by the caller).
DEVICE u32 hw_e4m3x2_sat(float lo, float hi) {
  lo = __builtin_fminf(__builtin_fmaxf(lo, -448.0f), 448.0f);
  hi = __builtin_fminf(__builtin_fmaxf(hi, -448.0f), 448.0f);
  return hw_e4m3x2_raw(lo, hi);
}
DEVICE float hw_e4m3_to_f32(u32 c) { return __builtin_amdgcn_cvt_f32_fp8((int)c, 0); }

#elif defined(__NVPTX__)
#define LAUNCH_BOUNDS(n) __attribute__((launch_bounds(n)))

DEVICE u32 tid_x() { return __nvvm_read_ptx_sreg_tid_x(); }
DEVICE u32 bid_x() { return __nvvm_read_ptx_sreg_ctaid_x(); }
DEVICE u32 bid_y() { return __nvvm_read_ptx_sreg_ctaid_y(); }
DEVICE u32 bid_z() { return __nvvm_read_ptx_sreg_ctaid_z(); }
DEVICE u32 bdim_x() { return __nvvm_read_ptx_sreg_ntid_x(); }
DEVICE u32 gdim_x() { return __nvvm_read_ptx_sreg_nctaid_x(); }
DEVICE u32 lane_id() { return __nvvm_read_ptx_sreg_laneid(); }
DEVICE void block_sync() { __nvvm_barrier_sync(0); }
// Programmatic dependent launch (PTX griddepcontrol, sm_90): grid_dep_wait()
// blocks until the grids this one depends on have completed and their writes
// are visible; grid_dep_launch_dependents() lets the next PDL-launched grid
// be scheduled. Both are no-ops when the launch was not a PDL launch.
DEVICE void grid_dep_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
DEVICE void grid_dep_launch_dependents() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }
DEVICE u32 shfl_idx_u32(u32 v, u32 src) { return (u32)__nvvm_shfl_sync_idx_i32(0xffffffffu, (int)v, (int)src, 0x1f); }
DEVICE void warp_sync_all() { __nvvm_bar_warp_sync(0xffffffffu); }
DEVICE float shfl_xor_f32(float v, u32 m) { return __nvvm_shfl_sync_bfly_f32(0xffffffffu, v, (int)m, 0x1f); }
DEVICE i32 shfl_xor_i32(i32 v, u32 m) { return __nvvm_shfl_sync_bfly_i32(0xffffffffu, v, (int)m, 0x1f); }
DEVICE u32 shfl_down_u32(u32 v, u32 delta) {
  return (u32)__nvvm_shfl_sync_down_i32(0xffffffffu, (int)v, (int)delta, 0x1f);
}
// cvt.rn.satfinite.e4m3x2.f32 d, a, b puts e4m3(a) in the upper byte and
// e4m3(b) in the lower: hi first, lo second.
DEVICE u32 hw_e4m3x2_raw(float lo, float hi) {
  u16 r;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  return r;
}
DEVICE u32 hw_e4m3x2_sat(float lo, float hi) { return hw_e4m3x2_raw(lo, hi); } // satfinite saturates
DEVICE float hw_e4m3_to_f32(u32 c) {
  u32 h2;
  u16 in = (u16)(c & 0xFF);
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"(in));
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"((u16)(h2 & 0xFFFF)));
  return f;
}
#else
#error "arch.h: build for amdgcn (HIP) or nvptx (CUDA) device code only"
#endif

DEVICE u32 f32_bits(float x) { return __builtin_bit_cast(u32, x); }
DEVICE float bits_f32(u32 u) { return __builtin_bit_cast(float, u); }
DEVICE float shfl_idx_f32(float v, u32 src) { return bits_f32(shfl_idx_u32(f32_bits(v), src)); }
DEVICE float bf16_to_f32(u32 h) { return bits_f32(h << 16); }
// float -> bf16 bits, round to nearest even; a NaN stays a (quiet) NaN.
DEVICE u32 bf16_rne(float f) {
  u32 u = f32_bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (u >> 16) | 0x40u;
  return (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
}

// Sum over the 32 lanes of a warp/wave; only lane 0's result is meaningful
// (the other lanes hold partial sums).
DEVICE u32 warp_sum_u32(u32 v) {
  for (u32 d = 16; d > 0; d >>= 1) v += shfl_down_u32(v, d);
  return v;
}

DEVICE void atomic_add_u64(u64 *p, u64 v) { __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
DEVICE void atomic_min_u32(u32 *p, u32 v) { __atomic_fetch_min(p, v, __ATOMIC_RELAXED); }
DEVICE void atomic_min_u64(u64 *p, u64 v) { __atomic_fetch_min(p, v, __ATOMIC_RELAXED); }
