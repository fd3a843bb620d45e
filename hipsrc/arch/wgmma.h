// wgmma.h: Hopper (sm_90a) warpgroup matrix ops, the pieces the wgmma
// prefill and decode GEMMs use. No gfx1201 counterpart: include it only under
// __NVPTX__.
//
// Index:
//   wg_fence / wg_commit / wg_wait<n>   wgmma.fence / commit_group / wait_group
//   fence_proxy_async()                 make this thread's generic-proxy
//                                       shared-memory writes (st, cp.async)
//                                       visible to the async proxy wgmma reads with
//   sw128_desc(addr)                    matrix descriptor of a K-major tile of
//                                       128-byte rows, 128B swizzle
//   wg_mma_e4m3(d, a, desc, acc)        D(64xN) (+)= A(64x32) . B(32xN), e4m3, N 8..64 in steps of 8, 128 (d: N/2 floats)
//   w4_e4m3_frag(w0, w1, z0, z1, a)     two weight words -> the A operand (c − z) of a k32 step
//   w4_e4m3u_frag(w0, w1, a)            the same words -> the A operand c·2^-9 (unsigned codes)
//   lds_v4(addr) / sts_v4(addr, v)      16-byte shared load / store (by shared address)
//   mbar_init / mbar_arrive / mbar_wait / cp_async_mbar_arrive   mbarriers
//   mbar_arrive_expect_tx / bulk_g2s / fence_mbar_init   bulk copies completing on an mbarrier
//
// Operand contract (PTX ISA, wgmma .m64nNk32 with 8-bit A in registers; the
// same per-warp order as mma.m16n8k32, mma.h): warp w of the warpgroup holds
// rows 16w..16w+15 of A; lane l, gid = l/4, tig = l%4:
//   a0: row gid, k 4tig..+3   a1: row gid+8, k 4tig..+3
//   a2: row gid, k 16+4tig..  a3: row gid+8, k 16+4tig..
// D (fp32, 64 regs for N = 128): d[4j + 2v1 + v0] is row 16w + gid + 8v1,
// column 8j + 2tig + v0.
// B comes from shared memory: N rows of K-contiguous bytes (K-major, the
// only major fp8 allows), 128 bytes a row, in 8-row atoms of 1024 bytes
// whose 16-byte chunk c of row r sits at chunk c ^ (r % 8) (128B swizzle;
// the atom must be 1024-byte aligned). The descriptor of k32 step s is the
// tile's with the start address advanced by 32 s bytes.
#pragma once
#include "mma.h"

#if defined(__NVPTX__)
DEVICE void wg_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
DEVICE void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N> DEVICE void wg_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory"); }
// mbarriers (shared::cta): init with an arrival count, arrive, wait for the
// completion of the phase with the given parity; cp_async_mbar_arrive
// arrives once this thread's earlier cp.async copies have landed (the
// count must include it: .noinc).
DEVICE void mbar_init(u32 bar, u32 count) { asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory"); }
DEVICE void mbar_arrive(u32 bar) { asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory"); }
DEVICE void mbar_wait(u32 bar, u32 parity) {
  asm volatile("{\n.reg .pred p;\nW_%=:\nmbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@!p bra W_%=;\n}\n" ::"r"(bar),
               "r"(parity)
               : "memory");
}
// Bulk copies (cp.async.bulk, the TMA engine without a tensor map):
// mbar_arrive_expect_tx arrives once on bar and adds bytes to the
// transaction count its current phase waits for; bulk_g2s copies bytes
// (a multiple of 16, both addresses 16-byte aligned) from global memory to
// this CTA's shared memory and completes them on bar; fence_mbar_init makes
// mbarrier.init visible to the async proxy.
DEVICE void mbar_arrive_expect_tx(u32 bar, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
DEVICE void bulk_g2s(u32 dst, const void *src, u32 bytes, u32 bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst), "l"(src),
               "r"(bytes), "r"(bar)
               : "memory");
}
DEVICE void fence_mbar_init() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }
DEVICE void cp_async_mbar_arrive(u32 bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(bar) : "memory");
}
// Register budget hand-over between warpgroups (all warps of the
// warpgroup execute it): dec gives registers back, inc waits for them.
template <int R> DEVICE void setmaxnreg_dec() { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(R)); }
template <int R> DEVICE void setmaxnreg_inc() { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(R)); }
DEVICE void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

// Descriptor fields (PTX "matrix descriptor"): start address >> 4 in bits
// 0-13, leading byte offset >> 4 in 16-29 (unused for swizzled K-major),
// stride byte offset >> 4 in 32-45 (1024: the next 8-row atom), layout in
// 62-63 (1 = 128B swizzle).
DEVICE u64 sw128_desc(u32 saddr) { return (u64)((saddr & 0x3FFFFu) >> 4) | ((u64)(1024u >> 4) << 32) | (1ull << 62); }

DEVICE u32x4 lds_v4(u32 saddr) {
  u32x4 r;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "r"(saddr) : "memory");
  return r;
}
DEVICE void sts_v4(u32 saddr, u32x4 v) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(saddr), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}
DEVICE u32 lds_u32(u32 saddr) {
  u32 r;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(r) : "r"(saddr) : "memory");
  return r;
}
// cp.async of 16 bytes to a shared address already in the shared window
// (smem_u32), zero-filling past n.
DEVICE void cp_async16_s(u32 dst, const void *src, u32 n) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(n) : "memory");
}
// cp.async of 4 bytes to a shared address already in the shared window.
DEVICE void cp_async4_s(u32 dst, const void *src, u32 n) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(dst), "l"(src), "r"(n) : "memory");
}

// The weight words of rows gid (w0) and gid+8 (w1) of one k32 step as the
// e4m3 A operand of codes minus their zero point, c − z (−15..15: exact in
// e4m3, so the fold needs no row-sum term). In f16 first, exactly, with
// mma.h's magic numbers made row-specific: (w & 0x000F000F) | 0x6400 is
// 1024 + c, minus 1024 + z; (w & 0x00F000F0) | 0x6400 is 1024 + 16c, times
// 1/16 minus 64 + z. Then one cvt per pair (exact: integers up to 16).
// Local index l 0..3 is k 4tig+l and 4..7 is 16+4tig+l-4 (a0 / a2 above).
struct W4ZeroConst { u32 sub, fma; }; // f16x2 1024 + z and −(64 + z)
DEVICE W4ZeroConst w4_zero_const(u32 scale_word) { // header: sc | d << 16, z = d + 8
  const u32 z = (u32)((int)(short)(scale_word >> 16) + 8);
  return W4ZeroConst{(0x6400u + z) * 0x00010001u, (0xD400u + 16u * z) * 0x00010001u};
}
// f16x2 pairs p, q (low half first) -> 4 e4m3 bytes p.lo, p.hi, q.lo, q.hi.
DEVICE u32 f16x2x2_to_e4m3x4(u32 p, u32 q) {
  u32 r;
  asm("{\n.reg .b16 lo, hi;\ncvt.rn.satfinite.e4m3x2.f16x2 lo, %1;\ncvt.rn.satfinite.e4m3x2.f16x2 hi, %2;\nmov.b32 %0, {lo, hi};\n}"
      : "=r"(r)
      : "r"(p), "r"(q));
  return r;
}
DEVICE void w4_word_cz(u32 w, W4ZeroConst zc, u32 (&h)[4]) { // h[j] = f16x2 (c_2j − z, c_2j+1 − z)
  const u32 w8 = w >> 8;
  const u32 x0 = lop3_and_or(w, 0x000F000Fu, 0x64006400u), x1 = lop3_and_or(w, 0x00F000F0u, 0x64006400u);
  const u32 x2 = lop3_and_or(w8, 0x000F000Fu, 0x64006400u), x3 = lop3_and_or(w8, 0x00F000F0u, 0x64006400u);
  asm("sub.f16x2 %0, %1, %2;" : "=r"(h[0]) : "r"(x0), "r"(zc.sub));
  asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(h[1]) : "r"(x1), "r"(0x2C002C00u), "r"(zc.fma));
  asm("sub.f16x2 %0, %1, %2;" : "=r"(h[2]) : "r"(x2), "r"(zc.sub));
  asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(h[3]) : "r"(x3), "r"(0x2C002C00u), "r"(zc.fma));
}
DEVICE void w4_e4m3_frag(u32 w0, u32 w1, W4ZeroConst z0, W4ZeroConst z1, u32 (&a)[4]) {
  u32 p[4], q[4];
  w4_word_cz(w0, z0, p), w4_word_cz(w1, z1, q);
  a[0] = f16x2x2_to_e4m3x4(p[0], p[1]), a[2] = f16x2x2_to_e4m3x4(p[2], p[3]);
  a[1] = f16x2x2_to_e4m3x4(q[0], q[1]), a[3] = f16x2x2_to_e4m3x4(q[2], q[3]);
}
// The same k32 step as the e4m3 A operand of the unsigned codes c: byte c
// (0..15) is the e4m3 value c·2^-9 exactly (bytes 0..7 are the subnormals
// m·2^-9, 8..15 the first normal binade 2^-6·(1 + m/8)), so the operand is
// w8_bytes' bytes, 5 ops a word (w4_e4m3_frag: 14), and the op sums
// 2^-9·Σ c·a: the fold scales by 2^9 and subtracts z·Σa.
DEVICE void w4_e4m3u_frag(u32 w0, u32 w1, u32 (&a)[4]) {
  w8_bytes(w0, a[0], a[2]);
  w8_bytes(w1, a[1], a[3]);
}

// wg_mma_e4m3 at N = 128 (the prefill's tile): D (+)= A . B, m64n128k32, A e4m3 from registers, B e4m3 from shared
// memory; acc = 0 ignores D's old value (D = A . B).
DEVICE void wg_mma_e4m3(float (&d)[64], const u32 (&a)[4], u64 desc, u32 acc) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, "
               "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, "
               "%41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, "
               "%61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
                 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]),
                 "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
                 "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]),
                 "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]),
                 "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]),
                 "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]),
                 "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(acc)
               : "memory");
}
// D(64 x NB) (+)= A(64 x 32, e4m3 from registers) . B(32 x NB, e4m3 from
// shared memory: NB rows of 128 K-contiguous bytes, the 128B-swizzled tile
// sw128_desc describes; k32 step s is the descriptor advanced by 32 s
// bytes), NB = 8, 16, ..., 64, d: NB/2 floats in the layout above; acc = 0
// ignores D's old value. One overload per N (the asm operand list is the
// accumulator count).
DEVICE void wg_mma_e4m3(float (&d)[4], const u32 (&a)[4], u64 desc, u32 acc) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %9, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, %8, p, 1, 1;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(acc)
               : "memory");
}
DEVICE void wg_mma_e4m3(float (&d)[8], const u32 (&a)[4], u64 desc, u32 acc) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %13, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e4m3 "
               "{%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, %12, p, 1, 1;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(acc)
               : "memory");
}
DEVICE void wg_mma_e4m3(float (&d)[16], const u32 (&a)[4], u64 desc, u32 acc) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n32k32.f32.e4m3.e4m3 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, {%16, %17, %18, %19}, %20, p, 1, 1;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(acc)
               : "memory");
}
DEVICE void wg_mma_e4m3(float (&d)[32], const u32 (&a)[4], u64 desc, u32 acc) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(acc)
               : "memory");
}
DEVICE void wg_mma_e4m3(float (&d)[12], const u32 (&a)[4], u64 desc, u32 acc) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %17, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n24k32.f32.e4m3.e4m3 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11}, {%12, %13, %14, %15}, %16, p, 1, 1;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(acc)
               : "memory");
}
DEVICE void wg_mma_e4m3(float (&d)[20], const u32 (&a)[4], u64 desc, u32 acc) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %25, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n40k32.f32.e4m3.e4m3 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19}, {%20, %21, %22, %23}, %24, p, 1, 1;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(acc)
               : "memory");
}
DEVICE void wg_mma_e4m3(float (&d)[24], const u32 (&a)[4], u64 desc, u32 acc) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %29, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n48k32.f32.e4m3.e4m3 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23}, {%24, %25, %26, %27}, %28, p, 1, 1;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(acc)
               : "memory");
}
DEVICE void wg_mma_e4m3(float (&d)[28], const u32 (&a)[4], u64 desc, u32 acc) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %33, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n56k32.f32.e4m3.e4m3 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27}, {%28, %29, %30, %31}, %32, p, 1, 1;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(acc)
               : "memory");
}
// Keeps the compiler from moving accumulator reads or writes across a
// wgmma.wait (the registers are written asynchronously).
template <int N> DEVICE void wg_fence_regs(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; i++) asm volatile("" : "+f"(d[i])::"memory");
}
#endif
