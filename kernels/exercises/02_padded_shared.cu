// Exercise 2 (chapter 2): pad kernel 2's shared array (seed 002's challenge).
//
// Kernel 2's strided index 2*s*tid sends the threads of a warp to the same shared-memory bank.
// Keep kernel 2's tree, but store element i at sdata[i + i / 32]: one unused word after every
// 32, so that the strided indices of a warp land in different banks. Correct first; then beat
// kernel 2: `reduction exercise 2` times your kernel beside kernel 2 and shows the target.
// Preconditions the checker keeps: blockDim.x = 256; blockDim.x + blockDim.x / 32 elements of
// shared memory; one output per block.
#include "common.cuh"

#define PAD(i) ((i) + ((i) >> 5))  // one unused word after every 32

template <typename T>
__device__ void exercise(const T* __restrict__ in, T* __restrict__ out, u64 n) {
    T* sdata = shared_array<T>();
    unsigned tid = threadIdx.x;
    u64 i = (u64)blockIdx.x * blockDim.x + tid;
    sdata[PAD(tid)] = (i < n) ? in[i] : T(0);  // the load is already padded...
    __syncthreads();

    // TODO(exercise): ...the tree and the result are not yet: pad every index below.
    for (unsigned s = 1; s < blockDim.x; s *= 2) {
        unsigned index = 2 * s * tid;
        if (index < blockDim.x) {
            sdata[index] += sdata[index + s];
        }
        __syncthreads();
    }

    if (tid == 0) out[blockIdx.x] = sdata[0];
}

INSTANTIATE(exercise)
