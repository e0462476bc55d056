// Kernel 19 — cross-entropy over rows of logits, the loss of every language model:
//   loss[r] = logsumexp(x[r, :]) − x[r, target[r]]   (0 for a row whose target is ignore_index)
//   mean    = Σ loss[r] / (the number of rows not ignored)   (NaN if every row is ignored)
// logsumexp = max + log Σ e^(x − max), from kernel 17's online (max, sum) pair. Nothing is
// written back per value, so nothing needs to be held: the kernel reads each logit once and
// writes M losses and one mean (torch's reduction='none' and 'mean' together). A target outside
// [0, cols) that is not ignore_index gives a NaN loss (torch stops with a device assert).
// f32, f16 or bf16 logits, int64 targets, f32 losses.
//
// The mean is a second reduction, over rows, in the same launch, fixed in order:
//   lanes, block  a grid of a fixed size walks the rows; each block adds the losses of its rows
//                 and writes one partial (sum, count); the last block to finish (a ticket)
//                 adds the partials in block order.
//   split         S blocks per row; each writes its slice's (max, sum); the last block of a row
//                 (a ticket per row) merges them in slice order and writes the row's loss; the
//                 block that finishes the last row adds the M losses in row order.
// Still slow: a vocabulary too short for 16-byte packs (not a multiple of 4 f32 or 8 bf16 logits)
// is read value by value.
// Preconditions: as dl_rows.cuh. lanes/block: `partials` holds 2 · gridDim.x floats; split:
// gridDim.x = S · rows, `partials` holds 2 · S · rows floats, `arrive` one zeroed counter per row;
// `ticket` one zeroed counter (all left zeroed).
#include "dl_rows.cuh"

namespace dl {

// ANCHOR: cross_entropy_task
template <typename TT>
struct CrossEntropyTask {
    using T = TT;
    using Op = OnlineSoftmax<TT>;
    static constexpr int INPUTS = 1;
    static constexpr bool WRITES_ROW = false;
    const T* x;
    const long long* target;
    float* loss;
    u64 rows, cols, ld;
    long long ignore_index;
    struct Stats {
        float loss, count;  // in the thread that wrote the row's loss; zeros elsewhere
    };
    // The row's target and its logit, fetched by the thread that finishes the row: the target
    // before the row's loads, the logit (which depends on it) right after them, so that neither
    // waits at the end.
    struct Pre {
        long long t;
        float xt;
    };
    __device__ Pre begin(u64 row, bool first) const { return Pre{first ? target[row] : ignore_index, 0.0f}; }
    __device__ Pre after_loads(u64 row, Pre p) const {
        if (p.t != ignore_index && p.t >= 0 && (u64)p.t < cols) p.xt = load_one(in0(row), (u64)p.t);
        return p;
    }
    __device__ const T* in0(u64 r) const { return x + r * ld; }
    __device__ const T* in1(u64 r) const { return x + r * ld; }
    __device__ T* out(u64) const { return nullptr; }
    __device__ bool vectorizable(u64 r) const { return cols % Io<T>::PER == 0 && dl_aligned(in0(r)); }
    template <class Values>
    __device__ MaxSum chunk_state(const Values& values) const { return max_sum_of(values); }
    // The row's loss from its (max, sum), written by one thread.
    __device__ Stats finish(u64 row, bool live, bool first, MaxSum s, Pre p) const {
        if (!live || !first) return Stats{0.0f, 0.0f};
        const long long t = p.t;
        if (t == ignore_index) {
            loss[row] = 0.0f;
            return Stats{0.0f, 0.0f};
        }
        const float l = (t < 0 || (u64)t >= cols) ? __int_as_float(0x7fc00000) : s.max + logf(s.sum) - p.xt;
        loss[row] = l;
        return Stats{l, 1.0f};
    }
    __device__ float map_one(float, float, u64, const Stats&) const { return 0.0f; }
    template <int PER>
    __device__ void map_pack(const float (&)[PER], const float (&)[PER], u64, const Stats&, float (&)[PER]) const {}
};
// ANCHOR_END: cross_entropy_task

// ANCHOR: mean_of_block_partials
// The last block of the grid (a ticket) adds the blocks' (loss, count) partials in block order.
__device__ __forceinline__ void mean_of_block_partials(TwoFloats mine, TwoFloats* partials, unsigned* ticket, float* mean) {
    const TwoSums<float> op{};
    __shared__ TwoFloats warp_states[32];
    __shared__ bool last;
    mine = block_allreduce(op, mine, warp_states);
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = mine;
        __threadfence();
        last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    // In block order, each thread's share with 8 partials loaded at a time (operators.cuh): one at
    // a time waited a round trip to L2 for each, and the grid holds up to 4 blocks for each the
    // GPU holds at once: many partials a thread where blocks are small.
    const TwoFloats s = block_allreduce(op, ordered_fold<8>(op, partials, gridDim.x, threadIdx.x, blockDim.x), warp_states);
    if (threadIdx.x == 0) {
        mean[0] = s.a / s.b;
        *ticket = 0;
    }
}
// ANCHOR_END: mean_of_block_partials

template <typename T, int VPT>
__device__ void cross_entropy_lanes(const CrossEntropyTask<T>& task, unsigned lanes, TwoFloats* partials, unsigned* ticket, float* mean) {
    const OnlineSoftmax<T> op{};
    const u64 rows_per_block = blockDim.x / lanes, rows_per_warp = 32 / lanes;
    const Slot s = {threadIdx.x % lanes, lanes};
    TwoFloats acc = {0.0f, 0.0f};
    for (u64 first = (u64)blockIdx.x * rows_per_block + threadIdx.x / 32 * rows_per_warp; first < task.rows;
         first += (u64)gridDim.x * rows_per_block) {
        const u64 row = first + threadIdx.x % 32 / lanes;
        const auto st = row_program<CrossEntropyTask<T>, VPT>(task, row, row < task.rows, s, LanesTeam<OnlineSoftmax<T>>{op, lanes});
        acc.a += st.loss;  // zeros but in the lane that wrote the row's loss
        acc.b += st.count;
    }
    mean_of_block_partials(acc, partials, ticket, mean);
}

template <typename T, int VPT>
__device__ void cross_entropy_block(const CrossEntropyTask<T>& task, TwoFloats* partials, unsigned* ticket, float* mean) {
    const OnlineSoftmax<T> op{};
    __shared__ MaxSum warp_states[32];
    const Slot s = {threadIdx.x, blockDim.x};
    TwoFloats acc = {0.0f, 0.0f};
    for (u64 row = blockIdx.x; row < task.rows; row += gridDim.x) {
        const auto st = row_program<CrossEntropyTask<T>, VPT>(task, row, true, s, BlockTeam<OnlineSoftmax<T>>{op, warp_states});
        acc.a += st.loss;
        acc.b += st.count;
    }
    mean_of_block_partials(acc, partials, ticket, mean);
}

// ANCHOR: cross_entropy_split
template <typename T, int VPT>
__device__ void cross_entropy_split(const CrossEntropyTask<T>& task, unsigned slices, MaxSum* partials, unsigned* arrive,
                                    unsigned* ticket, float* mean) {
    constexpr int PER = Io<T>::PER;
    const OnlineSoftmax<T> op{};
    const TwoSums<float> sums{};
    __shared__ MaxSum warp_states[32];
    __shared__ TwoFloats warp_sums[32];
    __shared__ bool last_row;
    const u64 row = blockIdx.x / slices;
    const unsigned slice = blockIdx.x % slices;
    const Slot s = {slice * blockDim.x + threadIdx.x, slices * blockDim.x};
    const T* in = task.in0(row);
    MaxSum st = op.identity();
    if (task.vectorizable(row)) {
        const u64 packs = task.cols / PER, per_chunk = (u64)s.threads * VPT;
        Held h[VPT];
        // The whole chunks without a test per pack (dl_rows.cuh's UNTESTED), then the rest: with
        // a test only on each thread's last pack where the rest lacks at most that.
        const unsigned whole = (unsigned)(packs / per_chunk);
        for (unsigned c = 0; c < whole; ++c) {
            load_chunk<VPT, VPT>(h, in, packs, c, s);
            st = op.combine(st, max_sum_of(HeldValues<T, VPT, VPT>{h, h, packs, c, s}));
        }
        const u64 rest = packs - (u64)whole * per_chunk;
        if (rest > 0 && rest >= per_chunk - s.threads) {
            load_chunk<VPT, VPT - 1>(h, in, packs, whole, s);
            st = op.combine(st, max_sum_of(HeldValues<T, VPT, VPT - 1>{h, h, packs, whole, s}));
        } else if (rest > 0) {
            load_chunk<VPT>(h, in, packs, whole, s);
            st = op.combine(st, max_sum_of(HeldValues<T, VPT>{h, h, packs, whole, s}));
        }
    } else {
        st = max_sum_of(LoopValues<T, 1>{in, in, task.cols, s});
    }
    st = block_allreduce(op, st, warp_states);
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = st;
        __threadfence();
        last_row = false;
        if (atomicAdd(arrive + row, 1u) == slices - 1) {  // the row's last block: its slices in slice order
            MaxSum all = op.identity();
            for (unsigned i = 0; i < slices; ++i) all = op.combine(all, load_cg_state(partials + row * slices + i));
            task.finish(row, true, true, all, task.after_loads(row, task.begin(row, true)));
            arrive[row] = 0;
            __threadfence();
            last_row = atomicAdd(ticket, 1u) == task.rows - 1;
        }
    }
    __syncthreads();
    if (!last_row) return;
    // The block that finished the last row: the mean over every row, in row order.
    // In row order a thread, IN_FLIGHT rows' targets and losses loaded before any is added.
    constexpr unsigned IN_FLIGHT = 8;
    TwoFloats sum = sums.identity();
    for (u64 base = threadIdx.x; base < task.rows; base += IN_FLIGHT * blockDim.x) {
        long long t[IN_FLIGHT];
        float l[IN_FLIGHT];
#pragma unroll
        for (unsigned k = 0; k < IN_FLIGHT; ++k) {
            const u64 r = base + k * blockDim.x;
            t[k] = r < task.rows ? task.target[r] : task.ignore_index;
            l[k] = r < task.rows ? __ldcg(task.loss + r) : 0.0f;
        }
#pragma unroll
        for (unsigned k = 0; k < IN_FLIGHT; ++k)
            if (t[k] != task.ignore_index) sum = sums.combine(sum, TwoFloats{l[k], 1.0f});
    }
    sum = block_allreduce(sums, sum, warp_sums);
    if (threadIdx.x == 0) {
        mean[0] = sum.a / sum.b;
        *ticket = 0;
    }
}
// ANCHOR_END: cross_entropy_split

}  // namespace dl

// Entries: cross_entropy_{lanes,block,split}<VPT>_<type>, with the signature
//   (const T* x, const long long* target, float* loss, float* mean, long long ignore_index,
//    u64 rows, u64 cols, u64 ld, unsigned team, float* partials, unsigned* arrive, unsigned* ticket)
#define CE_PARAMS(T) (const T* x, const long long* target, float* loss, float* mean, long long ignore_index, u64 rows, u64 cols, u64 ld, \
                      unsigned team, float* partials, unsigned* arrive, unsigned* ticket)
#define CE_TASK(T) (dl::CrossEntropyTask<T>{x, target, loss, rows, cols, ld, ignore_index})
// MIN_BLOCKS keeps the registers the compiler chose before the mean's loads were batched (64 for
// 8 packs a thread, 48 for 2 and 4): without it, 74 and 56, a block fewer an SM. Five blocks of
// 256 only where an SM holds them (not sm_75's 1024 threads: ptxas would ignore it with a warning).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
#define CE_SHORT_MIN_BLOCKS 1
#else
#define CE_SHORT_MIN_BLOCKS 5
#endif
#define CE_LANES(T, sfx, VPT, MIN_BLOCKS) \
    extern "C" __global__ void __launch_bounds__(256, MIN_BLOCKS) cross_entropy_lanes##VPT##_##sfx CE_PARAMS(T) { \
        dl::cross_entropy_lanes<T, VPT>(CE_TASK(T), team, reinterpret_cast<dl::TwoFloats*>(partials), ticket, mean); }
#define CE_BLOCK(T, sfx, VPT, BOUND) \
    extern "C" __global__ void __launch_bounds__(BOUND) cross_entropy_block##VPT##_##sfx CE_PARAMS(T) { \
        dl::cross_entropy_block<T, VPT>(CE_TASK(T), reinterpret_cast<dl::TwoFloats*>(partials), ticket, mean); }
#define CE_SPLIT(T, sfx, VPT, BOUND) \
    extern "C" __global__ void __launch_bounds__(BOUND) cross_entropy_split##VPT##_##sfx CE_PARAMS(T) { \
        dl::cross_entropy_split<T, VPT>(CE_TASK(T), team, reinterpret_cast<dl::MaxSum*>(partials), arrive, ticket, mean); }
// The planner's menu (src/kernels/dl/plan.rs); the prototype harness builds -DDL_FULL_MENU.
#ifdef DL_FULL_MENU
#define CE_ENTRIES(T, sfx) \
    CE_LANES(T, sfx, 2, CE_SHORT_MIN_BLOCKS) CE_LANES(T, sfx, 4, CE_SHORT_MIN_BLOCKS) CE_LANES(T, sfx, 8, 4) CE_BLOCK(T, sfx, 4, 1024) CE_BLOCK(T, sfx, 8, 1024) CE_SPLIT(T, sfx, 4, 1024) CE_SPLIT(T, sfx, 8, 512)
#else
#define CE_ENTRIES(T, sfx) CE_LANES(T, sfx, 2, CE_SHORT_MIN_BLOCKS) CE_LANES(T, sfx, 4, CE_SHORT_MIN_BLOCKS) CE_LANES(T, sfx, 8, 4) CE_BLOCK(T, sfx, 8, 1024) CE_SPLIT(T, sfx, 8, 512)
#endif
CE_ENTRIES(float, f32)
CE_ENTRIES(f16_t, f16)
CE_ENTRIES(bf16_t, bf16)
