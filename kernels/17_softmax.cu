// Kernel 17 — softmax over the last dimension, fused: y = e^(x − max) / Σ e^(x − max) per row,
// log_softmax beside it (y = x − max − log Σ e^(x − max)), and softmax's backward reduction
// (dx = y · (dy − Σ y·dy)). f32, f16 or bf16 in, the same type out, f32 arithmetic.
//
// Changed: the row sums of kernel 13 reduce a row to one number. Softmax needs two (the max,
// to shift the exponent so that e^x cannot overflow, and the sum of the shifted exponentials),
// and then it writes the whole row again. Three ways to get them:
//   softmax_three_pass  one block per row: read the row for the max, again for the sum, again
//                       to write. Three reads of every value; two of them come from L1 or L2
//                       while the row is short enough to stay there.
//   online (chunks > 1) the (max, sum) pair merged as one state (online_merge in
//                       dl_rows.cuh): one read for both, a second to write.
//   held (one chunk)    the team of threads that reads the row keeps it in registers, so the
//                       write needs no second read: one read from memory, one write, which is
//                       the least any softmax can move.
// The entries of dl_rows.cuh's menu (lanes, block, split, cluster) are all "online"; they are
// "held" whenever the host gives the row a team large enough to hold it.
// Still slow: rows too long for any team to hold (past a cluster's registers) read twice.
// Preconditions: as dl_rows.cuh; `ld` >= cols is the row stride of the input(s), the output is
// dense (row stride cols).
#include "dl_rows.cuh"

namespace dl {

// ANCHOR: softmax_task
template <typename TT, bool LOG>
struct SoftmaxTask {
    DL_NO_PREFETCH
    using T = TT;
    using Op = OnlineSoftmax<TT>;
    static constexpr int INPUTS = 1;
    static constexpr bool WRITES_ROW = true;
    const T* x;
    T* y;
    u64 rows, cols, ld;
    struct Stats {
        float max, log_sum;  // log_softmax: y = (x − max) − log(sum)
        ExpShift e;          // softmax: y = 2^(x·a + b) · (e.scale / sum), one FMA and one ex2 a value
    };
    // The row's Stats from its max and its sum of e^(x − max).
    __device__ static Stats stats_of(float max, float sum) {
        if (LOG) return Stats{max, logf(sum), ExpShift{}};
        ExpShift e = exp_shift(max == -infinity() ? 0.0f : max);
        e.scale /= sum;
        return Stats{max, 0.0f, e};
    }
    __device__ const T* in0(u64 r) const { return x + r * ld; }
    __device__ const T* in1(u64 r) const { return x + r * ld; }
    __device__ T* out(u64 r) const { return y + r * cols; }
    __device__ bool vectorizable(u64 r) const { return cols % Io<T>::PER == 0 && dl_aligned(in0(r)) && dl_aligned(out(r)); }
    template <class Values>
    __device__ MaxSum chunk_state(const Values& values) const { return max_sum_of(values); }
    __device__ Stats finish(u64, bool, bool, MaxSum s, Pre) const { return stats_of(s.max, s.sum); }
    __device__ float map_one(float v, float, u64, const Stats& st) const { return LOG ? (v - st.max) - st.log_sum : st.e(v) * st.e.scale; }
    template <int PER>
    __device__ void map_pack(const float (&v)[PER], const float (&)[PER], u64, const Stats& st, float (&out)[PER]) const {
#pragma unroll
        for (int j = 0; j < PER; ++j) out[j] = map_one(v[j], 0.0f, 0, st);
    }
};
// ANCHOR_END: softmax_task

// ANCHOR: backward_task
// Softmax's backward: the per-row dot product of y and dy, then dx = y · (dy − dot).
template <typename TT>
struct SoftmaxBackwardTask {
    DL_NO_PREFETCH
    using T = TT;
    using Op = ::Sum<TT, float>;
    static constexpr int INPUTS = 2;
    static constexpr bool WRITES_ROW = true;
    const T* y;
    const T* dy;
    T* dx;
    u64 rows, cols, ld;
    struct Stats {
        float dot;
    };
    __device__ const T* in0(u64 r) const { return y + r * ld; }
    __device__ const T* in1(u64 r) const { return dy + r * ld; }
    __device__ T* out(u64 r) const { return dx + r * cols; }
    __device__ bool vectorizable(u64 r) const {
        return cols % Io<T>::PER == 0 && dl_aligned(in0(r)) && dl_aligned(in1(r)) && dl_aligned(out(r));
    }
    template <class Values>
    __device__ float chunk_state(const Values& values) const {
        DotOf dot{0.0f};
        values(dot);
        return dot.s;
    }
    __device__ Stats finish(u64, bool, bool, float dot, Pre) const { return Stats{dot}; }
    __device__ float map_one(float a, float b, u64, const Stats& st) const { return a * (b - st.dot); }
    template <int PER>
    __device__ void map_pack(const float (&a)[PER], const float (&b)[PER], u64, const Stats& st, float (&out)[PER]) const {
#pragma unroll
        for (int j = 0; j < PER; ++j) out[j] = a[j] * (b[j] - st.dot);
    }
};
// ANCHOR_END: backward_task

// ANCHOR: three_pass
// The textbook softmax, one block per row: the max (a read), the sum of e^(x − max) (a second
// read), the output (a third read and the write). Four packs per thread per chunk.
template <typename T, bool LOG>
__device__ void softmax_three_pass(const T* __restrict__ x, T* __restrict__ y, u64 rows, u64 cols, u64 ld) {
    constexpr int VPT = 4, PER = Io<T>::PER;
    __shared__ float warp_states[32];
    const ::Max<T> max_op{};
    const ::Sum<T, float> sum_op{};
    const Slot s = {threadIdx.x, blockDim.x};
    for (u64 row = blockIdx.x; row < rows; row += gridDim.x) {
        const SoftmaxTask<T, LOG> task{x, y, rows, cols, ld};
        const bool vec = task.vectorizable(row);
        const u64 packs = vec ? cols / PER : 0, per_chunk = (u64)blockDim.x * VPT;
        const unsigned chunks = (unsigned)((packs + per_chunk - 1) / per_chunk);
        const T* in = task.in0(row);
        Held h[VPT];
        MaxOf m{-infinity()};
        for (unsigned c = 0; c < chunks; ++c) {  // pass 1: the max
            load_chunk<VPT>(h, in, packs, c, s);
            for_each<T, VPT>(h, h, packs, c, s, m);
        }
        if (!vec) LoopValues<T, 1>{in, in, cols, s}(m);
        const float max = block_allreduce(max_op, m.m, warp_states);
        ExpSumOf e{max, 0.0f};
        for (unsigned c = 0; c < chunks; ++c) {  // pass 2: the sum of the shifted exponentials
            load_chunk<VPT>(h, in, packs, c, s);
            for_each<T, VPT>(h, h, packs, c, s, e);
        }
        if (!vec) LoopValues<T, 1>{in, in, cols, s}(e);
        const float sum = block_allreduce(sum_op, e.s, warp_states);
        const auto st = SoftmaxTask<T, LOG>::stats_of(max, sum);
        for (unsigned c = 0; c < chunks; ++c) {  // pass 3: the output
            load_chunk<VPT>(h, in, packs, c, s);
            store_chunk<T, VPT>(task, task.out(row), h, h, packs, c, s, st);
        }
        if (!vec)
            for (u64 e = threadIdx.x; e < cols; e += blockDim.x) Io<T>::store_one(task.out(row) + e, task.map_one(load_one(in, e), 0.0f, e, st));
    }
}
// ANCHOR_END: three_pass

}  // namespace dl

#define SOFTMAX_PARAMS(T) (const T* x, T* y, DL_TAIL_PARAMS)
#define SOFTMAX_BACKWARD_PARAMS(T) (const T* y, const T* dy, T* dx, DL_TAIL_PARAMS)
#define SOFTMAX_FILE_ENTRIES(T, sfx)                                                                            \
    DL_ROW_ENTRIES(softmax, sfx, SOFTMAX_PARAMS(T), (dl::SoftmaxTask<T, false>{x, y, rows, cols, ld}))          \
    DL_ROW_ENTRIES(log_softmax, sfx, SOFTMAX_PARAMS(T), (dl::SoftmaxTask<T, true>{x, y, rows, cols, ld}))       \
    DL_ROW_ENTRIES_TWO_INPUTS(softmax_backward, sfx, SOFTMAX_BACKWARD_PARAMS(T), (dl::SoftmaxBackwardTask<T>{y, dy, dx, rows, cols, ld})) \
    extern "C" __global__ void __launch_bounds__(1024) softmax_three_pass_##sfx(const T* x, T* y, u64 rows, u64 cols, u64 ld) { \
        dl::softmax_three_pass<T, false>(x, y, rows, cols, ld);                                                 \
    }
SOFTMAX_FILE_ENTRIES(float, f32)
SOFTMAX_FILE_ENTRIES(f16_t, f16)
SOFTMAX_FILE_ENTRIES(bf16_t, bf16)
