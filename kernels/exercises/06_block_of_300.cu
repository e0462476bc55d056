// Exercise 6 (chapter 6): a block of 300 threads that still sums right.
//
// Every kernel so far assumes blockDim.x is a power of two: the tree halves it. The checker
// launches this kernel with 300 threads per block (the book's kernels refuse that). Write a
// tree that is right for any block size: start from the power of two at or above blockDim.x,
// and let a thread add sdata[tid + s] only where that element exists.
// Preconditions the checker keeps: blockDim.x = 300; blockDim.x elements of shared memory; one
// output per block.
#include "common.cuh"

template <typename T>
__device__ void exercise(const T* __restrict__ in, T* __restrict__ out, u64 n) {
    T* sdata = shared_array<T>();
    unsigned tid = threadIdx.x;
    u64 i = (u64)blockIdx.x * blockDim.x + tid;
    sdata[tid] = (i < n) ? in[i] : T(0);
    __syncthreads();

    // TODO(exercise): this is kernel 3's tree, which loses values when blockDim.x is 300.
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }

    if (tid == 0) out[blockIdx.x] = sdata[0];
}

INSTANTIATE(exercise)
