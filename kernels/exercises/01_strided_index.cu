// Exercise 1 (chapter 1): take the divergence out of kernel 1.
//
// Kernel 1 keeps thread tid busy when tid % (2 * s) == 0: the busy threads are scattered over
// every warp, and the modulo is slow. Rewrite the tree so that at step s the busy threads are
// the first blockDim.x / (2s) ones (thread tid works on the pair that starts at 2 * s * tid),
// with no modulo. Check it with: reduction exercise 1
// Preconditions the checker keeps: blockDim.x = 256; blockDim.x elements of shared memory; one
// output per block (the host launches again over the partial sums).
#include "common.cuh"

template <typename T>
__device__ void exercise(const T* __restrict__ in, T* __restrict__ out, u64 n) {
    T* sdata = shared_array<T>();
    unsigned tid = threadIdx.x;
    u64 i = (u64)blockIdx.x * blockDim.x + tid;
    sdata[tid] = (i < n) ? in[i] : T(0);
    __syncthreads();

    // TODO(exercise): the halving tree, with contiguous busy threads and no modulo.

    if (tid == 0) out[blockIdx.x] = sdata[0];
}

INSTANTIATE(exercise)
