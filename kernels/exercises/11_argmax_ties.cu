// Exercise 11 (chapter 16): argmax, with the tie rule.
//
// The book's operator machinery (kernels/operators.cuh) walks the input, shuffles states across
// each warp, combines the warps and the blocks; an operator only says how two states combine.
// Here a state is a (value, index) pair, and you write that combine. torch.argmax's rules, which
// the checker holds you to on inputs with planted ties, NaN, ±inf and all-negative values:
//   - the larger value wins;
//   - a NaN counts as larger than every number (so the answer is the first NaN, if any);
//   - of two equal values (two NaNs too; -0 and +0 are equal) the LOWER index wins — the rule
//     that makes combine associative and commutative, so that every grid gives the same index.
// The identity, (-inf, index 2^64 - 1), must lose every tie. Check it with: reduction exercise 11
// Preconditions the checker keeps: the launches of kernels/16_extremes.cu (whole arrays in one
// pass, rows with every strategy); f32, f16, bf16 and i32 inputs (int values have no NaN).
#include "operators.cuh"

template <typename InT>
struct ExerciseArgMax : ArgExtreme<InT, true> {  // identity, lift and the walk are the book's
    typedef ValueIndex<typename Wide<InT>::type> S;
    __device__ __forceinline__ S combine(S a, S b) const {
        // TODO(exercise): the better of the two pairs, by the three rules above. This keeps the
        // larger value, and on a tie whichever the hardware happened to pass second.
        return a.value > b.value ? a : b;
    }
};

OP_ENTRIES(argmax, ExerciseArgMax)
OP_ENTRIES_I32(argmax, ExerciseArgMax)
