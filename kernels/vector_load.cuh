// Each thread's share of the input, read with 16-byte loads: a misaligned head and a ragged tail
// are summed element by element, the aligned body 16 bytes at a time, with several independent
// accumulators so that several loads are in flight per thread.
#pragma once
#include "common.cuh"

#ifndef VEC_UNROLL
#define VEC_UNROLL 4  // 16-byte loads in flight per thread per iteration
#endif

// ANCHOR: pack_sum
// The sum of the 16 / sizeof(In) values packed in one 16-byte load.
template <typename In, typename Acc>
__device__ __forceinline__ Acc pack_sum(uint4 pack) {
    constexpr int PER = 16 / sizeof(In);
    union { uint4 raw; In v[PER]; } u;
    u.raw = pack;
    Acc s = to_acc<Acc>(u.v[0]);
#pragma unroll
    for (int k = 1; k < PER; ++k) s += to_acc<Acc>(u.v[k]);
    return s;
}
// ANCHOR_END: pack_sum

// ANCHOR: thread_sum
// This thread's part of the sum of in[0 .. n), for a grid of any size.
template <typename In, typename Acc>
__device__ __forceinline__ Acc thread_sum_vec(const In* __restrict__ in, u64 n) {
    constexpr u64 PER = 16 / sizeof(In);
    const u64 thread = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    const u64 threads = (u64)gridDim.x * blockDim.x;

    // Elements before the first 16-byte boundary, then whole packs, then what is left.
    u64 head = ((16 - ((u64)in & 15)) & 15) / sizeof(In);
    if (head > n) head = n;
    const u64 packs = (n - head) / PER;
    const u64 tail = head + packs * PER;

    Acc acc[VEC_UNROLL];
#pragma unroll
    for (int u = 0; u < VEC_UNROLL; ++u) acc[u] = Acc(0);
    if (thread < head) acc[0] += to_acc<Acc>(in[thread]);
    if (thread < n - tail) acc[0] += to_acc<Acc>(in[tail + thread]);

    const uint4* body = reinterpret_cast<const uint4*>(in + head);
    u64 p = thread;
    // VEC_UNROLL independent loads, then VEC_UNROLL independent adds: the loads overlap.
    for (; p + (VEC_UNROLL - 1) * threads < packs; p += VEC_UNROLL * threads) {
        uint4 v[VEC_UNROLL];
#pragma unroll
        for (int u = 0; u < VEC_UNROLL; ++u) v[u] = __ldcs(body + p + u * threads);  // read once: evict first
#pragma unroll
        for (int u = 0; u < VEC_UNROLL; ++u) acc[u] += pack_sum<In, Acc>(v[u]);
    }
    for (; p < packs; p += threads) acc[0] += pack_sum<In, Acc>(__ldcs(body + p));

#pragma unroll
    for (int u = 1; u < VEC_UNROLL; ++u) acc[0] += acc[u];
    return acc[0];
}
// ANCHOR_END: thread_sum
