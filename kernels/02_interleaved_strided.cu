// Kernel 2 — interleaved addressing with a strided index (Harris, slide 10).
//
// Changed: the active threads are now contiguous. Thread tid works on index 2*s*tid, so at each
// step the first blockDim.x/(2s) threads are busy and whole warps go idle together: no
// divergence inside a warp until fewer than 32 threads remain, and no modulo.
// Still slow: the stride 2*s*tid makes threads of one warp hit the same shared-memory bank
// (2-way conflicts at s = 1, 4-way at s = 2, ...), serialising those accesses.
// Preconditions: as kernel 1.
#include "common.cuh"

// ANCHOR: kernel
template <typename T>
__device__ void reduce2(const T* __restrict__ in, T* __restrict__ out, u64 n) {
    T* sdata = shared_array<T>();
    unsigned tid = threadIdx.x;
    u64 i = (u64)blockIdx.x * blockDim.x + tid;
    sdata[tid] = (i < n) ? in[i] : T(0);
    __syncthreads();

    // ANCHOR: tree
    for (unsigned s = 1; s < blockDim.x; s *= 2) {
        unsigned index = 2 * s * tid;  // contiguous threads, strided data: bank conflicts
        if (index < blockDim.x) {
            sdata[index] += sdata[index + s];
        }
        __syncthreads();
    }
    // ANCHOR_END: tree

    if (tid == 0) out[blockIdx.x] = sdata[0];
}
// ANCHOR_END: kernel

INSTANTIATE(reduce2)

// Kernel 2 with its shared array padded: one unused word after every 32, so that the strided
// indices 2*s*tid of a warp fall into different banks (index i lives in bank (i + i/32) % 32).
// The bank conflicts chapter section measures what this changes; kernel 3 removes the
// conflicts by changing the addressing instead. Needs blockDim.x + blockDim.x/32 elements of
// dynamic shared memory.
// ANCHOR: padded
#define PADDED(i) ((i) + ((i) >> 5))

template <typename T>
__device__ void reduce2_padded(const T* __restrict__ in, T* __restrict__ out, u64 n) {
    T* sdata = shared_array<T>();
    unsigned tid = threadIdx.x;
    u64 i = (u64)blockIdx.x * blockDim.x + tid;
    sdata[PADDED(tid)] = (i < n) ? in[i] : T(0);
    __syncthreads();

    for (unsigned s = 1; s < blockDim.x; s *= 2) {
        unsigned index = 2 * s * tid;
        if (index < blockDim.x) {
            sdata[PADDED(index)] += sdata[PADDED(index + s)];
        }
        __syncthreads();
    }

    if (tid == 0) out[blockIdx.x] = sdata[0];
}
// ANCHOR_END: padded

INSTANTIATE(reduce2_padded)
