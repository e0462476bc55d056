// Helpers shared by every kernel file. src/kernels/source.rs splices this file in where a
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

// ---- Element types of the modern kernels: f32, i32, f64, and half-precision inputs summed in f32.

// Half-precision inputs as raw bits: NVRTC needs no CUDA headers for these, and the conversion
// to f32 is one instruction (f16) or a shift (bf16).
struct __align__(2) f16_t { unsigned short bits; };
struct __align__(2) bf16_t { unsigned short bits; };

template <typename Acc, typename In>
__device__ __forceinline__ Acc to_acc(In x) { return static_cast<Acc>(x); }
template <>
__device__ __forceinline__ float to_acc<float, f16_t>(f16_t x) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(x.bits));
    return f;
}
template <>
__device__ __forceinline__ float to_acc<float, bf16_t>(bf16_t x) { return __uint_as_float((unsigned)x.bits << 16); }

// One entry point per input type: M(body, suffix, In, Acc) for each.
#define FOR_EACH_DTYPE(M, body)                                                                  \
    M(body, f32, float, float)                                                                   \
    M(body, i32, int, int)                                                                       \
    M(body, f64, double, double)                                                                 \
    M(body, f16, f16_t, float)                                                                   \
    M(body, bf16, bf16_t, float)

// The entry shapes: (in, out, n) for kernels whose host launches pass after pass or zeroes the
// output first; (in, out, n, partials, ticket) for the last-block pattern; (in, out, n,
// partials) for the cooperative grid.
#define ENTRY_IN_OUT_N(body, suffix, In, Acc)                                                    \
    extern "C" __global__ void body##_##suffix(const In* in, Acc* out, u64 n) {                  \
        body<In, Acc>(in, out, n);                                                               \
    }
#define ENTRY_LAST_BLOCK(body, suffix, In, Acc)                                                  \
    extern "C" __global__ void body##_##suffix(const In* in, Acc* out, u64 n, Acc* partials,     \
                                               unsigned* ticket) {                               \
        body<In, Acc>(in, out, n, partials, ticket);                                             \
    }
#define ENTRY_GRID_SYNC(body, suffix, In, Acc)                                                   \
    extern "C" __global__ void body##_##suffix(const In* in, Acc* out, u64 n, Acc* partials) {   \
        body<In, Acc>(in, out, n, partials);                                                     \
    }
