// The fused row programs of the deep-learning reductions (softmax, log_softmax, LayerNorm,
// RMSNorm, cross-entropy, softmax backward): read a row, reduce it to a small state (a max and
// a rescaled sum, a count-mean-M2 triple, a sum of squares), give every thread of the row the
// row's state, then write the row from what the threads still hold.
//
// Who holds a row (the team), chosen by the host for the shape:
//   lanes    a team of 8, 16 or 32 lanes of one warp per row (short rows): shuffles only.
//   block    one block per row: shuffles, then one word per warp in shared memory.
//   cluster  a thread-block cluster of C blocks per row (sm_90 and later): each block pushes
//            its state into the shared memory of every block of the cluster, where a
//            transaction barrier counts the C states in. C up to 8 is a size every sm_90 GPU
//            accepts; 16 is a non-portable size, launched only where the host has asked the
//            GPU for it and the occupancy calculator finds room for one.
//   split    S co-resident blocks per row (any architecture): each block publishes its state in
//            global memory, counts itself in, waits until all S have, and reads the S states.
//            The host keeps the grid within what the GPU holds at once, so every block a block
//            waits for is running (the same rule as a cooperative launch).
// Every thread holds VPT 16-byte packs of the row per chunk. When the team holds the whole row
// (one chunk) the row is read from memory once; when it does not, the program reads it chunk by
// chunk for the state, then again, last chunk first, to write it: the second read then finds
// what it can in L2.
//
// A row is read with 16-byte loads when it (and every other row operand) starts on a 16-byte
// boundary and its length is a whole number of packs; otherwise value by value, coalesced, in
// the same registers. All arithmetic is f32; f16 and bf16 are converted on the way in and out
// (round to nearest even).
// Preconditions (the host checks them): blockDim.x a multiple of 32, at most 1024, and at most
// the entry's launch bound; lanes a power of two from 8 to 32; for split, gridDim.x a multiple
// of S, every block co-resident, `partials` for rows × S states, `arrive` and `depart` one
// zeroed counter per row (left zeroed).
#pragma once
#include "operators.cuh"  // the operators, warp_allreduce and block_allreduce (issue 22)

namespace dl {

constexpr float LOG2E = 1.4426950408889634f;

__device__ __forceinline__ float infinity() { return __int_as_float(0x7f800000); }

// 2^x in one special-function instruction (relative error about 2^-22; -inf gives 0).
__device__ __forceinline__ float ex2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// ---- Values in and out: a held 16-byte pack as four words, converted one value at a time.

struct Held {
    unsigned w[4];
};

__device__ __forceinline__ float f16_bits_to_f32(unsigned bits) {
    float f;
    const unsigned short h = (unsigned short)bits;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}
__device__ __forceinline__ unsigned f32_to_f16_bits(float f) {
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}
// Round to nearest even by integer arithmetic: bf16 conversion instructions need sm_80.
__device__ __forceinline__ unsigned f32_to_bf16_bits(float f) {
    const unsigned u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0u;  // NaN stays NaN
    return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
}

template <typename T>
struct Io;

template <>
struct Io<float> {
    static constexpr int PER = 4;
    __device__ static float get(const Held& p, int j) { return __uint_as_float(p.w[j]); }
    __device__ static unsigned load_bits(const float* x, bool stream) { return __float_as_uint(stream ? __ldcs(x) : __ldcg(x)); }
    __device__ static void store_one(float* y, float v) { __stcs(y, v); }
    __device__ static void put(Held& p, const float (&v)[4]) {
#pragma unroll
        for (int j = 0; j < 4; ++j) p.w[j] = __float_as_uint(v[j]);
    }
    __device__ static void set_bits(Held& p, int j, unsigned bits) { p.w[j] = bits; }
};

template <>
struct Io<f16_t> {
    static constexpr int PER = 8;
    __device__ static float get(const Held& p, int j) { return f16_bits_to_f32(p.w[j >> 1] >> (16 * (j & 1))); }
    __device__ static unsigned load_bits(const f16_t* x, bool stream) {
        const unsigned short* p = reinterpret_cast<const unsigned short*>(x);
        return stream ? __ldcs(p) : __ldcg(p);
    }
    __device__ static void store_one(f16_t* y, float v) { __stcs(reinterpret_cast<unsigned short*>(y), (unsigned short)f32_to_f16_bits(v)); }
    __device__ static unsigned pair(float lo, float hi) {
#if __CUDA_ARCH__ >= 800
        unsigned r;
        asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
        return r;
#else
        return f32_to_f16_bits(lo) | (f32_to_f16_bits(hi) << 16);
#endif
    }
    __device__ static void put(Held& p, const float (&v)[8]) {
#pragma unroll
        for (int i = 0; i < 4; ++i) p.w[i] = pair(v[2 * i], v[2 * i + 1]);
    }
    __device__ static void set_bits(Held& p, int j, unsigned bits) { p.w[j >> 1] |= (bits & 0xffffu) << (16 * (j & 1)); }
};

template <>
struct Io<bf16_t> {
    static constexpr int PER = 8;
    __device__ static float get(const Held& p, int j) {
        const unsigned w = p.w[j >> 1];
        return __uint_as_float((j & 1) ? (w & 0xffff0000u) : (w << 16));
    }
    __device__ static unsigned load_bits(const bf16_t* x, bool stream) {
        const unsigned short* p = reinterpret_cast<const unsigned short*>(x);
        return stream ? __ldcs(p) : __ldcg(p);
    }
    __device__ static void store_one(bf16_t* y, float v) { __stcs(reinterpret_cast<unsigned short*>(y), (unsigned short)f32_to_bf16_bits(v)); }
    __device__ static unsigned pair(float lo, float hi) {
#if __CUDA_ARCH__ >= 800
        unsigned r;
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
        return r;
#else
        return f32_to_bf16_bits(lo) | (f32_to_bf16_bits(hi) << 16);
#endif
    }
    __device__ static void put(Held& p, const float (&v)[8]) {
#pragma unroll
        for (int i = 0; i < 4; ++i) p.w[i] = pair(v[2 * i], v[2 * i + 1]);
    }
    __device__ static void set_bits(Held& p, int j, unsigned bits) { p.w[j >> 1] |= (bits & 0xffffu) << (16 * (j & 1)); }
};

// A pack of values as loaded (16 bytes), as f32.
template <typename T>
__device__ __forceinline__ void unpack(uint4 raw, float (&v)[Io<T>::PER]) {
    const Held q = {{raw.x, raw.y, raw.z, raw.w}};
#pragma unroll
    for (int j = 0; j < Io<T>::PER; ++j) v[j] = Io<T>::get(q, j);
}
// A whole pack of per-column parameters (LayerNorm's gamma and beta), as f32.
template <typename T>
__device__ __forceinline__ void load_params(const T* p, u64 pack, float (&v)[Io<T>::PER]) {
    unpack<T>(__ldg(reinterpret_cast<const uint4*>(p) + pack), v);
}
// ---- States move as 4-byte words (operators.cuh's StateWords): through shuffles there, and
// here through distributed shared memory and global memory.

template <typename S>
__device__ __forceinline__ void store_cg_state(S* p, S s) {
    StateWords<S> u;
    u.state = s;
#pragma unroll
    for (int k = 0; k < (int)(sizeof(S) / 4); ++k) __stcg(reinterpret_cast<unsigned*>(p) + k, u.word[k]);
}

// ---- Thread-block clusters (sm_90): the block's rank, the barrier, and a push into a peer's
// shared memory that a transaction barrier there counts.
#if __CUDA_ARCH__ >= 900
__device__ __forceinline__ unsigned cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
__device__ __forceinline__ void cluster_arrive_relaxed() { asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory"); }
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory"); }
__device__ __forceinline__ unsigned shared_address(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ unsigned peer_address(unsigned local, unsigned rank) {
    unsigned remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
    return remote;
}

// ANCHOR: cluster_allreduce
// Every thread of the C blocks of the cluster gets the row's state, with no cluster barrier on
// the way. Each block has C slots and a transaction barrier (an mbarrier that completes when C
// states' bytes have landed). `open`, as the block starts: the barrier is set up, and the cluster
// barrier that makes it visible to the peers is arrived at. `allreduce`, after the row's loads:
// that cluster barrier is waited for (long since complete), thread i of every block pushes the
// block's state into slot [rank] of block i (st.async, counted by block i's barrier), and each
// block waits for its own C slots. A block leaves only once all C states have reached it, so no
// peer writes into its shared memory after it has gone; nothing reads a peer's memory.
// (The first version read the peers' states through distributed shared memory between two
// cluster barriers; plots/dl_long_rows.cu measures both against clusters that exchange nothing.)
template <int C, typename S>
struct ClusterExchange {
    StateWords<S> slot[C];
    unsigned long long landed;  // the transaction barrier: one phase, C · sizeof(S) bytes

    __device__ __forceinline__ void open() {
        if (threadIdx.x == 0) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(&landed)) : "memory");
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(&landed)),
                         "r"((unsigned)(C * sizeof(S)))
                         : "memory");
            asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        }
        cluster_arrive_relaxed();
    }

    template <typename Op>
    __device__ __forceinline__ S allreduce(const Op& op, S s, S* warp_states) {
        return merge_blocks(op, block_allreduce(op, s, warp_states));
    }

    // The C blocks' states, `s` this block's (the same in every thread of it).
    template <typename Op>
    __device__ __forceinline__ S merge_blocks(const Op& op, S s) {
        cluster_wait();  // every peer's barrier is set up
        if (threadIdx.x < C) {
            StateWords<S> mine;
            mine.state = s;
            const unsigned to = threadIdx.x, rank = cluster_rank();
            const unsigned bar = peer_address(shared_address(&landed), to);
#pragma unroll
            for (int k = 0; k < (int)(sizeof(S) / 4); ++k)
                asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(
                                 peer_address(shared_address(&slot[rank].word[k]), to)),
                             "r"(mine.word[k]), "r"(bar)
                             : "memory");
        }
        asm volatile(
            "{\n .reg .pred done;\n wait_%=:\n mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n @!done bra wait_%=;\n}\n" ::"r"(
                shared_address(&landed))
            : "memory");
        const unsigned lane = threadIdx.x % 32;
#ifdef DL_CLUSTER_MERGE_32
        // (The experiment's: the C states in 32 lanes, the identity past them: five levels.)
        return warp_allreduce(op, lane < C ? slot[lane].state : op.identity(), 32);
#else
        // log2(C) levels, each group of C lanes holding the C states: the same bits in every
        // warp of every block, and for finite states those of 32 lanes with the identity past
        // the C (each merge with it returns a state unchanged).
        return warp_allreduce(op, slot[lane % C].state, C);
#endif
    }
};
// ANCHOR_END: cluster_allreduce
#endif

__device__ __forceinline__ unsigned load_acquire(const unsigned* p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

// ANCHOR: split_allreduce
// Every thread of the S co-resident blocks of a row gets the row's state, through global
// memory: publish, count in, wait for all S, combine the S states in slice order (the same in
// every block), count out; the last to leave zeroes both counters for the next launch.
template <typename Op>
__device__ __forceinline__ typename Op::State split_allreduce(const Op& op, typename Op::State s, typename Op::State* warp_states,
                                                              typename Op::State* partials, unsigned* arrive, unsigned* depart,
                                                              u64 row, unsigned slice, unsigned slices) {
    s = block_allreduce(op, s, warp_states);
    if (threadIdx.x == 0) {
        store_cg_state(partials + row * slices + slice, s);
        __threadfence();  // the state is visible before the count
        atomicAdd(arrive + row, 1u);
        while (load_acquire(arrive + row) < slices) {
        }
    }
    __syncthreads();
    typename Op::State v = op.identity();
    for (unsigned i = threadIdx.x % 32; i < slices; i += 32) v = op.combine(v, load_cg_state(partials + row * slices + i));
    v = warp_allreduce(op, v, 32);
    if (threadIdx.x == 0 && atomicAdd(depart + row, 1u) == slices - 1) {
        arrive[row] = 0;  // every block of the row has read the states: ready for the next launch
        depart[row] = 0;
    }
    return v;
}
// ANCHOR_END: split_allreduce

// ---- Where a thread's values are: chunk c, pack k. Packs are interleaved across the row's
// threads, so that every load instruction of a warp reads 512 consecutive bytes.

struct Slot {
    unsigned t;        // this thread's index among the threads that hold the row
    unsigned threads;  // how many threads hold the row
};

template <int VPT>
__device__ __forceinline__ u64 pack_index(unsigned c, int k, Slot s) {
    return ((u64)c * VPT + k) * s.threads + s.t;
}

// UNTESTED: how many of a thread's VPT packs of the chunk are known to be inside the row, so need
// no test (VPT: the chunk is whole; VPT - 1: only its last pack may be past the end; 0: test
// each). Without the tests, the loops over the packs have no branches, and the compiler can
// interleave one pack's work with the next one's.
// Chunk c of a row of `packs` whole 16-byte packs into h (zeros past the end).
template <int VPT, int UNTESTED = 0>
__device__ __forceinline__ void load_chunk(Held (&h)[VPT], const void* __restrict__ row, u64 packs, unsigned c, Slot s) {
    const uint4* p = reinterpret_cast<const uint4*>(row);
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
        const u64 i = pack_index<VPT>(c, k, s);
        uint4 v = make_uint4(0, 0, 0, 0);
        if (k < UNTESTED || i < packs) v = __ldcg(p + i);  // L2 only: a second read of a long row may find it there
        h[k] = Held{{v.x, v.y, v.z, v.w}};
    }
}

// f(x0, x1, e) for every value this thread holds in chunk c (x1: the second input, if any).
// f is a functor that accumulates (lambdas would need NVRTC's -default-device).
template <typename T, int VPT, int UNTESTED = 0, class F>
__device__ __forceinline__ void for_each(const Held (&h0)[VPT], const Held (&h1)[VPT], u64 packs, unsigned c, Slot s, F& f) {
    constexpr int PER = Io<T>::PER;
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
        const u64 i = pack_index<VPT>(c, k, s);
        if (k < UNTESTED || i < packs) {
#pragma unroll
            for (int j = 0; j < PER; ++j) f(Io<T>::get(h0[k], j), Io<T>::get(h1[k], j), i * PER + j);
        }
    }
}

// Pack i of an output row, from f32 values: written once, evict first.
template <typename T>
__device__ __forceinline__ void store_pack(T* __restrict__ out, u64 i, const float (&y)[Io<T>::PER]) {
    Held o;
    Io<T>::put(o, y);
    __stcs(reinterpret_cast<uint4*>(out) + i, make_uint4(o.w[0], o.w[1], o.w[2], o.w[3]));
}


#if defined(DL_PARAMS_EARLY) && !defined(DL_PARAMS_GROUP)
#error "DL_PARAMS_EARLY loads through DL_PARAMS_GROUP's parameters: give -DDL_PARAMS_GROUP=G too"
#endif
// store_pack under a predicate on the store itself, not a branch around it (the compiler would
// move the pack's loads and arithmetic into that branch).
template <typename T>
__device__ __forceinline__ void store_pack_if(T* __restrict__ out, u64 i, const float (&y)[Io<T>::PER], bool in) {
    Held o;
    Io<T>::put(o, y);
    asm volatile("{ .reg .pred p; setp.ne.u32 p, %5, 0; @p st.global.cs.v4.u32 [%0], {%1, %2, %3, %4}; }" ::"l"(reinterpret_cast<uint4*>(out) + i),
                 "r"(o.w[0]), "r"(o.w[1]), "r"(o.w[2]), "r"(o.w[3]), "r"((unsigned)in)
                 : "memory");
}
// A task's per-column parameters (LayerNorm's γ and β, RMSNorm's γ: 18_norms.cu names them), for
// the writes that take them by packs ahead of the arithmetic: the staged blocks' (StagedParams)
// and the grouped and early switches'.
template <class Task>
struct GroupedParams {
    static constexpr int COUNT = 0;
};
template <class Task>
struct GroupedParams<const Task> : GroupedParams<Task> {};  // row_program's tasks are const
// Whether a task's cluster entries stage its per-column parameters in shared memory as the staged
// blocks do (StagedParams: cp.async issued with the row's loads, read back by the write), where
// the launch gives the room, which the planner does for the same tasks (plan.rs,
// `staged_in_clusters`), and how many of them (`count`: GroupedParams' first ones; the others
// are loaded from L2 in the write). 18_norms.cu sets it for RMSNorm; the experiment
// REDUCTION_NVRTC_OPTIONS=-DDL_CLUSTER_STAGED for every task with parameters, and
// -DDL_CLUSTER_STAGED_GAMMA for LayerNorm's γ alone. Why: in Nsight Compute RMSNorm's cluster at
// f32 1024 × 2^18 kept DRAM 70.4% busy and softmax's in the same team 83.3%, and RMSNorm's write
// loaded γ from L2 after the cluster's barrier (18_norms.cu's comment says what staging it did).
template <class Task>
struct ClusterStaged {
#if defined(DL_CLUSTER_STAGED)
    static constexpr bool ok = GroupedParams<Task>::COUNT > 0;
#else
    static constexpr bool ok = false;
#endif
    static constexpr int count = GroupedParams<Task>::COUNT;
};
template <class Task>
struct ClusterStaged<const Task> : ClusterStaged<Task> {};  // row_program's tasks are const
// Output pack i from a held pack of x and its parameters' raw packs, stored where `in`.
template <typename T, int P, class Task>
__device__ __forceinline__ void store_grouped_pack(const Task& task, T* __restrict__ out, const Held& h, const uint4 (&raw)[P], u64 i, bool in,
                                                   const typename Task::Stats& st) {
    constexpr int PER = Io<T>::PER;
    float x[PER], prm[P][PER], y[PER];
#pragma unroll
    for (int j = 0; j < PER; ++j) x[j] = Io<T>::get(h, j);
#pragma unroll
    for (int p = 0; p < P; ++p) unpack<T>(raw[p], prm[p]);
    task.map_grouped(x, prm, st, y);
    store_pack_if(out, i, y, in);
}
// The tasks' per-column parameters loaded D packs ahead of the write, into registers
// (ParamAhead<Task>::packs(cluster) = D; 0 by default: none). 18_norms.cu sets it for RMSNorm's
// and LayerNorm's cluster entries, where it was faster on the H200, and its experiment switches
// for every team. Without it each pack's parameters are loaded just before the pack is written,
// behind a test (the packs of a row that may be past its end): the SASS (nvcc 13.0, sm_90) then
// waits a round trip to L2 for every pack, eight one after the other in a thread of the long
// rows' cluster entries. Prefetching the lines into L1 instead
// (plots/data/dl/experiments/prefetch.diff) was measured: slower at most shapes. Under the 64
// registers of the 1024-thread bound, D = 2 fits RMSNorm's f32 entries with no spill (its
// 16-bit clusters of 2, 8 and 16 spill 12 bytes a thread), where LayerNorm's γ and β spill at
// D = 2 in every cluster entry and at D = 1 in all but the clusters of 4 (32 bytes at f32, 68 at
// 16 bits; experiments/switches/norms-ahead/ptxas-sm_90.txt). Only tested writes of more than
// D packs a thread take it: with D = VPT (RMSNorm's blocks of 2 packs, f32) nothing is left to
// overlap, and the registers cost a block an SM (33.6% slower on the H200); an untested write
// already has every pack's parameters loaded as early as the compiler likes.
template <class Task>
struct ParamAhead {
    __host__ __device__ static constexpr int packs(int /*cluster: its blocks, 0 for other teams*/) { return 0; }
};
template <class Task>
struct ParamAhead<const Task> : ParamAhead<Task> {};
template <int D, typename T, int VPT, class Task>
__device__ __forceinline__ void store_chunk_params_ahead(const Task& task, T* __restrict__ out, const Held (&h0)[VPT], u64 packs, unsigned c, Slot s,
                                                         const typename Task::Stats& st) {
    constexpr int PER = Io<T>::PER, P = GroupedParams<Task>::COUNT;
    static_assert(P > 0 && D > 0 && D < VPT, "parameters ahead: a task with parameters, fewer packs ahead than a thread holds");
    const auto param = [&](int p, u64 i) { return __ldg(reinterpret_cast<const uint4*>(GroupedParams<Task>::of(task, p)) + i); };
    uint4 ring[D][P];  // pack k's parameters, in ring[k % D] from D packs before it is written
#pragma unroll
    for (int k = 0; k < D; ++k) {
        const u64 i = pack_index<VPT>(c, k, s);
#pragma unroll
        for (int p = 0; p < P; ++p) ring[k][p] = i < packs ? param(p, i) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
        const u64 i = pack_index<VPT>(c, k, s);
        uint4 now[P];
#pragma unroll
        for (int p = 0; p < P; ++p) now[p] = ring[k % D][p];
        const u64 ahead = pack_index<VPT>(c, k + D, s);
        if (k + D < VPT && ahead < packs) {
#pragma unroll
            for (int p = 0; p < P; ++p) ring[k % D][p] = param(p, ahead);
        }
        if (i < packs) {
            float x[PER], prm[P][PER], y[PER];
#pragma unroll
            for (int j = 0; j < PER; ++j) x[j] = Io<T>::get(h0[k], j);
#pragma unroll
            for (int p = 0; p < P; ++p) unpack<T>(now[p], prm[p]);
            task.map_grouped(x, prm, st, y);
            store_pack(out, i, y);
        }
    }
}
#if __CUDA_ARCH__ >= 800
// ANCHOR: staged_params
// The staged blocks' parameters (the `_staged` entries, sm_80 and later): where a block holds its
// row in one chunk and the launch gave it the shared memory (blockDim.x × VPT × S × 16 bytes, the
// planner's `Launch::shared_bytes`), each thread's packs of γ and β are copied into shared memory
// by cp.async as the row's loads are issued, so that their round trip to L2 overlaps the team's
// sums rather than following them, and the write reads them back after one wait. No register
// holds them meanwhile (held in registers, 111 a thread at layer_norm_block4_bf16, they were 17.7%
// slower on an H100). Each thread reads back only what it copied itself, so there is no barrier:
// cp.async.wait_all makes a thread's own copies visible to it. Pack 0's parameters past the row's
// end (a row has one), so that no test stands between the copies.
// (S: how many of the parameters are staged, the first ones; the others are loaded from L2 as
// each pack is written. All of them but under an experiment, ClusterStaged's count.)
template <class Task, int VPT, int S = GroupedParams<Task>::COUNT>
struct StagedParams {
    static constexpr int P = GroupedParams<Task>::COUNT;
    static_assert(P > 0, "the staged entries are for tasks with per-column parameters (GroupedParams)");
    static_assert(S > 0 && S <= P, "the staged parameters are some of the task's");
    // Slot (k, p) of this thread: consecutive threads in consecutive 16 bytes (no bank conflict).
    __device__ static __forceinline__ uint4* slot(int k, int p) {
        extern __shared__ __align__(16) uint4 dl_staged[];
        return dl_staged + ((unsigned)(k * S + p) * blockDim.x + threadIdx.x);
    }
    // Whether the launch gave the block room for every thread's packs.
    __device__ static __forceinline__ bool fits() {
        unsigned given;
        asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(given));
        return (u64)blockDim.x * VPT * S * 16 <= given;
    }
    __device__ static __forceinline__ void load(const Task& task, u64 packs, Slot s) {
#pragma unroll
        for (int k = 0; k < VPT; ++k) {
            const u64 i = pack_index<VPT>(0, k, s);
            const u64 at = i < packs ? i : 0;
#pragma unroll
            for (int p = 0; p < S; ++p) {
                const unsigned dst = (unsigned)__cvta_generic_to_shared(slot(k, p));
                asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(reinterpret_cast<const uint4*>(GroupedParams<Task>::of(task, p)) + at)
                             : "memory");
            }
        }
    }
    template <typename T>
    __device__ static __forceinline__ void write(const Task& task, T* __restrict__ out, const Held (&h0)[VPT], u64 packs, Slot s,
                                                 const typename Task::Stats& st) {
        asm volatile("cp.async.wait_all;" ::: "memory");
#pragma unroll
        for (int k = 0; k < VPT; ++k) {
            const u64 i = pack_index<VPT>(0, k, s);
            uint4 raw[P];
#pragma unroll
            for (int p = 0; p < P; ++p)
                raw[p] = p < S ? *slot(k, p) : __ldg(reinterpret_cast<const uint4*>(GroupedParams<Task>::of(task, p)) + (i < packs ? i : 0));
            store_grouped_pack(task, out, h0[k], raw, i, i < packs, st);
        }
    }
};
// ANCHOR_END: staged_params
#endif

// The parameters of a block whose teams each hold a row, staged once for all of them
// (LanesParams), or not at all (NoSharedParams).
struct NoSharedParams {
    static constexpr bool ACTIVE = false;
    NoSharedParams() = default;
    template <class Task>
    __device__ __forceinline__ NoSharedParams(const Task&, unsigned) {}
    __device__ __forceinline__ void wait_once() {}
};
// Whether a task's lanes entries stage its per-column parameters once a block (LanesParams, sm_80
// and later): LayerNorm's (18_norms.cu), every norm's under the experiment switch
// REDUCTION_NVRTC_OPTIONS=-DDL_LANES_STAGED, none under -DDL_LANES_UNSTAGED.
template <class Task>
struct StagedLanes {
#if defined(DL_LANES_STAGED)
    static constexpr bool ok = GroupedParams<Task>::COUNT > 0;
#else
    static constexpr bool ok = false;
#endif
};
template <class Task>
struct StagedLanes<const Task> : StagedLanes<Task> {};
#if __CUDA_ARCH__ >= 800
// The lanes entries' per-column parameters (LayerNorm's γ and β) copied into shared memory once a
// block, by cp.async issued before the first row's loads, instead of loaded from L1 or L2 by every
// row's team. A block of 256 threads in teams of 8 lanes writes 32 rows with one copy of them;
// loaded by each team, they are a second stream from L2 as large as the rows' own (LayerNorm: γ
// and β, as many bytes as a row read and written), and in Nsight Compute LayerNorm bf16 2^20 × 256
// kept the H200's L2 83% busy, its L1 hitting 20.9%. The block waits for the copies (one barrier:
// each thread reads others' copies) after its first rows' statistics; every thread arrives once
// (rows_by_lanes). The packs' indices into shared memory are worked out in each row: hoisted out
// of the rows' loop, as NVRTC 13.0 did at first, they were held across it, and at sm_90
// layer_norm_lanes8_bf16 took 128 registers and spilled where it takes 74 so (two blocks of 256
// an SM for three; plots/data/dl/experiments/norms-lanes/registers-sm_90.csv). Other orders,
// experiments (DL_LANES_STAGED_ORDER): 0 the hoisted indices, 1 each pack's loads fenced behind
// the last pack's store (__syncwarp), 2 read through a generic address (a load that may alias a
// store stays behind it); neither 1 nor 2 brought the registers back.
template <class Task, int VPT>
struct LanesParams {
    static constexpr int P = GroupedParams<Task>::COUNT;
    static constexpr unsigned MAX_PACKS = 32 * VPT;  // a team of at most 32 lanes holds the row
    static constexpr bool ACTIVE = true;
    bool staged, waiting;
    unsigned packs;
    __device__ static __forceinline__ uint4* buffer() {
        __shared__ __align__(16) uint4 params[P > 0 ? P * MAX_PACKS : 1];
        return params;
    }
    // Stage where the row is a whole number of packs a team holds and every parameter is aligned
    // (the same in every thread of the block).
    __device__ __forceinline__ LanesParams(const Task& task, unsigned lanes) : staged(false), waiting(false), packs(0) {
        if constexpr (P > 0) {
            using T = typename Task::T;
            bool ok = task.cols % Io<T>::PER == 0 && task.cols / Io<T>::PER <= (u64)lanes * VPT;
#pragma unroll
            for (int p = 0; p < P; ++p) ok = ok && ((u64)GroupedParams<Task>::of(task, p) & 15) == 0;
            if (!ok) return;
            staged = waiting = true;
            packs = (unsigned)(task.cols / Io<T>::PER);
            for (unsigned i = threadIdx.x; i < P * packs; i += blockDim.x) {
                const unsigned p = i / packs, k = i - p * packs;
                const unsigned dst = (unsigned)__cvta_generic_to_shared(buffer() + i);
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(reinterpret_cast<const uint4*>(GroupedParams<Task>::of(task, (int)p)) + k)
                             : "memory");
            }
        }
    }
    // Called by every thread of the block exactly once where it stages: in its first row, after
    // the statistics, or after the loop by threads that had none. Those are two barrier
    // instructions, and a warp's lanes may reach the first apart (their rows' paths differ), so
    // the barrier is the unaligned one (barrier.sync: any thread at any barrier 0 instruction):
    // __syncthreads() is bar.sync, which requires every thread of the block at the same
    // instruction with its warp converged, and compute-sanitizer's synccheck refused it here
    // ("Divergent thread(s) in block", on the H200, session 60; the tests passed without it).
    __device__ __forceinline__ void wait_once() {
        if (!waiting) return;
        asm volatile("cp.async.wait_all;" ::: "memory");
        asm volatile("barrier.sync 0;" ::: "memory");
        waiting = false;
    }
    template <typename T>
    __device__ __forceinline__ bool write(const Task& task, T* __restrict__ out, const Held (&h0)[VPT], u64 row_packs, Slot s,
                                          const typename Task::Stats& st) {
        if constexpr (P > 0) {  // (only the norms have parameters and map_grouped)
            if (!staged) return false;
#if !defined(DL_LANES_STAGED_ORDER) || DL_LANES_STAGED_ORDER == 3
            // The indices' terms passed through a volatile asm once a row: the compiler cannot
            // hoist the packs' indices out of the rows' loop, to hold them all in registers.
            unsigned t = s.t, threads = s.threads, stride = packs;
            asm volatile("" : "+r"(t), "+r"(threads), "+r"(stride));
            s = Slot{t, threads};
#else
            const unsigned stride = packs;
#endif
#pragma unroll
            for (int k = 0; k < VPT; ++k) {
                const u64 i = pack_index<VPT>(0, k, s);
                const unsigned at = i < row_packs ? (unsigned)i : 0;
                uint4 raw[P];
#if defined(DL_LANES_STAGED_ORDER) && DL_LANES_STAGED_ORDER == 2
                // Read through a generic address the compiler cannot trace to shared memory: such
                // a load may alias the row's stores, so ptxas keeps it behind the last one.
                u64 base;
                asm("cvta.shared.u64 %0, %1;" : "=l"(base) : "l"((u64)__cvta_generic_to_shared(buffer())));
#pragma unroll
                for (int p = 0; p < P; ++p) raw[p] = reinterpret_cast<const uint4*>(base)[p * stride + at];
#else
#pragma unroll
                for (int p = 0; p < P; ++p) raw[p] = buffer()[p * stride + at];
#endif
                store_grouped_pack(task, out, h0[k], raw, i, i < row_packs, st);
#if defined(DL_LANES_STAGED_ORDER) && DL_LANES_STAGED_ORDER == 1
                __syncwarp();  // a fence for shared memory: the next pack's loads stay behind it
#endif
            }
            return true;
        }
        return false;
    }
};
#endif

// The write of chunk c with its parameters loaded GROUP packs at a time, every load of a group
// issued before any of its arithmetic, with no test between them: the staged entries' rows of
// several chunks, and every entry under the grouped switch (an experiment,
// REDUCTION_NVRTC_OPTIONS=-DDL_PARAMS_GROUP=G).
// By default each pack's parameters are loaded behind the pack's test, so that a thread of
// layer_norm_block4_bf16 waits a round trip to L2 four times, one after the other, after the
// row's statistics (SASS, NVRTC 13.0, sm_90); in Nsight Compute TileLang's LayerNorm at bf16
// 4096 × 4096, which stages γ and β in shared memory, took 21.4 µs to its 24.5 on an H100.
// A group costs 4·G·P registers a thread (P parameters a column). At sm_90, G = 2, 4 or 8, no
// block entry and no lanes entry of 4 packs or fewer has a local load or store; LayerNorm's
// lanes of 8 packs have up to 10 (2 by default), its cluster entries 27 to 35 at 16 bits and 4 at
// f32. Only the tasks GroupedParams names (18_norms.cu), each with map_grouped(x, params, stats, y).
template <int GROUP, typename T, int VPT, int UNTESTED, class Task>
__device__ __forceinline__ void store_chunk_params_grouped(const Task& task, T* __restrict__ out, const Held (&h0)[VPT], u64 packs, unsigned c, Slot s,
                                                           const typename Task::Stats& st) {
    constexpr int P = GroupedParams<Task>::COUNT, G = GROUP < VPT ? GROUP : VPT;
#pragma unroll
    for (int k0 = 0; k0 < VPT; k0 += G) {
        uint4 raw[G][P];
#pragma unroll
        for (int k = 0; k < G && k0 + k < VPT; ++k) {
            const u64 i = pack_index<VPT>(c, k0 + k, s);
            // Past the row's end, pack 0's parameters (a row has one): no test between the loads.
            const u64 at = k0 + k < UNTESTED || i < packs ? i : 0;
#pragma unroll
            for (int p = 0; p < P; ++p) raw[k][p] = __ldg(reinterpret_cast<const uint4*>(GroupedParams<Task>::of(task, p)) + at);
        }
        // The arithmetic for every pack of the group (zeros past the row's end), only the stores
        // tested: a branch between the loads would let the compiler sink the later ones past it.
#pragma unroll
        for (int k = 0; k < G && k0 + k < VPT; ++k) {
            const u64 i = pack_index<VPT>(c, k0 + k, s);
            store_grouped_pack(task, out, h0[k0 + k], raw[k], i, k0 + k < UNTESTED || i < packs, st);
        }
    }
}

#ifdef DL_PARAMS_EARLY
#ifndef DL_LN_TWO_PASS
#error "DL_PARAMS_EARLY takes the two-pass path: give -DDL_LN_TWO_PASS too"
#endif
// An experiment (REDUCTION_NVRTC_OPTIONS="-DDL_PARAMS_GROUP=G -DDL_PARAMS_EARLY=V"): where a thread
// holds at most V packs of a row, its parameters (γ and β) are loaded with the row, before the
// statistics, so that their round trip to L2 overlaps the team's sums, not the write's wait.
// Pack 0's past the row's end, as the grouped write.
// A read-only 16-byte load kept in program order (volatile, with the memory clobber): __ldg's
// loads were sunk past the sums' barriers.
__device__ __forceinline__ uint4 load_nc_in_order(const uint4* p) {
    uint4 v;
    asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p) : "memory");
    return v;
}
template <class Task, int VPT>
struct EarlyParams {
    static constexpr int P = GroupedParams<Task>::COUNT;
    static constexpr bool ok = P > 0 && VPT <= DL_PARAMS_EARLY;
    uint4 raw[VPT][P > 0 ? P : 1];
    __device__ __forceinline__ void load(const Task& task, u64 packs, Slot s) {
#pragma unroll
        for (int k = 0; k < VPT; ++k) {
            const u64 i = pack_index<VPT>(0, k, s);
            const u64 at = i < packs ? i : 0;
#pragma unroll
            for (int p = 0; p < P; ++p) raw[k][p] = load_nc_in_order(reinterpret_cast<const uint4*>(GroupedParams<Task>::of(task, p)) + at);
        }
    }
    template <typename T>
    __device__ __forceinline__ void write(const Task& task, T* __restrict__ out, const Held (&h0)[VPT], u64 packs, Slot s,
                                          const typename Task::Stats& st) const {
#pragma unroll
        for (int k = 0; k < VPT; ++k) {
            const u64 i = pack_index<VPT>(0, k, s);
            store_grouped_pack(task, out, h0[k], raw[k], i, i < packs, st);
        }
    }
};
#endif

// Write chunk c of the output row with 16-byte stores, from task.map_pack.
template <typename T, int VPT, int UNTESTED = 0, class Task>
__device__ __forceinline__ void store_chunk_by_packs(const Task& task, T* __restrict__ out, const Held (&h0)[VPT], const Held (&h1)[VPT],
                                                     u64 packs, unsigned c, Slot s, const typename Task::Stats& st) {
    constexpr int PER = Io<T>::PER;
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
        const u64 i = pack_index<VPT>(c, k, s);
        if (k < UNTESTED || i < packs) {
            float x0[PER], x1[PER], y[PER];
#pragma unroll
            for (int j = 0; j < PER; ++j) {
                x0[j] = Io<T>::get(h0[k], j);
                x1[j] = Io<T>::get(h1[k], j);
            }
            task.map_pack(x0, x1, i, st, y);
            store_pack(out, i, y);
        }
    }
}

// GROUP > 0: the parameters in groups of that many packs (the staged entries' write where the
// launch gave no shared memory), as the grouped switch does for every entry.
template <typename T, int VPT, int UNTESTED = 0, int GROUP = 0, int AHEAD = 0, class Task>
__device__ __forceinline__ void store_chunk(const Task& task, T* __restrict__ out, const Held (&h0)[VPT], const Held (&h1)[VPT], u64 packs,
                                            unsigned c, Slot s, const typename Task::Stats& st) {
#ifdef DL_PARAMS_GROUP
    constexpr int G = GROUP > 0 ? GROUP : DL_PARAMS_GROUP;
#else
    constexpr int G = GROUP;
#endif
    if constexpr (AHEAD > 0 && AHEAD < VPT && UNTESTED == 0)
        store_chunk_params_ahead<AHEAD, T, VPT>(task, out, h0, packs, c, s, st);
    else if constexpr (G > 0 && GroupedParams<Task>::COUNT > 0)
        store_chunk_params_grouped<G, T, VPT, UNTESTED>(task, out, h0, packs, c, s, st);
    else
        store_chunk_by_packs<T, VPT, UNTESTED>(task, out, h0, h1, packs, c, s, st);
}

// One value of a row that is read value by value.
template <typename T>
__device__ __forceinline__ float load_one(const T* p, u64 e) {
    Held q = {{0, 0, 0, 0}};
    Io<T>::set_bits(q, 0, Io<T>::load_bits(p + e, false));
    return Io<T>::get(q, 0);
}

// A thread's values, for a task's chunk_state(values): values(f) calls f(x0, x1, e) for each.
// The values held in registers (chunk c)...
template <typename T, int VPT, int UNTESTED = 0>
struct HeldValues {
    const Held (&h0)[VPT];
    const Held (&h1)[VPT];
    u64 packs;
    unsigned c;
    Slot s;
    template <class F>
    __device__ __forceinline__ void operator()(F& f) const { for_each<T, VPT, UNTESTED>(h0, h1, packs, c, s, f); }
    // How many values this thread holds, and its first (a pivot for the shifted sums).
    __device__ __forceinline__ float count() const {
        float k = 0.0f;
#pragma unroll
        for (int j = 0; j < VPT; ++j) k += j < UNTESTED || pack_index<VPT>(c, j, s) < packs ? (float)Io<T>::PER : 0.0f;
        return k;
    }
    __device__ __forceinline__ float first() const { return 0 < UNTESTED || pack_index<VPT>(c, 0, s) < packs ? Io<T>::get(h0[0], 0) : 0.0f; }
    // The largest value of the first input, NaN if any is NaN, with operators.cuh's PackExtreme:
    // f16 and bf16 from sm_80 on as a pair kept packed across the packs (two values per compare)
    // and widened once at the end; otherwise a pack at a time.
    __device__ __forceinline__ float max() const {
        using Packed = PackExtreme<true, T>;
        if (Packed::PAIRS) {
            unsigned pair = Packed::IDENTITY;
#pragma unroll
            for (int k = 0; k < VPT; ++k)
                if (k < UNTESTED || pack_index<VPT>(c, k, s) < packs) pair = Packed::fold(pair, make_uint4(h0[k].w[0], h0[k].w[1], h0[k].w[2], h0[k].w[3]));
            return Packed::widen_pair(pair);
        }
        float m = -infinity();
#pragma unroll
        for (int k = 0; k < VPT; ++k)
            if (k < UNTESTED || pack_index<VPT>(c, k, s) < packs) m = extreme<true>(m, PackExtreme<true, T>::of(make_uint4(h0[k].w[0], h0[k].w[1], h0[k].w[2], h0[k].w[3])));
        return m;
    }
};
// ...or read value by value from memory, for a row that is not a whole number of aligned packs.
template <typename T, int INPUTS>
struct LoopValues {
    const T* a;
    const T* b;
    u64 n;
    Slot s;
    template <class F>
    __device__ __forceinline__ void operator()(F& f) const {
#pragma unroll 1
        for (u64 e = s.t; e < n; e += s.threads) f(load_one(a, e), INPUTS == 2 ? load_one(b, e) : 0.0f, e);
    }
    __device__ __forceinline__ float count() const { return n > s.t ? (float)((n - s.t + s.threads - 1) / s.threads) : 0.0f; }
    __device__ __forceinline__ float first() const { return n > s.t ? load_one(a, s.t) : 0.0f; }
    __device__ __forceinline__ float max() const {
        float m = -infinity();
#pragma unroll 1
        for (u64 e = s.t; e < n; e += s.threads) m = extreme<true>(m, load_one(a, e));
        return m;
    }
};

// ---- The row program.

// Scratch of the split exchange (unused by the other teams).
struct Exchange {
    float* partials;
    unsigned* arrive;
    unsigned* depart;
};

// Whether a task takes the path without a test per pack. Not the norms: with γ (and β) read per
// pack and no branch in the way, the compiler fetches them all ahead and the cluster entries
// spill (18_norms.cu says no for both).
template <class Task>
struct UntestedPacks {
    static constexpr bool ok = true;
    static constexpr bool in_lanes = true;  // where not `ok`: in the lanes teams all the same
};
template <class Task>
struct UntestedPacks<const Task> : UntestedPacks<Task> {};  // the entries' tasks are const
// Whether a team is a few lanes of a warp (LanesTeam, below).
template <class Team>
struct IsLanesTeam {
    static constexpr bool value = false;
};
// The blocks of a team's cluster (ClusterTeam, below); 0 for the other teams.
template <class Team>
struct ClusterSize {
    static constexpr int C = 0;
};

// Whether a task's (count, mean, M2) of a row held in registers comes from two passes of plain
// team sums (`two_pass_mean_m2`) instead of one team merge of its threads' states: Chan's merge is
// three shuffles and a division a level, the sums' one and two shuffles and adds. A cluster's
// blocks each take two passes over their share and meet by one Chan merge (ClusterTeam::two_pass);
// splits keep the merge. `ok`: in every team; `staged`: in the staged entries (row_program's
// STAGED); `cluster`: in the cluster entries (LayerNorm's, 18_norms.cu).
template <class Task>
struct TwoPassRows {
    static constexpr bool ok = false;
    static constexpr bool staged = false;
    static constexpr bool cluster = false;
};
template <class Task>
struct TwoPassRows<const Task> : TwoPassRows<Task> {};

// Two sums at once (cross-entropy's loss and count; LayerNorm's two weight gradients; the
// deviations and their squares of the two-pass variance).
struct TwoFloats {
    float a, b;
};
template <typename InT>
struct TwoSums : Operator<TwoSums<InT>, InT, TwoFloats> {
    __device__ __forceinline__ TwoFloats identity() const { return TwoFloats{0.0f, 0.0f}; }
    __device__ __forceinline__ TwoFloats combine(TwoFloats x, TwoFloats y) const { return TwoFloats{x.a + y.a, x.b + y.b}; }
    __device__ __forceinline__ TwoFloats lift(InT x, u64) const { return TwoFloats{widen(x), 1.0f}; }
};

// The two-pass variance of a row held in registers (TwoPassRows), defined after the welford
// listing whose pieces it shares: the values' plain sum for a first mean, then the shifted sums
// about it.
struct SumOf {
    float s;
    __device__ __forceinline__ void operator()(float x, float, u64) { s += x; }
};
template <class Values, class Team>
__device__ __forceinline__ MeanM2 two_pass_mean_m2(const Values& values, u64 n, const Team& team);
template <class Values, class Team>
__device__ __forceinline__ MeanM2 two_pass_mean_m2_counted(const Values& values, const Team& team);

// ANCHOR: row_program
// How a row is walked: 16-byte packs when it and its operands are aligned and it is a whole
// number of packs (`vec`), in `chunks` chunks of the team's registers (1: the row is held).
struct RowShape {
    u64 n, packs;
    bool live, vec;
    unsigned chunks;
};

template <class Task, int VPT>
__device__ __forceinline__ RowShape shape_of(const Task& task, u64 row, bool live, Slot s) {
    using T = typename Task::T;
    RowShape r;
    r.n = task.cols;
    r.live = live;
    r.vec = live && task.vectorizable(row);
    r.packs = r.n / Io<T>::PER;
    const u64 per_chunk = (u64)s.threads * VPT;
    r.chunks = r.vec ? (unsigned)((r.packs + per_chunk - 1) / per_chunk) : 0;
    return r;
}

template <class Task, int VPT, int UNTESTED = 0>
__device__ __forceinline__ void load_row(const Task& task, const RowShape& r, u64 row, unsigned c, Slot s, Held (&h0)[VPT], Held (&h1)[VPT]) {
    load_chunk<VPT, UNTESTED>(h0, task.in0(row), r.packs, c, s);
    if (Task::INPUTS == 2) load_chunk<VPT, UNTESTED>(h1, task.in1(row), r.packs, c, s);
}

// This thread's state of the row: from its registers when the row is held (chunk 0 already
// loaded), chunk by chunk otherwise, value by value for a row that is not a whole number of
// aligned packs.
template <class Task, int VPT, int UNTESTED = 0>
__device__ __forceinline__ typename Task::Op::State row_state(const Task& task, const RowShape& r, u64 row, Slot s, Held (&h0)[VPT], Held (&h1)[VPT]) {
    using T = typename Task::T;
    const typename Task::Op op{};
    typename Task::Op::State st = op.identity();
    if (r.vec) {
        for (unsigned c = 0; c < r.chunks; ++c) {
            if (r.chunks > 1) load_row<Task, VPT>(task, r, row, c, s, h0, h1);
            st = op.combine(st, task.chunk_state(HeldValues<T, VPT, UNTESTED>{h0, h1, r.packs, c, s}));
        }
    } else if (r.live) {
        st = task.chunk_state(LoopValues<T, Task::INPUTS>{task.in0(row), task.in1(row), r.n, s});
    }
    return st;
}

// The output row: from the registers when held, the last chunk first (the most recently read,
// the likeliest still in L2) otherwise.
template <class Task, int VPT, int UNTESTED = 0, int GROUP = 0, int AHEAD = 0>
__device__ __forceinline__ void row_write(const Task& task, const RowShape& r, u64 row, Slot s, Held (&h0)[VPT], Held (&h1)[VPT],
                                          const typename Task::Stats& stats) {
    using T = typename Task::T;
    if (!Task::WRITES_ROW || !r.live) return;
    if (r.vec) {
        for (unsigned c = r.chunks; c-- > 0;) {
            if (r.chunks > 1) load_row<Task, VPT>(task, r, row, c, s, h0, h1);
            store_chunk<T, VPT, UNTESTED, GROUP, AHEAD>(task, task.out(row), h0, h1, r.packs, c, s, stats);
        }
    } else {
        const T* a = task.in0(row);
        const T* b = task.in1(row);
        T* y = task.out(row);
#pragma unroll 1
        for (u64 e = s.t; e < r.n; e += s.threads)
            Io<T>::store_one(y + e, task.map_one(load_one(a, e), Task::INPUTS == 2 ? load_one(b, e) : 0.0f, e, stats));
    }
}

// The loads of a row held in one chunk (a longer row's chunks are loaded by row_state), then
// this thread's state of it.
template <class Task, int VPT, int UNTESTED>
__device__ __forceinline__ typename Task::Op::State row_loads_and_state(const Task& task, const RowShape& r, u64 row, Slot s, Held (&h0)[VPT],
                                                                     Held (&h1)[VPT], typename Task::Pre& pre) {
    if (r.vec && r.chunks == 1) load_row<Task, VPT, UNTESTED>(task, r, row, 0, s, h0, h1);
    pre = task.after_loads(row, pre);
    return row_state<Task, VPT, UNTESTED>(task, r, row, s, h0, h1);
}

// One row, by the threads of `s`: the state of each chunk, the team's state (`combine_team`),
// the row's statistics, and, for tasks that write a row, the output. A row the team holds in one
// chunk is read from memory once.
template <class Task, int VPT, bool STAGED = false, class CombineTeam, class Shared = NoSharedParams>
__device__ __forceinline__ typename Task::Stats row_program(const Task& task, u64 row, bool live, Slot s, CombineTeam combine_team,
                                                            Shared& shared) {
    const RowShape r = shape_of<Task, VPT>(task, row, live, s);
    Held h0[VPT], h1[VPT];
#pragma unroll
    for (int k = 0; k < VPT; ++k) h0[k] = h1[k] = Held{{0, 0, 0, 0}};
    typename Task::Pre pre = task.begin(row, live && s.t == 0);  // before the row's loads (cross-entropy's target)
    // A row the team holds exactly (its packs the team's threads × VPT) takes the loops without a
    // test per pack. The combine stays one call, outside both branches (the lanes of a warp may
    // take different ones). Measured and not taken: the same for rows one pack per thread short
    // (an LLM's 128256 columns) was slower, and a third copy of the row's code beside the other two
    // cost the exact rows part of their gain. Rows of several chunks keep the tests (there the
    // cluster entries spilled).
    constexpr bool untested = UntestedPacks<Task>::ok || (UntestedPacks<Task>::in_lanes && IsLanesTeam<CombineTeam>::value);
    const bool full = untested && r.vec && r.chunks == 1 && r.packs == (u64)s.threads * VPT;
    typename Task::Op::State st;
#ifdef DL_PARAMS_EARLY
    EarlyParams<Task, VPT> early;
    const bool held = r.vec && r.chunks == 1;
#endif
    // The staged entries' parameters (sm_80 and later): their copies are issued just before the
    // row's loads, a few instructions, and the loads follow at once.
    [[maybe_unused]] bool staged = false;
    // (A cluster stages ClusterStaged's count of the parameters, a block all of them.)
    [[maybe_unused]] constexpr int STAGED_COUNT = ClusterSize<CombineTeam>::C > 0 ? ClusterStaged<Task>::count : GroupedParams<Task>::COUNT;
#if __CUDA_ARCH__ >= 800
    if constexpr (STAGED) {
        staged = r.vec && r.chunks == 1 && StagedParams<Task, VPT, STAGED_COUNT>::fits();
        if (staged) StagedParams<Task, VPT, STAGED_COUNT>::load(task, r.packs, s);
    }
#endif
    // The staged and cluster entries take LayerNorm's two passes (TwoPassRows::staged, ::cluster).
    constexpr bool two_pass = TwoPassRows<Task>::ok || (STAGED && TwoPassRows<Task>::staged) ||
                              (ClusterSize<CombineTeam>::C > 0 && TwoPassRows<Task>::cluster);
    if constexpr (two_pass && CombineTeam::TWO_PASS) {
        if (full)
            load_row<Task, VPT, VPT>(task, r, row, 0, s, h0, h1);
        else if (r.vec && r.chunks == 1)
            load_row<Task, VPT>(task, r, row, 0, s, h0, h1);
#ifdef DL_PARAMS_EARLY
        if constexpr (EarlyParams<Task, VPT>::ok && !STAGED)
            if (held) early.load(task, r.packs, s);
#endif
        pre = task.after_loads(row, pre);
        // The same path for the whole warp (its lanes may hold several teams' rows): the shuffles
        // of the two sums and of the merge are not the same.
        if (__all_sync(0xffffffffu, r.vec && r.chunks == 1)) {
            if (untested && __all_sync(0xffffffffu, full))
                st = combine_team.two_pass(HeldValues<typename Task::T, VPT, VPT>{h0, h1, r.packs, 0, s}, r.n);
            else
                st = combine_team.two_pass(HeldValues<typename Task::T, VPT, 0>{h0, h1, r.packs, 0, s}, r.n);
        } else {
            combine_team.before_merge();
            st = combine_team(row_state<Task, VPT>(task, r, row, s, h0, h1));
        }
    } else {
        st = full ? row_loads_and_state<Task, VPT, VPT>(task, r, row, s, h0, h1, pre)
                  : row_loads_and_state<Task, VPT, 0>(task, r, row, s, h0, h1, pre);
        st = combine_team(st);
    }
    const typename Task::Stats stats = task.finish(row, live, s.t == 0, st, pre);
    if constexpr (Shared::ACTIVE) {
        shared.wait_once();  // (every thread of the block passes here in its first row)
        if (r.vec && r.chunks == 1 && shared.write(task, task.out(row), h0, r.packs, s, stats)) return stats;
    }
    if constexpr (STAGED) {
#if __CUDA_ARCH__ >= 800
        if (staged) {  // (a held row is live: shape_of)
            StagedParams<Task, VPT, STAGED_COUNT>::write(task, task.out(row), h0, r.packs, s, stats);
            return stats;
        }
#endif
        // A row of several chunks (the planner gives those no shared memory): the parameters in
        // groups of 4 packs (loaded ahead instead under the norms' ahead switches). A cluster
        // without the room (ClusterStaged) loads each pack's as it is written: the fewest
        // registers beside the staged write.
        if constexpr (ClusterSize<CombineTeam>::C == 0)
            row_write<Task, VPT, 0, 4, ParamAhead<Task>::packs(0)>(task, r, row, s, h0, h1, stats);
        else
            row_write<Task, VPT>(task, r, row, s, h0, h1, stats);
        return stats;
    }
#ifdef DL_PARAMS_EARLY
    if constexpr (EarlyParams<Task, VPT>::ok && TwoPassRows<Task>::ok && CombineTeam::TWO_PASS) {
        if (held) {  // (a held row is live: shape_of)
            early.write(task, task.out(row), h0, r.packs, s, stats);
            return stats;
        }
    }
#endif
    // (Where the block stages its parameters, the rows it could not stage take the tested write:
    // the untested one, never taken where a row is staged, set the entry's register count.)
    constexpr int ahead = ParamAhead<Task>::packs(ClusterSize<CombineTeam>::C);
    if (full && !Shared::ACTIVE)
        row_write<Task, VPT, VPT>(task, r, row, s, h0, h1, stats);
    else
        row_write<Task, VPT, 0, 0, ahead>(task, r, row, s, h0, h1, stats);
    return stats;
}
template <class Task, int VPT, bool STAGED = false, class CombineTeam>
__device__ __forceinline__ typename Task::Stats row_program(const Task& task, u64 row, bool live, Slot s, CombineTeam combine_team) {
    NoSharedParams none;
    return row_program<Task, VPT, STAGED>(task, row, live, s, combine_team, none);
}
// ANCHOR_END: row_program

// The members of a task with nothing to fetch ahead of a row (a macro, not a base class, so that
// tasks stay aggregates: Task{x, y, ...}).
struct NoPrefetch {};
#define DL_NO_PREFETCH                                                                              \
    using Pre = ::dl::NoPrefetch;                                                                   \
    __device__ __forceinline__ Pre begin(u64, bool) const { return Pre{}; }                         \
    __device__ __forceinline__ Pre after_loads(u64, Pre p) const { return p; }

// The teams' combines, as functors for row_program.
// `sum`, `sums`: a float's (a pair's) team sum, the same in every thread; `two_pass`: the row's
// (count, mean, M2) from such sums (for TwoPassRows), which TWO_PASS says a team has.
template <class Op>
struct LanesTeam {
    Op op;
    unsigned lanes;
    static constexpr bool TWO_PASS = true;
    __device__ __forceinline__ typename Op::State operator()(typename Op::State s) const { return warp_allreduce(op, s, lanes); }
    __device__ __forceinline__ float sum(float x) const { return warp_allreduce(::Sum<float, float>{}, x, lanes); }
    __device__ __forceinline__ TwoFloats sums(TwoFloats x) const { return warp_allreduce(TwoSums<float>{}, x, lanes); }
    __device__ __forceinline__ float first_sum(float x) const { return sum(x); }
    __device__ __forceinline__ TwoFloats second_sums(TwoFloats x) const { return sums(x); }
    __device__ __forceinline__ void before_merge() const {}
    template <class Values>
    __device__ __forceinline__ MeanM2 two_pass(const Values& values, u64 n) const { return two_pass_mean_m2(values, n, *this); }
};
template <class Op>
struct IsLanesTeam<LanesTeam<Op>> {
    static constexpr bool value = true;
};
#ifdef DL_TEAM_ONE_BARRIER
// Every thread gets the block's combination after one barrier (block_allreduce takes four): each
// warp's lanes combine by XOR, the same bits in every lane; lane 0 writes the warp's state; after
// the barrier each team of lanes as many as the warps (rounded up to a power of two) combines the
// warps' states the same way, so every thread gets the same bits. No barrier at the end: `slots`
// may be written again only after another barrier.
template <typename Op>
__device__ __forceinline__ typename Op::State block_allreduce_one_barrier(const Op& op, typename Op::State v, typename Op::State* slots) {
    const unsigned lane = threadIdx.x % 32, warps = blockDim.x / 32;
    v = warp_allreduce(op, v, 32);
    if (lane == 0) slots[threadIdx.x / 32] = v;
    __syncthreads();
    unsigned width = 1;  // the warps, rounded up to a power of two
    while (width < warps) width <<= 1;
    // Each team of `width` lanes combines all the warps' states, so that every lane gets them.
    const unsigned w = lane & (width - 1);
    return warp_allreduce(op, w < warps ? slots[w] : op.identity(), width);
}
#endif
template <class Op>
struct BlockTeam {
    Op op;
    typename Op::State* warp_states;
    static constexpr bool TWO_PASS = true;
    __device__ __forceinline__ typename Op::State operator()(typename Op::State s) const { return block_allreduce(op, s, warp_states); }
    // The warps' slots hold a state each; a float fits in one (every state is whole 4-byte words).
    __device__ __forceinline__ float sum(float x) const { return block_allreduce(::Sum<float, float>{}, x, reinterpret_cast<float*>(warp_states)); }
    // (Only for states of at least two words: a pair must fit in each warp's slot.)
    __device__ __forceinline__ TwoFloats sums(TwoFloats x) const {
        static_assert(sizeof(typename Op::State) >= sizeof(TwoFloats), "a pair of floats must fit in a warp's slot");
        return block_allreduce(TwoSums<float>{}, x, reinterpret_cast<TwoFloats*>(warp_states));
    }
#ifdef DL_TEAM_ONE_BARRIER
    // An experiment: the two sums of a row's two passes (two_pass_mean_m2), one barrier each, in
    // two regions of the slots: the first sum's 32 floats, then the pairs' 64 (a Welford state
    // is three words, so the 32 slots hold both). Neither region is written again before the
    // block has passed the other's barrier, in the order first, second, first...; a merge after
    // the second sum (a row that is not held) passes a barrier first (before_merge).
    __device__ __forceinline__ float first_sum(float x) const {
        static_assert(sizeof(typename Op::State) >= 3 * sizeof(float), "the two regions must fit in the slots");
        return block_allreduce_one_barrier(::Sum<float, float>{}, x, reinterpret_cast<float*>(warp_states));
    }
    __device__ __forceinline__ TwoFloats second_sums(TwoFloats x) const {
        return block_allreduce_one_barrier(TwoSums<float>{}, x, reinterpret_cast<TwoFloats*>(reinterpret_cast<float*>(warp_states) + 32));
    }
    __device__ __forceinline__ void before_merge() const { __syncthreads(); }
#else
    __device__ __forceinline__ float first_sum(float x) const { return sum(x); }
    __device__ __forceinline__ TwoFloats second_sums(TwoFloats x) const { return sums(x); }
    __device__ __forceinline__ void before_merge() const {}
#endif
    template <class Values>
    __device__ __forceinline__ MeanM2 two_pass(const Values& values, u64 n) const { return two_pass_mean_m2(values, n, *this); }
};
#if __CUDA_ARCH__ >= 900
template <class Op, int C>
struct ClusterTeam {
    static constexpr bool TWO_PASS = true;
    Op op;
    typename Op::State* warp_states;
    ClusterExchange<C, typename Op::State>* exchange;
    __device__ __forceinline__ typename Op::State operator()(typename Op::State s) const { return exchange->allreduce(op, s, warp_states); }
    __device__ __forceinline__ void before_merge() const {}  // the block sums of two_pass end with a barrier
    // Each block's own (count, mean, M2) from two passes of block sums, then the C blocks' states
    // by Chan's merge in one exchange: a row's sums across the cluster would take two.
    template <class Values>
    __device__ __forceinline__ MeanM2 two_pass(const Values& values, u64) const {
        return exchange->merge_blocks(op, two_pass_mean_m2_counted(values, BlockTeam<Op>{op, warp_states}));
    }
};
template <class Op, int BLOCKS>
struct ClusterSize<ClusterTeam<Op, BLOCKS>> {
    static constexpr int C = BLOCKS;
};
#endif
template <class Op>
struct SplitTeam {
    static constexpr bool TWO_PASS = false;
    Op op;
    typename Op::State* warp_states;
    typename Op::State* partials;
    unsigned* arrive;
    unsigned* depart;
    u64 row;
    unsigned slice, slices;
    __device__ __forceinline__ typename Op::State operator()(typename Op::State s) const {
        return split_allreduce(op, s, warp_states, partials, arrive, depart, row, slice, slices);
    }
};

// A team of `lanes` lanes per row, blockDim.x / lanes rows per block, rows in a grid-stride
// loop. The loop's test is on the warp's first row, so a warp's lanes run the same iterations
// and the full-mask shuffles are safe.
template <class Task, int VPT>
__device__ __forceinline__ void rows_by_lanes(const Task& task, unsigned lanes) {
    using Op = typename Task::Op;
    const Op op{};
    const u64 rows_per_block = blockDim.x / lanes, rows_per_warp = 32 / lanes;
    const Slot s = {threadIdx.x % lanes, lanes};
#if __CUDA_ARCH__ >= 800
    typename Choose<StagedLanes<Task>::ok, LanesParams<Task, VPT>, NoSharedParams>::type shared(task, lanes);
#else
    NoSharedParams shared;
#endif
    for (u64 first = (u64)blockIdx.x * rows_per_block + threadIdx.x / 32 * rows_per_warp; first < task.rows;
         first += (u64)gridDim.x * rows_per_block) {
        const u64 row = first + threadIdx.x % 32 / lanes;
        row_program<Task, VPT>(task, row, row < task.rows, s, LanesTeam<Op>{op, lanes}, shared);
    }
    shared.wait_once();  // a warp with no row still passes the block's one barrier
}

// One block per row, rows in a grid-stride loop (STAGED: the parameters staged in shared memory).
template <class Task, int VPT, bool STAGED = false>
__device__ __forceinline__ void rows_by_block(const Task& task) {
    using Op = typename Task::Op;
    const Op op{};
    __shared__ typename Op::State warp_states[32];
    const Slot s = {threadIdx.x, blockDim.x};
    for (u64 row = blockIdx.x; row < task.rows; row += gridDim.x) {
        row_program<Task, VPT, STAGED>(task, row, true, s, BlockTeam<Op>{op, warp_states});
    }
}

#if __CUDA_ARCH__ >= 900
// C blocks (one cluster) per row, one row per cluster: gridDim.x = C × rows.
template <class Task, int VPT, int C>
__device__ __forceinline__ void rows_by_cluster(const Task& task) {
    using Op = typename Task::Op;
    const Op op{};
    __shared__ typename Op::State warp_states[32];
    __shared__ ClusterExchange<C, typename Op::State> exchange;
    exchange.open();  // before the row's loads: the cluster barrier it arrives at completes behind them
    const u64 row = blockIdx.x / C;
    const Slot s = {cluster_rank() * blockDim.x + threadIdx.x, C * blockDim.x};
    row_program<Task, VPT, ClusterStaged<Task>::ok>(task, row, row < task.rows, s, ClusterTeam<Op, C>{op, warp_states, &exchange});
}
#endif

// ANCHOR: split
// S co-resident blocks per row: block b is slice b % S of rows b / S, b / S + gridDim.x / S, ...
// While a block waits for its row's other slices and writes its own, the loads of its slice of
// the next row are already in flight (a second set of registers): the wait costs no bandwidth.
template <class Task, int VPT>
__device__ __forceinline__ void rows_by_split(const Task& task, unsigned slices, Exchange ex) {
    using Op = typename Task::Op;
    typedef typename Op::State S;
    const Op op{};
    __shared__ S warp_states[32];
    const unsigned slice = blockIdx.x % slices, groups = gridDim.x / slices;
    const Slot s = {slice * blockDim.x + threadIdx.x, slices * blockDim.x};
    Held a0[VPT], a1[VPT], b0[VPT], b1[VPT];
#pragma unroll
    for (int k = 0; k < VPT; ++k) a0[k] = a1[k] = b0[k] = b1[k] = Held{{0, 0, 0, 0}};
    u64 row = blockIdx.x / slices;
    RowShape r = shape_of<Task, VPT>(task, row, row < task.rows, s);
    if (r.vec && r.chunks == 1) load_row<Task, VPT>(task, r, row, 0, s, a0, a1);
    for (; row < task.rows; row += groups) {
        const u64 next = row + groups;
        const RowShape rn = shape_of<Task, VPT>(task, next, next < task.rows, s);
        typename Task::Pre pre = task.after_loads(row, task.begin(row, s.t == 0));
        S st = row_state<Task, VPT>(task, r, row, s, a0, a1);
        if (rn.vec && rn.chunks == 1) load_row<Task, VPT>(task, rn, next, 0, s, b0, b1);  // in flight during the wait
        st = split_allreduce(op, st, warp_states, reinterpret_cast<S*>(ex.partials), ex.arrive, ex.depart, row, slice, slices);
        const typename Task::Stats stats = task.finish(row, true, s.t == 0, st, pre);
        row_write<Task, VPT>(task, r, row, s, a0, a1, stats);
#pragma unroll
        for (int k = 0; k < VPT; ++k) {
            a0[k] = b0[k];
            a1[k] = b1[k];
        }
        r = rn;
    }
}
// ANCHOR_END: split

// ---- The operators of the row states, in operators.cuh's form (identity, combine, lift).

// ANCHOR: online_merge
// Online softmax (Milakov & Gimelshein, 2018): a running maximum m and the sum s of e^(x - m)
// over the values seen. Two states merge by rescaling each sum to the larger maximum:
//   (m_a, s_a) ⊕ (m_b, s_b) = (M, s_a·e^(m_a − M) + s_b·e^(m_b − M)),  M = max(m_a, m_b).
// `rescaled`: a side whose maximum is the merged maximum M keeps its sum as it is; any other
// side's sum is multiplied by e^(m − M), which is 0 for a side with m = −∞ (no finite value seen)
// under a finite M. Two sides both at m = −∞ (so M = −∞) therefore add their sums unscaled
// instead of computing e^(−∞ + ∞) = NaN.
struct MaxSum {
    float max, sum;
};
__device__ __forceinline__ float rescaled(float m, float s, float to) { return m == to ? s : s * ex2((m - to) * LOG2E); }

template <typename InT>
struct OnlineSoftmax : Operator<OnlineSoftmax<InT>, InT, MaxSum> {
    __device__ __forceinline__ MaxSum identity() const { return MaxSum{-infinity(), 0.0f}; }
    __device__ __forceinline__ MaxSum combine(MaxSum a, MaxSum b) const {
        const float m = fmaxf(a.max, b.max);
        return MaxSum{m, rescaled(a.max, a.sum, m) + rescaled(b.max, b.sum, m)};
    }
    __device__ __forceinline__ MaxSum lift(InT x, u64) const { return MaxSum{widen(x), 1.0f}; }
};

// Accumulators a values visitor feeds (functors: see for_each).
struct MaxOf {
    float m;
    __device__ __forceinline__ void operator()(float x, float, u64) { m = fmaxf(m, x); }
};
struct ExpSumOf {
    float shift, s;
    __device__ __forceinline__ void operator()(float x, float, u64) { s += ex2((x - shift) * LOG2E); }
};

// e^(x − m) in one FMA and one ex2 a value, where (x − m)·log2e takes an add and a multiply:
// m·log2e is split exactly into hi + lo (hi rounded, lo = m·log2e − hi by an FMA), so that
//   e^(x − m) = 2^(x·log2e − hi) · 2^(−lo),
// and the FMA x·log2e − hi rounds once, relative to (x − m)·log2e + lo, where the add and the
// multiply rounded twice. The factor 2^(−lo) is applied once, to the sum or the row's scale. For
// bf16 the add was one of five instructions a value (convert, add, multiply, ex2, sum).
// |lo| is at most half an ulp of hi: taken for |m| < 2^30 only, where |lo| ≤ 64, so that no term
// 2^(x·log2e − hi) overflows; a term under 2^(−126 + |lo|) of the largest then flushes to 0 (a
// sum keeps nothing that small anyway). For larger |m| every other value is at least 64 below m:
// 2^(4·(x − m)) (exact scalings of x and m) gives 1 at m and 0 elsewhere, where e^(x − m) is at
// most e^−64. m = ±∞ or NaN: x − m as it is (NaN where x − m is). The caller passes 0 for m = −∞.
struct ExpShift {
    float a, b, scale;  // e^(x − m) = 2^(x·a + b) · scale
    __device__ __forceinline__ float operator()(float x) const { return ex2(fmaf(x, a, b)); }
};
__device__ __forceinline__ ExpShift exp_shift(float m) {
    const float size = fabsf(m);
    if (size < 0x1p30f) {
        const float hi = m * LOG2E;
        return ExpShift{LOG2E, -hi, ex2(-fmaf(m, LOG2E, -hi))};
    }
    if (size < 0x1p125f) return ExpShift{4.0f, -4.0f * m, 1.0f};
    if (size <= 3.40282347e38f) return ExpShift{0x1p-90f, -m * 0x1p-90f, 1.0f};  // every other value ≥ 2^101 below m: (x − m)·2^-90 ≤ −2048
    return ExpShift{1.0f, -m, 1.0f};
}
struct ShiftedExpSumOf {
    ExpShift k;
    float s;
    __device__ __forceinline__ void operator()(float x, float, u64) { s += k(x); }
};

// The state of a thread's own values: their maximum, then the sum of e^(x − max).
template <class Values>
__device__ __forceinline__ MaxSum max_sum_of(const Values& values) {
    const float m = values.max();
    ShiftedExpSumOf e{exp_shift(m == -infinity() ? 0.0f : m), 0.0f};  // −∞ values then give 0, NaN stays NaN
    values(e);
    return MaxSum{m, e.s * e.k.scale};
}
// ANCHOR_END: online_merge

// ANCHOR: welford
// A thread's own values as operators.cuh's (count, mean, M2), in one pass over its registers:
// sums of (x − K) and (x − K)² about K, the thread's first value (close to the others, so that
// nothing cancels), and the count known without counting. Exact but for rounding; the threads'
// states then meet by Chan's merge (chan_merge in operators.cuh).
struct ShiftedOf {
    float pivot, s1, s2;
    __device__ __forceinline__ void operator()(float x, float, u64) {
        const float d = x - pivot;
        s1 += d;
        s2 = fmaf(d, d, s2);
    }
};
// (count, mean, M2) of `count` values from their sums about K.
__device__ __forceinline__ MeanM2 mean_m2_about(float count, const ShiftedOf& acc) {
    const float shift = acc.s1 / count;  // mean − K
    // M2 = Σ(x − K)² − count·(mean − K)², never below 0 whatever the rounding.
    return MeanM2{count, acc.pivot + shift, fmaxf(fmaf(-acc.s1, shift, acc.s2), 0.0f)};
}
template <class Values>
__device__ __forceinline__ MeanM2 mean_m2_of(const Values& values) {
    const float count = values.count();
    if (count == 0.0f) return MeanM2{0.0f, 0.0f, 0.0f};
    ShiftedOf acc{values.first(), 0.0f, 0.0f};
    values(acc);
    return mean_m2_about(count, acc);
}

// A sum of squares, and the dot product of the two inputs.
struct SquaresOf {
    float s;
    __device__ __forceinline__ void operator()(float x, float, u64) { s = fmaf(x, x, s); }
};
struct DotOf {
    float s;
    __device__ __forceinline__ void operator()(float a, float b, u64) { s = fmaf(a, b, s); }
};
// ANCHOR_END: welford

// The corrected two-pass variance (Chan, Golub and LeVeque 1983) of a row the team holds: a
// first mean m̂ from the plain sum, then the sums of d = x − m̂ and d² about it, each summed by the
// team; mean = m̂ + Σd/n and M2 = Σd² − (Σd)²/n (mean_m2_about). The plain sum of values far from
// zero is rounded at their scale (rows of mean 300 and spread 0.006: the tests' BigMean), so m̂
// alone can be off by much of σ; d is exact where x and m̂ are within a factor of two, and Σd
// takes the error back out.
// The second pass: the team's sums of the deviations from the first mean and of their squares.
// (SECOND: the team's sum of a row's second pass, after its first_sum: DL_TEAM_ONE_BARRIER's slots.)
template <bool SECOND, class Values, class Team>
__device__ __forceinline__ MeanM2 second_pass_about(const Values& values, float count, float first_mean, const Team& team) {
    ShiftedOf dev{first_mean, 0.0f, 0.0f};
    values(dev);
    const TwoFloats pair{dev.s1, dev.s2};
    TwoFloats d;
    if constexpr (SECOND)
        d = team.second_sums(pair);
    else
        d = team.sums(pair);
    return mean_m2_about(count, ShiftedOf{dev.pivot, d.a, d.b});
}
template <class Values, class Team>
__device__ __forceinline__ MeanM2 two_pass_mean_m2(const Values& values, u64 n, const Team& team) {
    const float count = (float)n;
    SumOf sum{0.0f};
    values(sum);
    return second_pass_about<true>(values, count, team.first_sum(sum.s) / count, team);
}
// The same for a team's share of a row (a block of a cluster), its count not known ahead: the
// first pass sums the values and their count as a pair (a count 0 gives Chan's identity).
template <class Values, class Team>
__device__ __forceinline__ MeanM2 two_pass_mean_m2_counted(const Values& values, const Team& team) {
    SumOf sum{0.0f};
    values(sum);
    const TwoFloats total = team.sums(TwoFloats{sum.s, values.count()});
    if (total.b == 0.0f) return MeanM2{0.0f, 0.0f, 0.0f};  // the same in every thread of the team
    return second_pass_about<false>(values, total.b, total.a / total.b, team);
}

}  // namespace dl

// ---- Entry points. Every task's entries share one signature, ending in
//   (u64 rows, u64 cols, u64 ld, unsigned team, float* partials, unsigned* arrive, unsigned* depart)
// where `team` is the lanes per row (lanes entries) or the blocks per row (split entries), and
// the last three are the split's scratch. One entry per team kind and VPT:
//   <op>_lanes<VPT>_<type>, <op>_block<VPT>_<type>, <op>_split<VPT>_<type>,
//   <op>_cluster<C>x<VPT>_<type> (sm_90 and later only), and for the norms
//   <op>_block<VPT>_staged_<type> (sm_80 and later only).
// The launch bound caps the block (and so leaves each thread the registers its VPT packs need);
// the staged entries keep the block entries' bound of 1024 for its register cap (at 256, NVRTC
// gave LayerNorm's 64 to 80 registers), and the planner's menu caps their blocks at 256 for their
// shared memory.
#define DL_TAIL_PARAMS u64 rows, u64 cols, u64 ld, unsigned team, float *partials, unsigned *arrive, unsigned *depart
// An experiment (REDUCTION_NVRTC_OPTIONS=-DDL_LANES8_MIN_BLOCKS=4): the lanes entries of 8 packs
// bounded to that many blocks of 256 an SM. Since the exponent became one FMA (a9dbfd8), NVRTC
// 13.0 gives softmax's and log_softmax's lanes of 8 packs 80 registers a thread at sm_90, 3 blocks
// an SM (63 before; Nsight Compute's profile of softmax f32 2^20 × 256 in the book is of that
// build); cross-entropy's keep 4 by the same bound (CE_LANES). At 4 blocks (64 registers) none of
// the lanes entries of 8 packs touches local memory; at 5, 17 to 184 local loads and stores each.
// Only the entries of 8 packs: NVRTC compiles `__launch_bounds__(256, 1)` differently from
// `__launch_bounds__(256)`, so the fewer packs keep the default's exact form (the switch's first
// form, timed in session 49, gave them the former).
#define DL_LANES_BOUND_1 __launch_bounds__(256)
#define DL_LANES_BOUND_2 __launch_bounds__(256)
#define DL_LANES_BOUND_4 __launch_bounds__(256)
#ifdef DL_LANES8_MIN_BLOCKS
#define DL_LANES_BOUND_8 __launch_bounds__(256, DL_LANES8_MIN_BLOCKS)
#else
#define DL_LANES_BOUND_8 __launch_bounds__(256)
#endif
#define DL_LANES_BOUND(VPT) DL_LANES_BOUND_##VPT
#define DL_LANES(op, sfx, VPT, PARAMS, TASK)                                                      \
    extern "C" __global__ void DL_LANES_BOUND(VPT) op##_lanes##VPT##_##sfx PARAMS {                    \
        const auto task = TASK;                                                                   \
        dl::rows_by_lanes<decltype(task), VPT>(task, team);                                      \
    }
// An experiment (REDUCTION_NVRTC_OPTIONS=-DDL_BLOCK_MAXNREG=48): the block entries capped at that
// many registers a thread instead of bounded by their largest block, for more warps an SM where the
// planner gives them small blocks. (The two attributes cannot be given together.)
#if defined(DL_PARAMS_EARLY)
// (A row's parameters beside its values: blocks of at most 512 threads, 128 registers a thread.
// The planner does not know: where it takes blocks of 1024, the launch is refused.)
#define DL_BLOCK_LIMIT(BOUND) __launch_bounds__(BOUND < 512 ? BOUND : 512)
#elif defined(DL_BLOCK_MAXNREG)
#define DL_BLOCK_LIMIT(BOUND) __maxnreg__(DL_BLOCK_MAXNREG)
#else
#define DL_BLOCK_LIMIT(BOUND) __launch_bounds__(BOUND)
#endif
#define DL_BLOCK(op, sfx, VPT, BOUND, PARAMS, TASK)                                               \
    extern "C" __global__ void DL_BLOCK_LIMIT(BOUND) op##_block##VPT##_##sfx PARAMS {                 \
        const auto task = TASK;                                                                   \
        dl::rows_by_block<decltype(task), VPT>(task);                                             \
    }
// The staged blocks (StagedParams): sm_80 and later (cp.async), for the tasks with parameters.
#if __CUDA_ARCH__ >= 800
#define DL_BLOCK_STAGED(op, sfx, VPT, BOUND, PARAMS, TASK)                                        \
    extern "C" __global__ void __launch_bounds__(BOUND) op##_block##VPT##_staged_##sfx PARAMS {      \
        const auto task = TASK;                                                                   \
        dl::rows_by_block<decltype(task), VPT, true>(task);                                       \
    }
#else
#define DL_BLOCK_STAGED(op, sfx, VPT, BOUND, PARAMS, TASK)
#endif
#define DL_SPLIT(op, sfx, VPT, BOUND, PARAMS, TASK)                                               \
    extern "C" __global__ void __launch_bounds__(BOUND) op##_split##VPT##_##sfx PARAMS {              \
        const auto task = TASK;                                                                   \
        dl::rows_by_split<decltype(task), VPT>(task, team, dl::Exchange{partials, arrive, depart}); \
    }
#if __CUDA_ARCH__ >= 900
#define DL_CLUSTER(op, sfx, C, VPT, BOUND, PARAMS, TASK)                                          \
    extern "C" __global__ void __cluster_dims__(C, 1, 1) __launch_bounds__(BOUND)                  \
    op##_cluster##C##x##VPT##_##sfx PARAMS {                                                      \
        const auto task = TASK;                                                                   \
        dl::rows_by_cluster<decltype(task), VPT, C>(task);                                        \
    }
#else
#define DL_CLUSTER(op, sfx, C, VPT, BOUND, PARAMS, TASK)
#endif

// The menu every row task is instantiated for: what the planner (src/kernels/dl/plan.rs, whose
// `Menu` lists the same entries), the tests and the benchmark launch. The prototype harness
// (plots/dl_prototype) builds with -DDL_FULL_MENU: every candidate it measured.
#ifdef DL_FULL_MENU
#define DL_ROW_ENTRIES(op, sfx, PARAMS, TASK)                                                     \
    DL_LANES(op, sfx, 1, PARAMS, TASK)                                                            \
    DL_LANES(op, sfx, 2, PARAMS, TASK)                                                            \
    DL_LANES(op, sfx, 4, PARAMS, TASK)                                                            \
    DL_LANES(op, sfx, 8, PARAMS, TASK)                                                            \
    DL_BLOCK(op, sfx, 2, 1024, PARAMS, TASK)                                                      \
    DL_BLOCK(op, sfx, 4, 1024, PARAMS, TASK)                                                      \
    DL_BLOCK(op, sfx, 8, 1024, PARAMS, TASK)                                                      \
    DL_BLOCK(op, sfx, 16, 512, PARAMS, TASK)                                                      \
    DL_SPLIT(op, sfx, 4, 512, PARAMS, TASK)                                                       \
    DL_SPLIT(op, sfx, 8, 512, PARAMS, TASK)                                                       \
    DL_SPLIT(op, sfx, 16, 256, PARAMS, TASK)                                                      \
    DL_CLUSTER(op, sfx, 2, 8, 1024, PARAMS, TASK)                                                 \
    DL_CLUSTER(op, sfx, 4, 8, 1024, PARAMS, TASK)                                                 \
    DL_CLUSTER(op, sfx, 8, 8, 1024, PARAMS, TASK)                                                 \
    DL_CLUSTER(op, sfx, 4, 16, 512, PARAMS, TASK)                                                 \
    DL_CLUSTER(op, sfx, 8, 16, 512, PARAMS, TASK)                                                 \
    DL_CLUSTER(op, sfx, 16, 8, 1024, PARAMS, TASK)

#else
#define DL_ROW_ENTRIES(op, sfx, PARAMS, TASK)                                                     \
    DL_LANES(op, sfx, 1, PARAMS, TASK)                                                            \
    DL_LANES(op, sfx, 2, PARAMS, TASK)                                                            \
    DL_LANES(op, sfx, 4, PARAMS, TASK)                                                            \
    DL_LANES(op, sfx, 8, PARAMS, TASK)                                                            \
    DL_BLOCK(op, sfx, 2, 1024, PARAMS, TASK)                                                      \
    DL_BLOCK(op, sfx, 4, 1024, PARAMS, TASK)                                                      \
    DL_BLOCK(op, sfx, 8, 1024, PARAMS, TASK)                                                      \
    DL_SPLIT(op, sfx, 4, 512, PARAMS, TASK)                                                       \
    DL_SPLIT(op, sfx, 8, 512, PARAMS, TASK)                                                       \
    DL_CLUSTER(op, sfx, 2, 8, 1024, PARAMS, TASK)                                                 \
    DL_CLUSTER(op, sfx, 4, 8, 1024, PARAMS, TASK)                                                 \
    DL_CLUSTER(op, sfx, 8, 8, 1024, PARAMS, TASK)                                                 \
    DL_CLUSTER(op, sfx, 16, 8, 1024, PARAMS, TASK)
#endif

// 16-byte alignment of a pointer.
__device__ __forceinline__ bool dl_aligned(const void* p) { return ((unsigned long long)p & 15) == 0; }

// The menu of two-input tasks (softmax backward): each thread holds two packs per slot, so the
// same registers hold half as many slots.
#ifdef DL_FULL_MENU
#define DL_ROW_ENTRIES_TWO_INPUTS(op, sfx, PARAMS, TASK)                                          \
    DL_LANES(op, sfx, 1, PARAMS, TASK)                                                            \
    DL_LANES(op, sfx, 2, PARAMS, TASK)                                                            \
    DL_LANES(op, sfx, 4, PARAMS, TASK)                                                            \
    DL_BLOCK(op, sfx, 2, 1024, PARAMS, TASK)                                                      \
    DL_BLOCK(op, sfx, 4, 1024, PARAMS, TASK)                                                      \
    DL_BLOCK(op, sfx, 8, 512, PARAMS, TASK)                                                       \
    DL_SPLIT(op, sfx, 4, 512, PARAMS, TASK)                                                       \
    DL_SPLIT(op, sfx, 8, 256, PARAMS, TASK)                                                       \
    DL_CLUSTER(op, sfx, 2, 4, 1024, PARAMS, TASK)                                                 \
    DL_CLUSTER(op, sfx, 4, 4, 1024, PARAMS, TASK)                                                 \
    DL_CLUSTER(op, sfx, 8, 4, 1024, PARAMS, TASK)                                                 \
    DL_CLUSTER(op, sfx, 4, 8, 512, PARAMS, TASK)                                                  \
    DL_CLUSTER(op, sfx, 8, 8, 512, PARAMS, TASK)                                                  \
    DL_CLUSTER(op, sfx, 16, 4, 1024, PARAMS, TASK)
#else
#define DL_ROW_ENTRIES_TWO_INPUTS(op, sfx, PARAMS, TASK)                                          \
    DL_LANES(op, sfx, 1, PARAMS, TASK)                                                            \
    DL_LANES(op, sfx, 2, PARAMS, TASK)                                                            \
    DL_LANES(op, sfx, 4, PARAMS, TASK)                                                            \
    DL_BLOCK(op, sfx, 2, 1024, PARAMS, TASK)                                                      \
    DL_BLOCK(op, sfx, 8, 512, PARAMS, TASK)                                                       \
    DL_SPLIT(op, sfx, 4, 512, PARAMS, TASK)                                                       \
    DL_CLUSTER(op, sfx, 2, 4, 1024, PARAMS, TASK)                                                 \
    DL_CLUSTER(op, sfx, 4, 4, 1024, PARAMS, TASK)                                                 \
    DL_CLUSTER(op, sfx, 8, 4, 1024, PARAMS, TASK)                                                 \
    DL_CLUSTER(op, sfx, 16, 4, 1024, PARAMS, TASK)
#endif
