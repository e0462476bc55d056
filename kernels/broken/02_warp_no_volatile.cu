// Mistake 2 — Harris's warp-synchronous last warp, without `volatile`.
//
// What is wrong: kernel 5's unrolled last warp through a plain `T*`. The compiler may keep
// sdata[tid] in a register and read the neighbours' words before (or without) writing its own:
// nothing in the source says another thread reads them. So each lane adds its neighbours' old
// values, not their partial sums.
// What it does: wrong sums, every time the compiler makes that choice (see the chapter for what
// it did on your GPU).
// Which tool catches it: the exact i32 test (any lost partial sum shows); compute-sanitizer
// racecheck also reports the unsynchronised shared-memory accesses.
// The fix: __syncwarp() between each read and the following write (warp_reduce_synced in
// kernels/05_unroll_last_warp.cu). Adding only `volatile` gives mistake 3.
// The #line below keeps compute-sanitizer's line numbers those of this file.
#include "common.cuh"
#line 16 "kernels/broken/02_warp_no_volatile.cu"

// ANCHOR: warp
// WRONG: no volatile, no __syncwarp(): nothing makes a lane's write visible to its neighbours.
template <typename T>
__device__ void warp_reduce_plain(T* sdata, unsigned tid) {
    sdata[tid] += sdata[tid + 32];
    sdata[tid] += sdata[tid + 16];
    sdata[tid] += sdata[tid + 8];
    sdata[tid] += sdata[tid + 4];
    sdata[tid] += sdata[tid + 2];
    sdata[tid] += sdata[tid + 1];
}
// ANCHOR_END: warp

// ANCHOR: kernel
template <typename T>
__device__ void warp_no_volatile(const T* __restrict__ in, T* __restrict__ out, u64 n) {
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
    if (tid < 32) warp_reduce_plain<T>(sdata, tid);  // one warp left

    if (tid == 0) out[blockIdx.x] = sdata[0];
}
// ANCHOR_END: kernel

INSTANTIATE(warp_no_volatile)
