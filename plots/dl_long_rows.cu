// How the blocks of a long row should exchange their softmax states: an experiment for the
// deep-learning reductions' long rows (issue 23), run with nvcc on the GPU host.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o dl_long_rows plots/dl_long_rows.cu
//   ./dl_long_rows > plots/data/dl/experiments/nvidia-h200-long-rows.csv
//
// Every variant is the book's held softmax (kernels/dl_rows.cuh): a team of C blocks of THREADS
// threads per row, every thread holding VPT 16-byte packs of the row in registers, one read and one
// write of every value; the (max, sum) state of each thread merged over the block, then over the
// C blocks. The variants differ only in how the C blocks get the row's state:
//   block      C = 1: one block per row, no exchange (the yardstick of a team that needs none)
//   barrier    the book's cluster_allreduce: each block's state to its shared memory, a cluster
//              barrier, every warp reads the C states through distributed shared memory, a second
//              barrier arrival (waited for before the block leaves)
//   push       each block writes its state into every block's shared memory (remote stores), one
//              cluster barrier, each block reads its own C slots: one barrier, no remote reads
//   mbarrier   push by st.async, each block waiting on its own transaction barrier for C states;
//              the cluster barrier that makes the barriers' initialisation visible is arrived at
//              when the block starts and waited for just before the push (behind the loads)
//   none       launched as clusters, no exchange (wrong results): what the cluster launch costs
//   nocluster  no clusters, no exchange (wrong results): the same work as independent blocks
// M·N = 2^28, f32 and bf16; inputs x in [-4, 4) from a hash; CUDA events around each of 15 runs
// after 3 warm-ups (2 GiB or 1 GiB moved per run: far past L2), the median. Every variant's
// output is poisoned, then three whole rows are compared with an f64 softmax (relative error at
// most 1e-5 for f32, 2^-7 for bf16): the two wrong variants are checked too, to show that the
// check fails them. Output on stdout: `# key: value` lines, then
// dtype,n,rows,clusters,threads,vpt,variant,registers,max_active_clusters,median_us,min_us,max_us,gbps,checked
// Exit 2 if a variant that should be right was wrong.
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cuda_check.cuh"

typedef unsigned long long u64;
typedef unsigned short bf16_bits;

enum Variant { BLOCK, BARRIER, PUSH, MBARRIER, NONE, NOCLUSTER };
static const char* const VARIANT_NAMES[] = {"block", "barrier", "push", "mbarrier", "none", "nocluster"};

constexpr float LOG2E = 1.4426950408889634f;
__device__ __forceinline__ float ex2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// ---- values: 4 f32 or 8 bf16 in a pack
template <typename T>
struct Io;
template <>
struct Io<float> {
    static constexpr int PER = 4;
    __device__ static float get(uint4 p, int j) { return __uint_as_float(j == 0 ? p.x : j == 1 ? p.y : j == 2 ? p.z : p.w); }
    __device__ static uint4 put(const float (&v)[4]) {
        return make_uint4(__float_as_uint(v[0]), __float_as_uint(v[1]), __float_as_uint(v[2]), __float_as_uint(v[3]));
    }
    __device__ static float max(uint4 p) { return fmaxf(fmaxf(get(p, 0), get(p, 1)), fmaxf(get(p, 2), get(p, 3))); }
};
template <>
struct Io<bf16_bits> {
    static constexpr int PER = 8;
    __device__ static float get(uint4 p, int j) {
        const unsigned w = (j >> 1) == 0 ? p.x : (j >> 1) == 1 ? p.y : (j >> 1) == 2 ? p.z : p.w;
        return __uint_as_float((j & 1) ? (w & 0xffff0000u) : (w << 16));
    }
    __device__ static unsigned pair(float lo, float hi) {
        unsigned r;
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
        return r;
    }
    __device__ static uint4 put(const float (&v)[8]) {
        return make_uint4(pair(v[0], v[1]), pair(v[2], v[3]), pair(v[4], v[5]), pair(v[6], v[7]));
    }
    // Two values a compare (max.bf16x2): no f32 copies of the held values stay live between the
    // max and the sum (with them, 1024 threads × 8 packs spilled).
    __device__ static unsigned max2(unsigned a, unsigned b) {
        unsigned r;
        asm("max.bf16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
        return r;
    }
    __device__ static float max(uint4 p) {
        const unsigned w = max2(max2(p.x, p.y), max2(p.z, p.w));
        return fmaxf(__uint_as_float(w << 16), __uint_as_float(w & 0xffff0000u));
    }
};

// ---- the (max, sum of e^(x - max)) state and its merge
struct MaxSum {
    float max, sum;
};
__device__ __forceinline__ float rescaled(float m, float s, float to) { return m == to ? s : s * ex2((m - to) * LOG2E); }
__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b) {
    const float m = fmaxf(a.max, b.max);
    return MaxSum{m, rescaled(a.max, a.sum, m) + rescaled(b.max, b.sum, m)};
}
__device__ __forceinline__ MaxSum warp_merge(MaxSum s) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        MaxSum t;
        t.max = __shfl_xor_sync(0xffffffffu, s.max, o);
        t.sum = __shfl_xor_sync(0xffffffffu, s.sum, o);
        s = merge(s, t);
    }
    return s;
}
// Every thread gets the block's state.
__device__ __forceinline__ MaxSum block_merge(MaxSum s, MaxSum* ws) {
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    s = warp_merge(s);
    if (lane == 0) ws[warp] = s;
    __syncthreads();
    MaxSum v = lane < blockDim.x / 32 ? ws[lane] : MaxSum{-INFINITY, 0.f};
    return warp_merge(v);
}

// ---- clusters (sm_90). Built for an older target (the repository compiles every program for
// sm_75 too), the kernel traps instead, and main never launches it there.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define CLUSTERS 0
#else
#define CLUSTERS 1
#endif
#if CLUSTERS
__device__ __forceinline__ unsigned cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
__device__ __forceinline__ void cluster_arrive() { asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory"); }
__device__ __forceinline__ void cluster_arrive_relaxed() { asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory"); }
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory"); }
__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ unsigned peer_addr(unsigned local, unsigned rank) {
    unsigned remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
    return remote;
}
__device__ __forceinline__ float load_peer(const float* local, unsigned rank) {
    float v;
    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(peer_addr(smem_addr(local), rank)) : "memory");
    return v;
}
__device__ __forceinline__ void store_peer(const MaxSum* local, unsigned rank, MaxSum s) {
    asm volatile("st.shared::cluster.v2.f32 [%0], {%1, %2};" ::"r"(peer_addr(smem_addr(local), rank)), "f"(s.max), "f"(s.sum) : "memory");
}
__device__ __forceinline__ void push_async(const MaxSum* slot, const unsigned long long* bar, unsigned rank, MaxSum s) {
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];" ::"r"(peer_addr(smem_addr(slot), rank)),
                 "f"(s.max), "f"(s.sum), "r"(peer_addr(smem_addr(bar), rank))
                 : "memory");
}
__device__ __forceinline__ void wait_parity0(const unsigned long long* bar) {
    asm volatile(
        "{\n .reg .pred done;\n wait_%=:\n mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n @!done bra wait_%=;\n}\n" ::"r"(
            smem_addr(bar))
        : "memory");
}

#endif

// ANCHOR: kernel
template <typename T, int C, int THREADS, int VPT, int V>
__global__ void __launch_bounds__(THREADS) softmax_rows(const T* __restrict__ x, T* __restrict__ y, u64 cols) {
#if CLUSTERS
    constexpr int PER = Io<T>::PER;
    __shared__ MaxSum ws[32];
    __shared__ MaxSum slots[C];
    __shared__ alignas(8) unsigned long long bar;
    const bool clustered = C > 1 && V != NOCLUSTER;
    const unsigned rank = clustered ? cluster_rank() : blockIdx.x % C;
    if (V == MBARRIER) {
        if (threadIdx.x == 0) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&bar)) : "memory");
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(&bar)), "r"((unsigned)(C * sizeof(MaxSum)))
                         : "memory");
            asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        }
        cluster_arrive_relaxed();
    }
    const u64 row = blockIdx.x / C;
    const unsigned team = C * THREADS, t = rank * THREADS + threadIdx.x;
    const uint4* in = reinterpret_cast<const uint4*>(x + row * cols);
    uint4* out = reinterpret_cast<uint4*>(y + row * cols);
    uint4 h[VPT];
#pragma unroll
    for (int k = 0; k < VPT; ++k) h[k] = __ldcg(in + (u64)k * team + t);  // the host makes cols = C·THREADS·VPT·PER
    float m = -INFINITY;
#pragma unroll
    for (int k = 0; k < VPT; ++k) m = fmaxf(m, Io<T>::max(h[k]));
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < VPT; ++k)
#pragma unroll
        for (int j = 0; j < PER; ++j) s += ex2((Io<T>::get(h[k], j) - m) * LOG2E);
    MaxSum st = block_merge(MaxSum{m, s}, ws);
    if (V == BARRIER) {
        if (threadIdx.x == 0) slots[0] = st;
        cluster_arrive();
        cluster_wait();
        const unsigned lane = threadIdx.x % 32;
        MaxSum v{-INFINITY, 0.f};
        if (lane < C) v = MaxSum{load_peer(&slots[0].max, lane), load_peer(&slots[0].sum, lane)};
        st = warp_merge(v);
        cluster_arrive();  // done with the peers' shared memory; waited for before the block leaves
    } else if (V == PUSH) {
        if (threadIdx.x < C) store_peer(&slots[rank], threadIdx.x, st);
        cluster_arrive();
        cluster_wait();
        const unsigned lane = threadIdx.x % 32;
        MaxSum v = lane < C ? slots[lane] : MaxSum{-INFINITY, 0.f};
        st = warp_merge(v);
    } else if (V == MBARRIER) {
        cluster_wait();  // every peer's barrier is initialised
        if (threadIdx.x < C) push_async(&slots[rank], &bar, threadIdx.x, st);
        wait_parity0(&bar);
        const unsigned lane = threadIdx.x % 32;
        MaxSum v = lane < C ? slots[lane] : MaxSum{-INFINITY, 0.f};
        st = warp_merge(v);
    }
    // The held words pass through an empty asm: the write converts them again instead of keeping
    // f32 copies from the sum alive through the exchange (64 of them for 8 bf16 packs: spills).
#pragma unroll
    for (int k = 0; k < VPT; ++k) asm volatile("" : "+r"(h[k].x), "+r"(h[k].y), "+r"(h[k].z), "+r"(h[k].w));
    const float inv = 1.f / st.sum;
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
        float v[PER];
#pragma unroll
        for (int j = 0; j < PER; ++j) v[j] = ex2((Io<T>::get(h[k], j) - st.max) * LOG2E) * inv;
        __stcs(out + (u64)k * team + t, Io<T>::put(v));
    }
    if (V == BARRIER) cluster_wait();
#else
    __trap();
#endif
}
// ANCHOR_END: kernel

// ---- inputs and the f64 reference
__host__ __device__ inline u64 mix(u64 x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}
// Multiples of 1/32 in [-4, 4): 8 significant bits at most, exact in bf16 as in f32.
__host__ __device__ inline float input_value(u64 i) { return (float)((mix(4242ull ^ i) >> 40) % 256) / 32.f - 4.f; }
__device__ inline void store_value(float* p, float v) { *p = v; }
__device__ inline void store_value(bf16_bits* p, float v) { *p = (bf16_bits)(__float_as_uint(v) >> 16); }  // exact: the value has 8 significant bits
template <typename T>
__global__ void fill(T* out, u64 len) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < len; i += (u64)gridDim.x * blockDim.x) store_value(out + i, input_value(i));
}
static float to_float(float v) { return v; }
static float to_float(bf16_bits v) {
    const unsigned u = (unsigned)v << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

static int wrong_where_right = 0;

struct Shape {
    u64 rows, cols;
};

template <typename T, int C, int THREADS, int VPT, int V>
static void measure(const char* dtype, T* x, T* y, Shape sh, cudaStream_t stream) {
    auto kernel = softmax_rows<T, C, THREADS, VPT, V>;
    cudaFuncAttributes attributes;
    CHECK(cudaFuncGetAttributes(&attributes, kernel));
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3((unsigned)(sh.rows * C));
    config.blockDim = dim3(THREADS);
    config.stream = stream;
    cudaLaunchAttribute attribute;
    const bool clustered = C > 1 && V != NOCLUSTER;
    int active_clusters = 0;
    if (clustered) {
        if (C > 8) CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
        attribute.id = cudaLaunchAttributeClusterDimension;
        attribute.val.clusterDim.x = C;
        attribute.val.clusterDim.y = 1;
        attribute.val.clusterDim.z = 1;
        config.attrs = &attribute;
        config.numAttrs = 1;
        CHECK(cudaOccupancyMaxActiveClusters(&active_clusters, kernel, &config));
        if (active_clusters == 0) {
            std::printf("%s,%llu,%llu,%d,%d,%d,%s,%d,0,,,,,does not fit\n", dtype, sh.cols, sh.rows, C, THREADS, VPT, VARIANT_NAMES[V], attributes.numRegs);
            return;
        }
    }
    // Correct before fast: poisoned output, three whole rows against an f64 softmax.
    CHECK(cudaMemsetAsync(y, 0xff, sh.rows * sh.cols * sizeof(T), stream));
    CHECK(cudaLaunchKernelEx(&config, kernel, (const T*)x, y, sh.cols));
    CHECK(cudaGetLastError());
    CHECK(cudaStreamSynchronize(stream));
    bool right = true;
    const double tolerance = sizeof(T) == 4 ? 1e-5 : 1.0 / 128;
    std::vector<T> got(sh.cols);
    for (u64 row : {(u64)0, sh.rows / 2 + 1, sh.rows - 1}) {
        CHECK(cudaMemcpy(got.data(), y + row * sh.cols, sh.cols * sizeof(T), cudaMemcpyDeviceToHost));
        double mx = -INFINITY, sum = 0;
        for (u64 e = 0; e < sh.cols; ++e) mx = std::max(mx, (double)input_value(row * sh.cols + e));
        for (u64 e = 0; e < sh.cols; ++e) sum += std::exp((double)input_value(row * sh.cols + e) - mx);
        for (u64 e = 0; e < sh.cols && right; ++e) {
            const double want = std::exp((double)input_value(row * sh.cols + e) - mx) / sum;
            const double have = to_float(got[e]);
            if (!(std::fabs(have - want) <= tolerance * want)) right = false;
        }
    }
    const bool should_be_right = V != NONE && V != NOCLUSTER;
    if (should_be_right && !right) ++wrong_where_right;
    // Timed: 3 warm-ups, 15 runs, each between two events.
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    for (int i = 0; i < 3; ++i) CHECK(cudaLaunchKernelEx(&config, kernel, (const T*)x, y, sh.cols));
    std::vector<float> us;
    for (int i = 0; i < 15; ++i) {
        CHECK(cudaEventRecord(a, stream));
        CHECK(cudaLaunchKernelEx(&config, kernel, (const T*)x, y, sh.cols));
        CHECK(cudaEventRecord(b, stream));
        CHECK(cudaEventSynchronize(b));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        us.push_back(ms * 1000.f);
    }
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
    std::sort(us.begin(), us.end());
    const double median = us[us.size() / 2], bytes = 2.0 * sh.rows * sh.cols * sizeof(T);
    std::printf("%s,%llu,%llu,%d,%d,%d,%s,%d,%d,%.2f,%.2f,%.2f,%.1f,%s\n", dtype, sh.cols, sh.rows, C, THREADS, VPT, VARIANT_NAMES[V],
                attributes.numRegs, active_clusters, median, us.front(), us.back(), bytes / median / 1e3, right ? "right" : "wrong");
    std::fflush(stdout);
    std::fprintf(stderr, "%s N=%llu %dx%dx%d %-9s %8.2f us %s\n", dtype, sh.cols, C, THREADS, VPT, VARIANT_NAMES[V], median, right ? "right" : "WRONG");
}

template <typename T, int C, int THREADS, int VPT>
static void team(const char* dtype, T* x, T* y, cudaStream_t stream) {
    const u64 total = 1ull << 28, cols = (u64)C * THREADS * VPT * Io<T>::PER;
    const Shape sh{total / cols, cols};
    if (C == 1) {
        measure<T, C, THREADS, VPT, BLOCK>(dtype, x, y, sh, stream);
        return;
    }
    measure<T, C, THREADS, VPT, BARRIER>(dtype, x, y, sh, stream);
    measure<T, C, THREADS, VPT, PUSH>(dtype, x, y, sh, stream);
    measure<T, C, THREADS, VPT, MBARRIER>(dtype, x, y, sh, stream);
    measure<T, C, THREADS, VPT, NONE>(dtype, x, y, sh, stream);
    measure<T, C, THREADS, VPT, NOCLUSTER>(dtype, x, y, sh, stream);
}

int main() {
    int device = 0;
    CHECK(cudaGetDevice(&device));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, device));
    if (prop.major < 9) {
        std::fprintf(stderr, "dl_long_rows: clusters need sm_90; this GPU is sm_%d%d\n", prop.major, prop.minor);
        return 1;
    }
    int bus_bits = 0, memory_khz = 0;
    CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device));
    CHECK(cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, device));
    std::printf("# gpu: %s\n# sm_count: %d\n# peak_gbps: %.1f\n", prop.name, prop.multiProcessorCount, 2.0 * memory_khz * 1e3 * bus_bits / 8 / 1e9);
    std::printf("# method: M*N = 2^28 softmax rows, three rows checked against f64, median of 15 CUDA-event runs after 3 warm-ups\n");
    std::printf("dtype,n,rows,clusters,threads,vpt,variant,registers,max_active_clusters,median_us,min_us,max_us,gbps,checked\n");
    cudaStream_t stream;
    CHECK(cudaStreamCreate(&stream));
    const u64 total = 1ull << 28;
    float *xf, *yf;
    CHECK(cudaMalloc(&xf, total * 4));
    CHECK(cudaMalloc(&yf, total * 4));
    fill<<<4096, 256, 0, stream>>>(xf, total);
    CHECK(cudaGetLastError());
    // f32: 2^15 (one block holds it) to 2^18
    team<float, 1, 1024, 8>("f32", xf, yf, stream);
    team<float, 2, 512, 8>("f32", xf, yf, stream);
    team<float, 4, 256, 8>("f32", xf, yf, stream);
    team<float, 2, 1024, 8>("f32", xf, yf, stream);
    team<float, 4, 512, 8>("f32", xf, yf, stream);
    team<float, 4, 1024, 4>("f32", xf, yf, stream);
    team<float, 8, 256, 8>("f32", xf, yf, stream);
    team<float, 8, 512, 4>("f32", xf, yf, stream);
    team<float, 4, 1024, 8>("f32", xf, yf, stream);
    team<float, 8, 512, 8>("f32", xf, yf, stream);
    team<float, 8, 1024, 4>("f32", xf, yf, stream);
    team<float, 16, 256, 8>("f32", xf, yf, stream);
    team<float, 16, 512, 4>("f32", xf, yf, stream);
    team<float, 8, 1024, 8>("f32", xf, yf, stream);
    team<float, 16, 512, 8>("f32", xf, yf, stream);
    team<float, 16, 1024, 4>("f32", xf, yf, stream);
    CHECK(cudaFree(xf));
    CHECK(cudaFree(yf));
    bf16_bits *xb, *yb;
    CHECK(cudaMalloc(&xb, total * 2));
    CHECK(cudaMalloc(&yb, total * 2));
    fill<<<4096, 256, 0, stream>>>(xb, total);
    CHECK(cudaGetLastError());
    team<bf16_bits, 1, 1024, 8>("bf16", xb, yb, stream);
    team<bf16_bits, 2, 512, 8>("bf16", xb, yb, stream);
    team<bf16_bits, 4, 256, 8>("bf16", xb, yb, stream);
    team<bf16_bits, 2, 1024, 8>("bf16", xb, yb, stream);
    team<bf16_bits, 4, 512, 8>("bf16", xb, yb, stream);
    team<bf16_bits, 4, 1024, 4>("bf16", xb, yb, stream);
    team<bf16_bits, 8, 256, 8>("bf16", xb, yb, stream);
    team<bf16_bits, 8, 512, 4>("bf16", xb, yb, stream);
    team<bf16_bits, 4, 1024, 8>("bf16", xb, yb, stream);
    team<bf16_bits, 8, 512, 8>("bf16", xb, yb, stream);
    team<bf16_bits, 8, 1024, 4>("bf16", xb, yb, stream);
    team<bf16_bits, 16, 256, 8>("bf16", xb, yb, stream);
    team<bf16_bits, 16, 512, 4>("bf16", xb, yb, stream);
    CHECK(cudaFree(xb));
    CHECK(cudaFree(yb));
    CHECK(cudaStreamDestroy(stream));
    if (wrong_where_right) {
        std::fprintf(stderr, "dl_long_rows: %d variants that should be right were wrong\n", wrong_where_right);
        return 2;
    }
    return 0;
}
