// A pace: a copy kernel that only moves bytes. Every element is read once and written once
// with 16-byte loads and stores, by a grid that loops over the data, so its bandwidth
// (counting bytes read plus bytes written) is what a streaming kernel that writes can reach on
// this GPU. A sum only reads, and beats it: the ceiling of a sum is kernels/read_only.cu.
// The benchmark measures it next to every reduction.
// Preconditions: `in` and `out` 16-byte aligned (the host allocates and offsets them so).
#include "common.cuh"

// ANCHOR: kernel
extern "C" __global__ void copy_u32(const unsigned* __restrict__ in, unsigned* __restrict__ out, u64 n) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    const u64 first = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    const u64 n4 = n / 4;
    const uint4* in4 = reinterpret_cast<const uint4*>(in);
    uint4* out4 = reinterpret_cast<uint4*>(out);
    for (u64 i = first; i < n4; i += stride) out4[i] = in4[i];
    for (u64 i = 4 * n4 + first; i < n; i += stride) out[i] = in[i];  // the last n % 4 words
}
// ANCHOR_END: kernel

// ANCHOR: tiles
// The copy at other shapes: the yardstick of the deep-learning chapters, whose kernels read a row
// and write it back once. Each block moves one tile of BLOCK × PACKS 16-byte packs, every load
// issued before the first store (as a row kernel holds its row in registers), one tile per block.
// STREAM stores with evict-first (st.global.cs), as those kernels do. The host launches
// ceil(n / (4 × BLOCK × PACKS)) blocks; block 0 also moves the last n % 4 words.
// Preconditions: `in` and `out` 16-byte aligned.
template <int BLOCK, int PACKS, bool STREAM>
__device__ __forceinline__ void copy_tile(const unsigned* __restrict__ in, unsigned* __restrict__ out, u64 n) {
    const u64 n4 = n / 4;
    const uint4* in4 = reinterpret_cast<const uint4*>(in);
    uint4* out4 = reinterpret_cast<uint4*>(out);
    const u64 first = (u64)blockIdx.x * (BLOCK * PACKS) + threadIdx.x;
    uint4 v[PACKS];
#pragma unroll
    for (int k = 0; k < PACKS; ++k) {
        const u64 i = first + (u64)k * BLOCK;
        if (i < n4) v[k] = __ldcs(in4 + i);
    }
#pragma unroll
    for (int k = 0; k < PACKS; ++k) {
        const u64 i = first + (u64)k * BLOCK;
        if (i < n4) {
            if (STREAM) __stcs(out4 + i, v[k]);
            else out4[i] = v[k];
        }
    }
    if (blockIdx.x == 0 && threadIdx.x < n % 4) out[4 * n4 + threadIdx.x] = in[4 * n4 + threadIdx.x];
}
// ANCHOR_END: tiles

#define COPY_TILE(B, P)                                                                          \
    extern "C" __global__ void __launch_bounds__(B)                                              \
    copy_tile_b##B##_p##P(const unsigned* in, unsigned* out, u64 n) { copy_tile<B, P, false>(in, out, n); } \
    extern "C" __global__ void __launch_bounds__(B)                                              \
    copy_tile_b##B##_p##P##_cs(const unsigned* in, unsigned* out, u64 n) { copy_tile<B, P, true>(in, out, n); }
#define COPY_TILES(B) COPY_TILE(B, 1) COPY_TILE(B, 2) COPY_TILE(B, 4) COPY_TILE(B, 8)
// Every shape src/kernels/copy_shapes.rs lists (COPY_TILE_SHAPES), in the same order.
COPY_TILES(256)
COPY_TILES(512)
COPY_TILES(1024)
