// Mistake 1 — __syncthreads() inside a branch that not every thread takes.
//
// What is wrong: kernel 3's tree, with the barrier moved inside `if (tid < s)`. The threads with
// tid >= s never reach it. The CUDA C++ Programming Guide: "__syncthreads() is allowed in
// conditional code but only if the conditional evaluates identically across the entire thread
// block, otherwise the code execution is likely to hang or produce unintended side effects."
// What it does: undefined behaviour — the folklore says deadlock; what it did on your GPU is in
// the mistakes chapter, measured in a child process under a deadline.
// Which tool is for it: compute-sanitizer --tool synccheck; on the H200 it reported 0 errors.
// The fix: the barrier after the `if`, where every thread reaches it (kernels/03_sequential.cu).
// The #line below keeps compute-sanitizer's line numbers those of this file: the host splices
// common.cuh in where the #include is (tests/mistakes.rs checks the number).
#include "common.cuh"
#line 15 "kernels/broken/01_sync_in_branch.cu"

// ANCHOR: kernel
template <typename T>
__device__ void sync_in_branch(const T* __restrict__ in, T* __restrict__ out, u64 n) {
    T* sdata = shared_array<T>();
    unsigned tid = threadIdx.x;
    u64 i = (u64)blockIdx.x * blockDim.x + tid;
    sdata[tid] = (i < n) ? in[i] : T(0);
    __syncthreads();

    // ANCHOR: tree
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {  // consecutive threads read consecutive words: no bank conflicts
            sdata[tid] += sdata[tid + s];
            __syncthreads();  // WRONG: only the threads with tid < s get here
        }
    }
    // ANCHOR_END: tree

    if (tid == 0) out[blockIdx.x] = sdata[0];
}
// ANCHOR_END: kernel

INSTANTIATE(sync_in_branch)
