// Kernel 16b — sums of powers: the sum, the sum of squares, the mean and the variance, with the
// machinery of kernels/operators.cuh, whole-array in one pass and row by row.
//
// Changed: the operator. `sum` is the book's sum as one instance of the generic code (it adds in
// kernel 9's and kernel 13's order). `sumsq` squares in f32. `mean_var` is Welford / Chan:
// (count, mean, M2) states merged exactly across lanes, warps and blocks; within a thread the
// values are folded as shifted sums around the thread's first value (no division per value; the
// other ways, and the broken E[x^2] - E[x]^2, are in 16_mean_var_walks.cu).
// Still slow: see the chapter's table.
// Preconditions: as kernels 10 and 13; n > 0 and rows x cols > 0. Results: sum and sumsq in f32;
// mean_var and its variants a (mean, population variance) pair of f32.
#include "operators.cuh"

template <typename In> using SumF32 = Sum<In, float>;

// Entries: sum_whole_f32, sumsq_rows_block_bf16, mean_var_rows_split_f16, ...
OP_ENTRIES(sum, SumF32)
OP_ENTRIES(sumsq, SumSq)
OP_ENTRIES(mean_var, MeanVarOp)
