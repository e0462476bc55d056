// Kernel 10, tiles — the read-only kernel's shape as a sum: one tile per block, no loop.
//
// Changed: kernels 9–12 loop over the input with a grid of resident blocks. The read-only kernel,
// which does nothing a sum could leave out, was faster than all of them at large n with one tile
// per block and no loop (the block scheduler hands each free SM the next tile). Here that shape
// sums: BLOCK threads each make LOADS independent 16-byte loads, spaced one block apart so that
// every load instruction of a warp reads 512 consecutive bytes, add them, and the block adds its
// threads' sums (kernel 8's block_sum). Two ways to add the blocks' partial sums, both in an order
// that does not change from run to run:
// - reduce10_tiles, one launch: kernel 10's last block. Each block writes its partial, fences,
//   takes a ticket, and the block with the last ticket adds the partials in index order, 16 bytes
//   at a time. One block needs no partial at all: it writes the sum.
// - reduce10_tiles_two_pass, two launches: each block writes its partial and leaves, as the
//   read-only kernel does; a second launch of one block adds them (the same kernel over the
//   partials, looping over tiles when they are more than one). From sm_90 on the host queues
//   the second launch as a programmatic dependent, so that it is already resident, waiting,
//   when the first ends.
// Any alignment: the values before the first 16-byte boundary are added by block 0, those after
// the last whole pack by the last block, whose loads are all in flight before it adds, as a whole
// tile's are.
// Still slow: in reduce10_tiles every block waits for its fence and its ticket before it leaves
// its SM (2.2% of the time at 2^30 f32 on the H200); in the two-pass sum, the second launch
// cannot add before the first has ended (0.5% at 2^30). Up to 2^15 values, one block was faster than any
// grid of tiles that must then add partials (plots/data/experiments/nvidia-h200-finish.csv).
// Preconditions: blockDim.x == BLOCK; gridDim.x at least max(1, ceil(n / (BLOCK * LOADS * P))),
// P values per 16-byte pack (4 for f32), so that the tiles cover the input whatever its head
// (extra blocks find nothing to read); reduce10_tiles: `partials` room for gridDim.x values,
// 16-byte aligned, and `ticket` zero before the launch (the kernel leaves it at zero);
// reduce10_tiles_two_pass: `out` room for gridDim.x values.
#include "warp_reduce.cuh"
#include "vector_load.cuh"

// ANCHOR: tile
// This block's tile of the 16-byte packs of the input after its head: LOADS loads per thread,
// all in flight before any is added. The last block takes what is left: the packs short of a
// whole tile, and the values after the last pack; block 0 adds the head.
template <typename In, typename Acc, unsigned BLOCK, unsigned LOADS>
__device__ __forceinline__ Acc tile_sum(const In* __restrict__ in, u64 n) {
    constexpr u64 PER = 16 / sizeof(In);
    u64 head = ((16 - ((u64)in & 15)) & 15) / sizeof(In);  // values before the first boundary
    if (head > n) head = n;
    const u64 packs = (n - head) / PER;
    const u64 tail = head + packs * PER;
    const uint4* body = reinterpret_cast<const uint4*>(in + head);
    const u64 tile = (u64)BLOCK * LOADS;
    const u64 first = (u64)blockIdx.x * tile + threadIdx.x;

    Acc acc = Acc(0);
    if ((u64)(blockIdx.x + 1) * tile <= packs && blockIdx.x + 1 < gridDim.x) {
        uint4 v[LOADS];
#pragma unroll
        for (unsigned k = 0; k < LOADS; ++k) v[k] = __ldcs(body + first + (u64)k * BLOCK);  // read once
#pragma unroll
        for (unsigned k = 0; k < LOADS; ++k) acc += pack_sum<In, Acc>(v[k]);
    } else {
        // The last block: every pack from its tile to the end, LOADS loads in flight at a time
        // (one step, unless it is the only block of a launch over more than one tile).
        for (u64 step = first; step < packs; step += tile) {
            uint4 v[LOADS];
#pragma unroll
            for (unsigned k = 0; k < LOADS; ++k)
                if (step + (u64)k * BLOCK < packs) v[k] = __ldcs(body + step + (u64)k * BLOCK);
#pragma unroll
            for (unsigned k = 0; k < LOADS; ++k)
                if (step + (u64)k * BLOCK < packs) acc += pack_sum<In, Acc>(v[k]);
        }
    }
    if (blockIdx.x == gridDim.x - 1)
        for (u64 i = tail + threadIdx.x; i < n; i += BLOCK) acc += to_acc<Acc>(in[i]);
    if (blockIdx.x == 0 && threadIdx.x < head) acc += to_acc<Acc>(in[threadIdx.x]);
    return acc;
}
// ANCHOR_END: tile

// ANCHOR: finish
template <typename In, typename Acc, unsigned BLOCK, unsigned LOADS>
__device__ void reduce10_tiles(const In* __restrict__ in, Acc* __restrict__ out, u64 n, Acc* partials, unsigned* ticket) {
    __shared__ Acc warp_sums[32];
    __shared__ bool last;
    const Acc v = block_sum(tile_sum<In, Acc, BLOCK, LOADS>(in, n), warp_sums);
    if (gridDim.x == 1) {  // one block: nothing to wait for
        if (threadIdx.x == 0) out[0] = v;
        return;
    }
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = v;
        __threadfence();  // the partial is visible to every block before the ticket is
        last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    // The last block: thread t adds the 16-byte packs of partials t, t + BLOCK, ... in index
    // order (from L2, where the other blocks' writes are), then the partials past the last pack.
    constexpr unsigned PER = 16 / sizeof(Acc);
    const unsigned packs = gridDim.x / PER;
    const uint4* packed = reinterpret_cast<const uint4*>(partials);
    Acc s = Acc(0);
#pragma unroll 8
    for (unsigned p = threadIdx.x; p < packs; p += BLOCK) s += pack_sum<Acc, Acc>(__ldcg(packed + p));
    for (unsigned b = packs * PER + threadIdx.x; b < gridDim.x; b += BLOCK) s += __ldcg(partials + b);
    __syncthreads();  // warp_sums is reused
    s = block_sum(s, warp_sums);
    if (threadIdx.x == 0) {
        out[0] = s;
        *ticket = 0;  // ready for the next launch
    }
}
// ANCHOR_END: finish

// ANCHOR: two_pass
// Each block writes its tile's sum and leaves: nothing to wait for. The host launches the same
// kernel over the partial sums, one block, until one value is left.
template <typename In, typename Acc, unsigned BLOCK, unsigned LOADS>
__device__ void reduce10_tiles_two_pass(const In* __restrict__ in, Acc* __restrict__ out, u64 n) {
    __shared__ Acc warp_sums[32];
#if __CUDA_ARCH__ >= 900
    // The host may queue the second launch as a programmatic dependent (sm_90 on): it is let in
    // once every block of the first has started, and waits here until the first has ended and its
    // partials are visible (a launch queued the ordinary way does not wait).
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
    const Acc v = block_sum(tile_sum<In, Acc, BLOCK, LOADS>(in, n), warp_sums);
    if (threadIdx.x == 0) out[blockIdx.x] = v;
}
// ANCHOR_END: two_pass

// Entry points: reduce10_tiles_b<BLOCK>_l<LOADS>_<type>, one per (block, loads) that TILE_SHAPES names:
// the registry's (LOADS 8 at every block size from 64 to 1024) unless a tuning run defines its
// own list before this file.
#define TILE_ENTRY(body, suffix, In, Acc, BLOCK, LOADS)                                          \
    extern "C" __global__ void __launch_bounds__(BLOCK)                                          \
    body##_b##BLOCK##_l##LOADS##_##suffix(const In* in, Acc* out, u64 n, Acc* partials,         \
                                          unsigned* ticket) {                                    \
        body<In, Acc, BLOCK, LOADS>(in, out, n, partials, ticket);                               \
    }
#ifndef TILE_SHAPES
#define TILE_SHAPES(M, body, suffix, In, Acc)                                                    \
    M(body, suffix, In, Acc, 64, 8) M(body, suffix, In, Acc, 128, 8) M(body, suffix, In, Acc, 256, 8) \
    M(body, suffix, In, Acc, 512, 8) M(body, suffix, In, Acc, 1024, 8)
#endif
#define TILE_ENTRIES(body, suffix, In, Acc) TILE_SHAPES(TILE_ENTRY, body, suffix, In, Acc)
// The two-pass entries take (in, out, n), as every multi-pass kernel's do.
#define TILE_PASS_ENTRY(body, suffix, In, Acc, BLOCK, LOADS)                                     \
    extern "C" __global__ void __launch_bounds__(BLOCK)                                          \
    body##_b##BLOCK##_l##LOADS##_##suffix(const In* in, Acc* out, u64 n) {                       \
        body<In, Acc, BLOCK, LOADS>(in, out, n);                                                 \
    }
#define TILE_PASS_ENTRIES(body, suffix, In, Acc) TILE_SHAPES(TILE_PASS_ENTRY, body, suffix, In, Acc)

FOR_EACH_DTYPE(TILE_ENTRIES, reduce10_tiles)
FOR_EACH_DTYPE(TILE_PASS_ENTRIES, reduce10_tiles_two_pass)
