// Exercise 6, a reference solution: a tree for any block size.
#include "common.cuh"

template <typename T>
__device__ void exercise(const T* __restrict__ in, T* __restrict__ out, u64 n) {
    T* sdata = shared_array<T>();
    unsigned tid = threadIdx.x;
    u64 i = (u64)blockIdx.x * blockDim.x + tid;
    sdata[tid] = (i < n) ? in[i] : T(0);
    __syncthreads();

    // ANCHOR: solution
    unsigned width = 1;
    while (width < blockDim.x) width *= 2;  // the power of two at or above the block
    for (unsigned s = width / 2; s > 0; s >>= 1) {
        if (tid < s && tid + s < blockDim.x) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    // ANCHOR_END: solution

    if (tid == 0) out[blockIdx.x] = sdata[0];
}

INSTANTIATE(exercise)
