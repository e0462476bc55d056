// Kernels for the accuracy chapter: the same sum of f32 values with other accumulators.
//
//   reduce_kahan      each thread keeps a compensated sum (Neumaier's variant of Kahan's
//                     algorithm): the rounding error of every add is caught in a second float
//                     and added back at the end; the block merges the compensated pairs. A
//                     registered, tested kernel: one output per block, passes on the GPU.
//   reduce_f64acc     f32 inputs, f64 accumulators: one f64 partial sum per block.
//   reduce_f16acc     f16 inputs summed in f16: every add rounded to half precision, as a
//   reduce_bf16acc    kernel that accumulated in the input type would (bf16 likewise). One
//                     partial sum per block, in the input type.
// The last three write one partial sum per block in their accumulator type; the accuracy
// experiment adds those few hundred partial sums on the host in the same type.
// Preconditions: blockDim.x a multiple of 32, at most 1024; any grid. NVRTC compiles without
// fast math, so the compensated arithmetic is not reassociated away. Any GPU from sm_75: below
// sm_80, which first converts to bf16 in one instruction, bf16 rounding is integer arithmetic
// that gives the same bits (bf16_bits_rn).
#include "warp_reduce.cuh"

// ANCHOR: neumaier
// A sum and the rounding error it has not yet absorbed.
struct Compensated {
    float sum, carry;
};

// Add x: the exact rounding error of sum + x (computed from whichever operand is larger) goes
// into the carry. Once the sum is infinite or NaN there is no rounding error to catch (and
// inf - inf would turn an infinite sum into NaN), so the carry is left alone.
__device__ __forceinline__ Compensated add(Compensated a, float x) {
    const float t = a.sum + x;
    if (isfinite(t)) a.carry += fabsf(a.sum) >= fabsf(x) ? (a.sum - t) + x : (x - t) + a.sum;
    a.sum = t;
    return a;
}

__device__ __forceinline__ Compensated merge(Compensated a, Compensated b) {
    Compensated r = add(a, b.sum);
    r.carry += b.carry;
    return r;
}
// ANCHOR_END: neumaier

// ANCHOR: kahan
template <typename In, typename Acc>
__device__ void reduce_kahan(const In* __restrict__ in, Acc* __restrict__ out, u64 n) {
    Compensated c = {0.0f, 0.0f};
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) c = add(c, in[i]);

    // The warp's compensated pairs, merged by shuffles; then the warps' pairs.
    for (int offset = 16; offset > 0; offset >>= 1) {
        Compensated other = {__shfl_down_sync(0xffffffffu, c.sum, offset), __shfl_down_sync(0xffffffffu, c.carry, offset)};
        c = merge(c, other);
    }
    __shared__ float sums[32], carries[32];
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) { sums[warp] = c.sum; carries[warp] = c.carry; }
    __syncthreads();
    if (warp == 0) {
        const bool mine = lane < blockDim.x / 32;
        c = {mine ? sums[lane] : 0.0f, mine ? carries[lane] : 0.0f};
        for (int offset = 16; offset > 0; offset >>= 1) {
            Compensated other = {__shfl_down_sync(0xffffffffu, c.sum, offset), __shfl_down_sync(0xffffffffu, c.carry, offset)};
            c = merge(c, other);
        }
        if (lane == 0) out[blockIdx.x] = isfinite(c.sum) ? c.sum + c.carry : c.sum;
    }
}
// ANCHOR_END: kahan

ENTRY_IN_OUT_N(reduce_kahan, f32, float, float)

// ANCHOR: f64acc
extern "C" __global__ void reduce_f64acc(const float* __restrict__ in, double* __restrict__ out, u64 n) {
    __shared__ double warp_sums[32];
    double s = 0.0;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) s += (double)in[i];
    s = block_sum(s, warp_sums);
    if (threadIdx.x == 0) out[blockIdx.x] = s;
}
// ANCHOR_END: f64acc

// ANCHOR: bf16_rn
// f32 bits to bf16 bits, rounded to the nearest, ties to even, in integer arithmetic: what
// cvt.rn.bf16.f32 does from sm_80 on, for the GPUs before it (a T4 is sm_75). A NaN becomes the
// quiet NaN 0x7fff. Checked bit for bit against the `half` crate on the CPU (tests/nvrtc.rs)
// and against the instruction on every f32 on the GPU (tests/gpu.rs).
__host__ __device__ __forceinline__ unsigned short bf16_bits_rn(unsigned int f) {
    if ((f & 0x7fffffffu) > 0x7f800000u) return 0x7fffu;            // NaN
    return (unsigned short)((f + 0x7fffu + ((f >> 16) & 1u)) >> 16);  // +half, +1 more if odd
}
// ANCHOR_END: bf16_rn

__device__ __forceinline__ unsigned short bf16_bits(float x) {
#if __CUDA_ARCH__ >= 800
    unsigned short h;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(x));
    return h;
#else
    return bf16_bits_rn(__float_as_uint(x));  // no bf16 conversion instruction before sm_80
#endif
}

// ANCHOR: half_acc
// x rounded to the nearest half (or bfloat16) value, kept in a float register.
template <typename Half>
__device__ __forceinline__ float round_to(float x);
template <>
__device__ __forceinline__ float round_to<f16_t>(float x) {
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
    return to_acc<float>(f16_t{h});
}
template <>
__device__ __forceinline__ float round_to<bf16_t>(float x) {
    return to_acc<float>(bf16_t{bf16_bits(x)});
}

// A sum kept in the input's own precision: every add is rounded back to it.
template <typename Half>
__device__ void reduce_in_own_type(const Half* __restrict__ in, float* __restrict__ out, u64 n) {
    float s = 0.0f;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) s = round_to<Half>(s + to_acc<float>(in[i]));
    for (int offset = 16; offset > 0; offset >>= 1) s = round_to<Half>(s + __shfl_down_sync(0xffffffffu, s, offset));
    __shared__ float warp_sums[32];
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) warp_sums[warp] = s;
    __syncthreads();
    if (warp == 0) {
        s = lane < blockDim.x / 32 ? warp_sums[lane] : 0.0f;
        for (int offset = 16; offset > 0; offset >>= 1) s = round_to<Half>(s + __shfl_down_sync(0xffffffffu, s, offset));
        if (lane == 0) out[blockIdx.x] = s;  // exactly a Half value
    }
}
// ANCHOR_END: half_acc

extern "C" __global__ void reduce_f16acc(const f16_t* in, float* out, u64 n) { reduce_in_own_type<f16_t>(in, out, n); }
extern "C" __global__ void reduce_bf16acc(const bf16_t* in, float* out, u64 n) { reduce_in_own_type<bf16_t>(in, out, n); }

// For tests/gpu.rs: over the f32 bit patterns first .. first + n - 1, count where bf16_bits (the
// instruction from sm_80 on) and bf16_bits_rn (the integer path) disagree: counts[0] on numbers,
// counts[1] on NaNs (which only need to stay NaN); first_wrong[0] keeps the lowest number that
// disagrees (start it at 0xffffffff).
extern "C" __global__ void bf16_rounding_mismatches(u64 first, u64 n, unsigned long long* counts, unsigned* first_wrong) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    unsigned long long wrong_numbers = 0, nan_payloads = 0;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const unsigned f = (unsigned)(first + i);
        const unsigned short native = bf16_bits(__uint_as_float(f)), portable = bf16_bits_rn(f);
        if (native == portable) continue;
        const bool nan_in = (f & 0x7fffffffu) > 0x7f800000u;
        const bool nan_out = (native & 0x7fffu) > 0x7f80u && (portable & 0x7fffu) > 0x7f80u;
        if (nan_in && nan_out) {
            nan_payloads++;
        } else {
            wrong_numbers++;
            atomicMin(first_wrong, f);
        }
    }
    if (wrong_numbers) atomicAdd(&counts[0], wrong_numbers);
    if (nan_payloads) atomicAdd(&counts[1], nan_payloads);
}
