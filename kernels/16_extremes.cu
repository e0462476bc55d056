// Kernel 16a — max, min, argmax, argmin: the sum's machinery with another operator
// (kernels/operators.cuh), whole-array in one pass and row by row.
//
// Changed: the operator. A max starts from -inf, not 0; NaN propagates (torch.amax); f16 and bf16
// packs are compared as they are, two values per instruction (sm_80 on; widened below). argmax
// carries a 64-bit index with its value and breaks ties to the lowest index, NaN first, as
// torch.argmax does; within a thread it compares the pack's extreme first and searches the pack
// only when the best value so far improves.
// Still slow: nothing measured yet says so; see the chapter's table.
// Preconditions: as kernels 10 and 13 (operators.cuh: reduce_whole, rows_*_op); n > 0 and
// rows x cols > 0 (the host launches nothing for an empty input). The results: max / min in the
// input's type widened (f32 for f16 and bf16, exactly), argmax / argmin as a u64 index.
#include "operators.cuh"

// Entries: max_whole_f32, max_rows_warp_f16, argmin_rows_split_i32, ...
OP_ENTRIES(max, Max)
OP_ENTRIES_I32(max, Max)
OP_ENTRIES(min, Min)
OP_ENTRIES_I32(min, Min)
OP_ENTRIES(argmax, ArgMax)
OP_ENTRIES_I32(argmax, ArgMax)
OP_ENTRIES(argmin, ArgMin)
OP_ENTRIES_I32(argmin, ArgMin)
