// Kernel 15 — the same bits on every launch, and sums that keep their rounding errors.
//
// Changed: every kernel before this one adds in an order the launch decides: the grid sets which
// values a thread folds, the block which threads a tree joins. Change the grid (another GPU has
// another SM count) or the block and the last bits of an f32 sum change. Here the order of every
// addition is a function of the input's length alone:
//   * the input is cut into chunks of CHUNK_VALUES = 16384 values (the last one padded with zeros);
//   * a chunk is summed by 1024 *virtual lanes*: lane l folds the 16 values of four 16-byte packs
//     l, l + 1024, l + 2048, l + 3072 (one accumulator per position in the pack, then a halving
//     tree over those), the 32 lanes of each virtual warp are joined by a halving tree (a warp's
//     shuffles), then the 32 warp sums by the same tree. A block of B threads runs 1024 / B
//     virtual lanes per thread, so every block size computes the same tree;
//   * each chunk's sum goes to partials[chunk]; a block loops over chunks blockIdx.x, + gridDim.x,
//     ..., so any grid computes the same partials;
//   * the last block to finish (a ticket, as in kernel 10) folds the partials the same way:
//     virtual lane l adds partials l, l + 1024, ... in index order, then the 1024-lane tree;
//     or, in the `_two_pass` sums, a second launch of one block folds them, as
//     reduce10_tiles_two_pass adds its tiles (the same order, so the same bits).
// Three accumulators run that one order: a plain f32 sum (reduce15_reproducible), Neumaier's
// compensated pair carried through every level (reduce15_neumaier), and an f64 sum of the f32
// values (reduce15_f64). The result is written as f32. src/check/reproducible.rs transcribes the
// same order on the CPU; the tests demand the same bits from both.
// Every add is written __fadd_rn / __dadd_rn: round to nearest, never fused into an FMA, so no
// compiler option can change the rounding.
// Still slow: in the one-launch sums every block waits for its fence and its ticket before it
// leaves its SM, as reduce10_tiles' blocks do; the two-launch sums leave at once and pay for a
// second launch instead. The partials cost 8 bytes per 64 KiB of f32 input.
// Preconditions: blockDim.x a power of two from 32 to 1024 (exactly 1024 for the _b1024 entries); `partials` room for one 8-byte
// value per chunk (2 * ceil(n / 16384) floats); `ticket` zero before the launch (the kernel
// leaves it at zero); any grid of at least one block; a `_fold` entry: one block.
#include "warp_reduce.cuh"

#define CHUNK_LANES 1024  // virtual lanes per chunk
#define LANE_VALUES 16    // values per virtual lane (four 16-byte packs of f32)
#define CHUNK_VALUES (CHUNK_LANES * LANE_VALUES)

// ANCHOR: accumulators
// The three accumulators: add one value, merge another accumulator, move between lanes, and
// travel through the partials array as 8 bytes.
struct PlainF32 {
    float s;
    __device__ static PlainF32 zero() { return {0.0f}; }
    __device__ void add(float x) { s = __fadd_rn(s, x); }
    __device__ void merge(PlainF32 o) { s = __fadd_rn(s, o.s); }
    __device__ PlainF32 down(unsigned offset) const { return {__shfl_down_sync(0xffffffffu, s, offset)}; }
    __device__ u64 pack() const { return __float_as_uint(s); }
    __device__ static PlainF32 unpack(u64 bits) { return {__uint_as_float((unsigned)bits)}; }
    __device__ float result() const { return s; }
};

// Neumaier: the sum, and the rounding errors it has not absorbed yet. The error of s + x is
// exact, computed from whichever operand is larger (Fast2Sum); merging two pairs adds the other
// sum the same way and the carries plainly. A plain add at any level would drop the carry.
struct Neumaier {
    float s, c;
    __device__ static Neumaier zero() { return {0.0f, 0.0f}; }
    __device__ void add(float x) {
        const float t = __fadd_rn(s, x);
        const float e = fabsf(s) >= fabsf(x) ? __fadd_rn(__fsub_rn(s, t), x) : __fadd_rn(__fsub_rn(x, t), s);
        c = __fadd_rn(c, e);
        s = t;
    }
    __device__ void merge(Neumaier o) {
        add(o.s);
        c = __fadd_rn(c, o.c);
    }
    __device__ Neumaier down(unsigned offset) const {
        return {__shfl_down_sync(0xffffffffu, s, offset), __shfl_down_sync(0xffffffffu, c, offset)};
    }
    __device__ u64 pack() const { return (u64)__float_as_uint(c) << 32 | __float_as_uint(s); }
    __device__ static Neumaier unpack(u64 bits) { return {__uint_as_float((unsigned)bits), __uint_as_float((unsigned)(bits >> 32))}; }
    // Once the sum is infinite or NaN there is no rounding error left to add (inf - inf in the
    // carry would turn an infinite sum into NaN).
    __device__ float result() const { return isfinite(s) ? __fadd_rn(s, c) : s; }
};

// f32 values added in f64: 29 more bits for the same order, rounded to f32 once at the end.
struct WideF64 {
    double s;
    __device__ static WideF64 zero() { return {0.0}; }
    __device__ void add(float x) { s = __dadd_rn(s, (double)x); }
    __device__ void merge(WideF64 o) { s = __dadd_rn(s, o.s); }
    __device__ WideF64 down(unsigned offset) const { return {__shfl_down_sync(0xffffffffu, s, offset)}; }
    __device__ u64 pack() const { return (u64)__double_as_longlong(s); }
    __device__ static WideF64 unpack(u64 bits) { return {__longlong_as_double((long long)bits)}; }
    __device__ float result() const { return (float)s; }
};
// ANCHOR_END: accumulators

// ANCHOR: lane
// The 16 values of virtual lane `lane` of chunk `chunk`, in the lane's order: x[k * PER + j] is
// value j of the lane's pack k. Whole chunks of an aligned input are read 16 bytes at a time;
// the last chunk and misaligned views value by value, with zeros past n. The order is the same.
template <typename In>
__device__ __forceinline__ void load_lane(float (&x)[LANE_VALUES], const In* __restrict__ in, u64 n, u64 chunk, unsigned lane, bool whole) {
    constexpr unsigned PER = 16 / sizeof(In);         // values per 16-byte pack
    constexpr unsigned PACKS = LANE_VALUES / PER;     // packs per lane
    const u64 first_pack = chunk * (CHUNK_VALUES / PER);
    if (whole) {
        const uint4* in4 = reinterpret_cast<const uint4*>(in);
        uint4 raw[PACKS];
#pragma unroll
        for (unsigned k = 0; k < PACKS; ++k) raw[k] = __ldcs(in4 + first_pack + k * CHUNK_LANES + lane);  // read once
#pragma unroll
        for (unsigned k = 0; k < PACKS; ++k) {
            union { uint4 r; In v[PER]; } u;
            u.r = raw[k];
#pragma unroll
            for (unsigned j = 0; j < PER; ++j) x[k * PER + j] = to_acc<float>(u.v[j]);
        }
    } else {
#pragma unroll
        for (unsigned k = 0; k < PACKS; ++k)
#pragma unroll
            for (unsigned j = 0; j < PER; ++j) {
                const u64 i = (first_pack + k * CHUNK_LANES + lane) * PER + j;
                x[k * PER + j] = i < n ? to_acc<float>(in[i]) : 0.0f;
            }
    }
}

// A lane's sum: one accumulator per position in the pack, each folding the lane's packs in
// order, then a halving tree over the positions.
template <typename In, typename Acc>
__device__ __forceinline__ Acc lane_sum(const float (&x)[LANE_VALUES]) {
    constexpr unsigned PER = 16 / sizeof(In);
    constexpr unsigned PACKS = LANE_VALUES / PER;
    Acc acc[PER];
#pragma unroll
    for (unsigned j = 0; j < PER; ++j) {
        acc[j] = Acc::zero();
#pragma unroll
        for (unsigned k = 0; k < PACKS; ++k) acc[j].add(x[k * PER + j]);
    }
#pragma unroll
    for (unsigned width = PER / 2; width > 0; width /= 2)
#pragma unroll
        for (unsigned j = 0; j < width; ++j) acc[j].merge(acc[j + width]);
    return acc[0];
}

// The halving tree over a warp's 32 lanes (lane i takes lane i + offset); lane 0 has the result.
template <typename Acc>
__device__ __forceinline__ Acc warp_tree(Acc v) {
#pragma unroll
    for (unsigned offset = 16; offset > 0; offset >>= 1) v.merge(v.down(offset));
    return v;
}
// ANCHOR_END: lane

// ANCHOR: chunked
// Every chunk of this block (blockIdx.x, + gridDim.x, ...) summed into partials[chunk].
template <typename In, typename Acc, bool ONE_LANE>
__device__ __forceinline__ void chunk_sums(const In* __restrict__ in, u64 n, u64* partials, Acc* warps) {
    const unsigned slots = CHUNK_LANES / blockDim.x;  // virtual lanes per thread
    const unsigned lane = threadIdx.x % 32;
    const u64 chunks = (n + CHUNK_VALUES - 1) / CHUNK_VALUES;
    const bool aligned = ((u64)in & 15) == 0;

    for (u64 chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
        const bool whole = aligned && (chunk + 1) * CHUNK_VALUES <= n;
        if constexpr (ONE_LANE) {
            // One virtual lane per thread (blockDim.x == CHUNK_LANES): no registers are held for
            // a second one, so that __launch_bounds__(1024, 2) fits the kernel in 32 a thread.
            float x0[LANE_VALUES];
            load_lane<In>(x0, in, n, chunk, threadIdx.x, whole);
            const Acc a0 = warp_tree(lane_sum<In, Acc>(x0));
            if (lane == 0) warps[threadIdx.x / 32] = a0;
        } else {
            // Two virtual lanes at a time where a thread has two or more: all their loads in flight.
            for (unsigned slot = 0; slot < slots; slot += 2) {
                const unsigned v0 = slot * blockDim.x + threadIdx.x;
                float x0[LANE_VALUES], x1[LANE_VALUES];
                load_lane<In>(x0, in, n, chunk, v0, whole);
                if (slots > 1) load_lane<In>(x1, in, n, chunk, v0 + blockDim.x, whole);
                const Acc a0 = warp_tree(lane_sum<In, Acc>(x0));
                if (lane == 0) warps[v0 / 32] = a0;
                if (slots > 1) {
                    const Acc a1 = warp_tree(lane_sum<In, Acc>(x1));
                    if (lane == 0) warps[(v0 + blockDim.x) / 32] = a1;
                }
            }
        }
        __syncthreads();
        if (threadIdx.x < 32) {
            const Acc sum = warp_tree(warps[lane]);
            if (lane == 0) partials[chunk] = sum.pack();
        }
        __syncthreads();  // warps[] is rewritten by the next chunk
    }
}

// One block folds the partials of `chunks` chunks: virtual lane l adds partials l, l + 1024, ...
// in index order, then the 1024-lane tree; thread 0 returns the sum. With LOADS > 1 a lane's
// partials come from L2 LOADS at a time, all in flight before the first is added (the two-launch
// sums' fold, one block of 1024 threads: one lane a thread). The one-launch sums keep the plain
// loop (unrolled by 8, as many loads in flight as the compiler schedules): their last block folds
// inside a kernel whose registers the chunks' loads already hold, and the one-lane kernels have 32.
#define FOLD_LOADS 16
template <typename Acc, unsigned LOADS>
__device__ __forceinline__ Acc fold_partials(const u64* partials, u64 chunks, Acc* warps) {
    const unsigned lane = threadIdx.x % 32;
    for (unsigned v = threadIdx.x; v < CHUNK_LANES; v += blockDim.x) {
        Acc acc = Acc::zero();
        if constexpr (LOADS == 1) {
#pragma unroll 8
            for (u64 p = v; p < chunks; p += CHUNK_LANES) acc.merge(Acc::unpack(__ldcg(partials + p)));  // from L2
        } else {
            for (u64 first = v; first < chunks; first += (u64)LOADS * CHUNK_LANES) {
                u64 bits[LOADS];
#pragma unroll
                for (unsigned k = 0; k < LOADS; ++k) {
                    const u64 p = first + (u64)k * CHUNK_LANES;
                    bits[k] = p < chunks ? __ldcg(partials + p) : 0;  // from L2, where the chunks' sums are
                }
#pragma unroll
                for (unsigned k = 0; k < LOADS; ++k)
                    if (first + (u64)k * CHUNK_LANES < chunks) acc.merge(Acc::unpack(bits[k]));
            }
        }
        acc = warp_tree(acc);
        if (lane == 0) warps[v / 32] = acc;
    }
    __syncthreads();
    Acc sum = Acc::zero();
    if (threadIdx.x < 32) sum = warp_tree(warps[lane]);
    return sum;
}

// One launch: the chunks' sums, then the last block to finish (kernel 10's ticket) folds them.
template <typename In, typename Acc, bool ONE_LANE>
__device__ void chunked_sum(const In* __restrict__ in, float* __restrict__ out, u64 n, u64* partials, unsigned* ticket) {
    __shared__ Acc warps[CHUNK_LANES / 32];  // the 32 virtual warps' sums of one chunk
    __shared__ bool last;
    chunk_sums<In, Acc, ONE_LANE>(in, n, partials, warps);
    if (threadIdx.x == 0) {
        __threadfence();  // this block's partials are visible to every block before its ticket
        last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    const Acc sum = fold_partials<Acc, 1>(partials, (n + CHUNK_VALUES - 1) / CHUNK_VALUES, warps);
    if (threadIdx.x == 0) {
        out[0] = sum.result();
        *ticket = 0;  // ready for the next launch
    }
}
// ANCHOR_END: chunked

// ANCHOR: two_launches
// The same order in two launches, as reduce10_tiles_two_pass adds its tiles: every block writes
// its chunks' sums and leaves (no fence, no ticket, nothing to wait for); a second launch of one
// block folds them. The bits are those of the one-launch sum.
template <typename In, typename Acc>
__device__ void chunk_sums_only(const In* __restrict__ in, u64* partials, u64 n) {
    __shared__ Acc warps[CHUNK_LANES / 32];
    chunk_sums<In, Acc, false>(in, n, partials, warps);
}
template <typename Acc>
__device__ void fold_chunk_sums(const u64* partials, float* out, u64 chunks) {
    __shared__ Acc warps[CHUNK_LANES / 32];
    const Acc sum = fold_partials<Acc, FOLD_LOADS>(partials, chunks, warps);
    if (threadIdx.x == 0) out[0] = sum.result();
}
// ANCHOR_END: two_launches

template <typename In, typename Out, bool ONE_LANE = false>
__device__ void reduce15_reproducible(const In* in, Out* out, u64 n, Out* partials, unsigned* ticket) {
    chunked_sum<In, PlainF32, ONE_LANE>(in, out, n, reinterpret_cast<u64*>(partials), ticket);
}
template <typename In, typename Out, bool ONE_LANE = false>
__device__ void reduce15_neumaier(const In* in, Out* out, u64 n, Out* partials, unsigned* ticket) {
    chunked_sum<In, Neumaier, ONE_LANE>(in, out, n, reinterpret_cast<u64*>(partials), ticket);
}
template <typename In, typename Out, bool ONE_LANE = false>
__device__ void reduce15_f64(const In* in, Out* out, u64 n, Out* partials, unsigned* ticket) {
    chunked_sum<In, WideF64, ONE_LANE>(in, out, n, reinterpret_cast<u64*>(partials), ticket);
}

// f32, f16 and bf16 inputs; the result and the partials' buffer are f32 (the entry shape of
// kernel 10's last-block sum).
#define INSTANTIATE_CHUNKED(body)                                                                \
    ENTRY_LAST_BLOCK(body, f32, float, float)                                                    \
    ENTRY_LAST_BLOCK(body, f16, f16_t, float)                                                    \
    ENTRY_LAST_BLOCK(body, bf16, bf16_t, float)

INSTANTIATE_CHUNKED(reduce15_reproducible)
INSTANTIATE_CHUNKED(reduce15_neumaier)
INSTANTIATE_CHUNKED(reduce15_f64)

// The two-launch sums: `<name>_<type>(in, partials, n)`, one block per chunk, then
// `<name>_fold(partials, out, chunks)`, one block.
#define ENTRY_CHUNKS(name, Acc, suffix, In)                                                      \
    extern "C" __global__ void name##_##suffix(const In* in, u64* partials, u64 n) { chunk_sums_only<In, Acc>(in, partials, n); }
#define INSTANTIATE_TWO_LAUNCHES(name, Acc)                                                      \
    ENTRY_CHUNKS(name, Acc, f32, float)                                                          \
    ENTRY_CHUNKS(name, Acc, f16, f16_t)                                                          \
    ENTRY_CHUNKS(name, Acc, bf16, bf16_t)                                                        \
    extern "C" __global__ void __launch_bounds__(CHUNK_LANES) name##_fold(const u64* partials, float* out, u64 chunks) { fold_chunk_sums<Acc>(partials, out, chunks); }
INSTANTIATE_TWO_LAUNCHES(reduce15_reproducible_two_pass, PlainF32)
INSTANTIATE_TWO_LAUNCHES(reduce15_neumaier_two_pass, Neumaier)

// The plain and the compensated sums again, for blocks of exactly 1024 threads: one virtual
// lane each, 32 registers, two blocks an SM (the others take any block, at 45-48 registers).
// The same order, so the same bits: only who runs each virtual lane changes.
// Two such blocks an SM only where ptxas takes them (sm_80, sm_90, sm_100, sm_103: 2048 threads
// an SM); elsewhere (sm_75, sm_86, sm_89, sm_120, ...) it would ignore the 2 with a warning.
#if __CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900 || __CUDA_ARCH__ == 1000 || __CUDA_ARCH__ == 1030
#define ONE_LANE_BLOCKS_PER_SM 2
#else
#define ONE_LANE_BLOCKS_PER_SM 1
#endif
#define ENTRY_ONE_LANE(name, body, suffix, In, Acc)                                              \
    extern "C" __global__ void __launch_bounds__(CHUNK_LANES, ONE_LANE_BLOCKS_PER_SM)            \
    name##_##suffix(const In* in, Acc* out, u64 n, Acc* partials, unsigned* ticket) {            \
        body<In, Acc, true>(in, out, n, partials, ticket);                                       \
    }
ENTRY_ONE_LANE(reduce15_reproducible_b1024, reduce15_reproducible, f32, float, float)
ENTRY_ONE_LANE(reduce15_neumaier_b1024, reduce15_neumaier, f32, float, float)
