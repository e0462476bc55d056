// Kernel 5 — unroll the last warp (Harris, slide 21), in two forms.
//
// Changed: once s <= 32 only one warp is active, so the loop stops at s > 32 and the last six
// steps are written out, with no __syncthreads() and no loop test.
// Still slow: the tree above the last warp is still a loop whose trip count is only known at
// run time (kernel 6 fixes that).
// Preconditions: blockDim.x a power of two, at least 64 (the last warp reads sdata[tid + 32]);
// dynamic shared memory of blockDim.x elements; 2 * blockDim.x elements per block.
//
// reduce5_volatile is Harris's 2007 code. It relies on the 32 threads of a warp running in
// lockstep, which has not been guaranteed since Volta's independent thread scheduling: each
// step reads a neighbour's word that another lane may not have written yet. It is a data race
// even on a GPU where it happens to give the right sum; compute-sanitizer racecheck reports it.
// reduce5 is the same algorithm written correctly: __syncwarp() separates each read from the
// following write, so the warp agrees on memory at every step.
#include "common.cuh"

// ANCHOR: warp_volatile
// Historical: correct only if the warp runs in lockstep. Kept to show the race.
template <typename T>
__device__ void warp_reduce_volatile(volatile T* sdata, unsigned tid) {
    sdata[tid] += sdata[tid + 32];
    sdata[tid] += sdata[tid + 16];
    sdata[tid] += sdata[tid + 8];
    sdata[tid] += sdata[tid + 4];
    sdata[tid] += sdata[tid + 2];
    sdata[tid] += sdata[tid + 1];
}
// ANCHOR_END: warp_volatile

// ANCHOR: warp_synced
// Volta and later: read into a register, let the whole warp finish reading, then write.
template <typename T>
__device__ void warp_reduce_synced(T* sdata, unsigned tid) {
    T v = sdata[tid];
    for (unsigned s = 32; s > 0; s >>= 1) {  // constant trip count: fully unrolled
        v += sdata[tid + s];
        __syncwarp();  // every lane has read before any lane writes
        sdata[tid] = v;
        __syncwarp();  // every lane has written before the next read
    }
}
// ANCHOR_END: warp_synced

// ANCHOR: kernel
template <typename T, bool HISTORICAL>
__device__ void reduce5_body(const T* __restrict__ in, T* __restrict__ out, u64 n) {
    T* sdata = shared_array<T>();
    unsigned tid = threadIdx.x;
    u64 i = (u64)blockIdx.x * (blockDim.x * 2) + tid;
    T v = (i < n) ? in[i] : T(0);
    if (i + blockDim.x < n) v += in[i + blockDim.x];
    sdata[tid] = v;
    __syncthreads();

    // ANCHOR: tree
    for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid < 32) {  // one warp left: no block-wide barriers needed
        if (HISTORICAL) warp_reduce_volatile<T>(sdata, tid);
        else warp_reduce_synced<T>(sdata, tid);
    }
    // ANCHOR_END: tree

    if (tid == 0) out[blockIdx.x] = sdata[0];
}
// ANCHOR_END: kernel

template <typename T>
__device__ void reduce5(const T* in, T* out, u64 n) { reduce5_body<T, false>(in, out, n); }
template <typename T>
__device__ void reduce5_volatile(const T* in, T* out, u64 n) { reduce5_body<T, true>(in, out, n); }

INSTANTIATE(reduce5)
INSTANTIATE(reduce5_volatile)
