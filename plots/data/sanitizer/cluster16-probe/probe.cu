// Does compute-sanitizer's synccheck report "Missing wait" on any cluster of 16 that meets by an
// mbarrier, as it does on the book's ClusterExchange (dl_rows.cuh) in clusters of 16 and not 2-8?
// The same protocol, nothing else: thread 0 of each block sets up a transaction barrier and
// arrives on it expecting C floats; after a cluster barrier, thread i pushes the block's value
// into slot [rank] of block i by st.async; every thread waits on the barrier's phase and sums the
// C slots. `token`: thread 0 waits on the state its arrive returned instead of the phase parity.
// `local` (the third argument 1): nothing crosses blocks but the cluster barrier: each block's
// thread 0 sets up its barrier for one arrival and arrives, every thread waits on the phase, and
// writes its block's own value C times over (the same sum).
//   nvcc -arch=sm_90 -o probe probe.cu && compute-sanitizer --tool synccheck ./probe 16 0
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 2; } } while (0)

template <int C, bool TOKEN, bool LOCAL = false>
__global__ void probe(float* out) {
    __shared__ float slot[C];
    __shared__ unsigned long long landed;
    const unsigned bar = (unsigned)__cvta_generic_to_shared(&landed);
    unsigned long long token = 0;
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
        if (LOCAL)
            asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
        else if (TOKEN)
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;" : "=l"(token) : "r"(bar), "r"((unsigned)(C * 4)) : "memory");
        else
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"((unsigned)(C * 4)) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
    unsigned rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    if (!LOCAL && threadIdx.x < C) {
        unsigned remote_bar, remote_slot;
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote_bar) : "r"(bar), "r"(threadIdx.x));
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote_slot) : "r"((unsigned)__cvta_generic_to_shared(&slot[rank])), "r"(threadIdx.x));
        const float v = (float)(blockIdx.x + 1);
        asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(remote_slot), "r"(__float_as_uint(v)), "r"(remote_bar)
                     : "memory");
    }
    if (TOKEN && threadIdx.x == 0)
        asm volatile("{\n .reg .pred d;\n w%=:\n mbarrier.try_wait.shared::cta.b64 d, [%0], %1;\n @!d bra w%=;\n}\n" ::"r"(bar), "l"(token) : "memory");
    else
        asm volatile("{\n .reg .pred d;\n w%=:\n mbarrier.try_wait.parity.shared::cta.b64 d, [%0], 0;\n @!d bra w%=;\n}\n" ::"r"(bar) : "memory");
    float sum = 0;
    if (LOCAL) {
        const unsigned first = blockIdx.x / C * C;
        for (int i = 0; i < C; ++i) sum += (float)(first + i + 1);
    } else {
        for (int i = 0; i < C; ++i) sum += slot[i];
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

template <int C, bool TOKEN, bool LOCAL = false>
int run() {
    const int clusters = 8, threads = 512, blocks = C * clusters;
    float* out;
    CHECK(cudaMalloc(&out, sizeof(float) * blocks * threads));
    CHECK(cudaMemset(out, 0xff, sizeof(float) * blocks * threads));  // poisoned: NaN
    if (C > 8) CHECK(cudaFuncSetAttribute(probe<C, TOKEN, LOCAL>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(blocks);
    cfg.blockDim = dim3(threads);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = C;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    CHECK(cudaLaunchKernelEx(&cfg, probe<C, TOKEN, LOCAL>, out));
    CHECK(cudaDeviceSynchronize());
    float* host = (float*)malloc(sizeof(float) * blocks * threads);
    CHECK(cudaMemcpy(host, out, sizeof(float) * blocks * threads, cudaMemcpyDeviceToHost));
    int wrong = 0;
    for (int b = 0; b < blocks; ++b) {
        const int first = b / C * C;  // the cluster's blocks: first+1 ... first+C
        const float want = (float)(C * (first + 1) + C * (C - 1) / 2);
        for (int t = 0; t < threads; ++t) wrong += host[b * threads + t] != want;
    }
    printf("C=%d %s: %d of %d values wrong\n", C, LOCAL ? "local only" : TOKEN ? "token wait" : "parity wait", wrong, blocks * threads);
    free(host);
    cudaFree(out);
    return wrong != 0;
}

int main(int argc, char** argv) {
    const int c = argc > 1 ? atoi(argv[1]) : 16, token = argc > 2 ? atoi(argv[2]) : 0, local = argc > 3 ? atoi(argv[3]) : 0;
    if (local) return c == 8 ? run<8, false, true>() : run<16, false, true>();
    if (c == 8) return token ? run<8, true>() : run<8, false>();
    if (c == 16) return token ? run<16, true>() : run<16, false>();
    printf("C is 8 or 16\n");
    return 2;
}
