"""The sum of a whole array in TileLang: f32, f16 or bf16 in, f32 out; int32 in, int32 out
(wrapping, as the book's i32 sums do).

A tile program cannot wait for the others (there is no grid-wide barrier between tile
programs), so the sum takes passes: each block sums one tile of the input into a partial, and
the host calls the same kernel on the partials until one value is left. Each pass is a
launch; the order of the additions is fixed, so the sum is the same on every run.
"""
import tilelang
import tilelang.language as T


def accumulator(dtype):
    """What the partial sums are kept in: int32 for int32 input, float32 for the floats."""
    return "int32" if dtype == "int32" else "float32"


# ANCHOR: partial_sums
def partial_sums(N, dtype="float32", block=16384, threads=512):
    acc = accumulator(dtype)

    @T.prim_func
    def kernel(A: T.Tensor((N,), dtype), P: T.Tensor((T.ceildiv(N, block),), acc)):
        with T.Kernel(T.ceildiv(N, block), threads=threads) as bx:
            tile = T.alloc_fragment((block,), acc)
            s = T.alloc_fragment((1,), acc)
            T.copy(A[bx * block], tile)  # values past N read as zero
            T.reduce_sum(tile, s, dim=0)
            P[bx] = s[0]
    return kernel
# ANCHOR_END: partial_sums


class ArraySum:
    """sum(x): the kernel for x's type, then the kernel of the accumulator's type on the partials
    until one is left."""

    def __init__(self, dtype="float32"):
        n = T.dynamic("N")
        acc = accumulator(dtype)
        self.first = tilelang.compile(partial_sums(n, dtype), out_idx=[1])
        self.rest = self.first if dtype == acc else tilelang.compile(partial_sums(n, acc), out_idx=[1])

    # ANCHOR: passes
    def __call__(self, x):
        x = self.first(x)
        while x.numel() > 1:  # 2^31 values: 131072 partials, then 8, then 1
            x = self.rest(x)
        return x
    # ANCHOR_END: passes
