// Kernel 16 — the read-only kernel's shape as a sum: one tile per block, no loop, one launch.
//
// Changed: kernels 9–12 loop over the input with a grid of resident blocks. The read-only kernel,
// which does nothing a sum could leave out, is faster than all of them at large n with one tile
// per block and no loop (the block scheduler hands each free SM the next tile). Here that shape
// sums: BLOCK threads each make LOADS independent 16-byte loads, spaced one block apart so that
// every load instruction of a warp reads 512 consecutive bytes, add them, and the block adds its
// threads' sums (kernel 8's block_sum). What is left is to add the blocks' partial sums in one
// launch, in an order that does not change from run to run. Two ways:
//   reduce16_ticket  kernel 10's last block: each block writes its partial, fences, takes a
//                    ticket; the block with the last ticket adds the partials in index order.
//                    Every block waits for its fence and its ticket before it exits.
//   reduce16_stream  block 0 adds the partials while the others are still reading: each block
//                    writes its partial with a "written" flag in one 8-byte store and exits at
//                    once (as the read-only kernel's blocks do after their atomicAdd); block 0,
//                    after its own tile, adds partial 0, 1, 2, ... in index order, each as soon as
//                    its flag is set, and clears the slot for the next launch. Block 0 waits only
//                    for blocks that need nothing from it, on an SM slot of its own, so the wait
//                    cannot deadlock however many blocks the grid has.
// Any alignment: the values before the first 16-byte boundary are added by block 0, those after
// the last whole pack by the last block.
// Still slow: the last partials are added after the last tile is read (one more round trip).
// Preconditions: blockDim.x == BLOCK; gridDim.x at least max(1, ceil(n / (BLOCK * LOADS * P))),
// P values per 16-byte pack (4 for f32), so that the tiles cover the input whatever its head
// (extra blocks find nothing to read). ticket: `partials` room for gridDim.x values, 16-byte
// aligned; `ticket` zero before the launch (left at zero). stream: `slots` room for gridDim.x
// 8-byte slots, zero before the launch (zeroed once at allocation; the kernel leaves them zero);
// Acc of 4 bytes (f32, i32; f16 and bf16 are summed in f32); room on the GPU for one block more
// than block 0.
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

// ANCHOR: ticket
template <typename In, typename Acc, unsigned BLOCK, unsigned LOADS>
__device__ void reduce16_ticket(const In* __restrict__ in, Acc* __restrict__ out, u64 n, Acc* partials, unsigned* ticket) {
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
#pragma unroll 4
    for (unsigned p = threadIdx.x; p < packs; p += BLOCK) s += pack_sum<Acc, Acc>(__ldcg(packed + p));
    for (unsigned b = packs * PER + threadIdx.x; b < gridDim.x; b += BLOCK) s += __ldcg(partials + b);
    __syncthreads();  // warp_sums is reused
    s = block_sum(s, warp_sums);
    if (threadIdx.x == 0) {
        out[0] = s;
        *ticket = 0;  // ready for the next launch
    }
}
// ANCHOR_END: ticket

// ANCHOR: stream
// A partial and a flag that says it was written, in one 8-byte word: one store makes both
// visible together, so no fence is needed between them. Block 0 clears each slot once it has
// added it, so every slot is zero again when the launch ends, ready for the next one.
__device__ __forceinline__ u64 load_slot(const u64* p) {
    u64 v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void store_slot(u64* p, u64 v) {
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
template <typename Acc>
__device__ __forceinline__ unsigned acc_bits(Acc v) { return __float_as_uint(v); }
template <>
__device__ __forceinline__ unsigned acc_bits<int>(int v) { return (unsigned)v; }
template <typename Acc>
__device__ __forceinline__ Acc from_bits(unsigned b) { return __uint_as_float(b); }
template <>
__device__ __forceinline__ int from_bits<int>(unsigned b) { return (int)b; }
#define SLOT_WRITTEN (1ull << 32)

template <typename In, typename Acc, unsigned BLOCK, unsigned LOADS>
__device__ void reduce16_stream(const In* __restrict__ in, Acc* __restrict__ out, u64 n, u64* slots) {
    __shared__ Acc warp_sums[32];
    const Acc v = block_sum(tile_sum<In, Acc, BLOCK, LOADS>(in, n), warp_sums);
    if (blockIdx.x != 0) {
        if (threadIdx.x == 0) store_slot(slots + blockIdx.x, SLOT_WRITTEN | acc_bits(v));
        return;  // nothing to wait for: the block leaves its SM to the next tile
    }
    // Block 0: thread t adds partials t, t + BLOCK, ... in index order (its own, partial 0, from
    // registers), each once its slot says it was written.
    __shared__ Acc own;
    if (threadIdx.x == 0) own = v;
    __syncthreads();
    Acc s = threadIdx.x == 0 ? own : Acc(0);
    for (u64 b = threadIdx.x == 0 ? BLOCK : threadIdx.x; b < gridDim.x; b += BLOCK) {
        u64 word = load_slot(slots + b);
        while (!(word & SLOT_WRITTEN)) {
            __nanosleep(256);
            word = load_slot(slots + b);
        }
        store_slot(slots + b, 0);  // zero again for the next launch
        s += from_bits<Acc>((unsigned)word);
    }
    __syncthreads();  // warp_sums is reused
    s = block_sum(s, warp_sums);
    if (threadIdx.x == 0) out[0] = s;
}
// ANCHOR_END: stream

// Entry points: reduce16_<finish>_b<BLOCK>_l<LOADS>_<type>, one per (block, loads) that
// TILE_SHAPES names: the registry's (LOADS 8 at every block size from 64 to 1024) unless a
// tuning run defines its own list before this file.
#define TICKET_ENTRY(body, suffix, In, Acc, BLOCK, LOADS)                                        \
    extern "C" __global__ void __launch_bounds__(BLOCK)                                          \
    body##_b##BLOCK##_l##LOADS##_##suffix(const In* in, Acc* out, u64 n, Acc* partials,         \
                                          unsigned* ticket) {                                    \
        body<In, Acc, BLOCK, LOADS>(in, out, n, partials, ticket);                               \
    }
#define STREAM_ENTRY(body, suffix, In, Acc, BLOCK, LOADS)                                        \
    extern "C" __global__ void __launch_bounds__(BLOCK)                                          \
    body##_b##BLOCK##_l##LOADS##_##suffix(const In* in, Acc* out, u64 n, u64* slots) {          \
        body<In, Acc, BLOCK, LOADS>(in, out, n, slots);                                          \
    }
#ifndef TILE_SHAPES
#define TILE_SHAPES(M, body, suffix, In, Acc)                                                    \
    M(body, suffix, In, Acc, 64, 8) M(body, suffix, In, Acc, 128, 8) M(body, suffix, In, Acc, 256, 8) \
    M(body, suffix, In, Acc, 512, 8) M(body, suffix, In, Acc, 1024, 8)
#endif
#define TICKET_ENTRIES(body, suffix, In, Acc) TILE_SHAPES(TICKET_ENTRY, body, suffix, In, Acc)
#define STREAM_ENTRIES(body, suffix, In, Acc) TILE_SHAPES(STREAM_ENTRY, body, suffix, In, Acc)

FOR_EACH_DTYPE(TICKET_ENTRIES, reduce16_ticket)
STREAM_ENTRIES(reduce16_stream, f32, float, float)
STREAM_ENTRIES(reduce16_stream, i32, int, int)
STREAM_ENTRIES(reduce16_stream, f16, f16_t, float)
STREAM_ENTRIES(reduce16_stream, bf16, bf16_t, float)
