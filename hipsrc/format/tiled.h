// tiled.h: the fragment-tiled layout of activation codes, the order in which
// the target's matrix op consumes A fragments. Go owns the same function
// (refimpl.TiledOffset); the producer gates compare the two byte for byte.
//
// sm_90 (mma.sync.m16n8k32 .e4m3, A row-major 16x32): per partition the
// codes form Mpad/16 x K/32 tiles of 512 bytes, tile (mt, kt) at
// ((mt * (K/32)) + kt) * 512. Inside a tile, row r = m % 16 and column
// c = k % 32 sit in lane (r % 8) * 4 + (c % 16) / 4, register
// (r / 8) + 2 * (c / 16), byte c % 4: lane l's 16 bytes are its four A
// registers a0..a3, one 16-byte load each.
//
// gfx1201 uses the same order: its prefill GEMM reads WMMA A operands out
// of these tiles (mma.h, wmma_a_tiled).
#pragma once
#include "arch/arch.h"

// Byte offset of code (m, k) inside one partition's tiled block.
DEVICE u64 tiled_off(u32 m, u32 k, u32 K) {
  u32 r = m & 15u, c = k & 31u;
  u64 tile = (u64)(m >> 4) * (K >> 5) + (k >> 5);
  u32 lane = (r & 7u) * 4u + ((c & 15u) >> 2);
  u32 reg = (r >> 3) + 2u * (c >> 4);
  return tile * 512u + lane * 16u + reg * 4u + (c & 3u);
}
