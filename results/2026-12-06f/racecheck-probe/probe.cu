// probe.cu: does compute-sanitizer racecheck model the mbarrier hand-off of
// an async-copy ring? One producer warp fills a 4-stage shared-memory ring,
// one consumer warp reads each stage with ld.shared after waiting on its
// full barrier and frees it on its empty barrier, 64 rounds, the protocol
// of the wp/wp3/wps decode kernels. The fill differs by mode:
//   0 bulk     cp.async.bulk (raw address) completing on the full barrier
//              (the kernels' weights and scale words)
//   1 cpasync  cp.async 16-byte copies by the 32 lanes, then
//              cp.async.mbarrier.arrive.noinc (the kernels' activations)
//   2 st       ld.global + st.shared by the lanes, then mbarrier.arrive
// The host checks the consumer's sum against the source's; every mode is a
// correct protocol and must print OK on every launch.
// Build: nvcc -arch=sm_90a -O2 -o probe probe.cu; run: ./probe MODE
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

constexpr int STAGES = 4, WORDS = 256, ROUNDS = 64;

__device__ __forceinline__ uint32_t smem(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void wait(uint32_t bar, uint32_t parity) {
  asm volatile("{\n.reg .pred p;\nW_%=:\nmbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@!p bra W_%=;\n}\n" ::"r"(bar),
               "r"(parity)
               : "memory");
}
__device__ __forceinline__ void arrive(uint32_t bar) { asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory"); }

__global__ void __launch_bounds__(64) ring(const uint32_t *src, unsigned long long *out, int mode) {
  __shared__ __align__(128) uint32_t buf[STAGES][WORDS];
  __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const uint32_t *blk = src + (size_t)blockIdx.x * ROUNDS * WORDS;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; s++) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem(&full[s])), "r"(mode == 0 ? 1 : 32) : "memory");
      asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem(&empty[s])), "r"(1) : "memory");
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (warp == 0) {
    for (int r = 0; r < ROUNDS; r++) {
      const int s = r % STAGES;
      if (r >= STAGES) wait(smem(&empty[s]), ((r / STAGES) - 1) & 1);
      const uint32_t *g = blk + r * WORDS;
      if (mode == 0) {
        if (lane == 0) {
          asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
          asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem(&full[s])), "r"(WORDS * 4) : "memory");
          asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(smem(buf[s])),
                       "l"(g), "r"(WORDS * 4), "r"(smem(&full[s]))
                       : "memory");
        }
      } else if (mode == 1) {
        for (int i = lane * 4; i < WORDS; i += 128)
          asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" ::"r"(smem(&buf[s][i])), "l"(g + i) : "memory");
        asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(smem(&full[s])) : "memory");
      } else {
        for (int i = lane; i < WORDS; i += 32) buf[s][i] = g[i];
        arrive(smem(&full[s]));
      }
    }
  } else {
    unsigned long long acc = 0;
    for (int r = 0; r < ROUNDS; r++) {
      const int s = r % STAGES;
      wait(smem(&full[s]), (r / STAGES) & 1);
      for (int i = lane; i < WORDS; i += 32) acc += buf[s][i];
      __syncwarp();
      if (lane == 0) arrive(smem(&empty[s]));
    }
    for (int o = 16; o > 0; o /= 2) acc += __shfl_xor_sync(~0u, acc, o);
    if (lane == 0) out[blockIdx.x] = acc;
  }
}

int main(int argc, char **argv) {
  const int mode = argc > 1 ? atoi(argv[1]) : 0, blocks = 8, launches = 3;
  const size_t n = (size_t)blocks * ROUNDS * WORDS;
  std::vector<uint32_t> h(n);
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (auto &v : h) x = x * 6364136223846793005ull + 1442695040888963407ull, v = (uint32_t)(x >> 40);
  uint32_t *d;
  unsigned long long *o;
  cudaMalloc(&d, n * 4);
  cudaMalloc(&o, blocks * 8);
  cudaMemcpy(d, h.data(), n * 4, cudaMemcpyHostToDevice);
  int bad = 0;
  for (int l = 0; l < launches; l++) {
    cudaMemset(o, 0xFF, blocks * 8);
    ring<<<blocks, 64>>>(d, o, mode);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
      printf("mode %d launch %d: %s\n", mode, l, cudaGetErrorString(e));
      return 2;
    }
    std::vector<unsigned long long> ho(blocks);
    cudaMemcpy(ho.data(), o, blocks * 8, cudaMemcpyDeviceToHost);
    for (int b = 0; b < blocks; b++) {
      unsigned long long want = 0;
      for (int i = 0; i < ROUNDS * WORDS; i++) want += h[(size_t)b * ROUNDS * WORDS + i];
      bad += ho[b] != want;
    }
  }
  printf("mode %d: %s (%d wrong block sums of %d)\n", mode, bad ? "WRONG" : "OK", bad, blocks * launches);
  return bad ? 1 : 0;
}
