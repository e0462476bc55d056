// Exercise 3 (chapter 3): sequential addressing.
//
// Run the tree the other way: at step s, from blockDim.x / 2 down to 1, thread tid < s adds
// sdata[tid + s] into sdata[tid]. A warp then reads 32 consecutive words (no bank conflicts)
// and the busy threads stay contiguous. Check it with: reduction exercise 3
// Preconditions the checker keeps: blockDim.x = 256; blockDim.x elements of shared memory; one
// output per block.
#include "common.cuh"

template <typename T>
__device__ void exercise(const T* __restrict__ in, T* __restrict__ out, u64 n) {
    T* sdata = shared_array<T>();
    unsigned tid = threadIdx.x;
    u64 i = (u64)blockIdx.x * blockDim.x + tid;
    sdata[tid] = (i < n) ? in[i] : T(0);
    __syncthreads();

    // TODO(exercise): the tree with sequential addressing.

    if (tid == 0) out[blockIdx.x] = sdata[0];
}

INSTANTIATE(exercise)
