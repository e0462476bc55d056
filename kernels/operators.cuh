// One reduction, any operator: the warp, block and grid machinery of the sum (kernels 8, 9, 10
// and 13) with the `+` taken out and an operator passed in, as CUB's BlockReduce::Reduce(op)
// takes one. The sum is one instance (Sum below), max, min, argmax, argmin, Welford's mean and
// variance and the sum of squares are others, and a new reduction is a new struct, not a new
// kernel. The layers are named by scope, as in CUB: thread (walk) -> warp -> block -> grid/rows.
//
// An operator is a struct (an object, so that it may carry run-time parameters) with:
//   typedef ... In;       the input element type: float, int, f16_t or bf16_t (common.cuh)
//   typedef ... State;    what is combined: a plain struct of 4-byte words (it is shuffled and
//                         stored word by word)
//   typedef ... Out;      what the kernel writes for each result (finish(State))
//   State identity()              the neutral element: combine(identity(), s) == s
//   State combine(State a, State b)   associative, and commutative where lanes, warps and blocks
//                         meet in an order the hardware chooses (the machinery below always puts
//                         the state of the lower lane / warp / block first, so an operator that
//                         is associative but not commutative still gets a fixed order)
//   State lift(In x, u64 index)   one input value (and its index in the row or the array)
// and may override, through the Operator<> base below (defaults in brackets):
//   typedef ... Thread;   what one thread accumulates while it walks its share [State]
//   Thread start()        [identity()]
//   Thread add(Thread t, In x, u64 index)      fold one value in; a thread's indexes only grow
//                         [combine(t, lift(x, index))]
//   Thread add_pack(Thread t, uint4 pack, u64 first)   fold the 16 / sizeof(In) values of one
//                         16-byte load, indexes first, first + 1, ... [add() for each value]
//   State done(Thread t)  [t]
//   Out finish(State s)   [s]
//   static constexpr int STREAMS   accumulators per thread [0: one per load in flight, as the
//                         sum's, whose adds then never wait on each other; 1 for a compare, or a
//                         state too large to keep several of]
// An operator that changes Thread must define start, add, add_pack and done.
//
// Entry points are instantiated by the macros at the end: one per operator, shape and input type,
// named <op>_<shape>_<type>: max_whole_f32, argmax_rows_warp_f16, mean_var_rows_split_bf16.
// The host owns every grid (src/kernels/ops/plan.rs); the kernels loop, so any grid is correct.
#pragma once
#include "common.cuh"
#include "vector_load.cuh"  // pack_sum: the sum's own 16-byte step

// 16-byte loads in flight per thread: the whole array as kernel 10 (VEC_UNROLL), a team of lanes
// and a block per row as kernel 13. -D overrides them for tuning runs.
#ifndef OP_WHOLE_LOADS
#define OP_WHOLE_LOADS 4
#endif
#ifndef OP_WARP_LOADS
#define OP_WARP_LOADS 8
#endif
#ifndef OP_BLOCK_LOADS
#define OP_BLOCK_LOADS 4
#endif

// The bounds of the row-block entries (-D overrides them for tuning runs). i32: two blocks of
// 1024 threads on each SM at once where an SM holds 2048 threads (sm_80, 90, 100, 103), so that one
// block's loads overlap the other's finish of its row; one elsewhere (an SM of 1024 or 1536 threads
// cannot hold two: ptxas ignores the request with a warning). On the H200
// (plots/data/operators/experiments/: registers and spills from ptxas, and every type measured
// with two blocks): argmax i32 had 53 registers, one block per SM; held to 32, with nothing
// spilled, its 16384 x 16384 rows went from 356 to 246 us. f32, f16 and bf16 keep one block: held
// to 32 registers their argmax spilled, and while rows of 2^14 values got faster (f32 436 -> 324
// us), rows of 2^20 got slower (f32 237 -> 286 us, f16 122 -> 170 us); which is better depends on
// the row length, and the planner does not choose between two compilations yet.
#ifndef OP_I32_BLOCK_BOUNDS
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900 || __CUDA_ARCH__ == 1000 || __CUDA_ARCH__ == 1030)
#define OP_I32_BLOCK_BOUNDS __launch_bounds__(1024, 2)
#else
#define OP_I32_BLOCK_BOUNDS __launch_bounds__(1024)
#endif
#endif
#ifndef OP_FLOAT_BLOCK_BOUNDS
#define OP_FLOAT_BLOCK_BOUNDS __launch_bounds__(1024)
#endif

// The largest block of the team-per-row kernel: its eight loads in flight and their states need
// more than the 64 registers a 1024-thread bound would leave (they spilled).
#ifndef OP_WARP_MAX_BLOCK
#define OP_WARP_MAX_BLOCK 256
#endif

// Accumulators per thread of the compares and of the mean / variance (Operator::STREAMS); one:
// their chains are short, and one state keeps the registers, and so the warps, that several cost.
#ifndef OP_EXTREME_STREAMS
#define OP_EXTREME_STREAMS 1
#endif
#ifndef OP_WELFORD_STREAMS
#define OP_WELFORD_STREAMS 1
#endif

#define OP_FULL_MASK 0xffffffffu

// ============================================================================================
// Words: a state moves between lanes, and through L2, one 32-bit word at a time.

// ANCHOR: words
template <typename S>
union StateWords {
    static_assert(sizeof(S) % 4 == 0, "an operator's State must be made of 4-byte words");
    S state;
    unsigned word[sizeof(S) / 4];
};

// The state of lane (this lane + offset).
template <typename S>
__device__ __forceinline__ S shfl_down_state(S s, unsigned offset) {
    StateWords<S> u;
    u.state = s;
#pragma unroll
    for (int k = 0; k < (int)(sizeof(S) / 4); ++k) u.word[k] = __shfl_down_sync(OP_FULL_MASK, u.word[k], offset);
    return u.state;
}

// The state of lane (this lane ^ mask).
template <typename S>
__device__ __forceinline__ S shfl_xor_state(S s, unsigned mask) {
    StateWords<S> u;
    u.state = s;
#pragma unroll
    for (int k = 0; k < (int)(sizeof(S) / 4); ++k) u.word[k] = __shfl_xor_sync(OP_FULL_MASK, u.word[k], mask);
    return u.state;
}

// A state another block wrote: read from L2 (ld.global.cg), never from a stale L1 line.
template <typename S>
__device__ __forceinline__ S load_cg_state(const S* p) {
    StateWords<S> u;
    const unsigned* w = reinterpret_cast<const unsigned*>(p);
#pragma unroll
    for (int k = 0; k < (int)(sizeof(S) / 4); ++k) u.word[k] = __ldcg(w + k);
    return u.state;
}
// ANCHOR_END: words

// ANCHOR: ordered_fold
// A thread's share of `count` states that other blocks wrote, states[first], states[first +
// stride], …, combined in that order, as a loop of one load an iteration would combine them, but
// with IN_FLIGHT loads issued before the first combine: one at a time, each state waited a round
// trip to L2 (chapter 18 measures it for cross-entropy's mean). The same bits as that loop.
template <int IN_FLIGHT, typename Op>
__device__ __forceinline__ typename Op::State ordered_fold(const Op& op, const typename Op::State* states, unsigned count, unsigned first,
                                                           unsigned stride) {
    typedef typename Op::State State;
    State s = op.identity();
    for (unsigned base = first; base < count; base += IN_FLIGHT * stride) {
        State v[IN_FLIGHT];
        bool in_range[IN_FLIGHT];
#pragma unroll
        for (int k = 0; k < IN_FLIGHT; ++k) {
            in_range[k] = base + k * stride < count;
            v[k] = in_range[k] ? load_cg_state(states + base + k * stride) : op.identity();
        }
#pragma unroll
        for (int k = 0; k < IN_FLIGHT; ++k)
            if (in_range[k]) s = op.combine(s, v[k]);  // skipped, not combined with the identity: NaN, -0.0 stay as they were
    }
    return s;
}
// ANCHOR_END: ordered_fold

// ============================================================================================
// Values: a 16-byte pack as the values it holds, each widened to f32 (exactly: every f16 and
// bf16 is an f32) or kept as it is.

template <typename In>
struct Pack {
    static constexpr int PER = 16 / sizeof(In);
    In v[PER];
};

template <typename In>
__device__ __forceinline__ Pack<In> unpack(uint4 raw) {
    union { uint4 raw; Pack<In> pack; } u;
    u.raw = raw;
    return u.pack;
}

__device__ __forceinline__ float widen(float x) { return x; }
__device__ __forceinline__ double widen(double x) { return x; }
__device__ __forceinline__ int widen(int x) { return x; }
__device__ __forceinline__ float widen(f16_t x) { return to_acc<float>(x); }
__device__ __forceinline__ float widen(bf16_t x) { return to_acc<float>(x); }

// The type a value is compared and combined in: int for int, f32 for the floats.
template <typename In> struct Wide { typedef float type; };
template <> struct Wide<int> { typedef int type; };
template <> struct Wide<double> { typedef double type; };

// std::conditional, which NVRTC's headers-free compilation does not have.
template <bool C, typename A, typename B> struct Choose { typedef A type; };
template <typename A, typename B> struct Choose<false, A, B> { typedef B type; };

__device__ __forceinline__ bool is_nan(float x) { return x != x; }
__device__ __forceinline__ bool is_nan(int) { return false; }

// ============================================================================================
// The operator base: the defaults listed at the top.

// ANCHOR: base
template <typename Derived, typename InT, typename StateT>
struct Operator {
    typedef InT In;
    typedef StateT State;
    typedef StateT Thread;
    typedef StateT Out;
    __device__ __forceinline__ const Derived& self() const { return *static_cast<const Derived*>(this); }
    __device__ __forceinline__ Thread start() const { return self().identity(); }
    __device__ __forceinline__ Thread add(Thread t, In x, u64 index) const { return self().combine(t, self().lift(x, index)); }
    __device__ __forceinline__ Thread add_pack(Thread t, uint4 raw, u64 first) const {
        const Pack<In> p = unpack<In>(raw);
#pragma unroll
        for (int k = 0; k < Pack<In>::PER; ++k) t = self().add(t, p.v[k], first + k);
        return t;
    }
    __device__ __forceinline__ State done(Thread t) const { return t; }
    __device__ __forceinline__ Out finish(State s) const { return s; }
    static constexpr int STREAMS = 0;
};
// ANCHOR_END: base

// ============================================================================================
// Instances.

// ANCHOR: sum
// The sum (kernels 1-15 hard-wire it): identity 0, combine +. Its 16-byte step is kernel 9's
// pack_sum, so an f32 sum through this machinery adds in the order kernels 9 and 13 add.
template <typename InT, typename Acc = typename Wide<InT>::type>
struct Sum : Operator<Sum<InT, Acc>, InT, Acc> {
    __device__ __forceinline__ Acc identity() const { return Acc(0); }
    __device__ __forceinline__ Acc combine(Acc a, Acc b) const { return a + b; }
    __device__ __forceinline__ Acc lift(InT x, u64) const { return to_acc<Acc>(x); }
    __device__ __forceinline__ Acc add_pack(Acc t, uint4 raw, u64) const { return t + pack_sum<InT, Acc>(raw); }
};
// ANCHOR_END: sum

// ANCHOR: extreme
// NaN-propagating max (MAX) or min of two values: NaN if either is NaN, as torch.amax / amin.
// (fmaxf would return the other operand and swallow the NaN.) One instruction from sm_80 on.
template <bool MAX>
__device__ __forceinline__ float extreme(float a, float b) {
#if __CUDA_ARCH__ >= 800 && !defined(OP_PORTABLE_EXTREME)
    float r;
    if (MAX) asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    else     asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
#else
    return (is_nan(a) || (MAX ? a > b : a < b)) ? a : b;
#endif
}
template <bool MAX>
__device__ __forceinline__ int extreme(int a, int b) { return MAX ? max(a, b) : min(a, b); }
// ANCHOR_END: extreme

// ANCHOR: pack_extreme
// The extreme of one 16-byte pack, NaN-propagating, widened once at the end. Half-precision
// packs are compared as they are, two values per instruction (max.NaN.f16x2 / .bf16x2, sm_80 on):
// 8 values in 3 packed compares and 2 conversions, instead of 8 conversions and 8 compares.
// Where PAIRS, the packed compares also serve a walk that keeps its extreme as a pair across many
// packs (fold, from IDENTITY) and widens it once at its end (widen_pair).
template <bool MAX, typename In>
struct PackExtreme {
    static constexpr bool PAIRS = false;
    static constexpr unsigned IDENTITY = 0;
    static __device__ __forceinline__ unsigned fold(unsigned pair, uint4) { return pair; }
    static __device__ __forceinline__ float widen_pair(unsigned) { return 0.0f; }
    static __device__ __forceinline__ typename Wide<In>::type of(uint4 raw) {
        const Pack<In> p = unpack<In>(raw);
        typename Wide<In>::type r = widen(p.v[0]);
#pragma unroll
        for (int k = 1; k < Pack<In>::PER; ++k) r = extreme<MAX>(r, widen(p.v[k]));
        return r;
    }
};
#if __CUDA_ARCH__ >= 800 && !defined(OP_PORTABLE_EXTREME)
__device__ __forceinline__ float f16_bits_to_f32(unsigned bits) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"((unsigned short)bits));
    return f;
}
#define OP_PACKED_HALF_EXTREME(In, INSTRUCTION, IS_MAX, IDENTITY_PAIR, to_f32_lo, to_f32_hi)                \
    template <>                                                                                        \
    struct PackExtreme<IS_MAX, In> {                                                                   \
        static constexpr bool PAIRS = true;                                                            \
        static constexpr unsigned IDENTITY = IDENTITY_PAIR;                                            \
        static __device__ __forceinline__ unsigned pair(unsigned a, unsigned b) {                      \
            unsigned r;                                                                                \
            asm(INSTRUCTION " %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));                                \
            return r;                                                                                  \
        }                                                                                              \
        static __device__ __forceinline__ unsigned fold(unsigned acc, uint4 raw) {                     \
            return pair(pair(acc, pair(raw.x, raw.y)), pair(raw.z, raw.w));                            \
        }                                                                                              \
        static __device__ __forceinline__ float widen_pair(unsigned w) { return extreme<IS_MAX>(to_f32_lo(w), to_f32_hi(w)); } \
        static __device__ __forceinline__ float of(uint4 raw) {                                        \
            return widen_pair(pair(pair(raw.x, raw.y), pair(raw.z, raw.w)));                                \
        }                                                                                              \
    };
#define OP_F16_LO(w) f16_bits_to_f32((w) & 0xffffu)
#define OP_F16_HI(w) f16_bits_to_f32((w) >> 16)
#define OP_BF16_LO(w) __uint_as_float((w) << 16)
#define OP_BF16_HI(w) __uint_as_float((w) & 0xffff0000u)
OP_PACKED_HALF_EXTREME(f16_t, "max.NaN.f16x2", true, 0xfc00fc00u, OP_F16_LO, OP_F16_HI)     // −∞, −∞
OP_PACKED_HALF_EXTREME(f16_t, "min.NaN.f16x2", false, 0x7c007c00u, OP_F16_LO, OP_F16_HI)    // +∞, +∞
OP_PACKED_HALF_EXTREME(bf16_t, "max.NaN.bf16x2", true, 0xff80ff80u, OP_BF16_LO, OP_BF16_HI)
OP_PACKED_HALF_EXTREME(bf16_t, "min.NaN.bf16x2", false, 0x7f807f80u, OP_BF16_LO, OP_BF16_HI)
#endif
// ANCHOR_END: pack_extreme

// ANCHOR: max
// The value every other value beats: -inf for a max, +inf for a min; INT_MIN / INT_MAX for int.
template <typename V, bool MAX> struct Lowest {
    static __device__ __forceinline__ V value() { return __int_as_float(MAX ? 0xff800000 : 0x7f800000); }
};
template <bool MAX> struct Lowest<int, MAX> {
    static __device__ __forceinline__ int value() { return MAX ? (int)0x80000000 : 0x7fffffff; }
};
// max (MAX) or min. Identity: -inf (+inf), not 0 — a max that starts from 0 returns 0 for every
// all-negative input. NaN propagates (torch.amax). The result is the value, widened to f32 for
// f16 and bf16 inputs (exactly), int for int.
template <typename InT, bool MAX>
struct Extreme : Operator<Extreme<InT, MAX>, InT, typename Wide<InT>::type> {
    typedef typename Wide<InT>::type V;
    __device__ __forceinline__ V identity() const { return Lowest<V, MAX>::value(); }
    __device__ __forceinline__ V combine(V a, V b) const { return extreme<MAX>(a, b); }
    __device__ __forceinline__ V lift(InT x, u64) const { return widen(x); }
    __device__ __forceinline__ V add_pack(V t, uint4 raw, u64) const { return extreme<MAX>(t, PackExtreme<MAX, InT>::of(raw)); }
    static constexpr int STREAMS = OP_EXTREME_STREAMS;
};
template <typename In> using Max = Extreme<In, true>;
template <typename In> using Min = Extreme<In, false>;
// ANCHOR_END: max

// ANCHOR: argmax
// argmax (MAX) or argmin: a (value, index) pair, 64-bit indexes. The order, as torch.argmax's
// (aten's GreaterOrNan / LessOrNan): NaN counts as larger than every number for argmax (smaller
// for argmin), so the answer is the first NaN if there is one; among equal values (-0 and +0 are
// equal) the lowest index wins. That tie rule is what makes combine associative and commutative:
// it is a total order on pairs, so every grid and every tree gives the same index.
// Identity: (-inf, no index = 2^64 - 1): it loses every tie, so even an all -inf input answers
// with a real index (and within a thread, a first value replaces the empty state whatever it is).
template <typename V>
struct ValueIndex {
    V value;
    unsigned pad;  // keeps index 8-byte aligned and the state a whole number of words
    u64 index;
};

// a strictly better than b: larger (smaller), or NaN where b is not.
template <bool MAX, typename V>
__device__ __forceinline__ bool improves(V a, V b) {
    return is_nan(a) ? !is_nan(b) : (MAX ? a > b : a < b);
}

// What one thread keeps while it walks: the best value so far, the index of the value (or of the
// first value of the 16-byte pack) it came from, and that pack itself, so that the position inside
// the pack is found once, at the end, not every time the best improves.
template <typename V>
struct ArgThread {
    V value;
    u64 index;  // ~0: nothing seen yet
    uint4 pack;
};

// A 16-byte pack holding x at every position (a single value searched like a pack: found at 0).
template <typename In>
__device__ __forceinline__ uint4 splat(In x) {
    Pack<In> p;
#pragma unroll
    for (int k = 0; k < Pack<In>::PER; ++k) p.v[k] = x;
    union { Pack<In> pack; uint4 raw; } u;
    u.pack = p;
    return u.raw;
}

template <typename InT, bool MAX>
struct ArgExtreme : Operator<ArgExtreme<InT, MAX>, InT, ValueIndex<typename Wide<InT>::type>> {
    typedef typename Wide<InT>::type V;
    typedef ValueIndex<V> S;
    typedef ArgThread<V> Thread;
    typedef u64 Out;
    static constexpr int STREAMS = OP_EXTREME_STREAMS;
    __device__ __forceinline__ S identity() const {
        S s;
        s.value = Extreme<InT, MAX>().identity();
        s.pad = 0;
        s.index = ~0ull;
        return s;
    }
    __device__ __forceinline__ S combine(S a, S b) const {
        if (improves<MAX>(b.value, a.value)) return b;
        if (improves<MAX>(a.value, b.value)) return a;
        return b.index < a.index ? b : a;  // equal values: the lower index
    }
    __device__ __forceinline__ S lift(InT x, u64 index) const {
        S s = identity();
        s.value = widen(x);
        s.index = index;
        return s;
    }
    __device__ __forceinline__ Thread start() const {
        Thread t;
        t.value = Extreme<InT, MAX>().identity();
        t.index = ~0ull;
        t.pack = make_uint4(0, 0, 0, 0);
        return t;
    }
    // A thread's indexes only grow, so a value replaces the best only if strictly better (or if
    // there is none yet: a value equal to the identity, -inf for argmax, is still an answer).
    __device__ __forceinline__ Thread add(Thread t, InT x, u64 index) const {
        const V v = widen(x);
        if (t.index == ~0ull || improves<MAX>(v, t.value)) {
            t.value = v;
            t.index = index;
            t.pack = splat(x);
        }
        return t;
    }
    // The pack's extreme (packed compares for f16 / bf16) against the best so far: a compare and
    // a few selects per pack, no search.
    __device__ __forceinline__ Thread add_pack(Thread t, uint4 raw, u64 first) const {
        const V best = PackExtreme<MAX, InT>::of(raw);
        if (t.index == ~0ull || improves<MAX>(best, t.value)) {
            t.value = best;
            t.index = first;
            t.pack = raw;
        }
        return t;
    }
    // Once per thread: the first position in the kept pack that holds the best value.
    __device__ __forceinline__ S done(Thread t) const {
        if (t.index == ~0ull) return identity();
        const Pack<InT> p = unpack<InT>(t.pack);
        int k = Pack<InT>::PER - 1;
#pragma unroll
        for (int j = Pack<InT>::PER - 1; j >= 0; --j) {
            const V v = widen(p.v[j]);
            if (v == t.value || (is_nan(t.value) && is_nan(v))) k = j;  // the lowest j that matches
        }
        S s = identity();
        s.value = t.value;
        s.index = t.index + k;
        return s;
    }
    __device__ __forceinline__ u64 finish(S s) const { return s.index; }
};
template <typename In> using ArgMax = ArgExtreme<In, true>;
template <typename In> using ArgMin = ArgExtreme<In, false>;
// ANCHOR_END: argmax

// ANCHOR: sumsq
// The sum of squares (RMSNorm, the L2 norm, gradient clipping), accumulated in f32: an f16 input
// squared overflows f16 past 256, never f32.
template <typename InT>
struct SumSq : Operator<SumSq<InT>, InT, float> {
    __device__ __forceinline__ float identity() const { return 0.0f; }
    __device__ __forceinline__ float combine(float a, float b) const { return a + b; }
    __device__ __forceinline__ float lift(InT x, u64) const {
        const float v = widen(x);
        return v * v;
    }
    __device__ __forceinline__ float add_pack(float t, uint4 raw, u64) const {
        const Pack<InT> p = unpack<InT>(raw);
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < Pack<InT>::PER; ++k) {
            const float v = widen(p.v[k]);
            s = fmaf(v, v, s);
        }
        return t + s;
    }
};
// ANCHOR_END: sumsq

// ANCHOR: welford
// Mean and variance: (count, mean, M2 = sum of squared deviations from the mean). Chan, Golub and
// LeVeque's merge of two such states is exact in exact arithmetic, so lanes, warps and blocks can
// merge in any tree. Identity (0, 0, 0): merged with it, a state comes back unchanged, bit for bit.
struct MeanM2 {
    float count, mean, m2;
};
struct MeanVar {
    float mean, var;  // var: M2 / count, the population variance (LayerNorm's); n / (n - 1) on the host
};

__device__ __forceinline__ MeanM2 chan_merge(MeanM2 a, MeanM2 b) {
    const float count = a.count + b.count;
    const float delta = b.mean - a.mean;
#if defined(OP_MERGE_FAST_DIVIDE)
    const float share = count > 0.0f ? __fdividef(b.count, count) : 0.0f;
#elif defined(OP_MERGE_EQUAL_HALVES)
    // Equal counts (every merge of a row's tree when the row divides evenly among the threads):
    // b's weight is one half, which is the IEEE quotient exactly, so the division is skipped.
    const float share = a.count == b.count ? (count > 0.0f ? 0.5f : 0.0f) : b.count / count;
#else
    const float share = count > 0.0f ? b.count / count : 0.0f;  // b's weight in the merged mean
#endif
    MeanM2 r;
    r.count = count;
    r.mean = a.mean + delta * share;
    r.m2 = a.m2 + b.m2 + delta * delta * a.count * share;
    return r;
}

// How a thread folds its own values in before the merges: the choice that decides the speed.
enum WelfordWalk {
    WELFORD_DIVIDE = 0,       // Welford's update per value: mean += (x - mean) / count, an IEEE division
    WELFORD_FAST_DIVIDE = 1,  // the same with __fdividef: one reciprocal and a multiply, ~2 ulp
    WELFORD_PACK = 2,         // each 16-byte pack's own mean and M2 (count known ahead: 4 or 8),
                              // then Chan's merge into the thread's state: one division per pack
    WELFORD_PIVOT = 3,        // shifted sums: sum of (x - K) and of (x - K)^2 around the first value
                              // K the thread sees, no division in the loop; one Chan state at the end
};

// A thread's shifted sums (WELFORD_PIVOT).
struct ShiftedSums {
    float pivot, s1, s2, count;
};

template <typename InT, int WALK>
struct Welford : Operator<Welford<InT, WALK>, InT, MeanM2> {
    typedef MeanVar Out;
    static constexpr int STREAMS = OP_WELFORD_STREAMS;
    typedef typename Choose<WALK == WELFORD_PIVOT, ShiftedSums, MeanM2>::type Thread;

    __device__ __forceinline__ MeanM2 identity() const { return MeanM2{0.0f, 0.0f, 0.0f}; }
    __device__ __forceinline__ MeanM2 combine(MeanM2 a, MeanM2 b) const { return chan_merge(a, b); }
    __device__ __forceinline__ MeanM2 lift(InT x, u64) const { return MeanM2{1.0f, widen(x), 0.0f}; }

    __device__ __forceinline__ Thread start() const {
        Thread t;
        if constexpr (WALK == WELFORD_PIVOT) t = ShiftedSums{0.0f, 0.0f, 0.0f, 0.0f};
        else t = identity();
        return t;
    }
    __device__ __forceinline__ Thread add(Thread t, InT x, u64) const {
        const float v = widen(x);
        if constexpr (WALK == WELFORD_PIVOT) {
            if (t.count == 0.0f) t.pivot = v;
            const float d = v - t.pivot;
            t.s1 += d;
            t.s2 = fmaf(d, d, t.s2);
            t.count += 1.0f;
        } else {
            const float count = t.count + 1.0f;
            const float d = v - t.mean;
            t.mean += WALK == WELFORD_FAST_DIVIDE ? __fdividef(d, count) : d / count;
            t.m2 = fmaf(d, v - t.mean, t.m2);
            t.count = count;
        }
        return t;
    }
    __device__ __forceinline__ Thread add_pack(Thread t, uint4 raw, u64 first) const {
        const Pack<InT> p = unpack<InT>(raw);
        constexpr int PER = Pack<InT>::PER;
        if constexpr (WALK == WELFORD_PACK) {
            float s = 0.0f;
#pragma unroll
            for (int k = 0; k < PER; ++k) s += widen(p.v[k]);
            const float mean = s * (1.0f / PER);  // the count is known ahead: no division
            float m2 = 0.0f;
#pragma unroll
            for (int k = 0; k < PER; ++k) {
                const float d = widen(p.v[k]) - mean;
                m2 = fmaf(d, d, m2);
            }
            return chan_merge(t, MeanM2{(float)PER, mean, m2});
        } else if constexpr (WALK == WELFORD_PIVOT) {
            if (t.count == 0.0f) t.pivot = widen(p.v[0]);
            // The pack's deviations added as a tree, then once into the sums: the same adds as
            // a chain, but the chain through s1 and s2 is one add per pack, not one per value.
            float d[PER];
#pragma unroll
            for (int k = 0; k < PER; ++k) d[k] = widen(p.v[k]) - t.pivot;
            float q[PER / 2];
#pragma unroll
            for (int k = 0; k < PER / 2; ++k) {
                q[k] = fmaf(d[2 * k + 1], d[2 * k + 1], d[2 * k] * d[2 * k]);
                d[k] = d[2 * k] + d[2 * k + 1];
            }
#pragma unroll
            for (int w = PER / 4; w > 0; w /= 2) {
#pragma unroll
                for (int k = 0; k < w; ++k) {
                    d[k] = d[2 * k] + d[2 * k + 1];
                    q[k] = q[2 * k] + q[2 * k + 1];
                }
            }
            t.s1 += d[0];
            t.s2 += q[0];
            t.count += (float)PER;
            return t;
        } else {
#pragma unroll
            for (int k = 0; k < PER; ++k) t = add(t, p.v[k], first + k);
            return t;
        }
    }
    __device__ __forceinline__ MeanM2 done(Thread t) const {
        if constexpr (WALK == WELFORD_PIVOT) {
            if (t.count == 0.0f) return identity();
            const float shift = t.s1 / t.count;  // mean - pivot
            // M2 = sum (x - K)^2 - count (mean - K)^2; never below 0, whatever the rounding.
            return MeanM2{t.count, t.pivot + shift, fmaxf(fmaf(-t.s1, shift, t.s2), 0.0f)};
        } else {
            return t;
        }
    }
    __device__ __forceinline__ MeanVar finish(MeanM2 s) const { return MeanVar{s.mean, s.m2 / s.count}; }
};
template <typename In> using MeanVarOp = Welford<In, WELFORD_PIVOT>;
// ANCHOR_END: welford

// ANCHOR: textbook
// The textbook one-pass variance, E[x^2] - E[x]^2: plain sums of x and x^2, merged by adding.
// Kept as the broken version: when the mean is large against the spread the two terms are
// nearly equal and their difference is rounding noise (the chapter shows by how much).
struct SumsOfPowers {
    float count, s1, s2;
};
template <typename InT>
struct TextbookMeanVar : Operator<TextbookMeanVar<InT>, InT, SumsOfPowers> {
    typedef MeanVar Out;
    __device__ __forceinline__ SumsOfPowers identity() const { return SumsOfPowers{0.0f, 0.0f, 0.0f}; }
    __device__ __forceinline__ SumsOfPowers combine(SumsOfPowers a, SumsOfPowers b) const {
        return SumsOfPowers{a.count + b.count, a.s1 + b.s1, a.s2 + b.s2};
    }
    __device__ __forceinline__ SumsOfPowers lift(InT x, u64) const {
        const float v = widen(x);
        return SumsOfPowers{1.0f, v, v * v};
    }
    __device__ __forceinline__ MeanVar finish(SumsOfPowers s) const {
        const float mean = s.s1 / s.count;
        return MeanVar{mean, s.s2 / s.count - mean * mean};
    }
};
// ANCHOR_END: textbook

// ============================================================================================
// Thread: one thread's share of p[0 .. n), read with 16-byte loads.

// ANCHOR: span
// Thread t of `threads` folds its part of p[0 .. n) (p[i] has index first_index + i) into one
// state: kernel 13's span_sum with the operator in place of +. The values before the first 16-byte
// boundary go first, one by one, then LOADS interleaved streams of whole packs (LOADS loads in
// flight per round, each stream's own accumulator), then the values after the last whole pack:
// each accumulator sees its indexes in increasing order, which is what Operator::add may assume.
// In a short last round every stream still loads (pack i again where its own is past the end: the
// loads stay unconditional, which kept 28 registers off the team kernel) but only the packs that
// exist are folded in (a zero pack is no identity for max).
template <int LOADS, typename Op>
__device__ __forceinline__ typename Op::State span_reduce(const Op& op, const typename Op::In* __restrict__ p, u64 n,
                                                          u64 first_index, u64 t, u64 threads) {
    typedef typename Op::In In;
    typedef typename Op::Thread Thread;
    constexpr u64 PER = 16 / sizeof(In);
    u64 head = ((16 - ((u64)p & 15)) & 15) / sizeof(In);  // values before the first boundary
    if (head > n) head = n;
    const u64 packs = (n - head) / PER;
    const u64 tail = head + packs * PER;

    // A accumulators: one per load in flight, or fewer (Operator::STREAMS); stream u folds into
    // accumulator u % A, so each accumulator still sees its indexes in increasing order.
    constexpr int A = Op::STREAMS > 0 && Op::STREAMS < LOADS ? Op::STREAMS : LOADS;
    Thread acc[A];
#pragma unroll
    for (int a = 0; a < A; ++a) acc[a] = op.start();
    for (u64 i = t; i < head; i += threads) acc[0] = op.add(acc[0], p[i], first_index + i);

    const uint4* body = reinterpret_cast<const uint4*>(p + head);
    const u64 body_index = first_index + head;
    u64 i = t;
    for (; i + (LOADS - 1) * threads < packs; i += LOADS * threads) {
        uint4 v[LOADS];
#pragma unroll
        for (int u = 0; u < LOADS; ++u) v[u] = __ldcs(body + i + u * threads);  // read once: evict first
#pragma unroll
        for (int u = 0; u < LOADS; ++u) acc[u % A] = op.add_pack(acc[u % A], v[u], body_index + (i + u * threads) * PER);
    }
    if (i < packs) {  // the last round, short: a stream past the end loads pack i again and drops it
        uint4 v[LOADS];
#pragma unroll
        for (int u = 0; u < LOADS; ++u) v[u] = __ldcs(body + (i + u * threads < packs ? i + u * threads : i));
#pragma unroll
        for (int u = 0; u < LOADS; ++u)
            if (i + u * threads < packs) acc[u % A] = op.add_pack(acc[u % A], v[u], body_index + (i + u * threads) * PER);
    }
    for (u64 j = t; j < n - tail; j += threads) acc[0] = op.add(acc[0], p[tail + j], first_index + tail + j);

    typename Op::State s = op.done(acc[0]);
#pragma unroll
    for (int a = 1; a < A; ++a) s = op.combine(s, op.done(acc[a]));
    return s;
}
// ANCHOR_END: span

// ============================================================================================
// Warp and block.

// ANCHOR: warp_reduce
// Lane 0 gets the combination of the warp's 32 states (kernel 8's warp_sum). Every lane must call.
template <typename Op>
__device__ __forceinline__ typename Op::State warp_reduce(const Op& op, typename Op::State v) {
#pragma unroll
    for (unsigned offset = 16; offset > 0; offset >>= 1) v = op.combine(v, shfl_down_state(v, offset));
    return v;
}

// Every lane of each team of `lanes` consecutive lanes (a power of two up to 32) gets its team's
// combination, the same bits in every lane: each pair combines (lower lane, higher lane).
template <typename Op>
__device__ __forceinline__ typename Op::State warp_allreduce(const Op& op, typename Op::State v, unsigned lanes) {
    const unsigned lane = threadIdx.x % 32;
    for (unsigned offset = lanes / 2; offset > 0; offset /= 2) {
        const typename Op::State other = shfl_xor_state(v, offset);
        v = (lane & offset) ? op.combine(other, v) : op.combine(v, other);
    }
    return v;
}
// ANCHOR_END: warp_reduce

// ANCHOR: block_reduce
// Thread 0 gets the combination of the block's states (kernel 8's block_sum). blockDim.x a
// multiple of 32, at most 1024; `warp_states` is shared memory for 32 states. Every thread must
// call; before `warp_states` is used again, the block must pass a barrier.
template <typename Op>
__device__ __forceinline__ typename Op::State block_reduce(const Op& op, typename Op::State v, typename Op::State* warp_states) {
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_reduce(op, v);
    if (lane == 0) warp_states[warp] = v;
    __syncthreads();
#ifdef OP_BLOCK_WARP_LEVELS
    // An experiment (REDUCTION_NVRTC_OPTIONS=-DOP_BLOCK_WARP_LEVELS): the warps' states meet in
    // log2(warps) levels, not five with the lanes past the last warp's holding the identity. A
    // cheap combine hardly notices; Chan's merge (three shuffles and a division) may.
    if (warp == 0) {
        const unsigned warps = blockDim.x / 32;
        v = lane < warps ? warp_states[lane] : op.identity();
        unsigned width = 1;  // the warps, rounded up to a power of two
        while (width < warps) width <<= 1;
        for (unsigned offset = width / 2; offset > 0; offset >>= 1) v = op.combine(v, shfl_down_state(v, offset));
    }
#else
    if (warp == 0) v = warp_reduce(op, lane < blockDim.x / 32 ? warp_states[lane] : op.identity());
#endif
    return v;
}

// Every thread gets the block's combination (a row's max or mean that every thread then uses).
// Ends with a barrier, so `warp_states` may be used again at once.
template <typename Op>
__device__ __forceinline__ typename Op::State block_allreduce(const Op& op, typename Op::State v, typename Op::State* warp_states) {
    v = block_reduce(op, v, warp_states);
    __syncthreads();  // warp 0 has read warp_states
    if (threadIdx.x == 0) warp_states[0] = v;
    __syncthreads();
    v = warp_states[0];
    __syncthreads();  // everyone has read it
    return v;
}
// ANCHOR_END: block_reduce

// ============================================================================================
// Grid: the whole array in one launch, the last block to finish combines (kernel 10's ticket).

// ANCHOR: whole
// `in[0 .. n)` to one result in out[0]. Every block folds its grid-stride share and writes one
// state to `partials[blockIdx.x]`; the block that draws the last ticket combines them in block
// order and resets the ticket. A grid of one block writes its result at once. Preconditions: partials for gridDim.x states; the ticket starts at
// zero (left at zero); blockDim.x a multiple of 32, at most 1024; n > 0.
template <int LOADS, typename Op>
__device__ void reduce_whole(const Op& op, const typename Op::In* __restrict__ in, typename Op::Out* __restrict__ out, u64 n,
                             typename Op::State* partials, unsigned* ticket) {
    typedef typename Op::State State;
    __shared__ State warp_states[32];
    __shared__ bool last;
    const u64 thread = (u64)blockIdx.x * blockDim.x + threadIdx.x, threads = (u64)gridDim.x * blockDim.x;
    State v = block_reduce(op, span_reduce<LOADS>(op, in, n, 0, thread, threads), warp_states);
    if (gridDim.x == 1) {  // one block: its state is the result, no ticket to draw
        if (threadIdx.x == 0) out[0] = op.finish(v);
        return;
    }
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = v;
        __threadfence();  // the state is visible to every block before the ticket is
        last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;

    // The last block: every block's state, in block order, the same order every run.
    State s = block_reduce(op, ordered_fold<8>(op, partials, gridDim.x, threadIdx.x, blockDim.x), warp_states);
    if (threadIdx.x == 0) {
        out[0] = op.finish(s);
        *ticket = 0;  // ready for the next launch
    }
}
// ANCHOR_END: whole

// ============================================================================================
// Rows: M results of N values each, on a row-major matrix (row r at in + r * stride). Kernel 13's
// three strategies, with the operator; indexes are column indexes (torch's argmax(dim=1)).

// ANCHOR: rows_warp
// A team of `lanes` lanes per row, 32 / lanes rows per warp, no shared memory, no barrier.
template <int LOADS, typename Op>
__device__ void rows_warp_op(const Op& op, const typename Op::In* __restrict__ in, typename Op::Out* __restrict__ out,
                             u64 rows, u64 cols, u64 stride, unsigned lanes) {
    const unsigned lane = threadIdx.x % lanes, rows_per_warp = 32 / lanes;
    const u64 rows_per_block = blockDim.x / lanes, stride_rows = (u64)gridDim.x * rows_per_block;
    for (u64 first = (u64)blockIdx.x * rows_per_block + threadIdx.x / 32 * rows_per_warp; first < rows; first += stride_rows) {
        const u64 row = first + threadIdx.x % 32 / lanes;
        typename Op::State v = row < rows ? span_reduce<LOADS>(op, in + row * stride, cols, 0, lane, lanes) : op.identity();
        v = warp_allreduce(op, v, lanes);
        if (row >= rows) break;  // the warp's last rows: its next first row is past the end too
        if (lane == 0) out[row] = op.finish(v);
    }
}
// ANCHOR_END: rows_warp

// ANCHOR: rows_block
// One block per row.
template <int LOADS, typename Op>
__device__ void rows_block_op(const Op& op, const typename Op::In* __restrict__ in, typename Op::Out* __restrict__ out,
                              u64 rows, u64 cols, u64 stride) {
    __shared__ typename Op::State warp_states[32];
    for (u64 row = blockIdx.x; row < rows; row += gridDim.x) {
        const typename Op::State v = block_reduce(op, span_reduce<LOADS>(op, in + row * stride, cols, 0, threadIdx.x, blockDim.x), warp_states);
        if (threadIdx.x == 0) out[row] = op.finish(v);
        __syncthreads();  // warp 0 has read warp_states before the next row writes them
    }
}
// ANCHOR_END: rows_block

// ANCHOR: rows_split
// gridDim.x blocks per row (slices of whole 16-byte packs), gridDim.y rows at a time; the last
// block of a row to finish combines the row's slices in slice order. Preconditions: partials for
// rows * gridDim.x states, one ticket per row, zero at the start (left at zero).
template <int LOADS, typename Op>
__device__ void rows_split_op(const Op& op, const typename Op::In* __restrict__ in, typename Op::Out* __restrict__ out,
                              u64 rows, u64 cols, u64 stride, typename Op::State* partials, unsigned* tickets) {
    typedef typename Op::State State;
    __shared__ State warp_states[32];
    __shared__ bool last;
    constexpr u64 PER = 16 / sizeof(typename Op::In);
    const unsigned slices = gridDim.x, slice = blockIdx.x;
    const u64 per = ((cols + slices - 1) / slices + PER - 1) / PER * PER;
    const u64 begin = min(cols, (u64)slice * per), end = min(cols, begin + per);
    for (u64 row = blockIdx.y; row < rows; row += gridDim.y) {
        const typename Op::In* p = in + row * stride;
        const State v = block_reduce(op, span_reduce<LOADS>(op, p + begin, end - begin, begin, threadIdx.x, blockDim.x), warp_states);
        if (threadIdx.x == 0) {
            partials[row * slices + slice] = v;
            __threadfence();  // the state is visible to every block before the ticket is
            last = atomicAdd(tickets + row, 1u) == slices - 1;
        }
        __syncthreads();
        if (last) {  // the same for the whole block: block_reduce's barriers are safe
            State s = op.identity();
            for (unsigned b = threadIdx.x; b < slices; b += blockDim.x) s = op.combine(s, load_cg_state(partials + row * slices + b));
            s = block_reduce(op, s, warp_states);
            if (threadIdx.x == 0) {
                out[row] = op.finish(s);
                tickets[row] = 0;  // ready for the next launch
            }
        }
        __syncthreads();  // `last` and warp_states are read before the next row writes them
    }
}
// ANCHOR_END: rows_split

// ============================================================================================
// Entry points. OP is an operator template of one parameter (the input type): Max, ArgMax,
// MeanVarOp, or `template <typename In> using MyOp = ...;` for one with more.

// ANCHOR: entries
#define OP_WHOLE_ENTRY(name, OP, In, suffix)                                                                  \
    extern "C" __global__ void __launch_bounds__(1024)                                                        \
    name##_whole_##suffix(const In* in, typename OP<In>::Out* out, u64 n, typename OP<In>::State* partials,  \
                          unsigned* ticket) {                                                                 \
        reduce_whole<OP_WHOLE_LOADS>(OP<In>(), in, out, n, partials, ticket);                                 \
    }

#define OP_ROWS_ENTRIES_BOUNDED(name, OP, In, suffix, BLOCK_BOUNDS)                                           \
    extern "C" __global__ void __launch_bounds__(OP_WARP_MAX_BLOCK)                                           \
    name##_rows_warp_##suffix(const In* in, typename OP<In>::Out* out, u64 rows, u64 cols, u64 stride,        \
                              unsigned lanes) {                                                               \
        rows_warp_op<OP_WARP_LOADS>(OP<In>(), in, out, rows, cols, stride, lanes);                           \
    }                                                                                                         \
    extern "C" __global__ void BLOCK_BOUNDS                                                                   \
    name##_rows_block_##suffix(const In* in, typename OP<In>::Out* out, u64 rows, u64 cols, u64 stride) {     \
        rows_block_op<OP_BLOCK_LOADS>(OP<In>(), in, out, rows, cols, stride);                                \
    }                                                                                                         \
    extern "C" __global__ void __launch_bounds__(512)                                                         \
    name##_rows_split_##suffix(const In* in, typename OP<In>::Out* out, u64 rows, u64 cols, u64 stride,       \
                               typename OP<In>::State* partials, unsigned* tickets) {                         \
        rows_split_op<OP_BLOCK_LOADS>(OP<In>(), in, out, rows, cols, stride, partials, tickets);             \
    }

// The three row entries of one type with the float types' bounds (what an exercise instantiates).
#define OP_ROWS_ENTRIES(name, OP, In, suffix) OP_ROWS_ENTRIES_BOUNDED(name, OP, In, suffix, OP_FLOAT_BLOCK_BOUNDS)

// Whole array and rows, for f32, f16 and bf16 inputs (and i32 with _I32).
#define OP_ENTRIES(name, OP)                                                                                  \
    OP_WHOLE_ENTRY(name, OP, float, f32) OP_ROWS_ENTRIES(name, OP, float, f32)                                \
    OP_WHOLE_ENTRY(name, OP, f16_t, f16) OP_ROWS_ENTRIES(name, OP, f16_t, f16)                                \
    OP_WHOLE_ENTRY(name, OP, bf16_t, bf16) OP_ROWS_ENTRIES(name, OP, bf16_t, bf16)
#define OP_ENTRIES_I32(name, OP) OP_WHOLE_ENTRY(name, OP, int, i32) OP_ROWS_ENTRIES_BOUNDED(name, OP, int, i32, OP_I32_BLOCK_BOUNDS)
// ANCHOR_END: entries
