// Kernel 11 — the same sums, written with cooperative groups.
//
// Changed: nothing in the algorithm. cg::reduce sums over a tile of 32 threads (a warp), with
// the shuffles of kernel 8 generated for you; and a grid group gives a real barrier across the
// whole grid, which makes a one-launch sum without tickets or atomics possible:
//   reduce11        tile reductions, then the warps' sums; one output per block (two launches)
//   reduce11_grid   every block writes its partial sum, the grid synchronises, block 0 adds them.
// A grid barrier is only legal in a cooperative launch whose blocks all fit on the GPU at once:
// the host sizes the grid with the occupancy calculator and launches with
// cuLaunchCooperativeKernel, which refuses a grid that could deadlock. That is the correct form
// of the "spin on a global counter" barrier in the common-mistakes chapter.
// Preconditions: blockDim.x a multiple of 32, at most 1024; reduce11_grid: a cooperative launch,
// `partials` for gridDim.x values. Needs the CUDA headers (cooperative_groups.h).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include "vector_load.cuh"

namespace cg = cooperative_groups;

// ANCHOR: block_sum_cg
// The block's sum, valid in thread 0.
template <typename Acc>
__device__ __forceinline__ Acc block_sum_cg(Acc v, Acc* warp_sums) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    v = cg::reduce(warp, v, cg::plus<Acc>());  // every lane gets the warp's sum
    if (warp.thread_rank() == 0) warp_sums[warp.meta_group_rank()] = v;
    block.sync();
    if (warp.meta_group_rank() == 0) {
        const unsigned warps = warp.meta_group_size();
        v = cg::reduce(warp, warp.thread_rank() < warps ? warp_sums[warp.thread_rank()] : Acc(0), cg::plus<Acc>());
    }
    return v;
}
// ANCHOR_END: block_sum_cg

// ANCHOR: kernel
template <typename In, typename Acc>
__device__ void reduce11(const In* __restrict__ in, Acc* __restrict__ out, u64 n) {
    __shared__ Acc warp_sums[32];
    Acc v = block_sum_cg(thread_sum_vec<In, Acc>(in, n), warp_sums);
    if (threadIdx.x == 0) out[blockIdx.x] = v;
}
// ANCHOR_END: kernel

// ANCHOR: grid
template <typename In, typename Acc>
__device__ void reduce11_grid(const In* __restrict__ in, Acc* __restrict__ out, u64 n, Acc* partials) {
    __shared__ Acc warp_sums[32];
    cg::grid_group grid = cg::this_grid();
    Acc v = block_sum_cg(thread_sum_vec<In, Acc>(in, n), warp_sums);
    if (threadIdx.x == 0) partials[blockIdx.x] = v;
    grid.sync();  // every block's partial sum is written and visible
    if (blockIdx.x != 0) return;
    Acc s = Acc(0);
    for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) s += partials[b];
    cg::this_thread_block().sync();  // warp_sums is reused below
    s = block_sum_cg(s, warp_sums);
    if (threadIdx.x == 0) out[0] = s;
}
// ANCHOR_END: grid

FOR_EACH_DTYPE(ENTRY_IN_OUT_N, reduce11)
FOR_EACH_DTYPE(ENTRY_GRID_SYNC, reduce11_grid)
