// Exercise 9 (chapter 9): 16-byte loads, and an input that starts anywhere.
//
// Read the input 16 bytes (one uint4, four 4-byte values) per load. A uint4 load must be
// 16-byte aligned, and the checker hands you views that start 1, 2 or 3 elements past an
// aligned address: add the elements before the first 16-byte boundary (the head) and after the
// last whole pack (the tail) one by one, and only the aligned middle as uint4. Loop with a
// grid-sized stride. Check it with: reduction exercise 9 (add --sanitize memcheck to see where
// a misaligned or out-of-bounds load happens).
// Preconditions the checker keeps: blockDim.x = 256; no dynamic shared memory; any grid size;
// one output per block.
#include "common.cuh"

template <typename T>
__device__ __forceinline__ T warp_sum(T v) {
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

// The sum of the four 4-byte values in one 16-byte pack.
template <typename T>
__device__ __forceinline__ T pack_sum(uint4 p) {
    union { uint4 raw; T v[4]; } u;
    u.raw = p;
    return u.v[0] + u.v[1] + u.v[2] + u.v[3];
}

template <typename T>
__device__ void exercise(const T* __restrict__ in, T* __restrict__ out, u64 n) {
    __shared__ T warp_sums[32];
    const u64 thread = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    const u64 threads = (u64)gridDim.x * blockDim.x;
    T acc = T(0);

    // TODO(exercise): this reads whole packs from `in` itself, as if it were 16-byte aligned
    // and n a multiple of 4. Add the head and the tail one by one; read packs from the first
    // 16-byte boundary on.
    const uint4* body = reinterpret_cast<const uint4*>(in);
    for (u64 p = thread; p < n / 4; p += threads) acc += pack_sum<T>(body[p]);

    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    acc = warp_sum(acc);
    if (lane == 0) warp_sums[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        acc = warp_sum(lane < blockDim.x / 32 ? warp_sums[lane] : T(0));
        if (lane == 0) out[blockIdx.x] = acc;
    }
}

INSTANTIATE(exercise)
