#!/usr/bin/env python3
"""The tile-language kernels (kernels/tilelang/, kernels/triton/) checked against a float64
reference on the GPU, at the shapes where reductions break. Run by tests/tile_languages.rs,
one process per (language, kernel):

    python3 tests/tile_languages.py {tilelang,triton} {row_sum,sum}

Prints one JSON object per line: {"check": ..., "ok": true|false, "detail": ...}, or a single
{"unavailable": reason} when the language, PyTorch or a CUDA GPU is missing. Exit status 0
when it ran (whatever the checks said), 2 when it could not start.

Inputs: exact ones (integers from -8 to 8, fewer for long rows, whose f32 sums are exact, so the result must match
bit for bit) and random ones in [-1, 1) (within the f32 error bound of the float64 sum), in
f32, f16 and bf16. Shapes: N = 1, 31, 2^k - 1, 2^k, 2^k + 1, M = 1, and tiles that do not
divide the shape; one row of 2^20 + 1 values and arrays up to 2^24 + 1.
"""
import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROW_SHAPES = [(1, 1), (1, 31), (37, 1), (37, 31), (3, 255), (64, 256), (5, 257), (1, 1023), (33, 1025), (17, 4097),
              (1000, 64), (1, (1 << 20) + 1)]
SIZES = [1, 31, 1023, 1025, (1 << 14) - 1, 1 << 14, (1 << 14) + 1, (1 << 20) + 1, (1 << 24) + 1]
DTYPES = ["float32", "float16", "bfloat16"]


def say(**record):
    print(json.dumps(record), flush=True)


def load(relative):
    path = ROOT / "kernels" / relative
    spec = importlib.util.spec_from_file_location(relative.replace("/", "_").removesuffix(".py"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def inputs(torch, shape, dtype, seed):
    """(name, tensor, exact): integers small enough that every partial sum is exact in f32 (at
    most 8, and at most 2^24 / N), then random values in [-1, 1)."""
    gen = torch.Generator(device="cuda").manual_seed(seed)
    limit = max(1, min(8, (1 << 24) // shape[-1]))
    ints = torch.randint(-limit, limit + 1, shape, device="cuda", generator=gen).to(getattr(torch, dtype))
    rand = (torch.rand(shape, device="cuda", generator=gen) * 2 - 1).to(getattr(torch, dtype))
    return [("exact", ints, True), ("random", rand, False)]


def verdict(torch, got, x, exact):
    """None if right; otherwise what is wrong. The reduction is along the last dimension."""
    x64 = x.double()
    want = x64.sum(dim=-1)
    got = got.double().reshape(want.shape)
    if exact:
        bad = got != want
    else:
        n = x.shape[-1]
        bound = ((n - 1) * 2.0 ** -24 + 4 * 2.0 ** -53) * x64.abs().sum(dim=-1)
        bad = ~((got - want).abs() <= bound)
    count = int(bad.sum())
    if count == 0:
        return None
    first = int(bad.reshape(-1).nonzero()[0])
    return f"{count} of {bad.numel()} sums wrong; the first: got {float(got.reshape(-1)[first])}, want {float(want.reshape(-1)[first])}"


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("tilelang", "triton") or sys.argv[2] not in ("row_sum", "sum"):
        print(__doc__, file=sys.stderr)
        return 2
    language, kernel = sys.argv[1:]
    try:
        import torch
    except ImportError as e:
        say(unavailable=f"PyTorch cannot be imported: {e}")
        return 0
    if not torch.cuda.is_available():
        say(unavailable="no CUDA GPU visible to PyTorch")
        return 0
    try:
        module = load(f"{language}/{kernel}.py")
    except Exception as e:
        say(unavailable=f"{language} cannot be imported: {type(e).__name__}: {e}")
        return 0

    if kernel == "row_sum" and language == "tilelang":
        import tilelang
        # Rows of any number: one compile per (N, type), all at once on every core.
        keys = sorted({(n, d) for _, n in ROW_SHAPES for d in DTYPES})
        funcs = [module.row_sum(module.T.dynamic("M"), n, d, *module.tile_shape(n)) for n, d in keys]
        compiled = dict(zip(keys, tilelang.par_compile(funcs, out_idx=[1])))

        def fn(x, dtype):
            return compiled[(x.shape[1], dtype)](x)
    elif kernel == "row_sum":
        def fn(x, dtype):
            return module.row_sum(x)
    elif language == "tilelang":
        sums = {d: module.ArraySum(d) for d in DTYPES}

        def fn(x, dtype):
            return sums[dtype](x)
    else:
        def fn(x, dtype):
            return module.array_sum(x)

    shapes = ROW_SHAPES if kernel == "row_sum" else [(n,) for n in SIZES]
    for dtype in DTYPES:
        for shape in shapes:
            for name, x, exact in inputs(torch, shape, dtype, seed=len(shape) * 1000 + shape[-1]):
                check = f"{dtype} {'x'.join(map(str, shape))} {name}"
                try:
                    why = verdict(torch, fn(x, dtype), x, exact)
                except Exception as e:
                    why = f"raised {type(e).__name__}: {str(e)[:300]}"
                say(check=check, ok=why is None, detail=why or "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
