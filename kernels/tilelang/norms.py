"""LayerNorm and RMSNorm forward in TileLang: f32, f16 or bf16 in (γ and β in the same type), the
same type out, f32 arithmetic; the per-row mean and 1/σ (1/rms) saved in f32.

One tile program per block_M rows. The first walk over the row's tiles gathers the statistics:
for RMSNorm the sum of squares; for LayerNorm each tile's (count, mean, M2), merged by Chan's
rule as in row_mean_var.py (no E[x²] - E[x]² cancellation). Where the row is one tile the output
comes from the registers it is still in; otherwise a second walk reads it again.
"""
import tilelang
import tilelang.language as T


def tile_shape(n):
    block_n = min(8192, 1 << max(0, (n - 1).bit_length()))
    block_m = max(1, 4096 // block_n)
    return block_m, block_n, block_m * block_n // 32


# ANCHOR: layer_norm
def layer_norm(M, N, dtype="float32", block_M=1, block_N=4096, threads=128, eps=1e-5, rms=False):
    one_tile = N <= block_N

    @T.prim_func
    def kernel(A: T.Tensor((M, N), dtype), W: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype),
               Y: T.Tensor((M, N), dtype), Mean: T.Tensor((M,), "float32"), Rstd: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            tile = T.alloc_fragment((block_M, block_N), "float32")
            sq = T.alloc_fragment((block_M, block_N), "float32")
            w = T.alloc_shared((block_N,), dtype)  # γ and β: shared by every row of the tile
            b = T.alloc_shared((block_N,), dtype)
            out = T.alloc_fragment((block_M, block_N), dtype)
            part2 = T.alloc_fragment((block_M,), "float32")
            m2 = T.alloc_fragment((block_M,), "float32")
            T.clear(m2)
            if not rms:  # a fragment nothing reads has no layout TileLang can infer: RMSNorm has no mean
                part = T.alloc_fragment((block_M,), "float32")
                mean = T.alloc_fragment((block_M,), "float32")
                T.clear(mean)
            for k in T.serial(T.ceildiv(N, block_N)):
                T.copy(A[bx * block_M, k * block_N], tile)  # past N: zeros
                if rms:
                    for i, j in T.Parallel(block_M, block_N):
                        sq[i, j] = tile[i, j] * tile[i, j]
                    T.reduce_sum(sq, part2, dim=1)
                    for i in T.Parallel(block_M):
                        m2[i] = m2[i] + part2[i]
                else:
                    seen = T.Cast("float32", k * block_N)
                    count = T.Cast("float32", T.min(block_N, N - k * block_N))
                    T.reduce_sum(tile, part, dim=1)
                    for i, j in T.Parallel(block_M, block_N):
                        sq[i, j] = T.if_then_else(k * block_N + j < N, (tile[i, j] - part[i] / count) * (tile[i, j] - part[i] / count), 0.0)
                    T.reduce_sum(sq, part2, dim=1)
                    for i in T.Parallel(block_M):
                        delta = part[i] / count - mean[i]
                        mean[i] = mean[i] + delta * count / (seen + count)
                        m2[i] = m2[i] + part2[i] + delta * delta * seen * count / (seen + count)
            for i in T.Parallel(block_M):
                m2[i] = T.rsqrt(m2[i] / N + eps)  # now 1/σ (1/rms)
            T.copy(m2, Rstd[bx * block_M])
            if not rms:
                T.copy(mean, Mean[bx * block_M])
            for k in T.serial(T.ceildiv(N, block_N)):
                if not one_tile:
                    T.copy(A[bx * block_M, k * block_N], tile)
                T.copy(W[k * block_N], w)
                if not rms:
                    T.copy(B[k * block_N], b)
                for i, j in T.Parallel(block_M, block_N):
                    if rms:
                        out[i, j] = T.Cast(dtype, tile[i, j] * m2[i] * T.Cast("float32", w[j]))
                    else:
                        out[i, j] = T.Cast(dtype, (tile[i, j] - mean[i]) * m2[i] * T.Cast("float32", w[j]) + T.Cast("float32", b[j]))
                T.copy(out, Y[bx * block_M, k * block_N])
    return kernel
# ANCHOR_END: layer_norm


def compile_layer_norm(m, n, dtype="float32", eps=1e-5, rms=False):
    """Inputs A, W, B; outputs Y, Mean, Rstd (RMSNorm: B is read by no one, Mean left unwritten)."""
    return tilelang.compile(layer_norm(m, n, dtype, *tile_shape(n), eps=eps, rms=rms), out_idx=[3, 4, 5])
