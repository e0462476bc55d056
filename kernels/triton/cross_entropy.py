"""Cross-entropy of logits against integer targets in Triton: f32, f16 or bf16 logits, f32 loss.

Rows that fit in registers (N <= 16384) are read once, ROWS to a program, as in the fused softmax;
a longer row takes one program and the online logsumexp over its tiles (each lane a running max
and a rescaled sum, merged at the end). The loss is the logsumexp minus the target's logit; a
row whose target is ignore_index loses 0. The mean over the rows that count is a second, small reduction (torch's sum of the
losses and of the live rows).
"""
import torch
import triton
import triton.language as tl


# ANCHOR: cross_entropy
@triton.jit
def row_loss_kernel(loss, x, target, N, stride, ignore_index, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    m = tl.full((BLOCK_N,), float("-inf"), dtype=tl.float32)
    s = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        v = tl.load(x + row * stride + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, v)
        # a lane that has seen nothing yet (-inf, -inf) must not make NaN
        s = tl.where(m_new == float("-inf"), 0.0, s * tl.exp(m - m_new) + tl.exp(v - m_new))
        m = m_new
    big = tl.max(m, axis=0)
    lse = big + tl.log(tl.sum(tl.where(m == float("-inf"), 0.0, s * tl.exp(m - big)), axis=0))
    t = tl.load(target + row)
    live = t != ignore_index
    picked = tl.load(x + row * stride + tl.where(live, t, 0)).to(tl.float32)
    tl.store(loss + row, tl.where(live, lse - picked, 0.0))


@triton.jit
def rows_loss_kernel(loss, x, target, M, N, stride, ignore_index, ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    # rows that fit in registers, ROWS to a program: one read, as in the fused softmax
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    v = tl.load(x + rows[:, None] * stride + cols[None, :], mask=mask, other=float("-inf")).to(tl.float32)
    big = tl.max(v, axis=1)
    lse = big + tl.log(tl.sum(tl.exp(v - big[:, None]), axis=1))
    t = tl.load(target + rows, mask=rows < M, other=ignore_index)
    live = t != ignore_index
    picked = tl.load(x + rows * stride + tl.where(live, t, 0), mask=live & (rows < M), other=0.0).to(tl.float32)
    tl.store(loss + rows, tl.where(live, lse - picked, 0.0), mask=rows < M)


def cross_entropy(x, target, ignore_index=-100):
    """The mean over the rows whose target is not ignore_index of logsumexp(x) - x[target]."""
    m, n = x.shape
    loss = torch.empty(m, device=x.device, dtype=torch.float32)
    if n <= 16384:
        block_n = triton.next_power_of_2(n)
        rows = max(1, 4096 // block_n)
        rows_loss_kernel[(triton.cdiv(m, rows),)](loss, x, target, m, n, x.stride(0), ignore_index, ROWS=rows, BLOCK_N=block_n,
                                                  num_warps=max(4, min(16, rows * block_n // 512)))
    else:
        row_loss_kernel[(m,)](loss, x, target, n, x.stride(0), ignore_index, BLOCK_N=4096, num_warps=8)
    return loss.sum() / (target != ignore_index).sum()
# ANCHOR_END: cross_entropy
