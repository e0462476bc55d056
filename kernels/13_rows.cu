// Kernel 13 — row sums: M sums of N values each, the reductions deep learning runs (LayerNorm's
// means, softmax's denominators) on a row-major M × N matrix of f32, f16 or bf16 (summed in f32).
//
// Changed: every earlier kernel sums one long vector with the whole grid. Here there are M
// independent sums, and who sums a row depends on how long it is:
//   rows_warp   a team of 1 to 32 lanes of a warp per row, several teams per warp: no shared
//               memory, no barrier. For short rows (up to a few thousand values): the host
//               sizes the team so that each lane makes up to eight 16-byte loads at once.
//   rows_block  one block per row: the block walks the row, then kernel 8's block_sum.
//   rows_split  several blocks per row, one tile of the row each (the read-only kernel's best
//               shape: 512 threads, eight 16-byte loads each, no loop), for rows so long and
//               so few that one block per row would leave SMs idle: each block sums its tile
//               into a partial, and the last block of each row to finish (kernel 10's ticket,
//               one per row) adds the row's partials in a fixed order. Deterministic.
// Every row is read with 16-byte loads, several in flight per thread. A row starts wherever
// `in + row * stride` puts it, so alignment is handled at run time, row by row, as kernel 9
// does: the values before the first 16-byte boundary and after the last whole pack are added
// one by one.
// Still slow: nothing here overlaps the row sums with the work that uses them.
// Preconditions: stride >= cols; `in` holds (rows - 1) * stride + cols values (the host checks
// both); blockDim.x a multiple of 32, at most 1024. rows_warp: `lanes` is a power of two up to
// 32. rows_split: `partials` holds
// rows * gridDim.x values and `tickets` rows counters that start at zero (left at zero).
// The kernels loop over rows with a grid-sized stride, so any number of rows fits the grid.
#include "warp_reduce.cuh"
#include "vector_load.cuh"

// 16-byte loads in flight per thread: eight for a team of lanes (as in the read-only kernel's
// best shape), four for a block, whose eight made it slower on the H200 (rows::BLOCK_LOADS).
#define WARP_LOADS 8
#define BLOCK_LOADS 4

// ANCHOR: span_sum
// Thread `t` of `threads`' part of the sum of p[0 .. n), in f32, read with 16-byte loads where p
// is aligned: kernel 9's walk with the team (a few lanes, a block) in place of the grid. Every
// round, the last one too, makes its LOADS loads before it adds any of them: the loads of a
// round are in flight together.
// WHOLE_PACKS: the caller knows that p is on a 16-byte boundary and n a whole number of packs,
// so there is no head or tail to walk and nothing to work out before the first load.
template <int LOADS, bool WHOLE_PACKS = false, typename In>
__device__ __forceinline__ float span_sum(const In* __restrict__ p, u64 n, unsigned t, unsigned threads) {
    constexpr u64 PER = 16 / sizeof(In);  // values per 16-byte pack: 4 f32, 8 f16 or bf16
    u64 head = WHOLE_PACKS ? 0 : ((16 - ((u64)p & 15)) & 15) / sizeof(In);  // values before the first boundary
    if (head > n) head = n;
    const u64 packs = (n - head) / PER;
    const u64 tail = head + packs * PER;

    float acc[LOADS];
#pragma unroll
    for (int u = 0; u < LOADS; ++u) acc[u] = 0.0f;
    if (!WHOLE_PACKS) {
        for (u64 i = t; i < head; i += threads) acc[0] += to_acc<float>(p[i]);
        for (u64 i = t; i < n - tail; i += threads) acc[0] += to_acc<float>(p[tail + i]);
    }

    const uint4* body = reinterpret_cast<const uint4*>(p + head);
    u64 i = t;
    for (; i + (LOADS - 1) * (u64)threads < packs; i += LOADS * (u64)threads) {
        uint4 v[LOADS];
#pragma unroll
        for (int u = 0; u < LOADS; ++u) v[u] = __ldcs(body + i + u * threads);  // read once
#pragma unroll
        for (int u = 0; u < LOADS; ++u) acc[u] += pack_sum<In, float>(v[u]);
    }
    if (i < packs) {  // the last round, short: the loads past the end read zeros instead
        uint4 v[LOADS];
#pragma unroll
        for (int u = 0; u < LOADS; ++u) v[u] = i + u * threads < packs ? __ldcs(body + i + u * threads) : make_uint4(0, 0, 0, 0);
#pragma unroll
        for (int u = 0; u < LOADS; ++u) acc[u] += pack_sum<In, float>(v[u]);
    }

#pragma unroll
    for (int u = 1; u < LOADS; ++u) acc[0] += acc[u];
    return acc[0];
}
// ANCHOR_END: span_sum

// ANCHOR: warp
// A team of LANES lanes per row, 32 / LANES rows per warp. A warp's rows are consecutive and
// the loop's test is on the warp's first row, so every lane of a warp runs the same iterations
// and the full-mask shuffles are safe; the xor steps below LANES stay inside a team. No two
// warps share anything, so there is no barrier. LANES is a template parameter, so that a lane's
// place in its team is a mask and a shift, not a division: for short rows, the arithmetic before
// the first load is a large part of the row's time.
template <unsigned LANES, typename In>
__device__ __forceinline__ void rows_warp_team(const In* __restrict__ in, float* __restrict__ out, u64 rows, u64 cols, u64 stride) {
    constexpr u64 PER = 16 / sizeof(In);
    // Every row starts on a 16-byte boundary and is whole packs: the same for every thread.
    const bool whole_packs = (((u64)in | stride * sizeof(In)) & 15) == 0 && cols % PER == 0;
    const unsigned lane = threadIdx.x % LANES, rows_per_warp = 32 / LANES;
    const u64 rows_per_block = blockDim.x / LANES, stride_rows = (u64)gridDim.x * rows_per_block;
    for (u64 first = (u64)blockIdx.x * rows_per_block + threadIdx.x / 32 * rows_per_warp; first < rows; first += stride_rows) {
        const u64 row = first + threadIdx.x % 32 / LANES;
        float v = 0.0f;
        if (row < rows) {
            const In* p = in + row * stride;
            v = whole_packs ? span_sum<WARP_LOADS, true>(p, cols, lane, LANES) : span_sum<WARP_LOADS>(p, cols, lane, LANES);
        }
#pragma unroll
        for (unsigned offset = LANES / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
        if (row >= rows) break;  // the warp's last rows: its next first row is past the end too
        if (lane == 0) out[row] = v;
    }
}

// The host picks `lanes`, a power of two up to 32 (rows::warp_lanes): one team size a branch.
template <typename In>
__device__ void rows_warp(const In* __restrict__ in, float* __restrict__ out, u64 rows, u64 cols, u64 stride, unsigned lanes) {
    switch (lanes) {
        case 1: rows_warp_team<1>(in, out, rows, cols, stride); break;
        case 2: rows_warp_team<2>(in, out, rows, cols, stride); break;
        case 4: rows_warp_team<4>(in, out, rows, cols, stride); break;
        case 8: rows_warp_team<8>(in, out, rows, cols, stride); break;
        case 16: rows_warp_team<16>(in, out, rows, cols, stride); break;
        default: rows_warp_team<32>(in, out, rows, cols, stride); break;
    }
}
// ANCHOR_END: warp

// ANCHOR: block
// One block per row: the whole block walks the row, then adds its threads' sums. The host
// sizes the block to the row, up to 1024 threads.
template <typename In>
__device__ void rows_block(const In* __restrict__ in, float* __restrict__ out, u64 rows, u64 cols, u64 stride) {
    __shared__ float warp_sums[32];
    for (u64 row = blockIdx.x; row < rows; row += gridDim.x) {  // the same rows for the whole block
        const float v = block_sum(span_sum<BLOCK_LOADS>(in + row * stride, cols, threadIdx.x, blockDim.x), warp_sums);
        if (threadIdx.x == 0) out[row] = v;
        __syncthreads();  // warp 0 has read warp_sums before the next row writes it
    }
}
// ANCHOR_END: block

// ANCHOR: split
// gridDim.x blocks per row (the slices), gridDim.y rows at a time. Slice s of a row is the
// values [s * per, (s + 1) * per), per a whole number of 16-byte packs, so that every slice of
// a row starts at the row's own alignment; the last slices may be short or empty. The host
// makes `per` one tile: two rounds of BLOCK_LOADS packs per thread, with no loop over the row.
template <typename In>
__device__ void rows_split(const In* __restrict__ in, float* __restrict__ out, u64 rows, u64 cols, u64 stride,
                           float* partials, unsigned* tickets) {
    __shared__ float warp_sums[32];
    __shared__ bool last;
    constexpr u64 PER = 16 / sizeof(In);
    const unsigned slices = gridDim.x, slice = blockIdx.x;
    const u64 per = ((cols + slices - 1) / slices + PER - 1) / PER * PER;
    const u64 begin = min(cols, (u64)slice * per), end = min(cols, begin + per);
    for (u64 row = blockIdx.y; row < rows; row += gridDim.y) {
        const In* p = in + row * stride;
        const float v = block_sum(span_sum<BLOCK_LOADS>(p + begin, end - begin, threadIdx.x, blockDim.x), warp_sums);
        if (threadIdx.x == 0) {
            partials[row * slices + slice] = v;
            __threadfence();  // the partial is visible to every block before the ticket is
            last = atomicAdd(tickets + row, 1u) == slices - 1;
        }
        __syncthreads();
        if (last) {  // the same for the whole block: block_sum's barriers are safe
            // The row's last block: its slices' partials in slice order, the same every run.
            float s = 0.0f;
            for (unsigned b = threadIdx.x; b < slices; b += blockDim.x) s += __ldcg(partials + row * slices + b);  // from L2
            s = block_sum(s, warp_sums);
            if (threadIdx.x == 0) {
                out[row] = s;
                tickets[row] = 0;  // ready for the next launch
            }
        }
        __syncthreads();  // `last` and warp_sums are read before the next row writes them
    }
}
// ANCHOR_END: split

// Entry points, one per input type: rows_warp_f32, rows_block_bf16, rows_split_f16, ...
#define ROWS_ENTRIES(In, suffix)                                                                          \
    extern "C" __global__ void rows_warp_##suffix(const In* in, float* out, u64 rows, u64 cols, u64 stride, \
                                                  unsigned lanes) {                                       \
        rows_warp<In>(in, out, rows, cols, stride, lanes);                                                \
    }                                                                                                     \
    extern "C" __global__ void __launch_bounds__(1024)                                                    \
    rows_block_##suffix(const In* in, float* out, u64 rows, u64 cols, u64 stride) {                      \
        rows_block<In>(in, out, rows, cols, stride);                                                      \
    }                                                                                                     \
    extern "C" __global__ void __launch_bounds__(512)                                                     \
    rows_split_##suffix(const In* in, float* out, u64 rows, u64 cols, u64 stride, float* partials,       \
                        unsigned* tickets) {                                                              \
        rows_split<In>(in, out, rows, cols, stride, partials, tickets);                                   \
    }
ROWS_ENTRIES(float, f32)
ROWS_ENTRIES(f16_t, f16)
ROWS_ENTRIES(bf16_t, bf16)
