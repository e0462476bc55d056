// Kernel 9 — 16-byte loads and several loads in flight per thread.
//
// Changed: each thread reads 16 bytes per load instruction (four f32, eight f16) instead of
// four, and issues VEC_UNROLL independent loads before it adds any of them, into VEC_UNROLL
// separate accumulators. Fewer instructions per byte, and more bytes requested at once — what
// a GPU needs to cover the latency of its memory. The input may start anywhere: the elements
// before the first 16-byte boundary and after the last whole pack are summed one by one.
// Still slow: a second launch to add the partial sums (kernel 10 removes it).
// Preconditions: blockDim.x a multiple of 32, at most 1024; any grid; `in` aligned to its
// element size (always true of a typed pointer).
#include "warp_reduce.cuh"
#include "vector_load.cuh"

// ANCHOR: kernel
template <typename In, typename Acc>
__device__ void reduce9(const In* __restrict__ in, Acc* __restrict__ out, u64 n) {
    __shared__ Acc warp_sums[32];
    Acc v = block_sum(thread_sum_vec<In, Acc>(in, n), warp_sums);
    if (threadIdx.x == 0) out[blockIdx.x] = v;
}
// ANCHOR_END: kernel

FOR_EACH_DTYPE(ENTRY_IN_OUT_N, reduce9)
