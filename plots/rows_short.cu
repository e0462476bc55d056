// How short rows should be summed: an experiment for the row sums' smallest shape (issue 25: the
// book's 4096 × 64 behind TileLang's), run with nvcc on the GPU host beside rows-bench.
//
//   nvcc -O3 -std=c++17 -arch=native -o rows_short plots/rows_short.cu
//   ./rows_short > plots/data/experiments/nvidia-h200-rows-short.csv
//
// The kernel is the book's own rows_warp (kernels/13_rows.cu, included as it is), launched with
// every team size (lanes per row, 1 to 32) and every block of 64 to 512 threads, at short-row
// shapes (f32 and bf16); beside it the yardstick `read`: the same bytes read with one 16-byte load
// a thread, a warp's sum written, nothing else: what reading them costs. rows-bench's planner
// (rows::warp_lanes) picks one team size; this says which would have been fastest.
// Times: CUDA graphs of K back-to-back launches, each on its own slab of a 2 GiB pool (K slabs far
// past L2), CUDA events around 15 replays after one warm-up, the median per launch. Every launch of
// the book's kernel is checked first: the values are small integers with random signs, so each f32
// row sum is an exact integer, compared with the host's int64 sum, the output poisoned first.
// Output on stdout: `# key: value` lines, then
// dtype,rows,cols,variant,lanes,block,launches,median_us,min_us,max_us
// progress on stderr. Exit 2 if any row sum was wrong.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

// Another version of the kernels can be measured in its place: -DROWS_KERNELS='"path/13_rows.cu"'
// (with -I kernels for the headers it includes).
#ifndef ROWS_KERNELS
#define ROWS_KERNELS "../kernels/13_rows.cu"
#endif
#include ROWS_KERNELS
#include "cuda_check.cuh"

// The yardstick: one 16-byte load a thread, the warp's sum by shuffles, lane 0 writes it.
template <typename In>
__global__ void read_packs(const In* in, float* out, u64 packs) {
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < packs ? pack_sum<In, float>(__ldcs(reinterpret_cast<const uint4*>(in) + i)) : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    if (threadIdx.x % 32 == 0 && i < packs) out[i / 32] = v;
}

struct Shape {
    const char* dtype;
    int elem;  // bytes a value
    u64 rows, cols;
};

static const u64 POOL_BYTES = 2ull << 30;
static const int LAUNCHES = 600;  // 600 slabs of 1 MiB: 600 MiB a replay, ten L2s
static const int REPLAYS = 15;

static float median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Times `launch(slab)` as a graph of LAUNCHES back-to-back launches on consecutive slabs.
template <typename F>
static void time_graph(cudaStream_t s, F launch, float* med, float* lo, float* hi) {
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int k = 0; k < LAUNCHES; ++k) launch(k);
    CHECK(cudaStreamEndCapture(s, &g));
    CHECK(cudaGraphInstantiate(&ge, g, 0));
    CHECK(cudaGraphLaunch(ge, s));  // warm-up
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    std::vector<float> per;
    for (int r = 0; r < REPLAYS; ++r) {
        CHECK(cudaEventRecord(a, s));
        CHECK(cudaGraphLaunch(ge, s));
        CHECK(cudaEventRecord(b, s));
        CHECK(cudaEventSynchronize(b));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        per.push_back(ms * 1e3f / LAUNCHES);
    }
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
    CHECK(cudaGraphExecDestroy(ge));
    CHECK(cudaGraphDestroy(g));
    *med = median(per);
    *lo = *std::min_element(per.begin(), per.end());
    *hi = *std::max_element(per.begin(), per.end());
}

int main() {
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    int driver = 0;
    CHECK(cudaDriverGetVersion(&driver));
    std::printf("# gpu: %s (CUDA driver %d.%d)\n", prop.name, driver / 1000, driver % 1000 / 10);
    std::printf("# command: nvcc -O3 -std=c++17 -arch=native plots/rows_short.cu && ./rows_short (the book's rows_warp at every team size and block; "
                "checked exactly, then CUDA graphs of %d back-to-back launches on distinct slabs of a 2 GiB pool, median, min and max of %d replays in microseconds per launch)\n",
                LAUNCHES, REPLAYS);
    std::printf("dtype,rows,cols,variant,lanes,block,launches,median_us,min_us,max_us\n");

    // Small integers with random signs, stored as f32 or as bf16 (exact in both: |x| <= 64).
    const u64 pool_values4 = POOL_BYTES / 4;
    std::vector<int> ints(pool_values4);
    uint64_t state = 2007;
    for (auto& x : ints) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        int v = (int)((state >> 33) % 64) + 1;
        x = (state >> 63) ? -v : v;
    }
    std::vector<float> as_f32(ints.begin(), ints.end());
    std::vector<unsigned short> as_bf16(POOL_BYTES / 2);  // the first values are the f32 pool's
    for (size_t i = 0; i < as_bf16.size(); ++i) {
        unsigned bits;
        std::memcpy(&bits, &as_f32[i % as_f32.size()], 4);
        as_bf16[i] = (unsigned short)(bits >> 16);  // exact: small integers have no low bits
    }
    char* pool;
    CHECK(cudaMalloc(&pool, POOL_BYTES));
    float* out;
    CHECK(cudaMalloc(&out, 64 << 20));
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    const Shape shapes[] = {
        {"f32", 4, 4096, 64}, {"f32", 4, 4096, 128}, {"f32", 4, 4096, 256}, {"f32", 4, 8192, 64},
        {"f32", 4, 4096, 1024}, {"bf16", 2, 4096, 64}, {"bf16", 2, 4096, 128}, {"bf16", 2, 4096, 256},
    };
    int wrong = 0, loaded = 0;
    for (const Shape& sh : shapes) {
        const bool f32 = sh.elem == 4;
        if (loaded != sh.elem) {
            CHECK(cudaMemcpy(pool, f32 ? (const void*)as_f32.data() : (const void*)as_bf16.data(), POOL_BYTES, cudaMemcpyHostToDevice));
            loaded = sh.elem;
        }
        const u64 n = sh.rows * sh.cols, bytes = n * sh.elem;
        const u64 slab = (bytes + 255) / 256 * 256;
        auto input = [&](int k) { return pool + (u64)(k % (int)(POOL_BYTES / slab)) * slab; };
        std::vector<long long> expect(sh.rows);
        for (u64 r = 0; r < sh.rows; ++r) {
            long long t = 0;
            for (u64 c = 0; c < sh.cols; ++c) t += ints[r * sh.cols + c];
            expect[r] = t;
        }
        const u64 packs = bytes / 16;
        for (unsigned block = 64; block <= 512; block *= 2) {
            float med, lo, hi;
            auto read = [&](int k) {
                const unsigned grid = (unsigned)((packs + block - 1) / block);
                if (f32) read_packs<float><<<grid, block, 0, s>>>((const float*)input(k), out, packs);
                else read_packs<bf16_t><<<grid, block, 0, s>>>((const bf16_t*)input(k), out, packs);
                CHECK(cudaGetLastError());
            };
            time_graph(s, read, &med, &lo, &hi);
            std::printf("%s,%llu,%llu,read,0,%u,%d,%.3f,%.3f,%.3f\n", sh.dtype, sh.rows, sh.cols, block, LAUNCHES, med, lo, hi);
            for (unsigned lanes = 1; lanes <= 32; lanes *= 2) {
                const u64 rows_per_block = block / lanes;
                const unsigned grid = (unsigned)((sh.rows + rows_per_block - 1) / rows_per_block);
                auto launch = [&](int k) {
                    if (f32) rows_warp_f32<<<grid, block, 0, s>>>((const float*)input(k), out, sh.rows, sh.cols, sh.cols, lanes);
                    else rows_warp_bf16<<<grid, block, 0, s>>>((const bf16_t*)input(k), out, sh.rows, sh.cols, sh.cols, lanes);
                    CHECK(cudaGetLastError());
                };
                // On the launches' stream (non-blocking: the legacy stream would not wait for it).
                CHECK(cudaMemsetAsync(out, 0xff, sh.rows * 4, s));  // NaN: a row not written fails
                launch(0);
                std::vector<float> got(sh.rows);
                CHECK(cudaMemcpyAsync(got.data(), out, sh.rows * 4, cudaMemcpyDeviceToHost, s));
                CHECK(cudaStreamSynchronize(s));
                for (u64 r = 0; r < sh.rows; ++r) {
                    if (got[r] != (float)expect[r]) {
                        std::fprintf(stderr, "%s %llux%llu lanes %u block %u: row %llu summed to %g, not %lld\n", sh.dtype, sh.rows, sh.cols, lanes, block, r, got[r], expect[r]);
                        ++wrong;
                        break;
                    }
                }
                time_graph(s, launch, &med, &lo, &hi);
                std::printf("%s,%llu,%llu,rows_warp,%u,%u,%d,%.3f,%.3f,%.3f\n", sh.dtype, sh.rows, sh.cols, lanes, block, LAUNCHES, med, lo, hi);
            }
            std::fflush(stdout);
        }
        std::fprintf(stderr, "%s %llu x %llu done\n", sh.dtype, sh.rows, sh.cols);
    }
    CHECK(cudaFree(pool));
    CHECK(cudaFree(out));
    return wrong ? 2 : 0;
}
