// Kernel 18 — LayerNorm and RMSNorm over the last dimension, fused: one read of each row for
// its statistics and its output, when the row's team holds it.
//   layer_norm  y = (x − mean) · rstd · γ + β, rstd = 1 / sqrt(var + eps), var the biased
//               variance (as torch's F.layer_norm). The row's (count, mean, M2) comes from
//               each thread's registers (two passes over them: exact), merged by Chan's rule
//               (welford in dl_rows.cuh). Saves mean and rstd per row (f32): the backward
//               needs both.
//   rms_norm    y = x · rrms · γ, rrms = 1 / sqrt(mean(x²) + eps) (as torch's F.rms_norm).
//               Saves rrms per row (f32).
// f32, f16 or bf16 in (x, γ, β of one type), the same type out, f32 arithmetic.
// Changed: kernel 17's machinery with other states: a Welford triple, a sum of squares.
// Still slow: γ and β are read again for every row, from L1 or L2 (not from memory once the
// first rows have brought them in); rows too long for a team are read twice.
// Preconditions: as dl_rows.cuh; γ and β hold cols values; `mean`, `rstd` (`rrms`) rows values.
#include "dl_rows.cuh"

namespace dl {

// ANCHOR: layer_norm_task
template <typename TT>
struct LayerNormTask {
    DL_NO_PREFETCH
    using T = TT;
    using Op = ::Welford<TT, WELFORD_PACK>;  // its combine: Chan's merge
    static constexpr int INPUTS = 1;
    static constexpr bool WRITES_ROW = true;
    const T* x;
    const T* gamma;
    const T* beta;
    T* y;
    float* mean_out;
    float* rstd_out;
    u64 rows, cols, ld;
    float eps;
    struct Stats {
        float mean, rstd, shift;  // shift = −mean · rstd: x̂ = fma(x, rstd, shift)
    };
    __device__ const T* in0(u64 r) const { return x + r * ld; }
    __device__ const T* in1(u64 r) const { return x + r * ld; }
    __device__ T* out(u64 r) const { return y + r * cols; }
    __device__ bool vectorizable(u64 r) const {
        return cols % Io<T>::PER == 0 && dl_aligned(in0(r)) && dl_aligned(out(r)) && dl_aligned(gamma) && dl_aligned(beta);
    }
    template <class Values>
    __device__ MeanM2 chunk_state(const Values& values) const { return mean_m2_of(values); }
    __device__ Stats finish(u64 row, bool live, bool first, MeanM2 s, Pre) const {
        const float rstd = rsqrtf(s.m2 / (float)cols + eps);
        if (live && first) {
            mean_out[row] = s.mean;
            rstd_out[row] = rstd;
        }
        return Stats{s.mean, rstd, -s.mean * rstd};
    }
    __device__ float map_one(float v, float, u64 e, const Stats& st) const {
        return fmaf(fmaf(v, st.rstd, st.shift), load_one(gamma, e), load_one(beta, e));
    }
    template <int PER>
    __device__ void map_pack(const float (&v)[PER], const float (&)[PER], u64 pack, const Stats& st, float (&out)[PER]) const {
        float p[2][PER];  // γ, β
        load_params(gamma, pack, p[0]);
        load_params(beta, pack, p[1]);
        map_grouped(v, p, st, out);
    }
    // y from a pack of x and of γ and β (also the grouped write's, DL_PARAMS_GROUP).
    template <int PER>
    __device__ void map_grouped(const float (&v)[PER], const float (&p)[2][PER], const Stats& st, float (&out)[PER]) const {
#pragma unroll
        for (int j = 0; j < PER; ++j) out[j] = fmaf(fmaf(v[j], st.rstd, st.shift), p[0][j], p[1][j]);
    }
};
// ANCHOR_END: layer_norm_task

// ANCHOR: rms_norm_task
template <typename TT>
struct RmsNormTask {
    DL_NO_PREFETCH
    using T = TT;
    using Op = ::SumSq<TT>;
    static constexpr int INPUTS = 1;
    static constexpr bool WRITES_ROW = true;
    const T* x;
    const T* gamma;
    T* y;
    float* rrms_out;
    u64 rows, cols, ld;
    float eps;
    struct Stats {
        float rrms;
    };
    __device__ const T* in0(u64 r) const { return x + r * ld; }
    __device__ const T* in1(u64 r) const { return x + r * ld; }
    __device__ T* out(u64 r) const { return y + r * cols; }
    __device__ bool vectorizable(u64 r) const {
        return cols % Io<T>::PER == 0 && dl_aligned(in0(r)) && dl_aligned(out(r)) && dl_aligned(gamma);
    }
    template <class Values>
    __device__ float chunk_state(const Values& values) const {
        SquaresOf ss{0.0f};
        values(ss);
        return ss.s;
    }
    __device__ Stats finish(u64 row, bool live, bool first, float ss, Pre) const {
        const float rrms = rsqrtf(ss / (float)cols + eps);
        if (live && first) rrms_out[row] = rrms;
        return Stats{rrms};
    }
    __device__ float map_one(float v, float, u64 e, const Stats& st) const { return v * st.rrms * load_one(gamma, e); }
    // y from a pack of x and of γ.
    template <int PER>
    __device__ void map_params(const float (&v)[PER], const float (&g)[PER], const Stats& st, float (&out)[PER]) const {
#pragma unroll
        for (int j = 0; j < PER; ++j) out[j] = v[j] * st.rrms * g[j];
    }
    template <int PER>
    __device__ void map_pack(const float (&v)[PER], const float (&)[PER], u64 pack, const Stats& st, float (&out)[PER]) const {
        float g[PER];
        load_params(gamma, pack, g);
        map_params(v, g, st, out);
    }
    template <int PER>
    __device__ void map_grouped(const float (&v)[PER], const float (&p)[1][PER], const Stats& st, float (&out)[PER]) const { map_params(v, p[0], st, out); }
};
// ANCHOR_END: rms_norm_task

// LayerNorm's held rows by two team sums: in the staged entries and the clusters, and everywhere
// under the experiment switch (REDUCTION_NVRTC_OPTIONS=-DDL_LN_TWO_PASS). In the clusters, by
// turns on an H100 against the build that merged the threads' Welford states there
// (plots/data/dl/experiments/switches/cluster-two-pass/), LayerNorm was faster in both rounds
// at all 3 of its cluster cases (4.9% to 7.6% on the mean of the rounds). An experiment
// (-DDL_LN_CLUSTER_WELFORD) merges the cluster's threads' Welford states instead, as before.
template <typename T>
struct TwoPassRows<LayerNormTask<T>> {
#ifdef DL_LN_TWO_PASS
    static constexpr bool ok = true;
#else
    static constexpr bool ok = false;
#endif
    static constexpr bool staged = true;
#ifdef DL_LN_CLUSTER_WELFORD
    static constexpr bool cluster = false;
#else
    static constexpr bool cluster = true;
#endif
};

// The norms' parameters, for the staged entries' write and the grouped one (DL_PARAMS_GROUP).
template <typename T>
struct GroupedParams<LayerNormTask<T>> {
    static constexpr int COUNT = 2;
    __device__ static const T* of(const LayerNormTask<T>& task, int p) { return p == 0 ? task.gamma : task.beta; }
};
template <typename T>
struct GroupedParams<RmsNormTask<T>> {
    static constexpr int COUNT = 1;
    __device__ static const T* of(const RmsNormTask<T>& task, int) { return task.gamma; }
};

// RMSNorm's clusters stage γ in shared memory (dl_rows.cuh's ClusterStaged; the planner gives
// them the room, plan.rs's `staged_in_clusters`): by turns on an H100 against the build that
// loaded it from L2 in the write, faster in both rounds at 6 of its 7 cluster cases and slower in
// both at 1 (from -4.3% to +0.2% on the mean of the rounds); LayerNorm's, staged the same way
// (128 KiB a block of 512 threads), were slower in both at all 7 (from +15.0% to +27.6%), and
// load γ and β from L2 (plots/data/dl/experiments/switches/cluster-staged/). An experiment
// (REDUCTION_NVRTC_OPTIONS=-DDL_CLUSTER_UNSTAGED) loads RMSNorm's from L2 as before.
#if !defined(DL_CLUSTER_UNSTAGED) && !defined(DL_CLUSTER_STAGED)
template <typename T>
struct ClusterStaged<RmsNormTask<T>> {
    static constexpr bool ok = true;
    static constexpr int count = GroupedParams<RmsNormTask<T>>::COUNT;
};
#endif
// An experiment (REDUCTION_NVRTC_OPTIONS=-DDL_CLUSTER_STAGED_GAMMA): LayerNorm's clusters stage γ
// alone, 64 KiB a block of 512 threads as RMSNorm's (room for the two blocks an SM its registers
// allow, where γ and β took 128 KiB), and load β from L2 as each pack is written.
#if defined(DL_CLUSTER_STAGED_GAMMA)
template <typename T>
struct ClusterStaged<LayerNormTask<T>> {
    static constexpr bool ok = true;
    static constexpr int count = 1;
};
#endif

// LayerNorm's lanes (its short rows) stage γ and β in shared memory once a block (dl_rows.cuh's
// LanesParams, sm_80 and later): by turns on H100s, faster in both rounds than loading them in
// every row at all seven short-row cases the planner gives lanes, in each of two calls, where
// staging RMSNorm's γ alone was slower in both at five of seven
// (plots/data/dl/experiments/norms-lanes/). An experiment (REDUCTION_NVRTC_OPTIONS=
// -DDL_LANES_UNSTAGED) loads them in every row as before.
#ifndef DL_LANES_UNSTAGED
template <typename T>
struct StagedLanes<LayerNormTask<T>> {
    static constexpr bool ok = true;
};
#endif

// The parameters loaded packs ahead of the write in the cluster entries (dl_rows.cuh's
// store_chunk_params_ahead): RMSNorm's γ 2 packs ahead in every cluster (since staged instead,
// ClusterStaged above, whose write does not use this; -DDL_CLUSTER_UNSTAGED brings it back),
// LayerNorm's γ and β 1 ahead in the clusters of 4 (the only cluster entries where they fit 64
// registers unspilled).
// By turns on the H200 (plots/data/dl/experiments/switches/norms-ahead/), against loading each
// pack's parameters as it is written: RMSNorm faster in both rounds at all 7 of its cluster
// cases (0.8% to 4.7% on the mean of the rounds), LayerNorm at all 3 of its clusters of 4 (1.9%
// to 4.3%), and slower in both at its 4 cluster cases that spill (1.2% to 3.4%). Experiments
// (REDUCTION_NVRTC_OPTIONS): -DDL_PARAMS_NOT_AHEAD, none ahead; -DDL_PARAMS_AHEAD=D, RMSNorm's D
// ahead in every team; -DDL_LN_PARAMS_AHEAD=D, LayerNorm's.
template <typename T>
struct ParamAhead<RmsNormTask<T>> {
#if defined(DL_PARAMS_AHEAD)
    __host__ __device__ static constexpr int packs(int) { return DL_PARAMS_AHEAD; }
#elif defined(DL_PARAMS_NOT_AHEAD)
    __host__ __device__ static constexpr int packs(int) { return 0; }
#else
    __host__ __device__ static constexpr int packs(int cluster) { return cluster > 0 ? 2 : 0; }
#endif
};
template <typename T>
struct ParamAhead<LayerNormTask<T>> {
#if defined(DL_LN_PARAMS_AHEAD)
    __host__ __device__ static constexpr int packs(int) { return DL_LN_PARAMS_AHEAD; }
#elif defined(DL_PARAMS_NOT_AHEAD)
    __host__ __device__ static constexpr int packs(int) { return 0; }
#else
    __host__ __device__ static constexpr int packs(int cluster) { return cluster == 4 ? 1 : 0; }
#endif
};

// γ and β fetched for every pack ahead of the write spill the cluster entries (dl_rows.cuh), so
// the norms keep the test per pack in their blocks, splits and clusters; their lanes (short rows)
// go without it: 23% fewer instructions at LayerNorm bf16 2^20 × 256, where Nsight Compute found
// the H200's issue slots 83% busy, and faster by turns on an H100
// (plots/data/dl/experiments/norms-lanes/). An experiment (REDUCTION_NVRTC_OPTIONS=
// -DDL_NORMS_UNTESTED) drops the test in every team.
#ifndef DL_NORMS_UNTESTED
template <typename T>
struct UntestedPacks<LayerNormTask<T>> {
    static constexpr bool ok = false;
    static constexpr bool in_lanes = true;
};
template <typename T>
struct UntestedPacks<RmsNormTask<T>> {
    static constexpr bool ok = false;
    static constexpr bool in_lanes = true;
};
#endif

}  // namespace dl

#define LAYER_NORM_PARAMS(T) (const T* x, const T* gamma, const T* beta, T* y, float* mean, float* rstd, float eps, DL_TAIL_PARAMS)
#define RMS_NORM_PARAMS(T) (const T* x, const T* gamma, T* y, float* rrms, float eps, DL_TAIL_PARAMS)
#define LAYER_NORM_TASK(T) (dl::LayerNormTask<T>{x, gamma, beta, y, mean, rstd, rows, cols, ld, eps})
#define RMS_NORM_TASK(T) (dl::RmsNormTask<T>{x, gamma, y, rrms, rows, cols, ld, eps})
// Beside the row menu, blocks of 4 packs with the parameters staged in shared memory (sm_80 and
// later: the planner's Team::StagedBlock).
#define NORMS_FILE_ENTRIES(T, sfx)                                                                \
    DL_ROW_ENTRIES(layer_norm, sfx, LAYER_NORM_PARAMS(T), LAYER_NORM_TASK(T))                     \
    DL_ROW_ENTRIES(rms_norm, sfx, RMS_NORM_PARAMS(T), RMS_NORM_TASK(T))                           \
    DL_BLOCK_STAGED(layer_norm, sfx, 4, 1024, LAYER_NORM_PARAMS(T), LAYER_NORM_TASK(T))            \
    DL_BLOCK_STAGED(rms_norm, sfx, 4, 1024, RMS_NORM_PARAMS(T), RMS_NORM_TASK(T))
NORMS_FILE_ENTRIES(float, f32)
NORMS_FILE_ENTRIES(f16_t, f16)
NORMS_FILE_ENTRIES(bf16_t, bf16)
