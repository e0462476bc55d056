"""The mean and the (population) variance of each row in TileLang: f32, f16 or bf16 in, f32 out.

One tile program per block_M rows walks them block_N columns at a time. Each tile is reduced to
its own (count, mean, M2) -- its sum, then the squares of its values less its own mean, both from
the registers the tile was loaded into -- and merged into the rows' running (count, mean, M2) by
Chan's rule. One read of the row, one division a tile rather than one per value, and no
E[x²] - E[x]² cancellation.
"""
import tilelang
import tilelang.language as T


# ANCHOR: row_mean_var
def row_mean_var(M, N, dtype="float32", block_M=1, block_N=4096, threads=128):
    @T.prim_func
    def kernel(A: T.Tensor((M, N), dtype), Mean: T.Tensor((M,), "float32"), Var: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            tile = T.alloc_fragment((block_M, block_N), "float32")
            part = T.alloc_fragment((block_M,), "float32")
            part2 = T.alloc_fragment((block_M,), "float32")
            mean = T.alloc_fragment((block_M,), "float32")
            m2 = T.alloc_fragment((block_M,), "float32")
            T.clear(mean)
            T.clear(m2)
            for k in T.serial(T.ceildiv(N, block_N)):
                T.copy(A[bx * block_M, k * block_N], tile)  # past N: zeros, which the sum ignores
                seen = T.Cast("float32", k * block_N)  # every earlier tile was full
                count = T.Cast("float32", T.min(block_N, N - k * block_N))
                T.reduce_sum(tile, part, dim=1)
                for i, j in T.Parallel(block_M, block_N):
                    tile[i, j] = T.if_then_else(k * block_N + j < N, (tile[i, j] - part[i] / count) * (tile[i, j] - part[i] / count), 0.0)
                T.reduce_sum(tile, part2, dim=1)
                for i in T.Parallel(block_M):
                    delta = part[i] / count - mean[i]  # Chan: merge (seen, mean, m2) with the tile's
                    mean[i] = mean[i] + delta * count / (seen + count)
                    m2[i] = m2[i] + part2[i] + delta * delta * seen * count / (seen + count)
            for i in T.Parallel(block_M):
                m2[i] = m2[i] / N
            T.copy(mean, Mean[bx * block_M])
            T.copy(m2, Var[bx * block_M])
    return kernel
# ANCHOR_END: row_mean_var


def tile_shape(n):
    block_n = min(4096, 1 << max(0, (n - 1).bit_length()))
    return 4096 // block_n, block_n


def compile_row_mean_var(m, n, dtype="float32"):
    return tilelang.compile(row_mean_var(m, n, dtype, *tile_shape(n)), out_idx=[1, 2])
