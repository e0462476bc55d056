// Exercise 11, a reference solution: argmax's combine with torch's rules.
#include "operators.cuh"

template <typename InT>
struct ExerciseArgMax : ArgExtreme<InT, true> {
    typedef ValueIndex<typename Wide<InT>::type> S;
    __device__ __forceinline__ S combine(S a, S b) const {
        // ANCHOR: solution
        const bool a_nan = a.value != a.value, b_nan = b.value != b.value;  // only NaN is not itself
        if (a_nan != b_nan) return a_nan ? a : b;                            // NaN beats every number
        if (!a_nan && a.value != b.value) return a.value > b.value ? a : b;  // the larger value
        return a.index <= b.index ? a : b;                                   // a tie: the lower index
        // ANCHOR_END: solution
    }
};

OP_ENTRIES(argmax, ExerciseArgMax)
OP_ENTRIES_I32(argmax, ExerciseArgMax)
