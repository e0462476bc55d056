// CUB's own sum, called directly: cub::DeviceReduce::Sum on f32 and i32, measured the way
// `reduction bench` measures the book's kernels (src/measure/bench.rs), written as rows of its CSV.
//
//   nvcc -O3 -std=c++17 -arch=native -Xcompiler -fopenmp -o cub_sum plots/cub_sum.cu
//   ./cub_sum [--sizes 2^10,...,2^30] [--dtypes f32,i32] [--out FILE.csv] [--target-ms 3]
//
// Two timings per element type and size, both on inputs already on the GPU:
//   cub_sum       graph-amortized, as the book's kernels: the sum of an exact-by-construction
//                 input (nonzero integers with random signs, small enough that every partial sum
//                 is exact) is checked bit for bit first; then K back-to-back calls, each on
//                 another input of a pool larger than several L2s, are captured into a CUDA graph,
//                 and CUDA events around replays of it give the GPU time per call; the median of
//                 15 to 51 replays is kept (min and max beside it).
//   cub_sum_host  host-visible: one call as a caller who reads the sum waits for it -- the CUB
//                 call, a copy of the result into a host variable and the wait for it -- timed by
//                 the host's steady clock, inputs rotated as above, median of many calls.
// Temporary storage is allocated once, before anything is timed, as a caller who sums often would.
// With CCCL 3.1 or newer (cuda/__execution/determinism.h) the f32 sum is also measured as
// DeviceReduce::Reduce with gpu_to_gpu determinism (cub_sum_gpu_to_gpu); with an older CCCL the
// program says that it is skipped, and why.
// Exit status: 0 when every sum was right, 2 when one was wrong (it is then not timed), 1 on a
// CUDA error.
#include <cub/device/device_reduce.cuh>
#include <cub/version.cuh>
#include <cuda_runtime.h>

#if __has_include(<cuda/__execution/determinism.h>)
#include <cuda/__execution/determinism.h>
#include <cuda/__execution/require.h>
#include <cuda/stream_ref>
#define HAVE_GPU_TO_GPU 1
#else
#define HAVE_GPU_TO_GPU 0
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda_check.cuh"

static const int MAX_OPS = 1000, MIN_REPEATS = 15, MAX_REPEATS = 51;  // as src/measure/bench.rs
static const uint64_t SEED = 2007;

// ---- exact-by-construction inputs: value i is a pure function of (seed, i), on host and device.
__host__ __device__ inline uint64_t mix(uint64_t x) {  // splitmix64's finaliser
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}
__host__ __device__ inline int64_t exact_value(uint64_t i, uint64_t limit) {
    const uint64_t h = mix(SEED * 0x100000001B3ull ^ i);
    const int64_t magnitude = 1 + (int64_t)((h >> 1) % limit);  // never zero
    return (h & 1) ? magnitude : -magnitude;
}
template <typename T>
__global__ void fill_exact(T* out, uint64_t len, uint64_t limit) {
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < len; i += (uint64_t)gridDim.x * blockDim.x)
        out[i] = (T)exact_value(i, limit);
}

// The magnitudes of src/check/data.rs: f32 sums of `sum_len` values stay below 2^24 (at most 128),
// i32 sums below 2^31 (at most 1000).
static uint64_t exact_limit(bool is_float, uint64_t sum_len) {
    const uint64_t raw = is_float ? (1ull << 24) / std::max<uint64_t>(sum_len, 1) : 2147483647ull / std::max<uint64_t>(sum_len, 1);
    return std::min<uint64_t>(std::max<uint64_t>(raw, 1), is_float ? 128 : 1000);
}

static double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

struct Timing {
    std::vector<double> per_op_us;  // sorted
    int ops;
    std::string method;
};

// K back-to-back enqueue(j) captured into a graph, replays timed with events: src/measure/bench.rs's
// time_graph, step for step (ops from a 4-op estimate, target_ms / 4 of GPU time per graph).
template <typename Enqueue>
static Timing time_graph(cudaStream_t s, double target_ms, Enqueue enqueue) {
    cudaEvent_t start, end;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&end));
    auto capture = [&](int ops) {
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        for (int j = 0; j < ops; ++j) enqueue(j);
        CHECK(cudaStreamEndCapture(s, &graph));
        CHECK(cudaGraphInstantiate(&exec, graph, 0));
        CHECK(cudaGraphDestroy(graph));
        return exec;
    };
    auto timed = [&](cudaGraphExec_t exec) {
        CHECK(cudaEventRecord(start, s));
        CHECK(cudaGraphLaunch(exec, s));
        CHECK(cudaEventRecord(end, s));
        CHECK(cudaEventSynchronize(end));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, start, end));
        return (double)ms;
    };
    int ops = 4;
    cudaGraphExec_t exec = capture(ops);
    CHECK(cudaGraphLaunch(exec, s));
    const double estimate_ms = std::max(timed(exec) / ops, 1e-4);
    const int wanted = (int)std::ceil((target_ms / 4.0) / estimate_ms);
    if (wanted > ops) {
        ops = std::min(wanted, MAX_OPS);
        CHECK(cudaGraphExecDestroy(exec));
        exec = capture(ops);
        CHECK(cudaGraphLaunch(exec, s));
    }
    const int repeats = std::min(std::max((int)std::ceil(target_ms / (estimate_ms * ops)), MIN_REPEATS), MAX_REPEATS);
    Timing t;
    for (int r = 0; r < repeats; ++r) t.per_op_us.push_back(timed(exec) * 1e3 / ops);
    std::sort(t.per_op_us.begin(), t.per_op_us.end());
    t.ops = ops;
    t.method = "graph of " + std::to_string(ops) + " back-to-back, CUDA events";
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(end));
    return t;
}

// One call and the wait for its result, as a caller sees it, timed by the host's clock.
template <typename Call>
static Timing time_host(double target_ms, Call call) {
    using clock = std::chrono::steady_clock;
    for (int j = 0; j < 10; ++j) call(j);  // warm: first-call costs are not what a caller pays each time
    const auto t0 = clock::now();
    for (int j = 0; j < 5; ++j) call(j);
    const double estimate_ms = std::max(std::chrono::duration<double, std::milli>(clock::now() - t0).count() / 5, 1e-3);
    const int calls = std::min(std::max((int)std::ceil(target_ms * 4 / estimate_ms), 31), 401);
    Timing t;
    for (int j = 0; j < calls; ++j) {
        const auto a = clock::now();
        call(j);
        t.per_op_us.push_back(std::chrono::duration<double, std::micro>(clock::now() - a).count());
    }
    std::sort(t.per_op_us.begin(), t.per_op_us.end());
    t.ops = 1;
    t.method = "host-visible: one call + copy of the result to the host, steady clock, median of " + std::to_string(calls);
    return t;
}

struct Csv {
    std::vector<std::string> rows;
    void add(const char* kernel, const std::string& title, const char* dtype, uint64_t n, const Timing& t,
             uint64_t bytes, uint64_t working_set) {
        const double med = median_of(t.per_op_us);
        char line[1024];
        std::snprintf(line, sizeof line, "%s,0,\"%s\",peer,%s,%llu,0,rotated,%.3f,%.3f,%.3f,%.1f,%llu,%llu,%zu,\"%s\"",
                      kernel, title.c_str(), dtype, (unsigned long long)n, med, t.per_op_us.front(), t.per_op_us.back(),
                      bytes / (med * 1e-6) / 1e9, (unsigned long long)bytes, (unsigned long long)working_set,
                      t.per_op_us.size(), t.method.c_str());
        rows.push_back(line);
    }
};

struct Config {
    std::vector<uint64_t> sizes;
    std::vector<std::string> dtypes{"f32", "i32"};
    std::string out;
    double target_ms = 3.0;
    std::string command;
};

static int wrong_sums = 0;

// REDUCTION_DEVICE_MEMORY as a number of bytes (what `reduction bench` passes its peers: the
// budget left under its own cap, src/runtime/device_memory.rs): the free memory is taken as no
// more than that. Unset: no cap. Anything but digits ends the program with the reason.
static size_t device_memory_cap() {
    const char* text = std::getenv("REDUCTION_DEVICE_MEMORY");
    if (text == nullptr || *text == 0) return SIZE_MAX;
    char* end = nullptr;
    const unsigned long long bytes = std::strtoull(text, &end, 10);
    if (*end != 0 || !std::isdigit((unsigned char)*text)) {
        std::fprintf(stderr, "REDUCTION_DEVICE_MEMORY=%s: cub_sum takes a number of bytes (reduction bench passes one)\n", text);
        std::exit(1);
    }
    return (size_t)bytes;
}

template <typename T>
static void run_dtype(const Config& cfg, const char* dtype, const cudaDeviceProp& prop, Csv& csv, const std::string& cccl) {
    const bool is_float = std::is_floating_point<T>::value;
    const uint64_t largest = *std::max_element(cfg.sizes.begin(), cfg.sizes.end());
    size_t free_bytes = 0, total_bytes = 0;
    CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    free_bytes = std::min<size_t>(free_bytes, device_memory_cap());
    const uint64_t want = std::max<uint64_t>(2 * largest, 8ull * prop.l2CacheSize / sizeof(T));
    const uint64_t fits = (uint64_t)(free_bytes * 0.45) / sizeof(T);  // room for CUB's storage and the driver
    const uint64_t len = std::min(want, fits);
    const uint64_t limit = exact_limit(is_float, largest);
    T* pool = nullptr;
    CHECK(cudaMalloc(&pool, len * sizeof(T)));
    fill_exact<T><<<prop.multiProcessorCount * 8, 256>>>(pool, len, limit);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::printf("%s: input pool of %llu values (%.1f GiB), exact by construction (nonzero integers up to %llu, random signs)\n",
                dtype, (unsigned long long)len, len * sizeof(T) / double(1 << 30), (unsigned long long)limit);

    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    T* d_out = nullptr;
    CHECK(cudaMalloc(&d_out, sizeof(T)));
    // Temporary storage for the largest size, allocated once (CUB's needs grow with n).
    size_t temp_bytes = 0;
    CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, pool, d_out, (int64_t)std::min(largest, len), s));
    void* temp = nullptr;
    CHECK(cudaMalloc(&temp, std::max<size_t>(temp_bytes, 1)));

    for (uint64_t n : cfg.sizes) {
        if (n > len) {
            std::printf("skipped %s n=%llu: %.1f GiB does not fit in the GPU's free memory next to the pool\n", dtype,
                        (unsigned long long)n, n * sizeof(T) / double(1 << 30));
            continue;
        }
        const uint64_t stride = (n + 255) / 256 * 256;
        const uint64_t slots = (len - n) / stride + 1;
        auto input = [&](int j) { return pool + (j % slots) * stride; };
        size_t bytes_n = temp_bytes;
        CHECK(cub::DeviceReduce::Sum(nullptr, bytes_n, pool, d_out, (int64_t)n, s));
        auto sum = [&](int j) { CHECK(cub::DeviceReduce::Sum(temp, bytes_n, input(j), d_out, (int64_t)n, s)); };

        // Correct before fast: poisoned output, then the exact sum of the first input, on the host.
        int64_t exact = 0;
#pragma omp parallel for reduction(+ : exact)
        for (int64_t i = 0; i < (int64_t)n; ++i) exact += exact_value((uint64_t)i, limit);
        CHECK(cudaMemsetAsync(d_out, 0xFF, sizeof(T), s));
        sum(0);
        T got;
        CHECK(cudaMemcpyAsync(&got, d_out, sizeof(T), cudaMemcpyDeviceToHost, s));
        CHECK(cudaStreamSynchronize(s));
        if ((double)got != (double)exact) {
            std::printf("cub_sum %s n=%llu: WRONG: %.17g, exact %lld; not timed\n", dtype, (unsigned long long)n, (double)got, (long long)exact);
            ++wrong_sums;
            continue;
        }
        const Timing g = time_graph(s, cfg.target_ms, sum);
        const uint64_t nbytes = n * sizeof(T);
        const std::string title = "cub::DeviceReduce::Sum (" + cccl + ", nvcc)";
        csv.add("cub_sum", title, dtype, n, g, nbytes, std::min<uint64_t>(g.ops, slots) * nbytes);
        T host_value;
        const Timing h = time_host(cfg.target_ms, [&](int j) {
            sum(j);
            CHECK(cudaMemcpyAsync(&host_value, d_out, sizeof(T), cudaMemcpyDeviceToHost, s));
            CHECK(cudaStreamSynchronize(s));
        });
        csv.add("cub_sum_host", title + ", host-visible", dtype, n, h, nbytes, std::min<uint64_t>(h.per_op_us.size() + 15, slots) * nbytes);
        std::printf("cub_sum      %s n=2^%-5.2f %10.2f us graph-amortized %8.1f GB/s   %10.2f us host-visible\n", dtype,
                    std::log2((double)n), median_of(g.per_op_us), nbytes / (median_of(g.per_op_us) * 1e3),
                    median_of(h.per_op_us));

#if HAVE_GPU_TO_GPU
        if constexpr (std::is_same<T, float>::value) {
          if (n > 2147483647ull) {
            std::printf("cub_sum_gpu_to_gpu f32 n=%llu: skipped: the deterministic reduction takes 32-bit offsets\n", (unsigned long long)n);
          } else {
            // The single-phase, environment-based call: CUB allocates its storage itself, on the stream.
            auto env = cuda::std::execution::env{cuda::stream_ref{s}, cuda::execution::require(cuda::execution::determinism::gpu_to_gpu)};
            auto reduce = [&](int j) { CHECK(cub::DeviceReduce::Reduce(input(j), d_out, (int)n, cuda::std::plus<>{}, 0.0f, env)); };
            CHECK(cudaMemsetAsync(d_out, 0xFF, sizeof(T), s));
            reduce(0);
            CHECK(cudaMemcpyAsync(&got, d_out, sizeof(T), cudaMemcpyDeviceToHost, s));
            CHECK(cudaStreamSynchronize(s));
            if ((double)got != (double)exact) {
                std::printf("cub_sum_gpu_to_gpu f32 n=%llu: WRONG: %.17g, exact %lld; not timed\n", (unsigned long long)n, (double)got, (long long)exact);
                ++wrong_sums;
            } else {
                const Timing d = time_graph(s, cfg.target_ms, reduce);
                csv.add("cub_sum_gpu_to_gpu", "cub::DeviceReduce::Reduce, gpu_to_gpu determinism (" + cccl + ", nvcc)", dtype, n, d, nbytes,
                        std::min<uint64_t>(d.ops, slots) * nbytes);
                std::printf("cub_sum_gpu_to_gpu f32 n=2^%-5.2f %10.2f us graph-amortized\n", std::log2((double)n), median_of(d.per_op_us));
            }
          }
        }
#endif
    }
    CHECK(cudaFree(temp));
    CHECK(cudaFree(d_out));
    CHECK(cudaFree(pool));
    CHECK(cudaStreamDestroy(s));
}

static uint64_t parse_size(const std::string& s) {
    if (s.rfind("2^", 0) == 0) return 1ull << std::stoi(s.substr(2));
    return (uint64_t)std::stod(s);
}

static std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= s.size()) {
        const size_t comma = s.find(',', start);
        const std::string part = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (!part.empty()) out.push_back(part);
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

int main(int argc, char** argv) {
    Config cfg;
    for (int k = 10; k <= 30; ++k) cfg.sizes.push_back(1ull << k);
    cfg.command = "cub_sum";
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        cfg.command += " " + a;
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "%s needs a value\n", a.c_str());
                std::exit(1);
            }
            cfg.command += std::string(" ") + argv[i + 1];
            return argv[++i];
        };
        if (a == "--sizes") {
            cfg.sizes.clear();
            for (auto& s : split(value())) cfg.sizes.push_back(parse_size(s));
        } else if (a == "--dtypes") {
            cfg.dtypes = split(value());
        } else if (a == "--out") {
            cfg.out = value();
        } else if (a == "--target-ms") {
            cfg.target_ms = std::stod(value());
        } else {
            std::fprintf(stderr, "usage: cub_sum [--sizes 2^10,...] [--dtypes f32,i32] [--out FILE.csv] [--target-ms 3]\n");
            return 1;
        }
    }
    if (cfg.sizes.empty()) {
        std::fprintf(stderr, "--sizes names no size\n");
        return 1;
    }
    int device = 0;
    CHECK(cudaSetDevice(device));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, device));
    int mem_khz = 0, bus_bits = 0, sm_khz = 0, driver = 0;
    // Attributes by number (36 memory clock, 37 bus width, 13 SM clock): CUDA 13 dropped the fields.
    cudaDeviceGetAttribute(&mem_khz, (cudaDeviceAttr)36, device);
    cudaDeviceGetAttribute(&bus_bits, (cudaDeviceAttr)37, device);
    cudaDeviceGetAttribute(&sm_khz, (cudaDeviceAttr)13, device);
    cudaGetLastError();
    CHECK(cudaDriverGetVersion(&driver));
    const std::string cccl = "CCCL " + std::to_string(CUB_VERSION / 100000) + "." + std::to_string(CUB_VERSION / 100 % 1000) + "." +
                             std::to_string(CUB_VERSION % 100);
    std::printf("%s (sm_%d%d, %d SMs), %s, nvcc %d.%d\n", prop.name, prop.major, prop.minor, prop.multiProcessorCount, cccl.c_str(),
                __CUDACC_VER_MAJOR__, __CUDACC_VER_MINOR__);
#if HAVE_GPU_TO_GPU
    std::printf("gpu_to_gpu determinism: available (cuda/__execution/determinism.h), measured for f32 as cub_sum_gpu_to_gpu\n");
#else
    std::printf("gpu_to_gpu determinism: skipped: %s has no cuda/__execution/determinism.h (it came with CCCL 3.1)\n", cccl.c_str());
#endif

    Csv csv;
    for (const auto& d : cfg.dtypes) {
        if (d == "f32") run_dtype<float>(cfg, "f32", prop, csv, cccl);
        else if (d == "i32") run_dtype<int>(cfg, "i32", prop, csv, cccl);
        else {
            std::fprintf(stderr, "unknown dtype %s (f32, i32)\n", d.c_str());
            return 1;
        }
    }

    if (!cfg.out.empty()) {
        FILE* f = std::fopen(cfg.out.c_str(), "w");
        if (!f) {
            std::fprintf(stderr, "cannot write %s\n", cfg.out.c_str());
            return 1;
        }
        char date[16];
        const std::time_t now = std::time(nullptr);
        std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
        const double peak = mem_khz > 0 && bus_bits > 0 ? 2.0 * mem_khz * 1e3 * bus_bits / 8 / 1e9 : 0;
        std::fprintf(f, "# gpu: %s\n# compute_capability: %d.%d\n# sm_count: %d\n# l2_bytes: %d\n", prop.name, prop.major, prop.minor,
                     prop.multiProcessorCount, prop.l2CacheSize);
        if (peak > 0) std::fprintf(f, "# peak_gbps: %.1f\n", peak);
        else std::fprintf(f, "# peak_gbps: unknown\n");
        std::fprintf(f, "# memory_clock_mhz: %d\n# sm_clock_mhz: %d\n# driver_cuda: %d.%d\n# nvrtc: %s, nvcc %d.%d\n# date: %s\n# command: %s\n",
                     mem_khz / 1000, sm_khz / 1000, driver / 1000, driver % 1000 / 10, cccl.c_str(), __CUDACC_VER_MAJOR__,
                     __CUDACC_VER_MINOR__, date, cfg.command.c_str());
        std::fprintf(f, "kernel,chapter,title,status,dtype,n,block,cache,median_us,min_us,max_us,gbps,bytes,working_set_bytes,repeats,method\n");
        for (const auto& r : csv.rows) std::fprintf(f, "%s\n", r.c_str());
        std::fclose(f);
        std::printf("%zu measurements written to %s\n", csv.rows.size(), cfg.out.c_str());
    }
    return wrong_sums ? 2 : 0;
}
