"""Softmax and log-softmax over the last dimension, and the per-row cross-entropy loss, in
TileLang: f32, f16 or bf16 in, the same type out (the loss in f32), f32 arithmetic.

One tile program per block_M rows. The first walk over the row's tiles is the online softmax:
each tile's max (T.reduce_max) raises the running max, the running sum is rescaled by
exp(old max - new max), and the tile's exp(x - new max) are added (T.reduce_sum). Where the row
is one tile, the output comes from the registers the tile is still in (one read); otherwise a
second walk reads the row again and writes exp(x - max) / sum.
"""
import tilelang
import tilelang.language as T

LN2 = 0.6931471805599453


def tile_shape(n):
    """(block_M, block_N, threads): tiles of at least 4096 values, rows up to 8192 in one tile,
    32 values a thread."""
    block_n = min(8192, 1 << max(0, (n - 1).bit_length()))
    block_m = max(1, 4096 // block_n)
    return block_m, block_n, block_m * block_n // 32


# ANCHOR: online
@T.macro
def online_max_sum(A, tile, e, m, s, tmax, tsum, bx, k, block_M, block_N, N):
    """One step of the online softmax over tile k of rows bx·block_M...: m and s updated."""
    T.copy(A[bx * block_M, k * block_N], tile)
    if N % block_N != 0:  # past N: zeros from T.copy, which must not count as values
        for i, j in T.Parallel(block_M, block_N):
            if k * block_N + j >= N:
                tile[i, j] = -T.infinity("float32")
    T.reduce_max(tile, tmax, dim=1)
    for i in T.Parallel(block_M):
        tmax[i] = T.max(tmax[i], m[i])  # the new running max
    for i, j in T.Parallel(block_M, block_N):
        e[i, j] = T.exp(tile[i, j] - tmax[i])
    T.reduce_sum(e, tsum, dim=1)
    for i in T.Parallel(block_M):
        s[i] = s[i] * T.exp(m[i] - tmax[i]) + tsum[i]  # the old sum rescaled to the new max
        m[i] = tmax[i]
# ANCHOR_END: online


# ANCHOR: softmax
def softmax(M, N, dtype="float32", block_M=1, block_N=4096, threads=128, log=False):
    one_tile = N <= block_N

    @T.prim_func
    def kernel(A: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            tile = T.alloc_fragment((block_M, block_N), "float32")
            e = T.alloc_fragment((block_M, block_N), "float32")
            out = T.alloc_fragment((block_M, block_N), dtype)
            m = T.alloc_fragment((block_M,), "float32")
            s = T.alloc_fragment((block_M,), "float32")
            tmax = T.alloc_fragment((block_M,), "float32")
            tsum = T.alloc_fragment((block_M,), "float32")
            T.fill(m, -T.infinity("float32"))
            T.clear(s)
            for k in T.serial(T.ceildiv(N, block_N)):
                online_max_sum(A, tile, e, m, s, tmax, tsum, bx, k, block_M, block_N, N)
            if one_tile:  # the row is still in registers
                for i, j in T.Parallel(block_M, block_N):
                    if log:
                        out[i, j] = T.Cast(dtype, tile[i, j] - m[i] - T.log(s[i]))
                    else:
                        out[i, j] = T.Cast(dtype, e[i, j] / s[i])
                T.copy(out, Y[bx * block_M, 0])
            else:
                for k in T.serial(T.ceildiv(N, block_N)):
                    T.copy(A[bx * block_M, k * block_N], tile)
                    for i, j in T.Parallel(block_M, block_N):
                        if log:
                            out[i, j] = T.Cast(dtype, tile[i, j] - m[i] - T.log(s[i]))
                        else:
                            out[i, j] = T.Cast(dtype, T.exp(tile[i, j] - m[i]) / s[i])
                    T.copy(out, Y[bx * block_M, k * block_N])
    return kernel
# ANCHOR_END: softmax


# ANCHOR: cross_entropy
def row_cross_entropy(M, N, dtype="float32", block_M=1, block_N=4096, threads=128, ignore_index=-100):
    """loss[r] = logsumexp(x[r]) - x[r, target[r]], 0 where target[r] is ignore_index."""
    @T.prim_func
    def kernel(A: T.Tensor((M, N), dtype), Target: T.Tensor((M,), "int64"), Loss: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            tile = T.alloc_fragment((block_M, block_N), "float32")
            e = T.alloc_fragment((block_M, block_N), "float32")
            m = T.alloc_fragment((block_M,), "float32")
            s = T.alloc_fragment((block_M,), "float32")
            tmax = T.alloc_fragment((block_M,), "float32")
            tsum = T.alloc_fragment((block_M,), "float32")
            T.fill(m, -T.infinity("float32"))
            T.clear(s)
            for k in T.serial(T.ceildiv(N, block_N)):
                online_max_sum(A, tile, e, m, s, tmax, tsum, bx, k, block_M, block_N, N)
            for i in T.Parallel(block_M):
                row = bx * block_M + i
                if row < M:
                    t = T.Cast("int32", Target[row])
                    live = t != ignore_index
                    Loss[row] = T.if_then_else(live, m[i] + T.log(s[i]) - T.Cast("float32", A[row, T.if_then_else(live, t, 0)]), T.float32(0.0))
    return kernel
# ANCHOR_END: cross_entropy


def compile_softmax(m, n, dtype="float32", log=False):
    return tilelang.compile(softmax(m, n, dtype, *tile_shape(n), log=log), out_idx=[1])
