// Kernel 16c — four more ways to fold a thread's values into a mean and a variance, kept to be
// measured beside mean_var (16_moments.cu), which folds them as shifted sums:
//   welford_divide       Welford's update, an IEEE division per value
//   welford_fast_divide  the same with __fdividef (a reciprocal and a multiply, ~2 ulp)
//   welford_pack         each 16-byte pack's own mean and M2 (its count known ahead), merged into
//                        the thread's state with Chan's formula: one division per pack
//   mean_var_textbook    the broken one: sums of x and x^2, then E[x^2] - E[x]^2
// Changed / Still slow: the chapter measures each (the cost of a division per value when memory is
// fast) and shows what the textbook formula returns when the mean is large against the spread.
// Preconditions: as 16_moments.cu.
#include "operators.cuh"

template <typename In> using WelfordDivide = Welford<In, WELFORD_DIVIDE>;
template <typename In> using WelfordFastDivide = Welford<In, WELFORD_FAST_DIVIDE>;
template <typename In> using WelfordPack = Welford<In, WELFORD_PACK>;

OP_ENTRIES(welford_divide, WelfordDivide)
OP_ENTRIES(welford_fast_divide, WelfordFastDivide)
OP_ENTRIES(welford_pack, WelfordPack)
OP_ENTRIES(mean_var_textbook, TextbookMeanVar)
