"""The largest value of a whole array, and of each row, in Triton: f32, f16, bf16 or i32 in.

The identity of max is -inf (the smallest int32 for integers), not 0: masked lanes load it, so a
tail past N or a row of negative values cannot come out as 0. Floats are compared in f32 (every
f16 and bf16 value is exactly an f32, so the result is exact); the whole-array max is returned in
f32 (i32 for integers), the row maxima in the input's type.

Whole array: one program per block of BLOCK values, each combining its block's max into the
result with an atomic max (Triton implements the f32 atomic max with integer atomics on the
value's bits). Rows: one program per ROWS rows, walking them BLOCK_N columns at a time.
"""
import torch
import triton
import triton.language as tl

INT32_MIN = -(1 << 31)


# ANCHOR: max
@triton.jit
def max_kernel(x, out, n, BLOCK: tl.constexpr, IS_FLOAT: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    if IS_FLOAT:
        values = tl.load(x + offsets, mask=offsets < n, other=float("-inf")).to(tl.float32)
    else:
        values = tl.load(x + offsets, mask=offsets < n, other=-2147483648)
    tl.atomic_max(out, tl.max(values, axis=0))


def array_max(x, block=16384):
    """max(x) for a contiguous x: a 1-element tensor, f32 for floats, i32 for i32."""
    is_float = x.dtype.is_floating_point
    out = torch.full((1,), float("-inf") if is_float else INT32_MIN, device=x.device,
                     dtype=torch.float32 if is_float else torch.int32)
    max_kernel[(triton.cdiv(x.numel(), block),)](x, out, x.numel(), BLOCK=block, IS_FLOAT=is_float, num_warps=16)
    return out
# ANCHOR_END: max


# ANCHOR: row_max
@triton.jit
def row_max_kernel(x, out, M, N, stride, ROWS: tl.constexpr, BLOCK_N: tl.constexpr, IS_FLOAT: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    if IS_FLOAT:
        acc = tl.full((ROWS, BLOCK_N), float("-inf"), dtype=tl.float32)
    else:
        acc = tl.full((ROWS, BLOCK_N), -2147483648, dtype=tl.int32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        if IS_FLOAT:
            v = tl.load(x + rows[:, None] * stride + cols[None, :], mask=mask, other=float("-inf")).to(tl.float32)
        else:
            v = tl.load(x + rows[:, None] * stride + cols[None, :], mask=mask, other=-2147483648)
        acc = tl.maximum(acc, v)
    tl.store(out + rows, tl.max(acc, axis=1).to(out.dtype.element_ty), mask=rows < M)


def row_max(x):
    """The max of each row of a 2-D x, in x's type."""
    m, n = x.shape
    block_n = min(4096, triton.next_power_of_2(n))  # tiles of 4096 values, as wide as a row allows
    rows = 4096 // block_n
    out = torch.empty(m, device=x.device, dtype=x.dtype)
    row_max_kernel[(triton.cdiv(m, rows),)](x, out, m, n, x.stride(0), ROWS=rows, BLOCK_N=block_n,
                                            IS_FLOAT=x.dtype.is_floating_point, num_warps=4)
    return out
# ANCHOR_END: row_max
