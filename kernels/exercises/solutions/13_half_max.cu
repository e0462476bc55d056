// Exercise 13, a reference solution: the max of two f16 values, as their bits.
#include "operators.cuh"

template <typename InT>
struct ExerciseHalfMax : Operator<ExerciseHalfMax<InT>, InT, unsigned> {
    typedef float Out;
    static constexpr int STREAMS = 1;
    __device__ __forceinline__ unsigned identity() const { return 0xFC00u; }  // -inf
    __device__ __forceinline__ unsigned lift(InT x, u64) const { return x.bits; }
    __device__ __forceinline__ unsigned add_pack(unsigned t, uint4 raw, u64) const {
        const Pack<InT> p = unpack<InT>(raw);
#pragma unroll
        for (int k = 0; k < Pack<InT>::PER; ++k) t = combine(t, p.v[k].bits);
        return t;
    }
    __device__ __forceinline__ float finish(unsigned bits) const { return to_acc<float>(f16_t{(unsigned short)bits}); }

    __device__ __forceinline__ unsigned combine(unsigned a, unsigned b) const {
        // ANCHOR: solution
        const bool a_nan = (a & 0x7FFFu) > 0x7C00u, b_nan = (b & 0x7FFFu) > 0x7C00u;
        if (a_nan || b_nan) return a_nan ? a : b;  // NaN propagates, whatever its sign
        // Sign and magnitude to an integer that orders like the value: negatives count down.
        const int ka = (a & 0x8000u) ? -(int)(a & 0x7FFFu) : (int)a;
        const int kb = (b & 0x8000u) ? -(int)(b & 0x7FFFu) : (int)b;
        return ka >= kb ? a : b;  // -0 and +0 both map to 0: either is the max
        // ANCHOR_END: solution
    }
};

OP_WHOLE_ENTRY(max, ExerciseHalfMax, f16_t, f16)
OP_ROWS_ENTRIES(max, ExerciseHalfMax, f16_t, f16)
