// Exercise 5 (chapter 5): the last warp, without block-wide barriers, done right.
//
// The loop stops once 64 values are left (s > 32); finish them in warp 0 (tid < 32) with no
// __syncthreads(): either shared memory with __syncwarp() between every read and the write that
// follows it, or __shfl_down_sync on registers. Harris's 2007 `volatile` version is a race on
// Volta and later: `reduction exercise 5 --sanitize racecheck` finds one.
// Preconditions the checker keeps: blockDim.x = 256; blockDim.x elements of shared memory;
// 2 * blockDim.x elements per block (the first add happens during the load).
#include "common.cuh"

template <typename T>
__device__ void exercise(const T* __restrict__ in, T* __restrict__ out, u64 n) {
    T* sdata = shared_array<T>();
    unsigned tid = threadIdx.x;
    u64 i = (u64)blockIdx.x * (blockDim.x * 2) + tid;
    T v = (i < n) ? in[i] : T(0);
    if (i + blockDim.x < n) v += in[i + blockDim.x];
    sdata[tid] = v;
    __syncthreads();

    for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }

    // TODO(exercise): warp 0 adds sdata[0 .. 64) into sdata[0] (or into a register of lane 0).

    if (tid == 0) out[blockIdx.x] = sdata[0];
}

INSTANTIATE(exercise)
