// Exercise 4, a reference solution: kernel 4's first add during the load.
#include "common.cuh"

template <typename T>
__device__ void exercise(const T* __restrict__ in, T* __restrict__ out, u64 n) {
    T* sdata = shared_array<T>();
    unsigned tid = threadIdx.x;
    // ANCHOR: solution
    u64 i = (u64)blockIdx.x * (blockDim.x * 2) + tid;
    T v = (i < n) ? in[i] : T(0);
    if (i + blockDim.x < n) v += in[i + blockDim.x];
    sdata[tid] = v;
    // ANCHOR_END: solution
    __syncthreads();

    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }

    if (tid == 0) out[blockIdx.x] = sdata[0];
}

INSTANTIATE(exercise)
