// Kernel 1 — interleaved addressing with a divergent branch (Harris, slide 7).
//
// Each block loads blockDim.x elements into shared memory and halves them in a tree: at step s,
// thread tid adds sdata[tid + s] into sdata[tid] when tid is a multiple of 2s.
// Still slow: `tid % (2 * s)` is an integer modulo (a division: about half the loop's instructions
// in the SASS), and the active threads are scattered across the warps, so while 2s <= 32 every
// warp stays busy with most of its lanes idle.
// Preconditions: blockDim.x a power of two; dynamic shared memory of blockDim.x elements;
// one output per block, so the host reduces the partial sums with further launches.
#include "common.cuh"

// ANCHOR: kernel
template <typename T>
__device__ void reduce1(const T* __restrict__ in, T* __restrict__ out, u64 n) {
    T* sdata = shared_array<T>();
    // ANCHOR: load
    unsigned tid = threadIdx.x;
    u64 i = (u64)blockIdx.x * blockDim.x + tid;
    sdata[tid] = (i < n) ? in[i] : T(0);  // threads past the end add the identity
    __syncthreads();
    // ANCHOR_END: load

    // ANCHOR: tree
    for (unsigned s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0) {  // modulo is slow, and the branch splits the lanes of a warp
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    // ANCHOR_END: tree

    if (tid == 0) out[blockIdx.x] = sdata[0];
}
// ANCHOR_END: kernel

INSTANTIATE(reduce1)
