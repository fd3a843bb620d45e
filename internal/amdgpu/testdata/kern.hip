// Tiny kernels for the amdgpu metadata reader's golden test
// (internal/amdgpu/reader_test.go). Built without any HIP headers, so the
// two attributes the HIP headers would define are spelled out here. The
// exact build command is in README.md next to this file.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))

// plain_add: one load, one store; no LDS, no scratch.
extern "C" __global__ void plain_add(const float *a, float *b, int n) {
  int i = __builtin_amdgcn_workitem_id_x();
  if (i < n)
    b[i] = a[i] + 1.0f;
}

// scratch_array: a dynamically indexed local array that the compiler cannot
// keep in registers, so it lives in private (scratch) memory.
extern "C" __global__ void scratch_array(const int *idx, int *out, int n) {
  volatile int buf[256];
  int t = __builtin_amdgcn_workitem_id_x();
  for (int j = 0; j < 256; ++j)
    buf[j] = j * t + n;
  out[t] = buf[idx[t] & 255];
}

// lds_reverse: reverses 256 floats through LDS (group segment); no scratch.
extern "C" __global__ void lds_reverse(const float *in, float *out) {
  __shared__ float tile[256];
  int t = __builtin_amdgcn_workitem_id_x() & 255;
  tile[t] = in[t];
  __builtin_amdgcn_s_barrier();
  out[t] = tile[255 - t];
}

// spill_vgprs: 24 values live at once under an 8-VGPR budget, so the
// register allocator spills VGPRs to scratch.
extern "C" __global__ __attribute__((amdgpu_num_vgpr(8)))
void spill_vgprs(const float *a, float *b) {
  int t = __builtin_amdgcn_workitem_id_x();
  float v[24];
  for (int j = 0; j < 24; ++j)
    v[j] = a[t + 64 * j];
  float s = 0.0f;
  for (int j = 0; j < 24; ++j)
    s += v[j] * v[23 - j] + v[(j * 7) % 24];
  b[t] = s;
}
