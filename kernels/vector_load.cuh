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

#if defined(VEC_TAIL_PREDICATED) && defined(VEC_TAIL_IN_FLIGHT)
#error "VEC_TAIL_PREDICATED and VEC_TAIL_IN_FLIGHT each replace thread_sum_vec: set one"
#endif
#if defined(VEC_TAIL_IN_FLIGHT) || defined(VEC_TAIL_PREDICATED)
// What the two switches below share with thread_sum_vec: the split of in[0 .. n) into a head, whole
// 16-byte packs and a tail, and the walk's whole rounds of VEC_UNROLL loads. Only what comes after
// the rounds differs.
struct VecSplit {
    u64 thread, threads, head, packs, tail;
};
template <typename In>
__device__ __forceinline__ VecSplit vec_split(const In* __restrict__ in, u64 n) {
    constexpr u64 PER = 16 / sizeof(In);
    VecSplit w;
    w.thread = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    w.threads = (u64)gridDim.x * blockDim.x;
    w.head = ((16 - ((u64)in & 15)) & 15) / sizeof(In);
    if (w.head > n) w.head = n;
    w.packs = (n - w.head) / PER;
    w.tail = w.head + w.packs * PER;
    return w;
}
// The whole rounds, from pack `thread` on, into acc; returns the first pack the rounds left: at
// most VEC_UNROLL - 1 packs from there are this thread's (the loop stops once
// p + (VEC_UNROLL - 1) · threads is past the end).
template <typename In, typename Acc>
__device__ __forceinline__ u64 whole_rounds(Acc (&acc)[VEC_UNROLL], const uint4* __restrict__ body, const VecSplit& w) {
    u64 p = w.thread;
    for (; p + (VEC_UNROLL - 1) * w.threads < w.packs; p += VEC_UNROLL * w.threads) {
        uint4 v[VEC_UNROLL];
#pragma unroll
        for (int u = 0; u < VEC_UNROLL; ++u) v[u] = __ldcs(body + p + u * w.threads);
#pragma unroll
        for (int u = 0; u < VEC_UNROLL; ++u) acc[u] += pack_sum<In, Acc>(v[u]);
    }
    return p;
}
#endif

#ifdef VEC_TAIL_IN_FLIGHT
// An experiment (REDUCTION_NVRTC_OPTIONS=-DVEC_TAIL_IN_FLIGHT): thread_sum_vec with no load that
// waits for the one before it. Above, a thread whose share is not a whole number of VEC_UNROLL
// loads ends in a loop of one load and its add at a time (a round trip to memory each: up to
// VEC_UNROLL - 1 of them; at 10^6 f32 values, 880 of the threads of kernel 12's grid of 245 × 256
// make 3), and the head or tail value is added as the thread starts, before its first 16-byte load
// is issued (a round trip more for block 0 where the input is not a whole number of packs).
// Here the same unrolled loop, then what is left: up to VEC_UNROLL - 1 packs and a head or tail
// value, all loaded before any is added. A load past the end reads the last pack again and is not
// added, so that no load waits on a test (operators.cuh's span_reduce ends its short last round
// so). The leftovers are a function of their own, not inlined:
// with them inlined (and with tested loads, or the head and tail loaded before the loop), the
// compiler (nvcc 13.0, sm_90) issued the loop's later loads only after the first had come back.
// Its bf16 loop still does (its third load before the first's conversions, its fourth after), as
// f64's does in the plain kernels; f32, i32 and f16 issue all four first.
template <typename In, typename Acc>
__device__ __noinline__ Acc leftovers_sum(const In* __restrict__ in, const uint4* __restrict__ body, u64 p, u64 threads, u64 packs, u64 head,
                                         u64 tail, u64 n, u64 thread) {
    uint4 rest[VEC_UNROLL - 1];
    const u64 last = packs > 0 ? packs - 1 : 0;
#pragma unroll
    for (int u = 0; u < VEC_UNROLL - 1; ++u) rest[u] = packs > 0 ? __ldcs(body + min(p + u * threads, last)) : make_uint4(0, 0, 0, 0);
    const bool has_head = thread < head, has_tail = thread < n - tail;
    const In head_value = in[has_head ? thread : 0];
    const In tail_value = in[has_tail ? tail + thread : 0];
    Acc s = Acc(0);
#pragma unroll
    for (int u = 0; u < VEC_UNROLL - 1; ++u)
        if (p + u * threads < packs) s += pack_sum<In, Acc>(rest[u]);
    if (has_head) s += to_acc<Acc>(head_value);
    if (has_tail) s += to_acc<Acc>(tail_value);
    return s;
}
template <typename In, typename Acc>
__device__ __forceinline__ Acc thread_sum_vec_in_flight(const In* __restrict__ in, u64 n) {
    const VecSplit w = vec_split(in, n);
    Acc acc[VEC_UNROLL];
#pragma unroll
    for (int u = 0; u < VEC_UNROLL; ++u) acc[u] = Acc(0);
    const uint4* body = reinterpret_cast<const uint4*>(in + w.head);
    const u64 p = whole_rounds<In, Acc>(acc, body, w);
    if (p < w.packs || w.thread < w.head || w.thread < n - w.tail)
        acc[0] += leftovers_sum<In, Acc>(in, body, p, w.threads, w.packs, w.head, w.tail, n, w.thread);

#pragma unroll
    for (int u = 1; u < VEC_UNROLL; ++u) acc[0] += acc[u];
    return acc[0];
}
#define thread_sum_vec thread_sum_vec_in_flight
#endif

#ifdef VEC_TAIL_PREDICATED
// Kernel 12's default for 4-byte types (kernels/12_cub_block_reduce.cu), and for kernels 9-11 an
// experiment (REDUCTION_NVRTC_OPTIONS=-DVEC_TAIL_PREDICATED): the leftover packs as one more
// round of the main loop, each of its loads predicated on its pack being in range (PTX `@p ld`, so
// that no load waits on a branch), all issued before any is added; the head and tail values are
// loaded in the same round under the same kind of predicate (a thread without one loads nothing
// and adds a zero). A thread then makes one round trip for what it has left instead of up to
// VEC_UNROLL - 1 (at 10^6 f32 values, 880 threads of kernel 12's grid of 245 × 256 make 3). Unlike
// VEC_TAIL_IN_FLIGHT, inline: no call, and no load of a pack past the end. With VEC_PRED_BRANCH
// a thread that has nothing left skips the round; run by every thread, the round cost kernel 12
// time where every share is whole rounds (plots/data/experiments/vec-k12-pred/). 4-byte types
// only: with the extra round, NVRTC 13.0 (sm_90) issued only two of the main loop's four loads
// before converting the first in f16 and bf16 (four without it), and f64's loop waits after two
// either way; those keep the plain walk.
__device__ __forceinline__ uint4 ldcs_if(const uint4* __restrict__ at, bool in_range) {
    uint4 v = make_uint4(0, 0, 0, 0);  // a pack out of range adds zeros
    asm("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %5, 0;\n\t@q ld.global.cs.v4.u32 {%0, %1, %2, %3}, [%4];\n\t}"
        : "+r"(v.x), "+r"(v.y), "+r"(v.z), "+r"(v.w)
        : "l"(at), "r"((unsigned)in_range));
    return v;
}
template <typename In>
__device__ __forceinline__ In ld_if(const In* __restrict__ at, bool in_range) {
    static_assert(sizeof(In) == 4, "4-byte types only");
    union { unsigned raw; In v; } u;
    u.raw = 0;  // a value out of range adds a zero
    asm("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %2, 0;\n\t@q ld.global.u32 %0, [%1];\n\t}" : "+r"(u.raw) : "l"(at), "r"((unsigned)in_range));
    return u.v;
}
template <typename In, typename Acc>
__device__ __forceinline__ Acc thread_sum_vec_predicated(const In* __restrict__ in, u64 n) {
    if constexpr (sizeof(In) != 4) {
        return thread_sum_vec<In, Acc>(in, n);
    } else {
        const VecSplit w = vec_split(in, n);
        Acc acc[VEC_UNROLL];
#pragma unroll
        for (int u = 0; u < VEC_UNROLL; ++u) acc[u] = Acc(0);
        const uint4* body = reinterpret_cast<const uint4*>(in + w.head);
        const u64 p = whole_rounds<In, Acc>(acc, body, w);
        const bool has_head = w.thread < w.head, has_tail = w.thread < n - w.tail;
#ifdef VEC_PRED_BRANCH
        if (p < w.packs || has_head || has_tail)
#endif
        {
            // The last round: the packs the rounds left, and the head's or tail's value.
            uint4 rest[VEC_UNROLL - 1];
#pragma unroll
            for (int u = 0; u < VEC_UNROLL - 1; ++u) rest[u] = ldcs_if(body + p + u * w.threads, p + u * w.threads < w.packs);
            const In head_value = ld_if(in + w.thread, has_head);
            const In tail_value = ld_if(in + w.tail + w.thread, has_tail);
#pragma unroll
            for (int u = 0; u < VEC_UNROLL - 1; ++u) acc[u] += pack_sum<In, Acc>(rest[u]);
            acc[VEC_UNROLL - 1] += to_acc<Acc>(head_value) + to_acc<Acc>(tail_value);
        }

#pragma unroll
        for (int u = 1; u < VEC_UNROLL; ++u) acc[0] += acc[u];
        return acc[0];
    }
}
#define thread_sum_vec thread_sum_vec_predicated
#endif
