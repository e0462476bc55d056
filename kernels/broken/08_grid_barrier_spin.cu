// Mistake 8 — a "grid barrier" made of blocks spinning on a global counter.
//
// What is wrong: each block reduces its tile, then waits for every other block to arrive before
// block 0 adds the partial sums — all in one launch. CUDA runs as many blocks at once as fit on
// the SMs and starts the others only when resident blocks finish. When the grid is larger than
// that, the resident blocks spin forever waiting for blocks that can never start.
// What it does: hangs, with the GPU busy, until the process is killed. (With a grid that fits,
// it happens to work; nothing in the launch promises that it fits.)
// Which tool catches it: none reports it; a deadline does (this book runs it in a child process
// and kills it). The supported grid-wide barrier is a cooperative launch with grid.sync(), which
// refuses a grid that cannot be resident at once.
// The fix: end the kernel after writing the block's partial sum, and let the host launch the
// next pass (kernel decomposition, kernels/03_sequential.cu and src/kernels/reducer.rs).
// Entry points take a fourth argument, the arrival counter, zeroed by the host before launch.
// The #line below keeps compute-sanitizer's line numbers those of this file.
#include "common.cuh"
#line 18 "kernels/broken/08_grid_barrier_spin.cu"

// ANCHOR: kernel
template <typename T>
__device__ void grid_barrier_spin(const T* __restrict__ in, T* __restrict__ out, u64 n, unsigned* arrived) {
    T* sdata = shared_array<T>();
    unsigned tid = threadIdx.x;
    u64 i = (u64)blockIdx.x * blockDim.x + tid;
    sdata[tid] = (i < n) ? in[i] : T(0);
    __syncthreads();

    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }

    // ANCHOR: barrier
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
        __threadfence();          // the partial sum is visible before the arrival is
        atomicAdd(arrived, 1u);
        // WRONG: waits for every block of the grid, including blocks that cannot start until a
        // resident block (this one) finishes.
        while (atomicAdd(arrived, 0u) < gridDim.x) {
        }
    }
    __syncthreads();
    // ANCHOR_END: barrier

    if (blockIdx.x == 0) {  // block 0 adds the partial sums of every block
        T v = T(0);
        for (unsigned b = tid; b < gridDim.x; b += blockDim.x) v += out[b];
        sdata[tid] = v;
        __syncthreads();
        for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
            if (tid < s) sdata[tid] += sdata[tid + s];
            __syncthreads();
        }
        if (tid == 0) out[0] = sdata[0];
    }
}
// ANCHOR_END: kernel

extern "C" __global__ void grid_barrier_spin_f32(const float* in, float* out, u64 n, unsigned* arrived) {
    grid_barrier_spin<float>(in, out, n, arrived);
}
extern "C" __global__ void grid_barrier_spin_i32(const int* in, int* out, u64 n, unsigned* arrived) {
    grid_barrier_spin<int>(in, out, n, arrived);
}
