// A pace: a copy kernel that only moves bytes. Every element is read once and written once
// with 16-byte loads and stores, by a grid that loops over the data, so its bandwidth
// (counting bytes read plus bytes written) is what a streaming kernel that writes can reach on
// this GPU. A sum only reads, and beats it: the ceiling of a sum is kernels/read_only.cu.
// The benchmark measures it next to every reduction.
// Preconditions: `in` and `out` 16-byte aligned (the host allocates and offsets them so).
#include "common.cuh"

// ANCHOR: kernel
extern "C" __global__ void copy_u32(const unsigned* __restrict__ in, unsigned* __restrict__ out, u64 n) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    const u64 first = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    const u64 n4 = n / 4;
    const uint4* in4 = reinterpret_cast<const uint4*>(in);
    uint4* out4 = reinterpret_cast<uint4*>(out);
    for (u64 i = first; i < n4; i += stride) out4[i] = in4[i];
    for (u64 i = 4 * n4 + first; i < n; i += stride) out[i] = in[i];  // the last n % 4 words
}
// ANCHOR_END: kernel
