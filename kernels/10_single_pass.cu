// Kernel 10 — one launch instead of two.
//
// Changed: kernel 9 needs a second launch to add its partial sums. Two ways to finish in one:
//   reduce10_atomic     each block adds its sum to the output with atomicAdd (the host zeroes
//                       the output first). Fast, but float atomics land in whatever order the
//                       blocks finish, so the last bits of an f32 sum vary from run to run.
//   reduce10_last_block each block writes its partial sum, makes it visible (__threadfence),
//                       and takes a ticket; the block that draws the last ticket adds all the
//                       partial sums in a fixed order and resets the counter. Deterministic.
// Preconditions: as kernel 9; last_block needs `partials` for gridDim.x values and a ticket
// counter that starts at zero (the kernel leaves it at zero).
#include "warp_reduce.cuh"
#include "vector_load.cuh"

// ANCHOR: atomic
template <typename In, typename Acc>
__device__ void reduce10_atomic(const In* __restrict__ in, Acc* __restrict__ out, u64 n) {
    __shared__ Acc warp_sums[32];
    Acc v = block_sum(thread_sum_vec<In, Acc>(in, n), warp_sums);
    if (threadIdx.x == 0) atomicAdd(out, v);  // order of arrival decides the rounding
}
// ANCHOR_END: atomic

// ANCHOR: last_block
template <typename In, typename Acc>
__device__ void reduce10_last_block(const In* __restrict__ in, Acc* __restrict__ out, u64 n,
                                    Acc* partials, unsigned* ticket) {
    __shared__ Acc warp_sums[32];
    __shared__ bool last;
    Acc v = block_sum(thread_sum_vec<In, Acc>(in, n), warp_sums);
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = v;
        __threadfence();  // the partial sum is visible to every block before the ticket is
        last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;

    // The last block: add the partial sums in index order, the same order every run.
    Acc s = Acc(0);
    for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) s += __ldcg(partials + b);  // from L2, not a stale L1
    s = block_sum(s, warp_sums);
    if (threadIdx.x == 0) {
        out[0] = s;
        *ticket = 0;  // ready for the next launch
    }
}
// ANCHOR_END: last_block

FOR_EACH_DTYPE(ENTRY_IN_OUT_N, reduce10_atomic)
FOR_EACH_DTYPE(ENTRY_LAST_BLOCK, reduce10_last_block)
