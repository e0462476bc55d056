"""The sum of a whole array in Triton: f32, f16 or bf16 in, f32 out; i32 in, i32 out (wrapping,
as the book's i32 sums do).

A Triton program cannot wait for the others, so each program sums one block of the input and
adds its sum to the result with an atomic add: one launch, but the order in which the blocks'
sums arrive changes from run to run, and so may the last bits of the result.
"""
import torch
import triton
import triton.language as tl


# ANCHOR: sum
@triton.jit
def sum_kernel(x, out, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    values = tl.load(x + offsets, mask=offsets < n, other=0).to(out.dtype.element_ty)
    tl.atomic_add(out, tl.sum(values))


def array_sum(x, block=16384):
    acc = torch.int32 if x.dtype == torch.int32 else torch.float32
    out = torch.zeros(1, device=x.device, dtype=acc)  # the atomics add to it
    sum_kernel[(triton.cdiv(x.numel(), block),)](x, out, x.numel(), BLOCK=block, num_warps=16)
    return out
# ANCHOR_END: sum
