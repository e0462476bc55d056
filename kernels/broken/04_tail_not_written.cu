// Mistake 4 — shared memory not written by the threads past the end of the input.
//
// What is wrong: kernel 3 with the load guarded by `if (i < n)` and no else. In the last block
// the threads past n leave their slot of shared memory as it was — whatever the previous block
// on that SM, or another kernel, left there — and the tree adds it in.
// What it does: wrong sums whenever n is not a multiple of the block size (and the leftover
// words are not zero), on every pass of the decomposition.
// Which tool catches it: a test at a size that is not a multiple of the block (2^k + 1), on an
// exact type. (initcheck tracks global memory, not shared memory.)
// The fix: every thread writes its slot, the identity when it has no element
// (kernels/03_sequential.cu).
// The #line below keeps compute-sanitizer's line numbers those of this file.
#include "common.cuh"
#line 15 "kernels/broken/04_tail_not_written.cu"

// ANCHOR: kernel
template <typename T>
__device__ void tail_not_written(const T* __restrict__ in, T* __restrict__ out, u64 n) {
    T* sdata = shared_array<T>();
    // ANCHOR: load
    unsigned tid = threadIdx.x;
    u64 i = (u64)blockIdx.x * blockDim.x + tid;
    if (i < n) sdata[tid] = in[i];  // WRONG: past the end, the slot keeps what was there
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

INSTANTIATE(tail_not_written)
