#!/usr/bin/env python3
"""Measure the library and tile-language versions of issue 22's operators -- max, min, argmax,
argmin, mean and variance, sum of squares (as the L2 norm) -- whole-array and row-wise, the way
`reduction ops-bench` measures the book's, in the CSV of /work/coord/peers-interface.md.

    python3 plots/op_peers.py [--out plots/data/operators] [--sizes 2^10,...,2^30]
                              [--shapes 4096x64,2^20x2^8,...] [--dtypes f32,f16,bf16,i32]
                              [--ops max,min,argmax,argmin,mean_var,sumsq] [--peers torch,cupy,...]

Peers: torch.amax / amin / argmax / argmin / var_mean (correction=0) / linalg.vector_norm, whole
and dim=1; CuPy's max and argmax with CUPY_ACCELERATORS=cub (set here, before CuPy is imported),
whole and axis=1; Triton (kernels/triton/max.py, row_mean_var.py) and TileLang
(kernels/tilelang/max.py, row_mean_var.py). A library that cannot be imported is skipped with the
reason; a shape that does not fit in the free memory (or REDUCTION_DEVICE_MEMORY) is skipped with
the reason; a peer that refuses a shape or type, or answers wrongly, is written to
<gpu-slug>-peers-refused.csv with the reason.

Checks, on the inputs of the first rotation slot, against float64 (exact for max, min and the
indices) references computed in chunks: max, min exactly; argmax, argmin exactly, the first index
of the extreme (torch's and CUB's tie rule); mean and variance and the norm within one ulp of the
output type plus 1e-5 + 2^-24·√N of the value (of the mean absolute value for the mean: an f32
accumulation of N terms). Inputs: uniform
in [-1, 1) (integers in [-2^30, 2^30) for i32), rotated through a pool larger than L2; K
back-to-back calls in a CUDA graph timed by CUDA events (or K back-to-back calls where capture
fails: CuPy, which launches on its own and allocates CUB's scratch per call), median of repeats.
"""
import importlib.util
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.dont_write_bytecode = True
import peer_harness as H  # noqa: E402

QUICK_SIZES = [1 << 20, 1 << 24, 1 << 28]  # --quick: ~20 s on an H200 with every peer (round 1: ~1 s a case)
QUICK_SHAPES = [(4096, 64), (1 << 20, 1 << 8), (1 << 14, 1 << 14), (1 << 4, 1 << 24)]
ACC_RTOL = 1e-5  # what the f32 accumulation of mean, variance and norm may lose, relative
FLOATS = ("f32", "f16", "bf16")
CHUNK = 1 << 25  # values per chunk of the float64 references


def load_kernel(relative):
    """A module of kernels/ by path, or (None, the reason it cannot be loaded)."""
    path = HERE.parent / "kernels" / relative
    spec = importlib.util.spec_from_file_location(relative.replace("/", "_").removesuffix(".py"), path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        return None, f"{relative}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    return module, None


def rounding(torch, t):
    """One ulp of t's type, relative (twice what one rounding loses): a library may round once
    inside (x·rstd, then ·γ) and once on the way out."""
    return {torch.float16: 2.0 ** -10, torch.bfloat16: 2.0 ** -7}.get(t.dtype, 0.0)


def accumulation(n):
    """What an f32 accumulation of n terms may lose, relative to the sum of their magnitudes:
    1e-5, plus 2^-24·√n for an error that grows like a random walk (2^28 terms: 1e-3)."""
    return ACC_RTOL + 2.0 ** -24 * n ** 0.5


def subnormal(torch, t):
    """Half the spacing of t's type below its smallest normal value: f16 keeps only 2^-24 steps
    there (a softmax over 2^20 values is all below it)."""
    return {torch.float16: 2.0 ** -25}.get(t.dtype, 0.0)


def references(torch, x2d, op):
    """Per-row float64 references of x2d (m × n), in chunks of at most CHUNK values:
    max/min: (value, first index); mean_var: (mean, var, mean |x|); sumsq: (sum of squares,)."""
    m, n = x2d.shape
    col = min(n, CHUNK)
    rows_per = max(1, CHUNK // n)
    dev = x2d.device

    def pieces():
        for r0 in range(0, m, rows_per):
            for c0 in range(0, n, col):
                yield r0, min(m, r0 + rows_per), c0, x2d[r0:r0 + rows_per, c0:c0 + col].double()

    if op in ("max", "min", "argmax", "argmin"):
        largest = op in ("max", "argmax")
        best = torch.full((m,), float("-inf") if largest else float("inf"), dtype=torch.float64, device=dev)
        index = torch.zeros(m, dtype=torch.int64, device=dev)
        for r0, r1, c0, c in pieces():
            v = c.amax(dim=1) if largest else c.amin(dim=1)
            cols = torch.arange(c.shape[1], device=dev, dtype=torch.int64)
            first = torch.where(c == v[:, None], cols, c.shape[1]).amin(dim=1) + c0
            better = v > best[r0:r1] if largest else v < best[r0:r1]  # strict: the earlier chunk keeps a tie
            index[r0:r1] = torch.where(better, first, index[r0:r1])
            best[r0:r1] = torch.where(better, v, best[r0:r1])
        return best, index
    if op == "mean_var":
        total = torch.zeros(m, dtype=torch.float64, device=dev)
        absolute = torch.zeros(m, dtype=torch.float64, device=dev)
        for r0, r1, _, c in pieces():
            total[r0:r1] += c.sum(dim=1)
            absolute[r0:r1] += c.abs().sum(dim=1)
        mean = total / n
        m2 = torch.zeros(m, dtype=torch.float64, device=dev)
        for r0, r1, _, c in pieces():  # two passes: no cancellation in the reference
            m2[r0:r1] += ((c - mean[r0:r1, None]) ** 2).sum(dim=1)
        return mean, m2 / n, absolute / n
    if op == "sumsq":
        total = torch.zeros(m, dtype=torch.float64, device=dev)
        for r0, r1, _, c in pieces():
            total[r0:r1] += (c * c).sum(dim=1)
        return (total,)
    raise ValueError(op)


def verdict(torch, op, got, x2d, cache=None):
    """None if got (whole-array: one value; rows: one per row) is right for x2d; else why not.
    With `cache` (a dict for one input, emptied by the caller before the next), the reference is
    computed once for all the peers of an op (max and argmax share theirs, min and argmin too)."""
    m = x2d.shape[0]

    def as_torch(t):
        return t if isinstance(t, torch.Tensor) else torch.from_dlpack(t)

    def first_bad(bad, what, have, want):
        count = int(bad.sum())
        if count == 0:
            return None
        i = int(bad.nonzero()[0])
        return f"{count} of {m} {what} wrong; row {i}: got {float(have[i])}, want {float(want[i])}"

    family = {"argmax": "max", "argmin": "min"}.get(op, op)
    if cache is None:
        ref = references(torch, x2d, op)
    else:
        if family not in cache:
            cache[family] = references(torch, x2d, family)
        ref = cache[family]
    if op in ("max", "min"):
        have = as_torch(got).double().reshape(m)
        return first_bad(have != ref[0], f"{op} values", have, ref[0])
    if op in ("argmax", "argmin"):
        have = as_torch(got).long().reshape(m)
        return first_bad(have != ref[1], "indices", have, ref[1])
    if op == "mean_var":
        mean_t, var_t = (as_torch(t) for t in got)
        mean, var, absolute = ref
        have_mean, have_var = mean_t.double().reshape(m), var_t.double().reshape(m)
        acc = accumulation(x2d.shape[1])
        bad_mean = ~((have_mean - mean).abs() <= rounding(torch, mean_t) * mean.abs() + acc * absolute)
        bad_var = ~((have_var - var).abs() <= (rounding(torch, var_t) + acc) * var)
        return first_bad(bad_mean, "means", have_mean, mean) or first_bad(bad_var, "variances", have_var, var)
    if op == "sumsq":  # the peers compute the L2 norm, sqrt(sum of squares)
        norm_t = as_torch(got)
        have = norm_t.double().reshape(m)
        want = ref[0].sqrt()
        return first_bad(~((have - want).abs() <= (rounding(torch, norm_t) + accumulation(x2d.shape[1])) * want), "norms", have, want)
    raise ValueError(op)


def build_peers(torch, args, versions, cases_by_layout, log):
    """Every peer that can be imported here, as harness Peers with a `layout` of whole or rows."""
    peers = []

    def add(kernel, title, op, layout, fn, dtypes=FLOATS + ("i32",), capture=True, refuse=None):
        p = H.Peer(kernel, title, op, fn, dtypes=dtypes, capture=capture, refuse=refuse)
        p.layout = layout
        peers.append(p)

    def var_mean(**kw):
        def fn(x):
            var, mean = torch.var_mean(x, correction=0, **kw)
            return mean, var
        return fn

    for op, name in (("max", "amax"), ("min", "amin"), ("argmax", "argmax"), ("argmin", "argmin")):
        f = getattr(torch, name)
        add(f"torch_{name}", f"torch.{name}(x) (PyTorch)", op, "whole", lambda x, f=f: f(x))
        add(f"torch_{name}_dim1", f"torch.{name}(x, dim=1) (PyTorch)", op, "rows", lambda x, f=f: f(x, dim=1))
    add("torch_var_mean", "torch.var_mean(x, correction=0) (PyTorch)", "mean_var", "whole", var_mean(), dtypes=FLOATS)
    add("torch_var_mean_dim1", "torch.var_mean(x, dim=1, correction=0) (PyTorch)", "mean_var", "rows", var_mean(dim=1), dtypes=FLOATS)
    add("torch_vector_norm", "torch.linalg.vector_norm(x), the L2 norm: sqrt of the sum of squares (PyTorch)", "sumsq", "whole",
        lambda x: torch.linalg.vector_norm(x), dtypes=FLOATS)
    add("torch_vector_norm_dim1", "torch.linalg.vector_norm(x, dim=1), row L2 norms (PyTorch)", "sumsq", "rows",
        lambda x: torch.linalg.vector_norm(x, dim=1), dtypes=FLOATS)

    want = lambda prefix: (not args.peers or any(prefix.startswith(p) or p.startswith(prefix) for p in args.peers.split(","))) \
        and not (args.skip_peers and any(prefix.startswith(p) for p in args.skip_peers.split(",")))

    if want("cupy"):
        os.environ["CUPY_ACCELERATORS"] = "cub"  # before CuPy is imported: its reductions go to CUB
        try:
            import cupy
            versions.append(f"cupy {cupy.__version__} (CUPY_ACCELERATORS=cub)")
            no_bf16 = lambda m, n, d: "CuPy has no bfloat16 type" if d == "bf16" else None
            cub = "CUPY_ACCELERATORS=cub"
            add("cupy_max", f"cupy.max(x), CUB ({cub})", "max", "whole", lambda x: cupy.max(cupy.from_dlpack(x)), capture=False, refuse=no_bf16)
            add("cupy_argmax", f"cupy.argmax(x), CUB ({cub})", "argmax", "whole", lambda x: cupy.argmax(cupy.from_dlpack(x)), capture=False, refuse=no_bf16)
            add("cupy_max_dim1", f"cupy.max(x, axis=1) ({cub}; CuPy picks CUB's segmented reduce where it can)", "max", "rows",
                lambda x: cupy.max(cupy.from_dlpack(x), axis=1), capture=False, refuse=no_bf16)
            add("cupy_argmax_dim1", f"cupy.argmax(x, axis=1) ({cub}; CuPy picks CUB where it can)", "argmax", "rows",
                lambda x: cupy.argmax(cupy.from_dlpack(x), axis=1), capture=False, refuse=no_bf16)
        except ImportError as e:
            log(f"CuPy skipped: cannot be imported: {e}")

    if want("triton"):
        tr_max, why = load_kernel("triton/max.py")
        tr_mv, why_mv = load_kernel("triton/row_mean_var.py")
        if tr_max is None or tr_mv is None:
            log(f"Triton skipped: {why or why_mv}")
        else:
            import triton
            versions.append(f"triton {triton.__version__}")
            add("triton_max", "Triton max (tl.max + tl.atomic_max, f32 result)", "max", "whole", tr_max.array_max)
            add("triton_row_max", "Triton row max (tl.max over tiles)", "max", "rows", tr_max.row_max)
            add("triton_row_mean_var", "Triton row mean/var (Welford per lane, Chan's merge by tl.reduce)", "mean_var", "rows",
                tr_mv.row_mean_var, dtypes=FLOATS)

    if want("tilelang"):
        tl_max, why = load_kernel("tilelang/max.py")
        tl_mv, why_mv = load_kernel("tilelang/row_mean_var.py")
        if tl_max is None or tl_mv is None:
            log(f"TileLang skipped: {why or why_mv}")
        else:
            import tilelang
            versions.append(f"tilelang {tilelang.__version__}")
            names = {d: H.DTYPES[d] for d in args.dtypes}
            shapes = cases_by_layout["rows"]
            compiled = {}
            jobs = []
            if "max" in args.ops:
                jobs += [(("max", m, n, d), tl_max.row_max(m, n, names[d], *tl_max.tile_shape(n)), [1]) for m, n in shapes for d in names]
            if "mean_var" in args.ops:
                jobs += [(("mean_var", m, n, d), tl_mv.row_mean_var(m, n, names[d], *tl_mv.tile_shape(n)), [1, 2])
                         for m, n in shapes for d in names if d in FLOATS]
            for out_idx in ([1], [1, 2]):
                batch = [(key, f) for key, f, o in jobs if o == out_idx]
                if batch:
                    try:
                        kernels = tilelang.par_compile([f for _, f in batch], out_idx=out_idx)
                        compiled.update(zip([k for k, _ in batch], kernels))
                    except Exception as e:
                        log(f"TileLang row kernels did not compile: {type(e).__name__}: {str(e)[:300]}")
            arrays = {}

            def whole_max(x):
                d = H.DTYPES_BY_TORCH[x.dtype]
                if d not in arrays:
                    arrays[d] = tl_max.ArrayMax(H.DTYPES[d])
                return arrays[d](x)

            def rows_kernel(op):
                def fn(x):
                    d = H.DTYPES_BY_TORCH[x.dtype]
                    key = (op, x.shape[0], x.shape[1], d)
                    if key not in compiled:
                        raise RuntimeError(f"no compiled TileLang kernel for {key}")
                    return compiled[key](x)
                return fn
            add("tilelang_max", "TileLang max (passes of T.reduce_max)", "max", "whole", whole_max)
            add("tilelang_row_max", "TileLang row max (T.reduce_max over tiles)", "max", "rows", rows_kernel("max"))
            add("tilelang_row_mean_var", "TileLang row mean/var (per-tile mean and M2, Chan's merge)", "mean_var", "rows",
                rows_kernel("mean_var"), dtypes=FLOATS)
    return peers


def main():
    parser = H.base_parser(__doc__, H.OPERATOR_OPS, ["f32", "f16", "bf16", "i32"])
    parser.add_argument("--sizes", type=H.parse_sizes, default=[1 << k for k in range(10, 31)],
                        help="whole-array sizes (default 2^10 ... 2^30)")
    parser.add_argument("--shapes", type=H.parse_shapes, default=None,
                        help="MxN,... for the row-wise ones (default: those of reduction rows-bench)")
    args = parser.parse_args()
    if args.self_test:
        return H.run_self_test(self_test)
    if args.quick:
        args.sizes, args.shapes = QUICK_SIZES, QUICK_SHAPES
        args.dtypes = [d for d in args.dtypes if d in ("f32", "bf16")] or args.dtypes
    torch = H.import_torch()
    H.DTYPES_BY_TORCH = {getattr(torch, v): k for k, v in H.DTYPES.items()}
    out_dir = args.out or "plots/data/operators"
    shapes = args.shapes if args.shapes is not None else [tuple(s) for s in H.peers.row_shapes()]
    cases_by_layout = {"whole": [(1, n) for n in args.sizes], "rows": shapes}
    log = lambda s: print(s, file=sys.stderr, flush=True)
    versions = [f"torch {torch.__version__}"]
    all_peers = build_peers(torch, args, versions, cases_by_layout, log)
    chosen = H.select(all_peers, args)
    memory = H.Memory(torch)
    budget = H.Budget(args.budget_s)
    rows, refused = [], []
    for dtype in args.dtypes:
        cases = sorted({c for p in chosen if p.dtypes is None or dtype in p.dtypes for c in cases_by_layout[p.layout]},
                       key=lambda c: c[0] * c[1])
        if not cases:
            continue
        size = H.SIZES[dtype]
        # The pool: for the largest case that fits with room for the references (~1 GiB).
        fits = H.fitting(cases, lambda m, n: 2 * m * n * size + (1 << 30), memory, log, dtype)
        if not fits:
            continue
        pool = H.Pool(torch, dtype, H.pool_length(torch, fits, dtype))
        for m, n in fits:
            if not budget.allows(f"{dtype} {m}x{n}"):
                continue
            refs = {}  # one float64 reference a case, shared by the peers of an op
            for peer in chosen:
                if (peer.dtypes is not None and dtype not in peer.dtypes) or (m, n) not in cases_by_layout[peer.layout]:
                    continue
                shape = (n,) if peer.layout == "whole" else (m, n)
                slots, _ = pool.slots(m * n)
                inputs_for = lambda j, shape=shape, count=m * n: (pool.view(count, j, shape),)
                check = lambda got, inputs, op=peer.op: verdict(torch, op, got, inputs[0].reshape(m, n), refs)
                H.measure(torch, peer, (m, n, dtype), inputs_for, check, m * n * size + (1 << 30), memory,
                          H.op_bytes(peer.op, dtype, m, n), slots, rows, refused, log)
            H.write(out_dir, torch, versions, H.command_line(), rows, refused, quiet=True)
            del refs
        del pool
        torch.cuda.empty_cache()
    budget.report(log)
    H.write(out_dir, torch, versions, H.command_line(), rows, refused)
    return 0


def self_test(expect):
    """GPU-free checks of this script's own choices."""
    parser = H.base_parser(__doc__, H.OPERATOR_OPS, ["f32"])
    parser.add_argument("--sizes", type=H.parse_sizes, default=[])
    parser.add_argument("--shapes", type=H.parse_shapes, default=None)
    args = parser.parse_args(["--ops", "argmax,mean_var", "--dtypes", "bf16,i32", "--sizes", "2^10,2^30", "--shapes", "4096x64"])
    expect(args.ops == ["argmax", "mean_var"] and args.dtypes == ["bf16", "i32"] and args.sizes == [1024, 1 << 30]
           and args.shapes == [(4096, 64)], "the command line of peers-interface.md parses")
    for bad in (["--ops", "softmax"], ["--dtypes", "f64"], ["--sizes", "2^x"]):
        try:
            with open(os.devnull, "w") as null:
                stderr, sys.stderr = sys.stderr, null
                try:
                    parser.parse_args(bad)
                finally:
                    sys.stderr = stderr
            expect(False, f"{' '.join(bad)} is refused")
        except SystemExit as e:
            expect(e.code == 2, f"{' '.join(bad)} is refused with status 2")
    expect(H.op_bytes("sumsq", "f16", 1, 1 << 20) == 2 * (1 << 20) + 2, "the norm reads n values and writes one")
    expect(parser.parse_args(["--quick", "--budget-s", "60"]).budget_s == 60.0 and len(QUICK_SIZES) + len(QUICK_SHAPES) == 7,
           "--quick and --budget-s parse")
    expect(H.op_bytes("argmin", "i32", 4096, 64) == 4 * 4096 * 64 + 8 * 4096, "row argmin writes int64 indices")


if __name__ == "__main__":
    sys.exit(main())
