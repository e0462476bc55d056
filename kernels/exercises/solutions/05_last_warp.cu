// Exercise 5, a reference solution: the last warp with __syncwarp().
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

    // ANCHOR: solution
    if (tid < 32) {
        T w = sdata[tid];
        for (unsigned s = 32; s > 0; s >>= 1) {
            w += sdata[tid + s];
            __syncwarp();  // every lane has read before any lane writes
            sdata[tid] = w;
            __syncwarp();  // every lane has written before the next read
        }
    }
    // ANCHOR_END: solution

    if (tid == 0) out[blockIdx.x] = sdata[0];
}

INSTANTIATE(exercise)
