// Kernel 7 — multiple elements per thread (Harris, slide 31: "algorithm cascading").
//
// Changed: the grid no longer grows with n. The host launches about as many blocks as the GPU
// can hold at once (SM count x resident blocks per SM), and each thread walks the input with a
// grid-sized stride, adding two elements per step into a register. Consecutive threads still
// read consecutive addresses (coalesced), the tree runs once per block instead of once per
// 2 * BLOCK elements, and a second launch of one block finishes the partial sums.
// Still slow: 4-byte loads, one add chain per thread (few loads in flight), and shared memory
// for the whole tree — the later chapters replace each.
// Preconditions: blockDim.x == BLOCK, a power of two from 64 to 1024; dynamic shared memory of
// BLOCK elements; any grid size.
#include "unrolled_tree.cuh"  // kernel 6's block_tree, unchanged

// ANCHOR: kernel
template <unsigned BLOCK, typename T>
__device__ void reduce7(const T* __restrict__ in, T* __restrict__ out, u64 n) {
    T* sdata = shared_array<T>();
    unsigned tid = threadIdx.x;
    // ANCHOR: cascade
    u64 i = (u64)blockIdx.x * (BLOCK * 2) + tid;
    const u64 grid_stride = (u64)BLOCK * 2 * gridDim.x;
    T sum = T(0);
    while (i < n) {  // each thread adds n / (2 * BLOCK * gridDim.x) pairs, coalesced
        sum += in[i];
        if (i + BLOCK < n) sum += in[i + BLOCK];
        i += grid_stride;
    }
    sdata[tid] = sum;
    __syncthreads();
    // ANCHOR_END: cascade

    block_tree<BLOCK, T>(sdata, tid);

    if (tid == 0) out[blockIdx.x] = sdata[0];
}
// ANCHOR_END: kernel

INSTANTIATE_BLOCKS_64_TO_1024(reduce7)
