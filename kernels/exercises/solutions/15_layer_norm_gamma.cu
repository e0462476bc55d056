// Exercise 15, solved: LayerNorm's γ
// gradient, a sum down each column.
//
// dγ[j] = Σ_r dy[r, j] · (x[r, j] − mean[r]) · rstd[r], over every row r. A block of 256 threads
// takes 32 neighbouring columns: lane c of each warp owns column blockIdx.x · 32 + c, and warp w of
// the 8 walks rows w, w + 8, w + 16, ... (so that a warp's loads are 32 neighbouring values of one
// row: coalesced). Each warp's sums then meet in shared memory, and warp 0 adds the 8 of each
// column and writes dγ. Write the walk and the meeting. Check it with: reduction exercise 15
// Preconditions the checker keeps: blockDim.x = 256; gridDim.x = ceil(cols / 32); no dynamic
// shared memory; x and dy row-major, rows × cols; mean and rstd one value per row.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(256) exercise_f32(const float* __restrict__ x, const float* __restrict__ dy,
                                                               const float* __restrict__ mean, const float* __restrict__ rstd,
                                                               float* __restrict__ dgamma, u64 rows, u64 cols) {
    __shared__ float sums[8][32];
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const u64 col = (u64)blockIdx.x * 32 + lane;
    float g = 0.0f;
    // ANCHOR: solution
    if (col < cols) {
        for (u64 r = warp; r < rows; r += 8) g += dy[r * cols + col] * ((x[r * cols + col] - mean[r]) * rstd[r]);
    }
    sums[warp][lane] = g;
    __syncthreads();  // every warp's sum is in shared memory before warp 0 reads them
    if (warp == 0 && col < cols) {
        for (unsigned w = 1; w < 8; ++w) g += sums[w][lane];
        dgamma[col] = g;
    }
    // ANCHOR_END: solution
}
