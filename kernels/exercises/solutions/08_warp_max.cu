// Exercise 8, a reference solution: a maximum with warp shuffles.
#include "common.cuh"

template <typename T> __device__ __forceinline__ T lowest();
template <> __device__ __forceinline__ float lowest<float>() { return -__int_as_float(0x7f800000); }  // -infinity
template <> __device__ __forceinline__ int lowest<int>() { return (int)0x80000000; }               // INT_MIN

// ANCHOR: solution
template <typename T>
__device__ __forceinline__ T warp_max(T v) {
    for (int offset = 16; offset > 0; offset >>= 1) v = max(v, __shfl_down_sync(0xffffffffu, v, offset));
    return v;  // lane 0 holds the warp's maximum
}

template <typename T>
__device__ void exercise(const T* __restrict__ in, T* __restrict__ out, u64 n) {
    __shared__ T warp_maxima[32];
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    T m = lowest<T>();
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)blockDim.x * gridDim.x) {
        m = max(m, in[i]);
    }
    m = warp_max(m);
    if (lane == 0) warp_maxima[warp] = m;
    __syncthreads();
    if (warp == 0) {
        m = warp_max(lane < blockDim.x / 32 ? warp_maxima[lane] : lowest<T>());
        if (lane == 0) out[blockIdx.x] = m;
    }
}
// ANCHOR_END: solution

INSTANTIATE(exercise)
