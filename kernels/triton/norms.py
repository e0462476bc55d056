"""LayerNorm and RMSNorm forward, and LayerNorm's γ and β gradients, in Triton, in the style of
Triton's layer-norm tutorial: f32, f16 or bf16 in (γ and β in the same type), the same type out,
f32 arithmetic; the per-row mean and 1/σ (1/rms) saved in f32 as a backward needs them.

Where a row fits in registers (N <= 8192) it is read once and its statistics come from the
registers (short rows packed ROWS to a program). A longer row takes the tutorial's passes over
the row: the mean, then the variance of x - mean (two passes, so no E[x²] - E[x]² cancellation),
then the output -- three reads of the row, the later ones from L2 when it is still there.

The γ and β gradients are a column reduction, over the M rows: dγ = Σ dy·x̂, dβ = Σ dy. As in
the tutorial, it runs in two stages: G groups of rows each sum their rows into a partial row
(f32), then one kernel sums the G partial rows.
"""
import torch
import triton
import triton.language as tl

ONE_TILE = 8192
LOOP_TILE = 4096


def layout(n):
    block_n = triton.next_power_of_2(n)
    rows = max(1, 4096 // block_n)
    return rows, block_n, max(4, min(16, rows * block_n // 512))


# ANCHOR: layer_norm
@triton.jit
def layer_norm_kernel(y, x, w, b, mean_out, rstd_out, M, N, stride, eps,
                      ROWS: tl.constexpr, BLOCK_N: tl.constexpr, RMS: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offsets = rows[:, None] * stride + cols[None, :]
    v = tl.load(x + offsets, mask=mask, other=0.0).to(tl.float32)
    gamma = tl.load(w + cols, mask=cols < N, other=0.0).to(tl.float32)
    if RMS:
        rstd = 1.0 / tl.sqrt(tl.sum(v * v, axis=1) / N + eps)
        out = v * rstd[:, None] * gamma[None, :]
    else:
        mean = tl.sum(v, axis=1) / N
        centred = tl.where(mask, v - mean[:, None], 0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(centred * centred, axis=1) / N + eps)
        beta = tl.load(b + cols, mask=cols < N, other=0.0).to(tl.float32)
        out = centred * rstd[:, None] * gamma[None, :] + beta[None, :]
        tl.store(mean_out + rows, mean, mask=rows < M)
    tl.store(rstd_out + rows, rstd, mask=rows < M)
    tl.store(y + offsets, out.to(y.dtype.element_ty), mask=mask)


@triton.jit
def layer_norm_looped_kernel(y, x, w, b, mean_out, rstd_out, N, stride, eps, BLOCK_N: tl.constexpr, RMS: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    mean = 0.0
    if not RMS:
        acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
        for start in range(0, N, BLOCK_N):
            cols = start + tl.arange(0, BLOCK_N)
            acc += tl.load(x + row * stride + cols, mask=cols < N, other=0.0).to(tl.float32)
        mean = tl.sum(acc, axis=0) / N
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        v = tl.load(x + row * stride + cols, mask=cols < N, other=0.0).to(tl.float32)
        v = tl.where(cols < N, v - mean, 0.0)
        acc += v * v
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    if not RMS:
        tl.store(mean_out + row, mean)
    tl.store(rstd_out + row, rstd)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        v = tl.load(x + row * stride + cols, mask=cols < N, other=0.0).to(tl.float32)
        out = (v - mean) * rstd * tl.load(w + cols, mask=cols < N, other=0.0).to(tl.float32)
        if not RMS:
            out += tl.load(b + cols, mask=cols < N, other=0.0).to(tl.float32)
        tl.store(y + row * stride + cols, out.to(y.dtype.element_ty), mask=cols < N)
# ANCHOR_END: layer_norm


def _norm(x, w, b, eps, rms):
    m, n = x.shape
    y = torch.empty_like(x)
    rstd = torch.empty(m, device=x.device, dtype=torch.float32)
    mean = rstd if rms else torch.empty(m, device=x.device, dtype=torch.float32)
    bias = w if b is None else b
    if n <= ONE_TILE:
        rows, block_n, warps = layout(n)
        layer_norm_kernel[(triton.cdiv(m, rows),)](y, x, w, bias, mean, rstd, m, n, x.stride(0), eps,
                                                   ROWS=rows, BLOCK_N=block_n, RMS=rms, num_warps=warps)
    else:
        layer_norm_looped_kernel[(m,)](y, x, w, bias, mean, rstd, n, x.stride(0), eps, BLOCK_N=LOOP_TILE, RMS=rms, num_warps=8)
    return (y, rstd) if rms else (y, mean, rstd)


def layer_norm(x, w, b, eps=1e-5):
    """(y, mean, rstd): y = (x - mean) * rstd * w + b per row of a contiguous 2-D x."""
    return _norm(x, w, b, eps, rms=False)


def rms_norm(x, w, eps=1e-6):
    """(y, rstd): y = x * rstd * w, rstd = 1 / sqrt(mean(x²) + eps), per row."""
    return _norm(x, w, None, eps, rms=True)


# ANCHOR: gamma_beta
@triton.jit
def partial_gamma_beta_kernel(dw_part, db_part, dy, x, mean, rstd, M, N, stride, rows_per_group,
                              ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    group = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    dw = tl.zeros((ROWS, BLOCK_N), dtype=tl.float32)
    db = tl.zeros((ROWS, BLOCK_N), dtype=tl.float32)
    first = group.to(tl.int64) * rows_per_group
    for r in range(0, rows_per_group, ROWS):
        rows = first + r + tl.arange(0, ROWS)
        live = (rows < M) & (r + tl.arange(0, ROWS) < rows_per_group)
        mask = live[:, None] & (cols[None, :] < N)
        offsets = rows[:, None] * stride + cols[None, :]
        g = tl.load(dy + offsets, mask=mask, other=0.0).to(tl.float32)
        v = tl.load(x + offsets, mask=mask, other=0.0).to(tl.float32)
        mu = tl.load(mean + rows, mask=live, other=0.0)
        rs = tl.load(rstd + rows, mask=live, other=0.0)
        dw += g * (v - mu[:, None]) * rs[:, None]
        db += g
    tl.store(dw_part + group * N + cols, tl.sum(dw, axis=0), mask=cols < N)
    tl.store(db_part + group * N + cols, tl.sum(db, axis=0), mask=cols < N)


@triton.jit
def sum_partials_kernel(dw, db, dw_part, db_part, G, N, BLOCK_G: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc_w = tl.zeros((BLOCK_G, BLOCK_N), dtype=tl.float32)
    acc_b = tl.zeros((BLOCK_G, BLOCK_N), dtype=tl.float32)
    for start in range(0, G, BLOCK_G):
        groups = start + tl.arange(0, BLOCK_G)
        mask = (groups[:, None] < G) & (cols[None, :] < N)
        offsets = groups[:, None] * N + cols[None, :]
        acc_w += tl.load(dw_part + offsets, mask=mask, other=0.0)
        acc_b += tl.load(db_part + offsets, mask=mask, other=0.0)
    tl.store(dw + cols, tl.sum(acc_w, axis=0).to(dw.dtype.element_ty), mask=cols < N)
    tl.store(db + cols, tl.sum(acc_b, axis=0).to(db.dtype.element_ty), mask=cols < N)
# ANCHOR_END: gamma_beta


def layer_norm_bwd_gamma_beta(dy, x, mean, rstd):
    """(dγ, dβ) in dy's type: sums over the rows of dy·(x - mean)·rstd and of dy."""
    m, n = x.shape
    block_n = min(1024, triton.next_power_of_2(n))
    rows = max(1, 2048 // block_n)
    col_tiles = triton.cdiv(n, block_n)
    groups = max(1, min(triton.cdiv(m, rows), 2048 // col_tiles))  # about 2048 programs
    rows_per_group = triton.cdiv(m, groups)
    dw_part = torch.empty((groups, n), device=x.device, dtype=torch.float32)
    db_part = torch.empty((groups, n), device=x.device, dtype=torch.float32)
    partial_gamma_beta_kernel[(groups, col_tiles)](dw_part, db_part, dy, x, mean, rstd, m, n, x.stride(0), rows_per_group,
                                                   ROWS=rows, BLOCK_N=block_n, num_warps=4)
    dw = torch.empty(n, device=x.device, dtype=dy.dtype)
    db = torch.empty(n, device=x.device, dtype=dy.dtype)
    sum_partials_kernel[(triton.cdiv(n, 256),)](dw, db, dw_part, db_part, groups, n, BLOCK_G=16, BLOCK_N=256, num_warps=4)
    return dw, db
