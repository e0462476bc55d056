// Exercise 2, a reference solution: kernel 2 with a padded shared array.
#include "common.cuh"

// ANCHOR: solution
#define PAD(i) ((i) + ((i) >> 5))  // one unused word after every 32

template <typename T>
__device__ void exercise(const T* __restrict__ in, T* __restrict__ out, u64 n) {
    T* sdata = shared_array<T>();
    unsigned tid = threadIdx.x;
    u64 i = (u64)blockIdx.x * blockDim.x + tid;
    sdata[PAD(tid)] = (i < n) ? in[i] : T(0);
    __syncthreads();

    for (unsigned s = 1; s < blockDim.x; s *= 2) {
        unsigned index = 2 * s * tid;
        if (index < blockDim.x) {
            sdata[PAD(index)] += sdata[PAD(index + s)];
        }
        __syncthreads();
    }

    if (tid == 0) out[blockIdx.x] = sdata[PAD(0)];
}
// ANCHOR_END: solution

INSTANTIATE(exercise)
