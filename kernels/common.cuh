// Helpers shared by every kernel file. The host (src/kernels.rs) splices this file in where a
// kernel says `#include "common.cuh"`, so NVRTC needs no include path; nvcc finds it as usual.
#pragma once

typedef unsigned long long u64;

// Dynamic shared memory, typed. One untyped extern array serves every element type, so two
// instantiations in one module do not declare the same symbol with different types.
template <typename T>
__device__ __forceinline__ T* shared_array() {
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    return reinterpret_cast<T*>(shared_bytes);
}

// Entry points are extern "C" so the host can load them by name; each wraps the templated body
// once per element type. n is 64-bit so that no kernel wraps a 32-bit index past 2^32 elements.
#define INSTANTIATE(body)                                                                        \
    extern "C" __global__ void body##_f32(const float* in, float* out, u64 n) {                  \
        body<float>(in, out, n);                                                                 \
    }                                                                                            \
    extern "C" __global__ void body##_i32(const int* in, int* out, u64 n) {                      \
        body<int>(in, out, n);                                                                   \
    }

// The same for kernels whose block size is a template parameter: one entry per block size,
// named body_b<BLOCK>_<type>; the host picks the entry like Harris's `switch (threads)`.
#define INSTANTIATE_BLOCK(body, BLOCK)                                                           \
    extern "C" __global__ void __launch_bounds__(BLOCK)                                          \
    body##_b##BLOCK##_f32(const float* in, float* out, u64 n) {                                  \
        body<BLOCK, float>(in, out, n);                                                          \
    }                                                                                            \
    extern "C" __global__ void __launch_bounds__(BLOCK)                                          \
    body##_b##BLOCK##_i32(const int* in, int* out, u64 n) {                                      \
        body<BLOCK, int>(in, out, n);                                                            \
    }

#define INSTANTIATE_BLOCKS_64_TO_1024(body)                                                      \
    INSTANTIATE_BLOCK(body, 64)                                                                  \
    INSTANTIATE_BLOCK(body, 128)                                                                 \
    INSTANTIATE_BLOCK(body, 256)                                                                 \
    INSTANTIATE_BLOCK(body, 512)                                                                 \
    INSTANTIATE_BLOCK(body, 1024)
