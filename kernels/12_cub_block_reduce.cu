// Kernel 12 — a library block primitive: CUB's BlockReduce.
//
// Changed: the block's sum is `cub::BlockReduce<Acc, BLOCK>(storage).Sum(v)`: CUB picks the
// algorithm (warp shuffles, then the warps' sums), the shared memory it needs (TempStorage) and
// the unrolling for this GPU. This is what a library or a tile language does for you; the
// per-thread part is still kernel 9's 16-byte walk (for 4-byte types ending with one predicated
// round, below).
// Preconditions: blockDim.x == BLOCK (a template parameter, one entry per block size); any
// grid. Needs the CUDA headers with CCCL (cub/).
#include <cub/block/block_reduce.cuh>
// This kernel's 4-byte entries end with vector_load.cuh's predicated round (VEC_TAIL_PREDICATED:
// what a thread has left after its rounds of four loads, loaded at once, and skipped by a thread
// that has nothing left, VEC_PRED_BRANCH) under a full SM's launch bound (VEC_PRED_FULL_SM,
// below); kernels 9-11 keep the plain walk. Timed by turns against the plain walk before it became
// the default, as the switches -DREDUCE12_PREDICATED_TAIL (the round in every thread) and
// -DREDUCE12_PREDICATED_TAIL -DVEC_PRED_BRANCH (this build): plots/data/experiments/vec-k12-pred/.
// -DREDUCE12_PLAIN_TAIL gives kernel 12 the plain walk back, -DREDUCE12_UNSKIPPED_ROUND the round
// in every thread; either experiment switch of vector_load.cuh, set by hand, replaces this choice.
#if !defined(REDUCE12_PLAIN_TAIL) && !defined(VEC_TAIL_PREDICATED) && !defined(VEC_TAIL_IN_FLIGHT)
#define VEC_TAIL_PREDICATED
#ifndef VEC_PRED_FULL_SM
#define VEC_PRED_FULL_SM
#endif
#if !defined(REDUCE12_UNSKIPPED_ROUND) && !defined(VEC_PRED_BRANCH)
#define VEC_PRED_BRANCH
#endif
#endif
#include "vector_load.cuh"

// ANCHOR: kernel
template <unsigned BLOCK, typename In, typename Acc>
__device__ void reduce12(const In* __restrict__ in, Acc* __restrict__ out, u64 n) {
    using BlockReduce = cub::BlockReduce<Acc, BLOCK>;
    __shared__ typename BlockReduce::TempStorage storage;
    Acc v = BlockReduce(storage).Sum(thread_sum_vec<In, Acc>(in, n));
    if (threadIdx.x == 0) out[blockIdx.x] = v;
}
// ANCHOR_END: kernel

// With VEC_TAIL_PREDICATED alone, NVRTC 13.0 gives the 4-byte entries 34 registers instead of 32,
// and the occupancy calculator then fits 6 blocks of 256 an SM instead of 8: the resident grid
// shrinks by a quarter, and the predicated round lost 3% at 3·2^24 − 1 and 10^8 values
// (plots/data/experiments/vec-pred/). VEC_PRED_FULL_SM asks for a full SM of threads, which holds
// them at 32 without spilling (plots/sass.py).
#if defined(VEC_PRED_FULL_SM) && !defined(VEC_TAIL_PREDICATED)
#error "VEC_PRED_FULL_SM bounds the registers of VEC_TAIL_PREDICATED's build: set both"
#endif
// The threads an SM holds: 2048 on sm_80, sm_90 and sm_100, 1024 on sm_75, 1536 on the others.
#if __CUDA_ARCH__ == 750
#define VEC_SM_THREADS 1024
#elif __CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900 || __CUDA_ARCH__ == 1000
#define VEC_SM_THREADS 2048
#else
#define VEC_SM_THREADS 1536
#endif
// The blocks an SM holds: 32 on sm_80, sm_90 and sm_100, 24 on sm_89, and 16 (the fewest of any
// architecture this book compiles for: sm_75, sm_86) where this list does not know; a bound above
// it is out of range (ptxas ignores it, with a warning).
#if __CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900 || __CUDA_ARCH__ == 1000
#define VEC_SM_BLOCKS 32
#elif __CUDA_ARCH__ == 890
#define VEC_SM_BLOCKS 24
#else
#define VEC_SM_BLOCKS 16
#endif
#define VEC_MIN_BLOCKS(BLOCK) (VEC_SM_THREADS / (BLOCK) > VEC_SM_BLOCKS ? VEC_SM_BLOCKS : VEC_SM_THREADS / (BLOCK) > 0 ? VEC_SM_THREADS / (BLOCK) : 1)
// By the entry's type suffix: only the 4-byte types' entries change under the switch, and the
// others keep the default's exact `__launch_bounds__(BLOCK)` (NVRTC compiles `(BLOCK, 1)` to
// other SASS).
#define CUB_BOUNDS_PLAIN(BLOCK) __launch_bounds__(BLOCK)
#ifdef VEC_PRED_FULL_SM
#define CUB_BOUNDS_FULL(BLOCK) __launch_bounds__(BLOCK, VEC_MIN_BLOCKS(BLOCK))
#else
#define CUB_BOUNDS_FULL(BLOCK) __launch_bounds__(BLOCK)
#endif
#define CUB_BOUNDS_f32 CUB_BOUNDS_FULL
#define CUB_BOUNDS_i32 CUB_BOUNDS_FULL
#define CUB_BOUNDS_f64 CUB_BOUNDS_PLAIN
#define CUB_BOUNDS_f16 CUB_BOUNDS_PLAIN
#define CUB_BOUNDS_bf16 CUB_BOUNDS_PLAIN
#define CUB_ENTRY(body, suffix, In, Acc, BLOCK)                                                  \
    extern "C" __global__ void CUB_BOUNDS_##suffix(BLOCK)                                        \
    body##_b##BLOCK##_##suffix(const In* in, Acc* out, u64 n) {                                  \
        body<BLOCK, In, Acc>(in, out, n);                                                        \
    }
#define CUB_ENTRIES(body, suffix, In, Acc)                                                       \
    CUB_ENTRY(body, suffix, In, Acc, 64) CUB_ENTRY(body, suffix, In, Acc, 128)                   \
    CUB_ENTRY(body, suffix, In, Acc, 256) CUB_ENTRY(body, suffix, In, Acc, 512)                  \
    CUB_ENTRY(body, suffix, In, Acc, 1024)

FOR_EACH_DTYPE(CUB_ENTRIES, reduce12)
