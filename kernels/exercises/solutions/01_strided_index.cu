// Exercise 1, a reference solution: kernel 2's strided index.
#include "common.cuh"

template <typename T>
__device__ void exercise(const T* __restrict__ in, T* __restrict__ out, u64 n) {
    T* sdata = shared_array<T>();
    unsigned tid = threadIdx.x;
    u64 i = (u64)blockIdx.x * blockDim.x + tid;
    sdata[tid] = (i < n) ? in[i] : T(0);
    __syncthreads();

    // ANCHOR: solution
    for (unsigned s = 1; s < blockDim.x; s *= 2) {
        unsigned index = 2 * s * tid;  // thread tid adds the pair that starts at 2*s*tid
        if (index < blockDim.x) {
            sdata[index] += sdata[index + s];
        }
        __syncthreads();
    }
    // ANCHOR_END: solution

    if (tid == 0) out[blockIdx.x] = sdata[0];
}

INSTANTIATE(exercise)
