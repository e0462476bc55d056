// Kernel 4 — first add during global load (Harris, slide 18).
//
// Changed: each block covers 2 * blockDim.x elements, and every thread adds two of them while
// loading, so half as many blocks do the same work and no thread is idle at the first step.
// Still slow: the tree's last steps run with fewer than 32 active threads, yet every step
// still pays a __syncthreads() and loop overhead — instruction overhead, not bandwidth.
// Preconditions: as kernel 1; the host launches ceil(n / (2 * blockDim.x)) blocks.
#include "common.cuh"

// ANCHOR: kernel
template <typename T>
__device__ void reduce4(const T* __restrict__ in, T* __restrict__ out, u64 n) {
    T* sdata = shared_array<T>();
    // ANCHOR: load
    unsigned tid = threadIdx.x;
    u64 i = (u64)blockIdx.x * (blockDim.x * 2) + tid;
    T v = (i < n) ? in[i] : T(0);
    if (i + blockDim.x < n) v += in[i + blockDim.x];  // the first add, during the load
    sdata[tid] = v;
    __syncthreads();
    // ANCHOR_END: load

    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }

    if (tid == 0) out[blockIdx.x] = sdata[0];
}
// ANCHOR_END: kernel

INSTANTIATE(reduce4)
