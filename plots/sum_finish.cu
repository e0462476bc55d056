// How a one-tile-per-block sum should add its blocks' partials: an experiment for the entry point
// (issue 25), run with nvcc on the GPU host beside the book's benchmark.
//
//   nvcc -O3 -std=c++17 -arch=native -o sum_finish plots/sum_finish.cu
//   ./sum_finish > plots/data/experiments/nvidia-h200-finish.csv
//
// Every variant reads n f32 values with the read-only kernel's tile (BLOCK threads, LOADS
// independent 16-byte loads each, one tile per block, no loop) and differs only in what happens
// to the blocks' partial sums:
//   read_only   each block writes its partial and leaves: no sum, the yardstick (kernels/read_only.cu)
//   fence_sc    kernel 10's last block (kernels/10_tiles.cu): partial, __threadfence() (fence.sc.gpu),
//               atomicAdd on a ticket, the block with the last ticket adds the partials in order
//   acq_rel     the same with the ticket taken by atom.add.acq_rel.gpu (no fence.sc)
//   two_pass    read_only, then a second launch of one 1024-thread block adds the partials in order
//   two_pass_pdl (sm_90 and newer) two_pass, its second launch a programmatic dependent launch: every
//               block of the first triggers it as it starts, and it waits in griddepcontrol.wait
//   cluster8    (sm_90 and newer) clusters of 8 blocks: each block's sum goes to the cluster's block 0
//               through distributed shared memory, no global memory, no fence, no ticket; a grid of
//               one cluster (up to 8 tiles) writes the result in one launch, a larger one writes a
//               sum per cluster and a second launch adds them, as two_pass does
// Every partial tile (the last block's) issues all of its loads before it adds, as a whole tile
// does (bounds-checked, unrolled). Times: CUDA graphs of back-to-back sums, inputs rotated through
// a pool of 2^30 + 2^28 values (the sizes whose K calls exceed L2 read DRAM), CUDA events around
// 15 replays, the median per sum. Each variant's sum is checked exactly first: the values are
// small integers with random signs, so every f32 partial sum is an exact integer, compared with an
// int64 reference computed on the GPU. Then one call as a caller waits for it (host_result).
// Output on stdout: the timing experiments' format (src/records/experiments.rs: `# key: value`
// lines, then experiment,variant,dtype,n,grid,block,ops,median_us,min_us,max_us; the variant
// names the loads per thread, `fence_sc_l8`), progress on stderr. Exit 2 if any sum was wrong.
#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda_check.cuh"

typedef unsigned long long u64;

__device__ __forceinline__ float pack_sum(uint4 p) {
    return __uint_as_float(p.x) + __uint_as_float(p.y) + __uint_as_float(p.z) + __uint_as_float(p.w);
}
__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float block_sum(float v, float* ws) {
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_sum(v);
    if (lane == 0) ws[warp] = v;
    __syncthreads();
    if (warp == 0) v = warp_sum(lane < blockDim.x / 32 ? ws[lane] : 0.f);
    return v;
}

// The block's tile: every load in flight before any add, whole tile or not. n % 4 == 0 here.
template <unsigned BLOCK, unsigned LOADS>
__device__ __forceinline__ float tile(const float* __restrict__ in, u64 n) {
    const uint4* in4 = reinterpret_cast<const uint4*>(in);
    const u64 packs = n / 4, first = (u64)blockIdx.x * BLOCK * LOADS + threadIdx.x;
    uint4 v[LOADS];
    if ((u64)(blockIdx.x + 1) * BLOCK * LOADS <= packs) {
#pragma unroll
        for (unsigned k = 0; k < LOADS; ++k) v[k] = __ldcs(in4 + first + (u64)k * BLOCK);
    } else {
#pragma unroll
        for (unsigned k = 0; k < LOADS; ++k) {
            const u64 p = first + (u64)k * BLOCK;
            v[k] = p < packs ? __ldcs(in4 + p) : make_uint4(0, 0, 0, 0);
        }
    }
    float acc = 0.f;
#pragma unroll
    for (unsigned k = 0; k < LOADS; ++k) acc += pack_sum(v[k]);
    return acc;
}

// The last block adds the partials in index order, 16 bytes at a time where it can.
__device__ __forceinline__ float add_partials(const float* partials, unsigned count, float* ws) {
    float s = 0.f;
    const unsigned packs = count / 4;
    for (unsigned p = threadIdx.x; p < packs; p += blockDim.x) s += pack_sum(__ldcg(reinterpret_cast<const uint4*>(partials) + p));
    for (unsigned b = packs * 4 + threadIdx.x; b < count; b += blockDim.x) s += __ldcg(partials + b);
    __syncthreads();
    return block_sum(s, ws);
}

enum Variant { READ_ONLY, FENCE_SC, ACQ_REL, TWO_PASS, CLUSTER8, TWO_PASS_PDL };

template <unsigned BLOCK, unsigned LOADS, int V>
__global__ void __launch_bounds__(BLOCK) tiles(const float* in, float* out, u64 n, float* partials, unsigned* ticket) {
    __shared__ float ws[32];
    __shared__ bool last;
#if __CUDA_ARCH__ >= 900
    // The second launch may start as soon as every block of this one has: it waits for this
    // grid's end (and its writes) in griddepcontrol.wait, while this grid's last blocks run.
    if (V == TWO_PASS_PDL) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
    const float v = block_sum(tile<BLOCK, LOADS>(in, n), ws);
    if (V == READ_ONLY || V == TWO_PASS || V == TWO_PASS_PDL || gridDim.x == 1) {
        if (threadIdx.x == 0) (gridDim.x == 1 && V != READ_ONLY ? out[0] : partials[blockIdx.x]) = v;
        return;
    }
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = v;
        unsigned t;
        if (V == FENCE_SC) {
            __threadfence();
            t = atomicAdd(ticket, 1u);
        } else {
            asm volatile("atom.add.acq_rel.gpu.u32 %0, [%1], 1;" : "=r"(t) : "l"(ticket) : "memory");
        }
        last = t == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    const float s = add_partials(partials, gridDim.x, ws);
    if (threadIdx.x == 0) {
        out[0] = s;
        *ticket = 0;
    }
}

// A cluster of 8 blocks adds its blocks' sums in block 0, reading them from the other blocks'
// shared memory; the grid is a whole number of clusters (blocks past the input read nothing).
constexpr unsigned CLUSTER = 8;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define CLUSTER_DIMS  // no clusters before sm_90: the kernel traps, and main never launches it
#else
#define CLUSTER_DIMS __cluster_dims__(CLUSTER, 1, 1)
#endif
template <unsigned BLOCK, unsigned LOADS>
__global__ void CLUSTER_DIMS __launch_bounds__(BLOCK) tiles_cluster(const float* in, float* out, u64 n, float* partials) {
#if __CUDA_ARCH__ >= 900
    namespace cg = cooperative_groups;
    __shared__ float ws[32];
    __shared__ float block_value;
    cg::cluster_group cluster = cg::this_cluster();
    const float v = block_sum(tile<BLOCK, LOADS>(in, n), ws);
    if (threadIdx.x == 0) block_value = v;
    cluster.sync();  // every block's value is written
    if (cluster.block_rank() == 0 && threadIdx.x < 32) {
        float x = threadIdx.x < CLUSTER ? *cluster.map_shared_rank(&block_value, threadIdx.x) : 0.f;
        x = warp_sum(x);
        if (threadIdx.x == 0) (gridDim.x == CLUSTER ? out[0] : partials[blockIdx.x / CLUSTER]) = x;
    }
    cluster.sync();  // no block leaves while block 0 may still read its shared memory
#else
    __trap();  // clusters need sm_90
#endif
}

__global__ void __launch_bounds__(1024) second_pass(const float* partials, unsigned count, float* out) {
    __shared__ float ws[32];
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");  // a no-op unless launched as a dependent
#endif
    const float s = add_partials(partials, count, ws);
    if (threadIdx.x == 0) out[0] = s;
}

// ---- inputs: small integers with random signs, a pure function of the index
__host__ __device__ inline u64 mix(u64 x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}
__global__ void fill(float* out, u64 len) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < len; i += (u64)gridDim.x * blockDim.x) {
        const u64 h = mix(2007ull ^ i);
        out[i] = (float)(1 + (int)((h >> 1) % 3)) * ((h & 1) ? 1.f : -1.f);
    }
}
__global__ void reference(const float* in, u64 n, long long* out) {
    long long s = 0;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) s += (long long)in[i];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if (threadIdx.x % 32 == 0) atomicAdd(reinterpret_cast<unsigned long long*>(out), (unsigned long long)s);
}

struct Ctx {
    float* pool;
    u64 pool_len;
    float *out, *partials;
    unsigned* ticket;
    cudaStream_t s;
};

// Blocks in a launch: one per tile, rounded up to whole clusters for the cluster variant.
template <unsigned B, unsigned L, int V>
static unsigned grid_of(u64 n) {
    const unsigned tiles = (unsigned)std::max<u64>(1, (n / 4 + (u64)B * L - 1) / ((u64)B * L));
    return V == CLUSTER8 ? (tiles + CLUSTER - 1) / CLUSTER * CLUSTER : tiles;
}

template <unsigned B, unsigned L, int V>
static void launch(const Ctx& c, const float* in, u64 n) {
    const unsigned grid = grid_of<B, L, V>(n);
    if (V == CLUSTER8) {
        tiles_cluster<B, L><<<grid, B, 0, c.s>>>(in, c.out, n, c.partials);
        if (grid > CLUSTER) second_pass<<<1, 1024, 0, c.s>>>(c.partials, grid / CLUSTER, c.out);
        return;
    }
    tiles<B, L, V><<<grid, B, 0, c.s>>>(in, c.out, n, c.partials, c.ticket);
    if (V == TWO_PASS && grid > 1) second_pass<<<1, 1024, 0, c.s>>>(c.partials, grid, c.out);
    if (V == TWO_PASS_PDL && grid > 1) {
        // Programmatic dependent launch (sm_90 on): queued behind the first, allowed to start early.
        cudaLaunchAttribute attribute;
        attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attribute.val.programmaticStreamSerializationAllowed = 1;
        cudaLaunchConfig_t config = {};
        config.gridDim = dim3(1);
        config.blockDim = dim3(1024);
        config.stream = c.s;
        config.attrs = &attribute;
        config.numAttrs = 1;
        CHECK(cudaLaunchKernelEx(&config, second_pass, (const float*)c.partials, grid, c.out));
    }
}

static const float* input(const Ctx& c, u64 n, int j) {
    const u64 step = (n + 255) / 256 * 256;  // 1 KiB aligned
    return c.pool + (u64)j * step % (c.pool_len - n + 1) / 256 * 256;
}

static int wrong = 0;

template <unsigned B, unsigned L, int V>
static void measure(const Ctx& c, const char* name, u64 n) {
    // Correct before fast: poisoned output, then the exact sum.
    const float* in0 = input(c, n, 0);
    long long* ref;
    CHECK(cudaMallocAsync(&ref, 8, c.s));
    CHECK(cudaMemsetAsync(ref, 0, 8, c.s));
    reference<<<1024, 256, 0, c.s>>>(in0, n, ref);
    long long want = 0;
    CHECK(cudaMemcpyAsync(&want, ref, 8, cudaMemcpyDeviceToHost, c.s));
    CHECK(cudaFreeAsync(ref, c.s));
    const float poison = 1e30f;
    CHECK(cudaMemcpyAsync(c.out, &poison, 4, cudaMemcpyHostToDevice, c.s));
    launch<B, L, V>(c, in0, n);
    CHECK(cudaGetLastError());
    float got = 0;
    if (V == READ_ONLY) {  // the partials, added on the host
        const unsigned grid = grid_of<B, L, V>(n);
        std::vector<float> p(grid);
        CHECK(cudaMemcpyAsync(p.data(), c.partials, 4 * grid, cudaMemcpyDeviceToHost, c.s));
        CHECK(cudaStreamSynchronize(c.s));
        double s = 0;
        for (float x : p) s += x;
        got = (float)s;
    } else {
        CHECK(cudaMemcpyAsync(&got, c.out, 4, cudaMemcpyDeviceToHost, c.s));
        CHECK(cudaStreamSynchronize(c.s));
    }
    if ((long long)got != want || got != (float)want) {
        std::fprintf(stderr, "WRONG %s %u x %u n=%llu: %.1f, want %lld\n", name, B, L, n, got, want);
        ++wrong;
        return;
    }
    // Graph of K back-to-back sums, about 3 ms.
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    for (int j = 0; j < 3; ++j) launch<B, L, V>(c, input(c, n, j), n);
    CHECK(cudaEventRecord(a, c.s));
    for (int j = 0; j < 20; ++j) launch<B, L, V>(c, input(c, n, j), n);
    CHECK(cudaEventRecord(b, c.s));
    CHECK(cudaEventSynchronize(b));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    const int K = (int)std::min(1000.0, std::max(1.0, 3.0 / (ms / 20)));
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CHECK(cudaStreamBeginCapture(c.s, cudaStreamCaptureModeThreadLocal));
    for (int j = 0; j < K; ++j) launch<B, L, V>(c, input(c, n, j), n);
    CHECK(cudaStreamEndCapture(c.s, &g));
    CHECK(cudaGraphInstantiate(&ge, g, 0));
    CHECK(cudaGraphLaunch(ge, c.s));
    std::vector<double> us;
    for (int r = 0; r < 15; ++r) {
        CHECK(cudaEventRecord(a, c.s));
        CHECK(cudaGraphLaunch(ge, c.s));
        CHECK(cudaEventRecord(b, c.s));
        CHECK(cudaEventSynchronize(b));
        CHECK(cudaEventElapsedTime(&ms, a, b));
        us.push_back(ms * 1e3 / K);
    }
    std::sort(us.begin(), us.end());
    const unsigned grid = grid_of<B, L, V>(n);
    std::printf("finish,%s_l%u,f32,%llu,%u,%u,%d,%.3f,%.3f,%.3f\n", name, L, n, grid, B, K, us[7], us[0], us[14]);
    std::fflush(stdout);
    CHECK(cudaGraphExecDestroy(ge));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
}

static bool cluster_ok = false;  // thread block clusters: sm_90 and newer

template <unsigned B, unsigned L>
static void shape(const Ctx& c, u64 n) {
    measure<B, L, READ_ONLY>(c, "read_only", n);
    measure<B, L, FENCE_SC>(c, "fence_sc", n);
    measure<B, L, ACQ_REL>(c, "acq_rel", n);
    measure<B, L, TWO_PASS>(c, "two_pass", n);
    if (cluster_ok) measure<B, L, CLUSTER8>(c, "cluster8", n);
    if (cluster_ok) measure<B, L, TWO_PASS_PDL>(c, "two_pass_pdl", n);
}

// One call as a caller waits for it (host clock, median of 401): the sum, then its 4 bytes copied
// into pageable memory, into pinned memory, or written by the kernel straight into mapped pinned
// memory (no copy), and one wait.
static void host_visible(Ctx& c, u64 n) {
    float *pinned, *mapped, *mapped_dev;
    CHECK(cudaHostAlloc(&pinned, 4, cudaHostAllocDefault));
    CHECK(cudaHostAlloc(&mapped, 4, cudaHostAllocMapped));
    CHECK(cudaHostGetDevicePointer(&mapped_dev, mapped, 0));
    float pageable = 0;
    for (int how = 0; how < 3; ++how) {
        std::vector<double> us;
        for (int j = 0; j < 431; ++j) {
            const auto t0 = std::chrono::steady_clock::now();
            const float* in = input(c, n, j);
            float got;
            if (how == 2) {
                float* keep = c.out;
                c.out = mapped_dev;
                launch<256, 4, FENCE_SC>(c, in, n);
                c.out = keep;
                CHECK(cudaStreamSynchronize(c.s));
                got = *(volatile float*)mapped;
            } else {
                launch<256, 4, FENCE_SC>(c, in, n);
                float* dst = how == 0 ? &pageable : pinned;
                CHECK(cudaMemcpyAsync(dst, c.out, 4, cudaMemcpyDeviceToHost, c.s));
                CHECK(cudaStreamSynchronize(c.s));
                got = *dst;
            }
            if (got != got) std::exit(3);
            if (j >= 30) us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
        }
        std::sort(us.begin(), us.end());
        const char* names[] = {"pageable", "pinned", "mapped"};
        const unsigned grid = (unsigned)std::max<u64>(1, (n / 4 + 1023) / 1024);
        std::printf("host_result,%s,f32,%llu,%u,256,1,%.3f,%.3f,%.3f\n", names[how], n, grid, us[us.size() / 2], us[0], us.back());
    }
    CHECK(cudaFreeHost(pinned));
    CHECK(cudaFreeHost(mapped));
}

int main() {
    Ctx c;
    c.pool_len = (1ull << 30) + (1ull << 28);
    CHECK(cudaStreamCreateWithFlags(&c.s, cudaStreamNonBlocking));
    CHECK(cudaMalloc(&c.pool, c.pool_len * 4));
    CHECK(cudaMalloc(&c.out, 16));
    CHECK(cudaMalloc(&c.partials, 4 << 20));
    CHECK(cudaMalloc(&c.ticket, 4));
    CHECK(cudaMemset(c.ticket, 0, 4));
    fill<<<4096, 256>>>(c.pool, c.pool_len);
    CHECK(cudaDeviceSynchronize());
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    cluster_ok = prop.major >= 9;
    int driver = 0;
    CHECK(cudaDriverGetVersion(&driver));
    char date[16];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
    std::printf("# gpu: %s (CUDA driver %d.%d)\n# date: %s\n", prop.name, driver / 1000, driver % 1000 / 10, date);
    std::printf("# command: nvcc -O3 -std=c++17 -arch=native plots/sum_finish.cu && ./sum_finish (f32; each variant at each tile shape, "
                "checked exactly, then CUDA graphs of ops back-to-back sums, inputs rotated through 5 GiB, median, min and max of 15 "
                "replays in microseconds per sum; host_result: one call and its wait by the host's steady clock, median of 401)\n");
    std::printf("experiment,variant,dtype,n,grid,block,ops,median_us,min_us,max_us\n");
    for (int k = 10; k <= 30; ++k) {
        const u64 n = 1ull << k;
        if (k <= 24 && (k <= 16 || k % 2 == 0)) {
            shape<64, 1>(c, n); shape<64, 2>(c, n); shape<64, 4>(c, n); shape<64, 8>(c, n);
            shape<128, 1>(c, n); shape<128, 2>(c, n); shape<128, 4>(c, n); shape<128, 8>(c, n);
            shape<256, 1>(c, n); shape<256, 2>(c, n); shape<256, 4>(c, n); shape<256, 8>(c, n);
        }
        if (k <= 16 || k % 2 == 0) {
            shape<512, 2>(c, n); shape<512, 4>(c, n); shape<512, 8>(c, n);
            shape<1024, 2>(c, n); shape<1024, 4>(c, n); shape<1024, 8>(c, n);
        }
        std::fprintf(stderr, "n = 2^%d done\n", k);
    }
    for (int k : {10, 12, 14, 16, 20, 24}) host_visible(c, 1ull << k);
    return wrong ? 2 : 0;
}
