// Exercise 4 (chapter 4): the first add during the load.
//
// Each block now covers 2 * blockDim.x elements: the checker launches ceil(n / (2 * 256))
// blocks. Make every thread load two elements, blockDim.x apart, and add them before the tree.
// Either element may be past the end of the input. Check it with: reduction exercise 4
// Preconditions the checker keeps: blockDim.x = 256; blockDim.x elements of shared memory; one
// output per block.
#include "common.cuh"

template <typename T>
__device__ void exercise(const T* __restrict__ in, T* __restrict__ out, u64 n) {
    T* sdata = shared_array<T>();
    unsigned tid = threadIdx.x;
    // TODO(exercise): this block's tile starts at blockIdx.x * 2 * blockDim.x; load and add two.
    u64 i = (u64)blockIdx.x * blockDim.x + tid;
    sdata[tid] = (i < n) ? in[i] : T(0);
    __syncthreads();

    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }

    if (tid == 0) out[blockIdx.x] = sdata[0];
}

INSTANTIATE(exercise)
