// Exercise 12 (chapter 16): the Welford merge, across a warp (and then across warps and blocks).
//
// Each thread summarises its values as (count, mean, M2), M2 the sum of squared deviations from
// the mean. The warp's shuffles then bring two lanes' states together, lane l with lane l + 16,
// then + 8, ..., and each pair must become the state of both lanes' values at once. Write that
// merge (Chan, Golub and LeVeque's): with n = n_a + n_b and delta = mean_b - mean_a,
//   mean = mean_a + delta * n_b / n,    M2 = M2_a + M2_b + delta^2 * n_a * n_b / n.
// Lanes past the end of a row or an array hold the identity (0, 0, 0): merged with it, a state
// must come back unchanged, and two of them must merge without a division by zero.
// Check it with: reduction exercise 12
// Preconditions the checker keeps: the launches of kernels/16_moments.cu; f32, f16 and bf16 inputs;
// the result (mean, M2 / count) within the bound of reduction::check::ops::mean_var_bound.
#include "operators.cuh"

template <typename InT>
struct ExerciseWelford : Welford<InT, WELFORD_PIVOT> {  // each thread's own fold is the book's
    __device__ __forceinline__ MeanM2 combine(MeanM2 a, MeanM2 b) const {
        MeanM2 r;
        // TODO(exercise): the merge of a and b. This averages the two means as if both states
        // held as many values, and forgets the spread between them.
        r.count = a.count + b.count;
        r.mean = (a.mean + b.mean) / 2;
        r.m2 = a.m2 + b.m2;
        return r;
    }
};

OP_ENTRIES(mean_var, ExerciseWelford)
