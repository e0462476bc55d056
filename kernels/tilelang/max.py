"""The largest value of a whole array, and of each row, in TileLang: f32, f16, bf16 or i32 in.

The identity of max is -inf (the smallest int32 for integers), not 0. `T.copy` of a tile that
runs past the end of the array reads zeros there -- right for a sum, wrong for a max of negative
values -- so where the tiles do not divide N, the lanes past N are set to the identity before the
tile is reduced. Floats are compared in f32 (exact for f16 and bf16 values).

Whole array: passes, as in sum.py: each block reduces one tile to a partial max, and the host
calls the kernel on the partials until one value is left. Rows: one tile program per block_M rows,
walking them block_N columns at a time into a running max (T.reduce_max with clear=False).
"""
import tilelang
import tilelang.language as T


def accumulator(dtype):
    return "int32" if dtype == "int32" else "float32"


def lowest(dtype):
    """max's identity in the accumulator's type."""
    return T.min_value("int32") if dtype == "int32" else -T.infinity("float32")


# ANCHOR: partial_max
def partial_max(N, dtype="float32", block=16384, threads=512):
    acc = accumulator(dtype)

    @T.prim_func
    def kernel(A: T.Tensor((N,), dtype), P: T.Tensor((T.ceildiv(N, block),), acc)):
        with T.Kernel(T.ceildiv(N, block), threads=threads) as bx:
            tile = T.alloc_fragment((block,), acc)
            m = T.alloc_fragment((1,), acc)
            T.copy(A[bx * block], tile)  # values past N read as zero ...
            for i in T.Parallel(block):
                if bx * block + i >= N:
                    tile[i] = lowest(dtype)  # ... and become the identity
            T.reduce_max(tile, m, dim=0)
            P[bx] = m[0]
    return kernel
# ANCHOR_END: partial_max


class ArrayMax:
    """max(x): the kernel for x's type, then the accumulator-type kernel on the partials."""

    def __init__(self, dtype="float32"):
        n = T.dynamic("N")
        self.first = tilelang.compile(partial_max(n, dtype), out_idx=[1])
        acc = accumulator(dtype)
        self.rest = self.first if dtype == acc else tilelang.compile(partial_max(n, acc), out_idx=[1])

    def __call__(self, x):
        x = self.first(x)
        while x.numel() > 1:
            x = self.rest(x)
        return x


# ANCHOR: row_max
def row_max(M, N, dtype="float32", block_M=1, block_N=4096, threads=128):
    acc_t = accumulator(dtype)

    @T.prim_func
    def kernel(A: T.Tensor((M, N), dtype), O: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            tile = T.alloc_fragment((block_M, block_N), acc_t)
            acc = T.alloc_fragment((block_M,), acc_t)
            out = T.alloc_fragment((block_M,), dtype)
            T.fill(acc, lowest(dtype))
            for k in T.serial(T.ceildiv(N, block_N)):
                T.copy(A[bx * block_M, k * block_N], tile)
                if N % block_N != 0:  # only where the tiles do not divide the row
                    for i, j in T.Parallel(block_M, block_N):
                        if k * block_N + j >= N:
                            tile[i, j] = lowest(dtype)
                T.reduce_max(tile, acc, dim=1, clear=False)
            for i in T.Parallel(block_M):
                out[i] = T.Cast(dtype, acc[i])
            T.copy(out, O[bx * block_M])
    return kernel
# ANCHOR_END: row_max


def tile_shape(n):
    """Tiles of 4096 values, as wide as a row allows (up to 4096)."""
    block_n = min(4096, 1 << max(0, (n - 1).bit_length()))
    return 4096 // block_n, block_n
