// Sums across a warp and across a block with warp shuffles: values move between registers, and
// shared memory holds only one word per warp.
#pragma once
#include "common.cuh"

// ANCHOR: warp_sum
// After the call, lane 0 holds the sum of v over the warp's 32 lanes. The full mask says all
// 32 lanes take part, so every lane must call it (lanes with nothing to add pass zero).
template <typename T>
__device__ __forceinline__ T warp_sum(T v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += __shfl_down_sync(0xffffffffu, v, offset);  // add the value of lane + offset
    }
    return v;
}
// ANCHOR_END: warp_sum

// ANCHOR: block_sum
// The sum of v over the block, valid in thread 0. blockDim.x must be a multiple of 32, at most
// 1024; `warp_sums` is shared memory for 32 values. Every thread of the block must call it.
template <typename T>
__device__ __forceinline__ T block_sum(T v, T* warp_sums) {
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_sum(v);
    if (lane == 0) warp_sums[warp] = v;  // one word per warp
    __syncthreads();
    if (warp == 0) {
        const unsigned warps = blockDim.x / 32;
        v = warp_sum(lane < warps ? warp_sums[lane] : T(0));  // lanes past the last warp add 0
    }
    return v;
}
// ANCHOR_END: block_sum
