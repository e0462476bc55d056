"""Row sums in TileLang: S[i] = sum of A[i, :], f32, f16 or bf16 in, f32 out.

One tile program per block_M rows: it walks the rows block_N columns at a time, copying each
tile into registers (a "fragment"), reducing it along the rows, and adding the result to a
running sum. TileLang decides which thread holds which values, how wide the loads are and
how the threads that share a row combine their sums.
"""
import tilelang
import tilelang.language as T


# ANCHOR: row_sum
def row_sum(M, N, dtype="float32", block_M=16, block_N=256, threads=128):
    @T.prim_func
    def kernel(A: T.Tensor((M, N), dtype), S: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            tile = T.alloc_fragment((block_M, block_N), "float32")
            part = T.alloc_fragment((block_M,), "float32")
            acc = T.alloc_fragment((block_M,), "float32")
            T.clear(acc)
            for k in T.serial(T.ceildiv(N, block_N)):
                T.copy(A[bx * block_M, k * block_N], tile)  # converts f16/bf16 to f32
                T.reduce_sum(tile, part, dim=1)
                for i in T.Parallel(block_M):
                    acc[i] += part[i]
            T.copy(acc, S[bx * block_M])
    return kernel
# ANCHOR_END: row_sum


def tile_shape(n):
    """Tiles of 4096 values, as wide as a row allows (up to 4096): 32 values per thread."""
    block_n = min(4096, 1 << max(0, (n - 1).bit_length()))
    return 4096 // block_n, block_n


def compile_row_sum(n, dtype="float32", m=None):
    """The compiled kernel for rows of n values (m rows; None: any number of rows)."""
    block_m, block_n = tile_shape(n)
    return tilelang.compile(row_sum(T.dynamic("M") if m is None else m, n, dtype, block_m, block_n), out_idx=[1])
