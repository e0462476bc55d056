// Exercise 8 (chapter 8): a maximum, with warp shuffles.
//
// Not every reduction is a sum. Return the largest value of the input: each thread walks the
// input with a grid-sized stride keeping its maximum, each warp combines its lanes' maxima with
// __shfl_down_sync, one word of shared memory per warp holds the warps' maxima, and warp 0
// combines those. A thread with nothing to read must start from a value that can never win —
// the inputs include arrays where every value is negative. Check it with: reduction exercise 8
// Preconditions the checker keeps: blockDim.x = 256 (8 warps); no dynamic shared memory; any
// grid size; one output per block (the host launches again over the blocks' maxima).
#include "common.cuh"

template <typename T> __device__ __forceinline__ T lowest();
template <> __device__ __forceinline__ float lowest<float>() { return -__int_as_float(0x7f800000); }  // -infinity
template <> __device__ __forceinline__ int lowest<int>() { return (int)0x80000000; }               // INT_MIN

template <typename T>
__device__ void exercise(const T* __restrict__ in, T* __restrict__ out, u64 n) {
    __shared__ T warp_max[32];
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    T m = lowest<T>();
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)blockDim.x * gridDim.x) {
        m = max(m, in[i]);
    }

    // TODO(exercise): the maximum over the warp (shuffles), then over the block's warps.
    if (lane == 0) warp_max[warp] = m;
    __syncthreads();

    if (threadIdx.x == 0) out[blockIdx.x] = warp_max[0];
}

INSTANTIATE(exercise)
