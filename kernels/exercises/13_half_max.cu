// Exercise 13 (chapter 16): a block max over f16, without converting a value.
//
// An f16 is 16 bits: a sign, 5 exponent bits, 10 fraction bits. For two positive values the
// larger one has the larger bits, read as an integer; for negative values it is the other way
// round (sign and magnitude: -2 has larger bits than -1). Write the max of two f16 values as
// bits, NaN-propagating as torch.amax is: any NaN (exponent all ones, fraction not zero, either
// sign) makes the result NaN. The identity is -inf (bits 0xFC00), not 0: the inputs include
// arrays where every value is negative. The machinery (kernels/operators.cuh) applies your
// combine within each thread, across the warp's shuffles, across the block and across blocks.
// Check it with: reduction exercise 13
// Preconditions the checker keeps: f16 inputs; the launches of kernels/16_extremes.cu; the result
// widened to f32 at the very end (finish), exactly.
#include "operators.cuh"

template <typename InT>  // InT is f16_t: the entry points below instantiate only that
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
        // TODO(exercise): the larger of two f16 values given as their bits (in the low 16 bits),
        // NaN if either is NaN. This compares the bits as unsigned integers.
        return a > b ? a : b;
    }
};

OP_WHOLE_ENTRY(max, ExerciseHalfMax, f16_t, f16)
OP_ROWS_ENTRIES(max, ExerciseHalfMax, f16_t, f16)
