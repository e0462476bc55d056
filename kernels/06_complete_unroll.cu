// Kernel 6 — complete unrolling (Harris, slide 26).
//
// Changed: the block size is a template parameter, so every `if (BLOCK >= ...)` in block_tree
// (unrolled_tree.cuh) is decided by the compiler: the tree becomes straight-line code with no loop and no tests
// for sizes this instantiation does not have. The host compiles one entry per block size and
// picks it at launch, as Harris's `switch (threads)` did.
// Still slow: each thread still adds only two elements, and the grid has one block per
// 2 * BLOCK elements — a thread does little work for the fixed costs of its block (kernel 7
// gives each thread more).
// Preconditions: blockDim.x == BLOCK, a power of two from 64 to 1024; dynamic shared memory of
// BLOCK elements; 2 * BLOCK elements per block.
#include "unrolled_tree.cuh"  // warp_reduce and block_tree

// ANCHOR: kernel
template <unsigned BLOCK, typename T>
__device__ void reduce6(const T* __restrict__ in, T* __restrict__ out, u64 n) {
    T* sdata = shared_array<T>();
    unsigned tid = threadIdx.x;
    u64 i = (u64)blockIdx.x * (BLOCK * 2) + tid;
    T v = (i < n) ? in[i] : T(0);
    if (i + BLOCK < n) v += in[i + BLOCK];
    sdata[tid] = v;
    __syncthreads();

    block_tree<BLOCK, T>(sdata, tid);

    if (tid == 0) out[blockIdx.x] = sdata[0];
}
// ANCHOR_END: kernel

INSTANTIATE_BLOCKS_64_TO_1024(reduce6)
