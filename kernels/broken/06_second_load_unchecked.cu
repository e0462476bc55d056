// Mistake 6 — the second load of "first add during load" without its bound check.
//
// What is wrong: kernel 4, with `in[i + blockDim.x]` read whether or not it is inside the input.
// In the last block (and in the short inputs of the later passes) threads read past the end of
// the buffer.
// What it does: an out-of-bounds read. Its value is whatever lies past the end — often another
// live buffer, since allocations come from a pool — and it can fault when the read crosses into
// unmapped memory. The sum may or may not come out right.
// Which tool catches it: compute-sanitizer --tool memcheck (an invalid __global__ read).
// The fix: the check kernels/04_first_add_during_load.cu has.
// The #line below keeps compute-sanitizer's line numbers those of this file.
#include "common.cuh"
#line 14 "kernels/broken/06_second_load_unchecked.cu"

// ANCHOR: kernel
template <typename T>
__device__ void second_load_unchecked(const T* __restrict__ in, T* __restrict__ out, u64 n) {
    T* sdata = shared_array<T>();
    // ANCHOR: load
    unsigned tid = threadIdx.x;
    u64 i = (u64)blockIdx.x * (blockDim.x * 2) + tid;
    T v = (i < n) ? in[i] : T(0);
    v += in[i + blockDim.x];  // WRONG: no check that i + blockDim.x < n
    sdata[tid] = v;
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

INSTANTIATE(second_load_unchecked)
