// The ceiling of a sum: a kernel that reads every input byte once and writes one partial value
// per block, and does nothing else: no second pass, no atomic, no result to zero first. Any sum
// must at least read every byte and write something, so no sum can do less than this kernel
// does at its best launch shape; its bandwidth is the mark each reduction is compared with.
//
// Shape: one tile per block, no loop. BLOCK threads each make LOADS independent 16-byte loads,
// spaced one block apart so that every load instruction of a warp reads 512 consecutive bytes;
// then the values are added, the block adds its threads' sums (kernel 8's block_sum), and thread
// 0 writes the block's sum to partials[blockIdx.x]. Which (BLOCK, LOADS) is fastest depends on
// the size: few small tiles for a small input (one block, one launch), large ones for a large
// input. The benchmark measures every shape instantiated below at every size and keeps the
// fastest (`measure::read_only`), as the sums get the block size that suits each size.
// The host launches one block per whole tile (TILE = BLOCK x LOADS x 16 bytes), and one more
// for what is left, if anything: that block reads the remaining whole packs and then the last
// n % (16 / sizeof(In)) values one by one.
// Preconditions: blockDim.x == BLOCK; `in` 16-byte aligned (the host's pool offsets are
// multiples of 1 KiB); `partials` holds one value per block. The partials are not added up: the
// host checks their sum (untimed) before it times the kernel.
#include "warp_reduce.cuh"
#include "vector_load.cuh"  // pack_sum

// ANCHOR: kernel
template <unsigned BLOCK, unsigned LOADS, typename In, typename Acc>
__device__ void read_only(const In* __restrict__ in, Acc* __restrict__ partials, u64 n) {
    __shared__ Acc warp_sums[32];
    constexpr u64 PER = 16 / sizeof(In);  // values per 16-byte load
    constexpr u64 TILE = (u64)BLOCK * LOADS;  // packs per block
    const u64 packs = n / PER;
    const u64 first = (u64)blockIdx.x * TILE + threadIdx.x;
    const uint4* in4 = reinterpret_cast<const uint4*>(in);

    Acc acc = Acc(0);
    if ((u64)(blockIdx.x + 1) * TILE <= packs) {
        // A whole tile: every load issued before any add, so all of them are in flight at once.
        uint4 v[LOADS];
#pragma unroll
        for (unsigned k = 0; k < LOADS; ++k) v[k] = in4[first + (u64)k * BLOCK];
#pragma unroll
        for (unsigned k = 0; k < LOADS; ++k) acc += pack_sum<In, Acc>(v[k]);
    } else {
        // The last block: the whole packs that are left, then the values past the last pack.
        for (u64 p = first; p < packs; p += BLOCK) acc += pack_sum<In, Acc>(in4[p]);
        for (u64 i = packs * PER + threadIdx.x; i < n; i += BLOCK) acc += to_acc<Acc>(in[i]);
    }
    acc = block_sum(acc, warp_sums);
    if (threadIdx.x == 0) partials[blockIdx.x] = acc;  // the one value this block writes
}
// ANCHOR_END: kernel

// One entry per shape and element type: read_only_b<BLOCK>_l<LOADS>_<type>. The shapes are
// listed again, in the same order, in `kernels::READ_ONLY_SHAPES` (a test compiles every one).
#define READ_ONLY_ENTRY(suffix, In, Acc, B, L)                                                   \
    extern "C" __global__ void __launch_bounds__(B)                                              \
    read_only_b##B##_l##L##_##suffix(const In* in, Acc* partials, u64 n) {                       \
        read_only<B, L, In, Acc>(in, partials, n);                                               \
    }
#define READ_ONLY_LOADS_1_TO_16(suffix, In, Acc, B)                                              \
    READ_ONLY_ENTRY(suffix, In, Acc, B, 1) READ_ONLY_ENTRY(suffix, In, Acc, B, 2)                \
    READ_ONLY_ENTRY(suffix, In, Acc, B, 4) READ_ONLY_ENTRY(suffix, In, Acc, B, 8)                \
    READ_ONLY_ENTRY(suffix, In, Acc, B, 16)
#define READ_ONLY_SHAPES(body, suffix, In, Acc)                                                  \
    READ_ONLY_LOADS_1_TO_16(suffix, In, Acc, 128) READ_ONLY_LOADS_1_TO_16(suffix, In, Acc, 256)  \
    READ_ONLY_LOADS_1_TO_16(suffix, In, Acc, 512) READ_ONLY_LOADS_1_TO_16(suffix, In, Acc, 1024)

FOR_EACH_DTYPE(READ_ONLY_SHAPES, read_only)
