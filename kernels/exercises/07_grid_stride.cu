// Exercise 7 (chapter 7): a grid-stride loop.
//
// The checker no longer launches one block per tile: it launches as many blocks of 256 as the
// GPU holds at once, whatever n is, then one block over their partial sums. Make each thread
// walk the whole input with a stride of the grid, two elements per step (blockDim.x apart),
// adding into a register, before the tree. Check it with: reduction exercise 7
// Preconditions the checker keeps: blockDim.x = 256; blockDim.x elements of shared memory; any
// grid size, from 1 block up.
#include "common.cuh"

template <typename T>
__device__ void exercise(const T* __restrict__ in, T* __restrict__ out, u64 n) {
    T* sdata = shared_array<T>();
    unsigned tid = threadIdx.x;
    // TODO(exercise): loop over the input with a grid-sized stride; this reads one tile only.
    u64 i = (u64)blockIdx.x * (blockDim.x * 2) + tid;
    T sum = (i < n) ? in[i] : T(0);
    if (i + blockDim.x < n) sum += in[i + blockDim.x];
    sdata[tid] = sum;
    __syncthreads();

    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }

    if (tid == 0) out[blockIdx.x] = sdata[0];
}

INSTANTIATE(exercise)
