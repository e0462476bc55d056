// Exercise 14, solved: the online-softmax merge.
//
// One block of 256 threads per row computes the row's softmax. Each thread folds its values
// (every 256th of the row) into a pair (m, s): their maximum and the sum of e^(x - m); the pairs
// of the block are combined, lane with lane in each warp, then warp with warp, by merge(); every
// thread then writes its values as e^(x - M) / S. Write merge(): the pair of the union of the two
// sets the pairs stand for. A pair with m = -inf stands for no values at all (a thread with
// nothing to read, in a row shorter than the block), and merge must keep it harmless: the inputs
// include rows of 1 value and rows whose maximum is 10^4. Check it with: reduction exercise 14
// Preconditions the checker keeps: blockDim.x = 256; gridDim.x = rows; no dynamic shared memory.
#include "common.cuh"

struct Pair {
    float m, s;  // the maximum, and the sum of e^(x - m) over the values seen
};

__device__ __forceinline__ Pair merge(Pair a, Pair b) {
    // ANCHOR: solution
    const float m = fmaxf(a.m, b.m);
    // Each sum rescaled to the larger maximum: s·e^(m_side − m). A side at m keeps its sum as it
    // is, which also keeps an empty side (−∞, 0) from giving e^(−∞ + ∞) = NaN.
    const float sa = a.m == m ? a.s : a.s * __expf(a.m - m);
    const float sb = b.m == m ? b.s : b.s * __expf(b.m - m);
    return Pair{m, sa + sb};
    // ANCHOR_END: solution
}

__device__ __forceinline__ Pair shfl_xor(Pair p, int offset) {
    return Pair{__shfl_xor_sync(0xffffffffu, p.m, offset), __shfl_xor_sync(0xffffffffu, p.s, offset)};
}

extern "C" __global__ void __launch_bounds__(256) exercise_f32(const float* __restrict__ x, float* __restrict__ y, u64 rows, u64 cols) {
    __shared__ Pair warps[8];
    const u64 row = blockIdx.x;
    const float* in = x + row * cols;
    // This thread's values: one pass for their maximum, one for the sum (no merge needed yet).
    float m = -__int_as_float(0x7f800000);
    for (u64 j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, in[j]);
    float s = 0.0f;
    for (u64 j = threadIdx.x; j < cols; j += blockDim.x) s += __expf(in[j] - m);
    Pair p = Pair{m, s};
    // The warp, then the block: every thread ends with the row's pair.
    for (int offset = 16; offset > 0; offset /= 2) p = merge(p, shfl_xor(p, offset));
    if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = p;
    __syncthreads();
    p = warps[0];
    for (int w = 1; w < 8; ++w) p = merge(p, warps[w]);
    for (u64 j = threadIdx.x; j < cols; j += blockDim.x) y[row * cols + j] = __expf(in[j] - p.m) / p.s;
}
