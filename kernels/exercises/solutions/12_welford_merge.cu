// Exercise 12, a reference solution: Chan's merge of two (count, mean, M2) states.
#include "operators.cuh"

template <typename InT>
struct ExerciseWelford : Welford<InT, WELFORD_PIVOT> {
    __device__ __forceinline__ MeanM2 combine(MeanM2 a, MeanM2 b) const {
        // ANCHOR: solution
        MeanM2 r;
        const float count = a.count + b.count;
        if (count == 0.0f) return a;  // two empty states: nothing to weigh (and no 0 / 0)
        const float delta = b.mean - a.mean;
        const float share = b.count / count;  // b's weight in the merged mean
        r.count = count;
        r.mean = a.mean + delta * share;
        r.m2 = a.m2 + b.m2 + delta * delta * a.count * share;
        return r;
        // ANCHOR_END: solution
    }
};

OP_ENTRIES(mean_var, ExerciseWelford)
