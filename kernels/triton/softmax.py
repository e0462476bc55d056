"""Softmax and log-softmax over the last dimension, and softmax's backward, in Triton, in the style
of Triton's fused-softmax tutorial: f32, f16 or bf16 in, the same type out, f32 arithmetic.

Where a row fits in one program's registers (N <= 16384), the row is read once: its max, the sum
of exp(x - max) and the output come from the same registers (short rows are packed ROWS to a
program). A longer row is walked twice: first the online softmax (each lane keeps a running max
and a sum rescaled whenever the max grows; the lanes are merged at the end), then the output. The
second walk reads the row from memory again unless it is still in L2.
"""
import torch
import triton
import triton.language as tl

ONE_TILE = 16384  # the longest row kept in registers
LOOP_TILE = 4096


def layout(n):
    """(ROWS, BLOCK_N, num_warps) for rows of n values held in registers at once."""
    block_n = triton.next_power_of_2(n)
    rows = max(1, 4096 // block_n)
    return rows, block_n, max(4, min(16, rows * block_n // 512))


# ANCHOR: softmax
@triton.jit
def softmax_kernel(y, x, M, N, stride, ROWS: tl.constexpr, BLOCK_N: tl.constexpr, LOG: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offsets = rows[:, None] * stride + cols[None, :]
    v = tl.load(x + offsets, mask=mask, other=float("-inf")).to(tl.float32)
    shifted = v - tl.max(v, axis=1)[:, None]  # the shift: exp never overflows
    e = tl.exp(shifted)
    total = tl.sum(e, axis=1)[:, None]
    if LOG:
        tl.store(y + offsets, (shifted - tl.log(total)).to(y.dtype.element_ty), mask=mask)
    else:
        tl.store(y + offsets, (e / total).to(y.dtype.element_ty), mask=mask)
# ANCHOR_END: softmax


# ANCHOR: online
@triton.jit
def softmax_looped_kernel(y, x, N, stride, BLOCK_N: tl.constexpr, LOG: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    m = tl.full((BLOCK_N,), float("-inf"), dtype=tl.float32)  # each lane's running max
    s = tl.zeros((BLOCK_N,), dtype=tl.float32)  # and its sum of exp(x - m)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        v = tl.load(x + row * stride + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, v)
        s = s * tl.exp(m - m_new) + tl.exp(v - m_new)  # N > BLOCK_N: every lane has a value by now
        m = m_new
    big = tl.max(m, axis=0)
    total = tl.sum(s * tl.exp(m - big), axis=0)  # the lanes merged: each sum rescaled to one max
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        v = tl.load(x + row * stride + cols, mask=cols < N, other=0.0).to(tl.float32)
        if LOG:
            tl.store(y + row * stride + cols, (v - big - tl.log(total)).to(y.dtype.element_ty), mask=cols < N)
        else:
            tl.store(y + row * stride + cols, (tl.exp(v - big) / total).to(y.dtype.element_ty), mask=cols < N)
# ANCHOR_END: online


def softmax(x, log=False):
    """softmax (or log_softmax) of each row of a contiguous 2-D x, in x's type."""
    m, n = x.shape
    y = torch.empty_like(x)
    if n <= ONE_TILE:
        rows, block_n, warps = layout(n)
        softmax_kernel[(triton.cdiv(m, rows),)](y, x, m, n, x.stride(0), ROWS=rows, BLOCK_N=block_n, LOG=log, num_warps=warps)
    else:
        softmax_looped_kernel[(m,)](y, x, n, x.stride(0), BLOCK_N=LOOP_TILE, LOG=log, num_warps=8)
    return y


def log_softmax(x):
    return softmax(x, log=True)


# ANCHOR: backward
@triton.jit
def softmax_bwd_kernel(dx, y, dy, M, N, stride, ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offsets = rows[:, None] * stride + cols[None, :]
    yv = tl.load(y + offsets, mask=mask, other=0.0).to(tl.float32)
    g = tl.load(dy + offsets, mask=mask, other=0.0).to(tl.float32)
    dot = tl.sum(yv * g, axis=1)[:, None]  # the row reduction of the backward
    tl.store(dx + offsets, (yv * (g - dot)).to(dx.dtype.element_ty), mask=mask)


@triton.jit
def softmax_bwd_looped_kernel(dx, y, dy, N, stride, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        yv = tl.load(y + row * stride + cols, mask=cols < N, other=0.0).to(tl.float32)
        acc += yv * tl.load(dy + row * stride + cols, mask=cols < N, other=0.0).to(tl.float32)
    dot = tl.sum(acc, axis=0)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        yv = tl.load(y + row * stride + cols, mask=cols < N, other=0.0).to(tl.float32)
        g = tl.load(dy + row * stride + cols, mask=cols < N, other=0.0).to(tl.float32)
        tl.store(dx + row * stride + cols, (yv * (g - dot)).to(dx.dtype.element_ty), mask=cols < N)
# ANCHOR_END: backward


def softmax_bwd(y, dy):
    """dx = y * (dy - sum(y * dy)) per row, for y = softmax(x); contiguous 2-D, y's type."""
    m, n = y.shape
    dx = torch.empty_like(dy)
    if n <= ONE_TILE // 2:  # two rows of registers: y and dy
        rows, block_n, warps = layout(n)
        softmax_bwd_kernel[(triton.cdiv(m, rows),)](dx, y, dy, m, n, y.stride(0), ROWS=rows, BLOCK_N=block_n, num_warps=warps)
    else:
        softmax_bwd_looped_kernel[(m,)](dx, y, dy, n, y.stride(0), BLOCK_N=LOOP_TILE, num_warps=8)
    return dx
