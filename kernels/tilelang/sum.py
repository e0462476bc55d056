"""The sum of a whole array in TileLang, f32, f16 or bf16 in, f32 out.

A tile program cannot wait for the others (there is no grid-wide barrier between tile
programs), so the sum takes passes: each block sums one tile of the input into a partial, and
the host calls the same kernel on the partials until one value is left. Each pass is a
launch; the order of the additions is fixed, so the sum is the same on every run.
"""
import tilelang
import tilelang.language as T


# ANCHOR: partial_sums
def partial_sums(N, dtype="float32", block=16384, threads=512):
    @T.prim_func
    def kernel(A: T.Tensor((N,), dtype), P: T.Tensor((T.ceildiv(N, block),), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=threads) as bx:
            tile = T.alloc_fragment((block,), "float32")
            s = T.alloc_fragment((1,), "float32")
            T.copy(A[bx * block], tile)  # values past N read as zero
            T.reduce_sum(tile, s, dim=0)
            P[bx] = s[0]
    return kernel
# ANCHOR_END: partial_sums


class ArraySum:
    """sum(x): the kernel for x's type, then the float32 kernel on the partials until one is left."""

    def __init__(self, dtype="float32"):
        n = T.dynamic("N")
        self.first = tilelang.compile(partial_sums(n, dtype), out_idx=[1])
        self.rest = self.first if dtype == "float32" else tilelang.compile(partial_sums(n), out_idx=[1])

    # ANCHOR: passes
    def __call__(self, x):
        x = self.first(x)
        while x.numel() > 1:  # 2^31 values: 131072 partials, then 8, then 1
            x = self.rest(x)
        return x
    # ANCHOR_END: passes
