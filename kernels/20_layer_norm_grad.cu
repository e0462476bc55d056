// Kernel 20 — LayerNorm's weight gradients, a reduction over the other axis:
//   dγ[j] = Σ_r dy[r, j] · x̂[r, j],   dβ[j] = Σ_r dy[r, j],   x̂ = (x − mean[r]) · rstd[r]
// a sum down each column of M rows, with the mean and rstd that the forward (kernel 18) saved.
//
// Changed: every row kernel gives a row to a team that reads along it. Down a column, the same
// team would make each lane read a different row (layer_norm_grad_team_per_column, below): a
// warp's 32 loads touch 32 rows, one 32-byte sector each, for 4 bytes of use. And one thread per
// column (layer_norm_grad_thread_per_column) reads coalesced rows but has only `cols` threads
// and a chain of M additions each. So the tiles turn: a block takes a strip of 32 lanes × one
// 16-byte pack of columns and a chunk of rows; each warp of it walks every W-th row of the chunk
// (a warp's load is 512 consecutive bytes of one row), four rows in flight; the warps' sums meet
// in shared memory; chunks of rows are blocks along y, and the last block of each strip to finish
// (a ticket per strip) adds the chunks' partial sums in chunk order. Deterministic.
// Still slow: nothing is shared with the forward or with dx (the data-gradient pass, a row
// reduction, which this kernel does not compute).
// Preconditions: blockDim.x = 32 · W with W ≤ 8; gridDim.x · 32 packs of columns cover the row;
// gridDim.y chunks of `rows_per_chunk` rows cover the rows; `partials` holds 2 · gridDim.y · cols
// floats, `tickets` gridDim.x zeroed counters (left zeroed) when gridDim.y > 1.
#include "dl_rows.cuh"

namespace dl {

// ANCHOR: columns
template <typename T, int U>
__device__ void layer_norm_grad_columns(const T* __restrict__ x, const T* __restrict__ dy, const float* __restrict__ mean,
                                        const float* __restrict__ rstd, T* dgamma, T* dbeta, float* partials, unsigned* tickets,
                                        u64 rows, u64 cols, u64 ld, u64 rows_per_chunk) {
    constexpr int PER = Io<T>::PER;
    // The warps' column sums, lane-minor: a warp's 32 lanes store 32 consecutive words, a bank
    // each. (Lane-major, 2·PER words apart, the lanes shared 32/(2·PER) banks: 8-way conflicts for
    // f32, 16-way for f16 and bf16.)
    __shared__ float sums[8][2 * PER][32];
    __shared__ bool last;
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    const u64 pack = (u64)blockIdx.x * 32 + lane, c0 = pack * PER;  // this thread's PER columns
    const u64 r0 = (u64)blockIdx.y * rows_per_chunk, r1 = min(rows, r0 + rows_per_chunk);
    const bool vec = cols % PER == 0 && ld % PER == 0 && dl_aligned(x) && dl_aligned(dy);
    float g[PER], b[PER];
#pragma unroll
    for (int j = 0; j < PER; ++j) g[j] = b[j] = 0.0f;
    if (c0 < cols) {
        for (u64 r = r0 + warp; r < r1; r += (u64)warps * U) {
            Held xs[U], ds[U];
            float mu[U], rs[U];
#pragma unroll
            for (int u = 0; u < U; ++u) {  // U rows' loads in flight before any use
                const u64 rr = r + (u64)u * warps;
                xs[u] = ds[u] = Held{{0, 0, 0, 0}};
                mu[u] = rs[u] = 0.0f;
                if (rr < r1) {
                    mu[u] = __ldg(mean + rr);
                    rs[u] = __ldg(rstd + rr);
                    if (vec) {
                        const uint4 a = __ldcs(reinterpret_cast<const uint4*>(x + rr * ld) + pack);
                        const uint4 d = __ldcs(reinterpret_cast<const uint4*>(dy + rr * ld) + pack);
                        xs[u] = Held{{a.x, a.y, a.z, a.w}};
                        ds[u] = Held{{d.x, d.y, d.z, d.w}};
                    } else {
#pragma unroll
                        for (int j = 0; j < PER; ++j)
                            if (c0 + j < cols) {
                                Io<T>::set_bits(xs[u], j, Io<T>::load_bits(x + rr * ld + c0 + j, true));
                                Io<T>::set_bits(ds[u], j, Io<T>::load_bits(dy + rr * ld + c0 + j, true));
                            }
                    }
                }
            }
#pragma unroll
            for (int u = 0; u < U; ++u) {
#pragma unroll
                for (int j = 0; j < PER; ++j) {
                    const float d = Io<T>::get(ds[u], j);
                    g[j] += d * ((Io<T>::get(xs[u], j) - mu[u]) * rs[u]);
                    b[j] += d;
                }
            }
        }
    }
    // The warps' sums, added in warp order by warp 0.
#pragma unroll
    for (int j = 0; j < PER; ++j) {
        sums[warp][j][lane] = g[j];
        sums[warp][PER + j][lane] = b[j];
    }
    __syncthreads();
    if (warp == 0) {
        for (unsigned w = 1; w < warps; ++w) {
#pragma unroll
            for (int j = 0; j < PER; ++j) {
                g[j] += sums[w][j][lane];
                b[j] += sums[w][PER + j][lane];
            }
        }
        if (gridDim.y == 1) {  // one chunk of rows: these are the sums
#pragma unroll
            for (int j = 0; j < PER; ++j)
                if (c0 + j < cols) {
                    Io<T>::store_one(dgamma + c0 + j, g[j]);
                    Io<T>::store_one(dbeta + c0 + j, b[j]);
                }
            return;
        }
        // Each chunk's sums go to `partials`; the strip's last chunk to finish adds them in a fixed order.
        float* mine = partials + 2 * (u64)blockIdx.y * cols;
#pragma unroll
        for (int j = 0; j < PER; ++j)
            if (c0 + j < cols) {
                __stcg(mine + c0 + j, g[j]);
                __stcg(mine + cols + c0 + j, b[j]);
            }
        __threadfence();
    }
    if (gridDim.y == 1) return;
    __syncthreads();  // warp 0's partial is written and fenced; every warp has read `sums`
    if (threadIdx.x == 0) last = atomicAdd(tickets + blockIdx.x, 1u) == gridDim.y - 1;
    __syncthreads();
    if (!last) return;
    // The last chunk of the strip: every warp adds every warps-th chunk, then warp 0 the warps' sums.
#pragma unroll
    for (int j = 0; j < PER; ++j) g[j] = b[j] = 0.0f;
    if (c0 < cols) {
#pragma unroll 4
        for (unsigned chunk = warp; chunk < gridDim.y; chunk += warps) {
            const float* p = partials + 2 * (u64)chunk * cols;
#pragma unroll
            for (int j = 0; j < PER; ++j)
                if (c0 + j < cols) {
                    g[j] += __ldcg(p + c0 + j);
                    b[j] += __ldcg(p + cols + c0 + j);
                }
        }
    }
#pragma unroll
    for (int j = 0; j < PER; ++j) {
        sums[warp][j][lane] = g[j];
        sums[warp][PER + j][lane] = b[j];
    }
    __syncthreads();
    if (warp != 0) return;
    for (unsigned w = 1; w < warps; ++w) {
#pragma unroll
        for (int j = 0; j < PER; ++j) {
            g[j] += sums[w][j][lane];
            b[j] += sums[w][PER + j][lane];
        }
    }
    if (lane == 0) tickets[blockIdx.x] = 0;  // ready for the next launch
#pragma unroll
    for (int j = 0; j < PER; ++j)
        if (c0 + j < cols) {
            Io<T>::store_one(dgamma + c0 + j, g[j]);
            Io<T>::store_one(dbeta + c0 + j, b[j]);
        }
}
// ANCHOR_END: columns

// ANCHOR: wrong_layouts
// The row kernels' layout turned down the columns: a warp per column, lane i reading rows i,
// i + 32, ...: every load of a warp touches 32 rows, one sector each. For the chapter's timing.
template <typename T>
__device__ void layer_norm_grad_team_per_column(const T* __restrict__ x, const T* __restrict__ dy, const float* __restrict__ mean,
                                                const float* __restrict__ rstd, T* dgamma, T* dbeta, u64 rows, u64 cols, u64 ld) {
    const unsigned lane = threadIdx.x % 32;
    const u64 col = (u64)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    if (col >= cols) return;  // whole warps leave together
    TwoFloats s = {0.0f, 0.0f};
    for (u64 r = lane; r < rows; r += 32) {
        const float d = load_one(dy + r * ld, col);
        s.a += d * ((load_one(x + r * ld, col) - mean[r]) * rstd[r]);
        s.b += d;
    }
    s = warp_allreduce(TwoSums<T>{}, s, 32);
    if (lane == 0) {
        Io<T>::store_one(dgamma + col, s.a);
        Io<T>::store_one(dbeta + col, s.b);
    }
}

// One thread per column, all M rows: coalesced, but only `cols` threads.
template <typename T>
__device__ void layer_norm_grad_thread_per_column(const T* __restrict__ x, const T* __restrict__ dy, const float* __restrict__ mean,
                                                  const float* __restrict__ rstd, T* dgamma, T* dbeta, u64 rows, u64 cols, u64 ld) {
    const u64 col = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= cols) return;
    float g = 0.0f, b = 0.0f;
    for (u64 r = 0; r < rows; ++r) {
        const float d = load_one(dy + r * ld, col);
        g += d * ((load_one(x + r * ld, col) - mean[r]) * rstd[r]);
        b += d;
    }
    Io<T>::store_one(dgamma + col, g);
    Io<T>::store_one(dbeta + col, b);
}
// ANCHOR_END: wrong_layouts

}  // namespace dl

#define LNG_ENTRIES(T, sfx)                                                                                                          \
    extern "C" __global__ void __launch_bounds__(256)                                                                               \
    layer_norm_grad_columns_##sfx(const T* x, const T* dy, const float* mean, const float* rstd, T* dgamma, T* dbeta, float* partials, \
                                  unsigned* tickets, u64 rows, u64 cols, u64 ld, u64 rows_per_chunk) {                              \
        dl::layer_norm_grad_columns<T, 4>(x, dy, mean, rstd, dgamma, dbeta, partials, tickets, rows, cols, ld, rows_per_chunk);       \
    }                                                                                                                               \
    extern "C" __global__ void layer_norm_grad_team_per_column_##sfx(const T* x, const T* dy, const float* mean, const float* rstd,   \
                                                                     T* dgamma, T* dbeta, u64 rows, u64 cols, u64 ld) {             \
        dl::layer_norm_grad_team_per_column<T>(x, dy, mean, rstd, dgamma, dbeta, rows, cols, ld);                                   \
    }                                                                                                                               \
    extern "C" __global__ void layer_norm_grad_thread_per_column_##sfx(const T* x, const T* dy, const float* mean, const float* rstd, \
                                                                       T* dgamma, T* dbeta, u64 rows, u64 cols, u64 ld) {           \
        dl::layer_norm_grad_thread_per_column<T>(x, dy, mean, rstd, dgamma, dbeta, rows, cols, ld);                                 \
    }
LNG_ENTRIES(float, f32)
LNG_ENTRIES(f16_t, f16)
LNG_ENTRIES(bf16_t, bf16)
