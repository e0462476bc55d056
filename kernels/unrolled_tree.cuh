// Kernel 6's complete unrolling of the block tree, shared by kernel 6 and kernel 7.
// BLOCK is a template parameter, so every `if (BLOCK >= ...)` is decided by the compiler and
// the tree is straight-line code: no loop counter, no tests for sizes the block does not have.
#pragma once
#include "common.cuh"

// ANCHOR: warp
template <unsigned BLOCK, typename T>
__device__ __forceinline__ void warp_reduce(T* sdata, unsigned tid) {
    T v = sdata[tid];
#pragma unroll
    for (unsigned s = 32; s > 0; s >>= 1) {
        if (BLOCK >= 2 * s) {  // resolved at compile time
            v += sdata[tid + s];
            __syncwarp();
            sdata[tid] = v;
            __syncwarp();
        }
    }
}
// ANCHOR_END: warp

// ANCHOR: block_tree
// Reduces sdata[0 .. BLOCK) into sdata[0]. Every thread of the block must call it.
template <unsigned BLOCK, typename T>
__device__ __forceinline__ void block_tree(T* sdata, unsigned tid) {
    if (BLOCK >= 1024) { if (tid < 512) sdata[tid] += sdata[tid + 512]; __syncthreads(); }
    if (BLOCK >= 512)  { if (tid < 256) sdata[tid] += sdata[tid + 256]; __syncthreads(); }
    if (BLOCK >= 256)  { if (tid < 128) sdata[tid] += sdata[tid + 128]; __syncthreads(); }
    if (BLOCK >= 128)  { if (tid < 64)  sdata[tid] += sdata[tid + 64];  __syncthreads(); }
    if (tid < 32) warp_reduce<BLOCK, T>(sdata, tid);
}
// ANCHOR_END: block_tree
