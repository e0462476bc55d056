// Exercise 7, a reference solution: kernel 7's grid-stride walk.
#include "common.cuh"

template <typename T>
__device__ void exercise(const T* __restrict__ in, T* __restrict__ out, u64 n) {
    T* sdata = shared_array<T>();
    unsigned tid = threadIdx.x;
    // ANCHOR: solution
    u64 i = (u64)blockIdx.x * (blockDim.x * 2) + tid;
    const u64 grid_stride = (u64)blockDim.x * 2 * gridDim.x;
    T sum = T(0);
    while (i < n) {
        sum += in[i];
        if (i + blockDim.x < n) sum += in[i + blockDim.x];
        i += grid_stride;
    }
    sdata[tid] = sum;
    // ANCHOR_END: solution
    __syncthreads();

    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }

    if (tid == 0) out[blockIdx.x] = sdata[0];
}

INSTANTIATE(exercise)
