// Prototype only: copies with the read-only kernel's shape (one tile per block, LOADS 16-byte
// loads in flight per thread, then LOADS stores), to find the fastest copy this GPU runs: the
// ceiling of a kernel that reads and writes every byte once. n a multiple of BLOCK * LOADS * 4.
#include "common.cuh"
template <int BLOCK, int LOADS>
__device__ void copy_tile(const float* __restrict__ in, float* __restrict__ out, u64 n) {
    const uint4* in4 = reinterpret_cast<const uint4*>(in);
    uint4* out4 = reinterpret_cast<uint4*>(out);
    const u64 first = (u64)blockIdx.x * BLOCK * LOADS + threadIdx.x;
    uint4 v[LOADS];
#pragma unroll
    for (int k = 0; k < LOADS; ++k) v[k] = __ldcs(in4 + first + k * BLOCK);
#pragma unroll
    for (int k = 0; k < LOADS; ++k) __stcs(out4 + first + k * BLOCK, v[k]);
}
#define COPY_TILE(B, L) \
    extern "C" __global__ void __launch_bounds__(B) copy_tile_##B##_##L(const float* in, float* out, u64 n) { copy_tile<B, L>(in, out, n); }
COPY_TILE(256, 8)
COPY_TILE(512, 4)
COPY_TILE(512, 8)
COPY_TILE(512, 16)
COPY_TILE(1024, 4)
COPY_TILE(1024, 8)
