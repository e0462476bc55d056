"""The mean and the (population) variance of each row in Triton, by Welford's method: f32, f16 or
bf16 in, f32 out.

One program per ROWS rows walks them BLOCK_N columns at a time. Each lane keeps its own
(count, mean, M2) and updates it with Welford's step; since every lane sees one value per tile
(except lanes past N in the last tile, which are left alone), the count after tile k is k + 1 for
every live lane, so the division is one reciprocal per tile, not one per element. At the end the
lanes' triples are merged along the row by Chan's rule with tl.reduce.
"""
import torch
import triton
import triton.language as tl


# ANCHOR: merge
@triton.jit
def chan_merge(mean_a, m2_a, n_a, mean_b, m2_b, n_b):
    n = n_a + n_b
    share = tl.where(n > 0, n_b / tl.maximum(n, 1.0), 0.0)  # two empty lanes stay empty
    delta = mean_b - mean_a
    return mean_a + delta * share, m2_a + m2_b + delta * delta * n_a * share, n
# ANCHOR_END: merge


# ANCHOR: row_mean_var
@triton.jit
def row_mean_var_kernel(x, mean_out, var_out, M, N, stride, ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    mean = tl.zeros((ROWS, BLOCK_N), dtype=tl.float32)
    m2 = tl.zeros((ROWS, BLOCK_N), dtype=tl.float32)
    count = tl.zeros((ROWS, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(N, BLOCK_N)):
        cols = k * BLOCK_N + tl.arange(0, BLOCK_N)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        v = tl.load(x + rows[:, None] * stride + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        inv = 1.0 / (k + 1).to(tl.float32)  # the count of every live lane after this tile
        delta = v - mean
        mean = tl.where(mask, mean + delta * inv, mean)
        m2 = tl.where(mask, m2 + delta * (v - mean), m2)
        count = tl.where(mask, (k + 1).to(tl.float32), count)
    mean_r, m2_r, n_r = tl.reduce((mean, m2, count), 1, chan_merge)
    tl.store(mean_out + rows, mean_r, mask=rows < M)
    tl.store(var_out + rows, m2_r / n_r, mask=rows < M)


def row_mean_var(x):
    """(mean, variance) of each row of a 2-D x, both f32; the variance divides by N."""
    m, n = x.shape
    block_n = min(2048, triton.next_power_of_2(n))
    rows = 2048 // block_n
    mean = torch.empty(m, device=x.device, dtype=torch.float32)
    var = torch.empty(m, device=x.device, dtype=torch.float32)
    row_mean_var_kernel[(triton.cdiv(m, rows),)](x, mean, var, m, n, x.stride(0), ROWS=rows, BLOCK_N=block_n, num_warps=4)
    return mean, var
# ANCHOR_END: row_mean_var
