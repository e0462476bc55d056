// Kernel 8 — warp shuffles instead of shared memory.
//
// Changed: kernel 7's walk over the input is kept, but the tree is not. `__shfl_down_sync`
// moves a value from one lane's register to another's in a single instruction, so a warp sums
// its 32 values without touching shared memory and without a barrier. reduce8_last_warp does
// this for the last warp only (the tree above it stays in shared memory); reduce8 does it for
// every warp, so shared memory holds one word per warp and the block needs one __syncthreads().
// Still slow: 4-byte loads and one running sum per thread, so few loads are in flight.
// Preconditions: blockDim.x a power of two from 64 (last_warp) or 32 to 1024; any grid;
// reduce8_last_warp needs blockDim.x elements of dynamic shared memory, reduce8 none.
#include "warp_reduce.cuh"

// Kernel 7's grid-stride walk, two elements per step, converted to the accumulator type.
template <typename In, typename Acc>
__device__ __forceinline__ Acc thread_sum(const In* __restrict__ in, u64 n) {
    const unsigned block = blockDim.x;
    u64 i = (u64)blockIdx.x * (block * 2) + threadIdx.x;
    const u64 grid_stride = (u64)block * 2 * gridDim.x;
    Acc sum = Acc(0);
    while (i < n) {
        sum += to_acc<Acc>(in[i]);
        if (i + block < n) sum += to_acc<Acc>(in[i + block]);
        i += grid_stride;
    }
    return sum;
}

// ANCHOR: last_warp
template <typename In, typename Acc>
__device__ void reduce8_last_warp(const In* __restrict__ in, Acc* __restrict__ out, u64 n) {
    Acc* sdata = shared_array<Acc>();
    const unsigned tid = threadIdx.x;
    sdata[tid] = thread_sum<In, Acc>(in, n);
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        Acc v = warp_sum(sdata[tid] + sdata[tid + 32]);  // registers, not shared memory
        if (tid == 0) out[blockIdx.x] = v;
    }
}
// ANCHOR_END: last_warp

// ANCHOR: kernel
template <typename In, typename Acc>
__device__ void reduce8(const In* __restrict__ in, Acc* __restrict__ out, u64 n) {
    __shared__ Acc warp_sums[32];
    Acc v = block_sum(thread_sum<In, Acc>(in, n), warp_sums);
    if (threadIdx.x == 0) out[blockIdx.x] = v;
}
// ANCHOR_END: kernel

FOR_EACH_DTYPE(ENTRY_IN_OUT_N, reduce8_last_warp)
FOR_EACH_DTYPE(ENTRY_IN_OUT_N, reduce8)
