// The ceiling of a sum: a kernel that reads every input byte once and writes one value per
// block. It does nothing that a sum could leave out, so its bandwidth is what the memory gives a
// kernel that only reads: the mark each reduction is compared with. (A measured ceiling, not a
// law: another shape could beat it by a little, and then that shape belongs here.)
//
// Shape (the fastest of the read-only variants tried on the H200 before this kernel was
// written; grid-stride loops over a resident grid were all slower): one tile per block, no
// loop. 512 threads each make 8 independent 16-byte loads, spaced one block apart so that every
// load instruction of a warp reads 512 consecutive bytes; then the values are added, the block
// adds its threads' sums (kernel 8's block_sum), and thread 0 adds the block's sum to the
// result with one atomicAdd.
// The host launches n / TILE blocks of whole tiles (TILE = 512 x 8 x 16 bytes = 64 KiB), and one
// more block for what is left, if anything: that block reads the remaining whole packs and then
// the last n % (16 / sizeof(In)) values one by one.
// Preconditions: blockDim.x == READ_ONLY_BLOCK; `in` 16-byte aligned (the host's pool offsets
// are multiples of 1 KiB); `out` zeroed before the launch (in the same stream).
#include "warp_reduce.cuh"
#include "vector_load.cuh"  // pack_sum

#define READ_ONLY_BLOCK 512
#define READ_ONLY_LOADS 8  // independent 16-byte loads per thread

// ANCHOR: kernel
template <typename In, typename Acc>
__device__ void read_only(const In* __restrict__ in, Acc* __restrict__ out, u64 n) {
    __shared__ Acc warp_sums[32];
    constexpr u64 PER = 16 / sizeof(In);  // values per 16-byte load
    const u64 packs = n / PER;
    const u64 tile = (u64)READ_ONLY_BLOCK * READ_ONLY_LOADS;  // packs per block
    const u64 first = (u64)blockIdx.x * tile + threadIdx.x;
    const uint4* in4 = reinterpret_cast<const uint4*>(in);

    Acc acc = Acc(0);
    if ((u64)(blockIdx.x + 1) * tile <= packs) {
        // A whole tile: every load issued before any add, so all eight are in flight at once.
        uint4 v[READ_ONLY_LOADS];
#pragma unroll
        for (int k = 0; k < READ_ONLY_LOADS; ++k) v[k] = in4[first + (u64)k * READ_ONLY_BLOCK];
#pragma unroll
        for (int k = 0; k < READ_ONLY_LOADS; ++k) acc += pack_sum<In, Acc>(v[k]);
    } else {
        // The last block: the whole packs that are left, then the values past the last pack.
        for (u64 p = first; p < packs; p += READ_ONLY_BLOCK) acc += pack_sum<In, Acc>(in4[p]);
        for (u64 i = packs * PER + threadIdx.x; i < n; i += READ_ONLY_BLOCK) acc += to_acc<Acc>(in[i]);
    }
    acc = block_sum(acc, warp_sums);
    if (threadIdx.x == 0) atomicAdd(out, acc);  // the one value this block writes
}
// ANCHOR_END: kernel

FOR_EACH_DTYPE(ENTRY_IN_OUT_N, read_only)
