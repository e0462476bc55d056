// Kernel 13 — row sums: M sums of N values each, the reductions deep learning runs (LayerNorm's
// means, softmax's denominators) on a row-major M × N matrix of f32.
//
// Changed: every earlier kernel sums one long vector with the whole grid. Here there are M
// independent sums, and who sums a row depends on how long it is:
//   rows_warp   one warp per row, 8 rows per 256-thread block: no shared memory, no barrier.
//               For short rows (up to about a thousand values), where a block would spend
//               more time in its tree than in its loads.
//   rows_block  one block per row: the block walks the row, then kernel 8's block_sum.
//   rows_split  several blocks per row, for rows so long and so few that one block per row
//               would leave SMs idle: each block sums a slice of its row into a partial, and
//               the last block of each row to finish (kernel 10's ticket, one per row) adds
//               the row's partials in a fixed order. Deterministic.
// Every row is read with 16-byte loads. A row starts wherever `in + row * stride` puts it, so
// alignment is handled at run time, row by row, as kernel 9 does: the values before the first
// 16-byte boundary and after the last whole pack are added one by one.
// Still slow: rows of a few dozen values leave most of a warp idle (a warp could take
// several rows); nothing here overlaps the row sums with the work that uses them.
// Preconditions: stride >= cols; `in` holds (rows - 1) * stride + cols values (the host checks
// both); blockDim.x a multiple of 32, at most 1024. rows_split: `partials` holds
// rows * gridDim.x values and `tickets` rows counters that start at zero (left at zero).
// The kernels loop over rows with a grid-sized stride, so any number of rows fits the grid.
#include "warp_reduce.cuh"
#include "vector_load.cuh"

// ANCHOR: span_sum
// Thread `t` of `threads`' part of the sum of p[0 .. n), read with 16-byte loads where p is
// aligned: kernel 9's walk with the team (a warp, a block) in place of the grid.
__device__ __forceinline__ float span_sum(const float* __restrict__ p, u64 n, unsigned t, unsigned threads) {
    u64 head = ((16 - ((u64)p & 15)) & 15) / sizeof(float);  // values before the first boundary
    if (head > n) head = n;
    const u64 packs = (n - head) / 4;
    const u64 tail = head + packs * 4;

    float acc[VEC_UNROLL];
#pragma unroll
    for (int u = 0; u < VEC_UNROLL; ++u) acc[u] = 0.0f;
    if (t < head) acc[0] += p[t];
    if (t < n - tail) acc[0] += p[tail + t];

    const uint4* body = reinterpret_cast<const uint4*>(p + head);
    u64 i = t;
    for (; i + (VEC_UNROLL - 1) * (u64)threads < packs; i += VEC_UNROLL * (u64)threads) {
        uint4 v[VEC_UNROLL];
#pragma unroll
        for (int u = 0; u < VEC_UNROLL; ++u) v[u] = __ldcs(body + i + u * threads);  // read once
#pragma unroll
        for (int u = 0; u < VEC_UNROLL; ++u) acc[u] += pack_sum<float, float>(v[u]);
    }
    for (; i < packs; i += threads) acc[0] += pack_sum<float, float>(__ldcs(body + i));

#pragma unroll
    for (int u = 1; u < VEC_UNROLL; ++u) acc[0] += acc[u];
    return acc[0];
}
// ANCHOR_END: span_sum

// ANCHOR: warp
// One warp per row. Every lane of a warp takes the same rows, so the full-mask shuffles of
// warp_sum are safe; no two warps share anything, so there is no barrier.
extern "C" __global__ void rows_warp_f32(const float* __restrict__ in, float* __restrict__ out,
                                         u64 rows, u64 cols, u64 stride) {
    const unsigned lane = threadIdx.x % 32, warps_per_block = blockDim.x / 32;
    const u64 warps = (u64)gridDim.x * warps_per_block;
    for (u64 row = (u64)blockIdx.x * warps_per_block + threadIdx.x / 32; row < rows; row += warps) {
        const float v = warp_sum(span_sum(in + row * stride, cols, lane, 32));
        if (lane == 0) out[row] = v;
    }
}
// ANCHOR_END: warp

// ANCHOR: block
// One block per row: the whole block walks the row, then adds its threads' sums. The host
// sizes the block to the row, up to 1024 threads, which the launch bound lets it always launch.
extern "C" __global__ void __launch_bounds__(1024)
rows_block_f32(const float* __restrict__ in, float* __restrict__ out, u64 rows, u64 cols, u64 stride) {
    __shared__ float warp_sums[32];
    for (u64 row = blockIdx.x; row < rows; row += gridDim.x) {  // the same rows for the whole block
        const float v = block_sum(span_sum(in + row * stride, cols, threadIdx.x, blockDim.x), warp_sums);
        if (threadIdx.x == 0) out[row] = v;
        __syncthreads();  // warp 0 has read warp_sums before the next row writes it
    }
}
// ANCHOR_END: block

// ANCHOR: split
// gridDim.x blocks per row (the slices), gridDim.y rows at a time. Slice s of a row is the
// values [s * per, (s + 1) * per), per a whole number of 16-byte packs, so that every slice of
// a row starts at the row's own alignment; the last slices may be short or empty.
extern "C" __global__ void rows_split_f32(const float* __restrict__ in, float* __restrict__ out,
                                          u64 rows, u64 cols, u64 stride,
                                          float* partials, unsigned* tickets) {
    __shared__ float warp_sums[32];
    __shared__ bool last;
    const unsigned slices = gridDim.x, slice = blockIdx.x;
    const u64 per = ((cols + slices - 1) / slices + 3) / 4 * 4;
    const u64 begin = min(cols, (u64)slice * per), end = min(cols, begin + per);
    for (u64 row = blockIdx.y; row < rows; row += gridDim.y) {
        const float* p = in + row * stride;
        const float v = block_sum(span_sum(p + begin, end - begin, threadIdx.x, blockDim.x), warp_sums);
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
