// Kernel 12 — a library block primitive: CUB's BlockReduce.
//
// Changed: the block's sum is `cub::BlockReduce<Acc, BLOCK>(storage).Sum(v)`: CUB picks the
// algorithm (warp shuffles, then the warps' sums), the shared memory it needs (TempStorage) and
// the unrolling for this GPU. This is what a library or a tile language does for you; the
// per-thread part is still kernel 9's 16-byte walk.
// Preconditions: blockDim.x == BLOCK (a template parameter, one entry per block size); any
// grid. Needs the CUDA headers with CCCL (cub/).
#include <cub/block/block_reduce.cuh>
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

#define CUB_ENTRY(body, suffix, In, Acc, BLOCK)                                                  \
    extern "C" __global__ void __launch_bounds__(BLOCK)                                          \
    body##_b##BLOCK##_##suffix(const In* in, Acc* out, u64 n) {                                  \
        body<BLOCK, In, Acc>(in, out, n);                                                        \
    }
#define CUB_ENTRIES(body, suffix, In, Acc)                                                       \
    CUB_ENTRY(body, suffix, In, Acc, 64) CUB_ENTRY(body, suffix, In, Acc, 128)                   \
    CUB_ENTRY(body, suffix, In, Acc, 256) CUB_ENTRY(body, suffix, In, Acc, 512)                  \
    CUB_ENTRY(body, suffix, In, Acc, 1024)

FOR_EACH_DTYPE(CUB_ENTRIES, reduce12)
