// Exercise 10 (chapter 10): one launch, finished by the last block.
//
// The checker launches this kernel once, with as many blocks of 256 as the GPU holds at once,
// and reads out[0]. Each block has its sum (given). Finish the sum in this one launch: each
// block writes its sum to partials[blockIdx.x], makes it visible to the other blocks, and takes
// a ticket from the counter; the block that takes the last ticket adds every partial sum,
// writes out[0], and leaves the counter at zero for the next launch (the checker launches the
// same counter again and again). Check it with: reduction exercise 10
// Preconditions the checker keeps: blockDim.x = 256; `partials` holds gridDim.x values;
// `*ticket` is 0 when the first launch starts.
#include "common.cuh"

template <typename T>
__device__ __forceinline__ T warp_sum(T v) {
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

// The sum of v over the block, in thread 0. Every thread of the block must call it.
template <typename T>
__device__ __forceinline__ T block_sum(T v, T* warp_sums) {
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_sum(v);
    __syncthreads();  // warp_sums may still be read by a previous call
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) v = warp_sum(lane < blockDim.x / 32 ? warp_sums[lane] : T(0));
    return v;
}

template <typename T>
__device__ void exercise(const T* __restrict__ in, T* __restrict__ out, u64 n, T* partials, unsigned* ticket) {
    __shared__ T warp_sums[32];
    T v = T(0);
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)blockDim.x * gridDim.x) v += in[i];
    v = block_sum(v, warp_sums);

    // TODO(exercise): partial sum, fence, ticket; the last block adds the partials into out[0].
    if (threadIdx.x == 0 && blockIdx.x == 0) out[0] = v;
}

extern "C" __global__ void exercise_f32(const float* in, float* out, u64 n, float* partials, unsigned* ticket) {
    exercise<float>(in, out, n, partials, ticket);
}
extern "C" __global__ void exercise_i32(const int* in, int* out, u64 n, int* partials, unsigned* ticket) {
    exercise<int>(in, out, n, partials, ticket);
}
