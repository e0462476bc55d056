// Kernel 10, tiles — the read-only kernel's shape as a sum: one tile per block, no loop, one launch.
//
// Changed: kernels 9–12 loop over the input with a grid of resident blocks. The read-only kernel,
// which does nothing a sum could leave out, was faster than all of them at large n with one tile
// per block and no loop (the block scheduler hands each free SM the next tile). Here that shape
// sums: BLOCK threads each make LOADS independent 16-byte loads, spaced one block apart so that
// every load instruction of a warp reads 512 consecutive bytes, add them, and the block adds its
// threads' sums (kernel 8's block_sum). The blocks' partial sums are added in the same launch, in
// an order that does not change from run to run, by kernel 10's last block: each block writes its
// partial, fences, takes a ticket, and the block with the last ticket adds the partials in index
// order, 16 bytes at a time. One block needs no partial at all: it writes the sum.
// Any alignment: the values before the first 16-byte boundary are added by block 0, those after
// the last whole pack by the last block.
// Still slow: every block waits for its fence and its ticket before it leaves its SM, and the
// last block reads every partial after the last tile is read (4 bytes per 64 KiB of f32 input).
// Preconditions: blockDim.x == BLOCK; gridDim.x at least max(1, ceil(n / (BLOCK * LOADS * P))),
// P values per 16-byte pack (4 for f32), so that the tiles cover the input whatever its head
// (extra blocks find nothing to read); `partials` room for gridDim.x values, 16-byte aligned;
// `ticket` zero before the launch (the kernel leaves it at zero).
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
    if ((u64)(blockIdx.x + 1) * tile <= packs) {
        uint4 v[LOADS];
#pragma unroll
        for (unsigned k = 0; k < LOADS; ++k) v[k] = __ldcs(body + first + (u64)k * BLOCK);  // read once
#pragma unroll
        for (unsigned k = 0; k < LOADS; ++k) acc += pack_sum<In, Acc>(v[k]);
    } else {
        for (u64 p = first; p < packs; p += BLOCK) acc += pack_sum<In, Acc>(__ldcs(body + p));
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

FOR_EACH_DTYPE(TILE_ENTRIES, reduce10_tiles)
