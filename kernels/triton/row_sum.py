"""Row sums in Triton: s[i] = sum of x[i, :], f32, f16 or bf16 in, f32 out.

One program per ROWS rows: it walks them BLOCK_N columns at a time, adding each masked tile
into an f32 accumulator of the tile's shape, and reduces it along the rows at the end
(tl.sum). Triton decides the load width, the threads' layout and the reduction's shuffles.
"""
import torch
import triton
import triton.language as tl


# ANCHOR: row_sum
@triton.jit
def row_sum_kernel(x, s, M, N, stride, ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    acc = tl.zeros((ROWS, BLOCK_N), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        acc += tl.load(x + rows[:, None] * stride + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    tl.store(s + rows, tl.sum(acc, axis=1), mask=rows < M)
# ANCHOR_END: row_sum


# ANCHOR: launch
def row_sum(x):
    m, n = x.shape
    block_n = min(4096, triton.next_power_of_2(n))  # tiles of 4096 values, as wide as a row allows
    rows = 4096 // block_n
    s = torch.empty(m, device=x.device, dtype=torch.float32)
    row_sum_kernel[(triton.cdiv(m, rows),)](x, s, m, n, x.stride(0), ROWS=rows, BLOCK_N=block_n, num_warps=4)
    return s
# ANCHOR_END: launch
