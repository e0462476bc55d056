#!/usr/bin/env python3
"""The tile-language kernels (kernels/tilelang/, kernels/triton/) checked against a float64
reference on the GPU, at the shapes where reductions break. Run by tests/tile_languages.rs,
one process per (language, kernel):

    python3 tests/tile_languages.py {tilelang,triton} KERNEL
    KERNEL: row_sum sum max row_max row_mean_var softmax log_softmax layer_norm rms_norm
            cross_entropy, and for Triton softmax_bwd layer_norm_bwd_gamma_beta

Prints one JSON object per line: {"check": ..., "ok": true|false, "detail": ...}, or a single
{"unavailable": reason} when the language, PyTorch or a CUDA GPU is missing (or the kernel is not
written in that language). Exit status 0 when it ran (whatever the checks said), 2 when it could
not start.

Sums: exact inputs (integers from -8 to 8, fewer for long rows, whose f32 sums are exact, so the
result must match bit for bit) and random ones in [-1, 1) (within the f32 error bound of the
float64 sum). max: exact against float64, on those and on all-negative inputs (a max that starts
from 0 returns 0 there), in i32 too. Mean and variance, softmax, the norms, cross-entropy and the
backward ops: the bounds of plots/op_peers.py and plots/dl_peers.py, whose checks these are. In
f32, f16 and bf16; shapes N = 1, 31, 2^k - 1, 2^k, 2^k + 1, M = 1, tiles that do not divide the
shape, one row of 2^20 + 1 values and arrays up to 2^24 + 1. For each kernel one planted bug (an
output changed as a known mistake would change it) must be caught: the checks can fail.
"""
import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "plots"))
sys.dont_write_bytecode = True
ROW_SHAPES = [(1, 1), (1, 31), (37, 1), (37, 31), (3, 255), (64, 256), (5, 257), (1, 1023), (33, 1025), (17, 4097),
              (1000, 64), (1, (1 << 20) + 1)]
SIZES = [1, 31, 1023, 1025, (1 << 14) - 1, 1 << 14, (1 << 14) + 1, (1 << 20) + 1, (1 << 24) + 1]
DTYPES = ["float32", "float16", "bfloat16"]
SHORT = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "int32": "i32"}
ROW_OPS = ("softmax", "log_softmax", "layer_norm", "rms_norm", "cross_entropy", "softmax_bwd", "layer_norm_bwd_gamma_beta")
KERNELS = {
    "tilelang": ("row_sum", "sum", "max", "row_max", "row_mean_var", "softmax", "log_softmax", "layer_norm", "rms_norm", "cross_entropy"),
    "triton": ("row_sum", "sum", "max", "row_max", "row_mean_var") + ROW_OPS,
}
FILES = {"max": "max", "row_max": "max", "row_mean_var": "row_mean_var", "row_sum": "row_sum", "sum": "sum",
         "softmax": "softmax", "log_softmax": "softmax", "softmax_bwd": "softmax", "cross_entropy": "cross_entropy",
         "layer_norm": "norms", "rms_norm": "norms", "layer_norm_bwd_gamma_beta": "norms"}


def say(**record):
    print(json.dumps(record), flush=True)


def load(relative):
    path = ROOT / "kernels" / relative
    spec = importlib.util.spec_from_file_location(relative.replace("/", "_").removesuffix(".py"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def inputs(torch, shape, dtype, seed, negative=False):
    """(name, tensor, exact): integers small enough that every partial sum is exact in f32 (at
    most 8, and at most 2^24 / N), then random values in [-1, 1); with negative, values in [-2, -1)."""
    gen = torch.Generator(device="cuda").manual_seed(seed)
    limit = max(1, min(8, (1 << 24) // shape[-1]))
    if dtype == "int32":
        big = torch.randint(-(1 << 30), 1 << 30, shape, device="cuda", generator=gen, dtype=torch.int32)
        return [("random", big, True), ("negative", -(big.abs() + 1), True)]
    ints = torch.randint(-limit, limit + 1, shape, device="cuda", generator=gen).to(getattr(torch, dtype))
    rand = (torch.rand(shape, device="cuda", generator=gen) * 2 - 1).to(getattr(torch, dtype))
    cases = [("exact", ints, True), ("random", rand, False)]
    if negative:
        cases.append(("negative", (torch.rand(shape, device="cuda", generator=gen) - 2).to(getattr(torch, dtype)), True))
    return cases


def sum_verdict(torch, got, x, exact):
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


def compiled_tilelang(module, kernel, shapes, dtypes):
    """TileLang row kernels for any number of rows: one compile per (N, type), all at once."""
    import tilelang
    T = module.T
    keys = sorted({(n, d) for _, n in shapes for d in dtypes})
    if kernel == "row_sum":
        funcs, out_idx = [module.row_sum(T.dynamic("M"), n, d, *module.tile_shape(n)) for n, d in keys], [1]
    elif kernel == "row_max":
        funcs, out_idx = [module.row_max(T.dynamic("M"), n, d, *module.tile_shape(n)) for n, d in keys], [1]
    elif kernel == "row_mean_var":
        funcs, out_idx = [module.row_mean_var(T.dynamic("M"), n, d, *module.tile_shape(n)) for n, d in keys], [1, 2]
    elif kernel in ("softmax", "log_softmax"):
        funcs, out_idx = [module.softmax(T.dynamic("M"), n, d, *module.tile_shape(n), log=kernel == "log_softmax") for n, d in keys], [1]
    elif kernel == "cross_entropy":
        funcs, out_idx = [module.row_cross_entropy(T.dynamic("M"), n, d, *module.tile_shape(n)) for n, d in keys], [2]
    else:
        rms = kernel == "rms_norm"
        funcs, out_idx = [module.layer_norm(T.dynamic("M"), n, d, *module.tile_shape(n), eps=1e-6 if rms else 1e-5, rms=rms)
                          for n, d in keys], [3, 4, 5]
    return dict(zip(keys, tilelang.par_compile(funcs, out_idx=out_idx)))


def row_op_inputs(torch, op, x):
    """The arguments of a deep-learning row op built around x (as plots/dl_peers.py builds them)."""
    m, n = x.shape
    gen = torch.Generator(device="cuda").manual_seed(m * 7919 + n)
    if op in ("softmax", "log_softmax"):
        return (x,)
    w = (torch.rand(n, device="cuda", generator=gen) + 0.5).to(x.dtype)
    if op == "layer_norm":
        return (x, w, (torch.rand(n, device="cuda", generator=gen) - 0.5).to(x.dtype))
    if op == "rms_norm":
        return (x, w)
    if op == "cross_entropy":
        t = torch.randint(0, n, (m,), device="cuda", generator=gen)
        t[torch.rand(m, device="cuda", generator=gen) < 1 / 16] = -100
        t[0] = 0  # at least one live row
        return (x, t)
    dy = (torch.rand((m, n), device="cuda", generator=gen) * 2 - 1).to(x.dtype)
    if op == "softmax_bwd":
        return (torch.softmax(x.double(), dim=1).to(x.dtype), dy)
    x64 = x.double()
    mean = x64.mean(dim=1)
    rstd = torch.rsqrt(((x64 - mean[:, None]) ** 2).mean(dim=1) + 1e-5)
    return (dy, x, mean.float(), rstd.float())


def plant(torch, kernel, got, x):
    """The output as a known mistake would leave it, for a check that must fail."""
    if kernel in ("max", "row_max"):  # the identity 0: on all-negative inputs the max comes out 0
        return torch.zeros_like(got)
    if kernel == "row_mean_var":  # the final division by the count left out: M2 returned as the variance
        mean, var = got
        return mean, var * x.shape[-1]
    if kernel in ("row_sum", "sum"):  # an element of value 1 counted twice
        return got + 1
    if kernel == "cross_entropy":  # ignore_index ignored: the mean over every row
        return got * 16 / 15
    if kernel == "layer_norm_bwd_gamma_beta":  # dγ and dβ swapped
        return got[1], got[0]
    y = got[0] if isinstance(got, (tuple, list)) else got
    bad = y.clone()
    bad.reshape(-1)[-1] += 1  # a row's tail written wrong
    return (bad,) + tuple(got[1:]) if isinstance(got, (tuple, list)) else bad


def source_file(language, kernel):
    """The file of kernels/<language>/ that holds the kernel."""
    if language == "tilelang" and kernel == "cross_entropy":
        return "softmax"  # TileLang's cross-entropy shares the online softmax's macro
    return FILES[kernel]


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in KERNELS or sys.argv[2] not in set(KERNELS["triton"]):
        print(__doc__, file=sys.stderr)
        return 2
    language, kernel = sys.argv[1:]
    if kernel not in KERNELS[language]:
        say(unavailable=f"no {kernel} is written in {language} (kernels/{language}/)")
        return 0
    try:
        import torch
    except ImportError as e:
        say(unavailable=f"PyTorch cannot be imported: {e}")
        return 0
    if not torch.cuda.is_available():
        say(unavailable="no CUDA GPU visible to PyTorch")
        return 0
    try:
        module = load(f"{language}/{source_file(language, kernel)}.py")
    except Exception as e:
        say(unavailable=f"{language} cannot be imported: {type(e).__name__}: {e}")
        return 0
    import op_peers
    import dl_peers

    dtypes = DTYPES + (["int32"] if kernel in ("max", "row_max") else [])
    whole = kernel in ("sum", "max")
    shapes = [(n,) for n in SIZES] if whole else ROW_SHAPES

    if language == "tilelang" and not whole:
        compiled = compiled_tilelang(module, kernel, shapes, dtypes)

        def run(args, dtype):
            x = args[0]
            k = compiled[(x.shape[1], dtype)]
            if kernel in ("layer_norm", "rms_norm"):
                return k(x, args[1], args[2] if kernel == "layer_norm" else args[1])[0]
            if kernel == "cross_entropy":
                loss = k(x, args[1])
                return loss.sum() / (args[1] != -100).sum()
            return k(x)
    elif language == "tilelang":
        whole_kernels = {d: (module.ArraySum(d) if kernel == "sum" else module.ArrayMax(d)) for d in dtypes}

        def run(args, dtype):
            return whole_kernels[dtype](args[0])
    else:
        fn = {"row_sum": module.row_sum if kernel == "row_sum" else None, "sum": getattr(module, "array_sum", None),
              "max": getattr(module, "array_max", None), "row_max": getattr(module, "row_max", None),
              "row_mean_var": getattr(module, "row_mean_var", None), "softmax": getattr(module, "softmax", None),
              "log_softmax": getattr(module, "log_softmax", None), "softmax_bwd": getattr(module, "softmax_bwd", None),
              "cross_entropy": getattr(module, "cross_entropy", None), "layer_norm": getattr(module, "layer_norm", None),
              "rms_norm": getattr(module, "rms_norm", None),
              "layer_norm_bwd_gamma_beta": getattr(module, "layer_norm_bwd_gamma_beta", None)}[kernel]

        def run(args, dtype):
            out = fn(*args)
            return out[0] if kernel in ("layer_norm", "rms_norm") else out

    def judge(got, args, exact, x):
        if kernel in ("row_sum", "sum"):
            return sum_verdict(torch, got, x, exact)
        if kernel in ("max", "row_max", "row_mean_var"):
            op = {"max": "max", "row_max": "max", "row_mean_var": "mean_var"}[kernel]
            return op_peers.verdict(torch, op, got, x.reshape(-1, x.shape[-1]))
        return dl_peers.verdict(torch, kernel, got, args)

    planted = {}
    for dtype in dtypes:
        for shape in shapes:
            for name, x, exact in inputs(torch, shape, dtype, seed=len(shape) * 1000 + shape[-1], negative=kernel in ("max", "row_max")):
                args = row_op_inputs(torch, kernel, x) if kernel in ROW_OPS else (x,)
                check = f"{dtype} {'x'.join(map(str, shape))} {name}"
                try:
                    got = run(args, dtype)
                    why = judge(got, args, exact, x)
                except Exception as e:
                    got, why = None, f"raised {type(e).__name__}: {str(e)[:300]}"
                say(check=check, ok=why is None, detail=why or "")
                # One planted bug a type, at the largest shape where the bug shows.
                shows = name == {"max": "negative", "row_max": "negative", "sum": "exact", "row_sum": "exact"}.get(kernel, "random")
                if got is not None and why is None and shows and x.numel() > 1000:
                    planted[dtype] = (check, plant(torch, kernel, got, x), args, exact, x)
    for dtype, (check, bad, args, exact, x) in planted.items():
        why = judge(bad, args, exact, x)
        say(check=f"planted bug caught: {check}", ok=why is not None, detail=why or "the check passed a planted bug")
    if not planted:
        say(check="planted bug", ok=False, detail="no shape to plant a bug in (every check failed?)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
