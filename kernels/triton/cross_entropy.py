"""Cross-entropy of logits against integer targets in Triton: f32, f16 or bf16 logits, f32 loss.

One program per row: the online logsumexp over the row's tiles (each lane a running max and a
rescaled sum, merged at the end), minus the target's logit; a row whose target is ignore_index
loses 0. The mean over the rows that count is a second, small reduction (torch's sum of the
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


def cross_entropy(x, target, ignore_index=-100):
    """The mean over the rows whose target is not ignore_index of logsumexp(x) - x[target]."""
    m, n = x.shape
    loss = torch.empty(m, device=x.device, dtype=torch.float32)
    row_loss_kernel[(m,)](loss, x, target, n, x.stride(0), ignore_index, BLOCK_N=min(4096, triton.next_power_of_2(n)), num_warps=8)
    return loss.sum() / (target != ignore_index).sum()
# ANCHOR_END: cross_entropy
