// Exercise 9, a reference solution: 16-byte loads with a head and a tail.
#include "common.cuh"

template <typename T>
__device__ __forceinline__ T warp_sum(T v) {
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

template <typename T>
__device__ __forceinline__ T pack_sum(uint4 p) {
    union { uint4 raw; T v[4]; } u;
    u.raw = p;
    return u.v[0] + u.v[1] + u.v[2] + u.v[3];
}

template <typename T>
__device__ void exercise(const T* __restrict__ in, T* __restrict__ out, u64 n) {
    __shared__ T warp_sums[32];
    const u64 thread = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    const u64 threads = (u64)gridDim.x * blockDim.x;
    T acc = T(0);

    // ANCHOR: solution
    u64 head = ((16 - ((u64)in & 15)) & 15) / sizeof(T);  // elements before a 16-byte boundary
    if (head > n) head = n;
    const u64 packs = (n - head) / 4;
    const u64 tail = head + packs * 4;                      // first element after the last pack
    if (thread < head) acc += in[thread];
    if (thread < n - tail) acc += in[tail + thread];
    const uint4* body = reinterpret_cast<const uint4*>(in + head);
    for (u64 p = thread; p < packs; p += threads) acc += pack_sum<T>(body[p]);
    // ANCHOR_END: solution

    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    acc = warp_sum(acc);
    if (lane == 0) warp_sums[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        acc = warp_sum(lane < blockDim.x / 32 ? warp_sums[lane] : T(0));
        if (lane == 0) out[blockIdx.x] = acc;
    }
}

INSTANTIATE(exercise)
