// Kernel 3 — sequential addressing (Harris, slide 14).
//
// Changed: the tree runs the other way. At step s (from blockDim.x/2 down to 1) thread tid adds
// sdata[tid + s], so a warp reads 32 consecutive words: conflict-free, and the active threads
// stay contiguous.
// Still slow: half the threads are idle from the first step — each only loads one element and
// then waits. The load from global memory is the work that matters, and it is under-used.
// Preconditions: as kernel 1.
#include "common.cuh"

// ANCHOR: kernel
template <typename T>
__device__ void reduce3(const T* __restrict__ in, T* __restrict__ out, u64 n) {
    T* sdata = shared_array<T>();
    unsigned tid = threadIdx.x;
    u64 i = (u64)blockIdx.x * blockDim.x + tid;
    sdata[tid] = (i < n) ? in[i] : T(0);
    __syncthreads();

    // ANCHOR: tree
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {  // consecutive threads read consecutive words: no bank conflicts
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    // ANCHOR_END: tree

    if (tid == 0) out[blockIdx.x] = sdata[0];
}
// ANCHOR_END: kernel

INSTANTIATE(reduce3)
