#!/usr/bin/env python3
"""Measure the row sums and whole-array sums written in tile languages -- TileLang
(kernels/tilelang/) and Triton (kernels/triton/) -- beside torch.sum, the way `reduction
rows-bench` and `reduction bench` measure the book's kernels, in the same CSV format.

    python3 plots/tile_peers.py [--rows-out plots/data/rows] [--sums-out plots/data/tile]
                                [--shapes 4096x64,2^20x2^8,...] [--sizes 2^10,...,2^30] [--dtypes f32,i32]
                                [--no-sums] [--no-rows]

Row sums go to <rows-out>/<gpu-slug>-peers.csv (n is the row length N, bytes the M*N*size
read), merged with rows-bench's <gpu-slug>.csv when the chapter is drawn: TileLang and Triton
on f32, torch.sum(x, dim=1) on f32, f16 and bf16 (f32 out). Whole-array sums (TileLang and
Triton, on the --dtypes: f32 by default, i32 summed in i32) go to <sums-out>/<gpu-slug>.csv, and the CUDA that TileLang generated for the row sum to
<sums-out>/tilelang_row_sum.cu.

Method, as in plots/peers.py (whose timing it uses): each result is checked against a float64
sum of the same input before it is timed; inputs rotate through a pool larger than L2; K
back-to-back calls are captured into a CUDA graph and timed with CUDA events (or timed as K
back-to-back calls where capture fails, which the `method` column then says); the median of
many repeats is kept. A language that cannot be imported is skipped with the reason. Device
memory as in plots/peers.py: the budget is what torch.cuda.mem_get_info() reports free, or less
with REDUCTION_DEVICE_MEMORY; each input pool takes at most 45% of it, the float64 checks go a
chunk at a time, and a shape or size that does not fit is skipped with the reason.
"""
import argparse
import importlib.util
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.dont_write_bytecode = True  # no plots/__pycache__ beside the data
import peers  # noqa: E402  (the timing, the CSV row and the header are shared)

DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}
SUM_DTYPES = {"f32": "float32", "i32": "int32"}  # the whole-array sums, as `reduction bench`'s


def load_kernel(relative):
    """A module of kernels/ by path (kernels/tilelang/row_sum.py, ...), or the reason it is not."""
    path = HERE.parent / "kernels" / relative
    spec = importlib.util.spec_from_file_location(relative.replace("/", "_").removesuffix(".py"), path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # ImportError, or a library that fails on import
        return None, f"{relative}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    return module, None


def row_references(torch, x):
    """(float64 sums, float64 sums of |x|) of the rows of an M x N tensor, a few rows at a time."""
    m, n = x.shape
    exact = torch.empty(m, device=x.device, dtype=torch.float64)
    magnitude = torch.empty(m, device=x.device, dtype=torch.float64)
    step = max(1, peers.CHECK_CHUNK // max(n, 1))
    for r in range(0, m, step):
        rows = x[r:r + step].double()
        exact[r:r + step] = rows.sum(dim=-1)
        magnitude[r:r + step] = rows.abs().sum(dim=-1)
    return exact, magnitude


def within_bound(got, exact, magnitude, n):
    """How many rows (or whole sums) of got are off their float64 sums by more than the f32 bound."""
    bound = ((n - 1) * 2.0 ** -24 + 4 * 2.0 ** -53) * magnitude
    return int((~((got.double() - exact).abs() <= bound)).sum())


def measure_rows(torch, shapes, peers_by_dtype, budget, why):
    """Each (name, title, fn) of peers_by_dtype[dtype] at each shape: checked, then timed. A shape
    whose input does not fit in the pool (POOL_SHARE of the budget) is skipped with the reason."""
    rows = []
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 60 << 20)
    oom = peers.out_of_memory(torch)
    for dtype, row_peers in peers_by_dtype.items():
        tdtype = getattr(torch, DTYPES[dtype])
        size = torch.tensor([], dtype=tdtype).element_size()
        pool_len, too_large = peers.plan_pool([m * n for m, n in shapes], size, l2, budget)
        fitting = []
        for m, n in shapes:
            if m * n in too_large:
                print(f"skipped {dtype} {m}x{n}: {peers.skip_reason(size * m * n, pool_len, size, why)}", flush=True)
            else:
                fitting.append((m, n))
        try:
            pool = peers.random_pool(torch, pool_len, tdtype, 2007)
        except oom as e:  # planned not to happen; every shape of this type skipped, with why
            torch.cuda.empty_cache()
            for m, n in fitting:
                print(f"skipped {dtype} {m}x{n}: out of device memory for the pool ({why}): {str(e).splitlines()[0][:160]}", flush=True)
            continue
        for m, n in fitting:
            total = m * n
            step = -(-total // 256) * 256
            slots = (pool_len - total) // step + 1
            x0 = pool[:total].view(m, n)
            try:
                exact, magnitude = row_references(torch, x0)
            except oom as e:
                torch.cuda.empty_cache()
                print(f"skipped {dtype} {m}x{n}: out of device memory for its check ({why}): {str(e).splitlines()[0][:160]}", flush=True)
                continue
            for name, title, fn in row_peers:
                try:
                    wrong = within_bound(fn(x0, m, n), exact, magnitude, n)
                except oom as e:
                    torch.cuda.empty_cache()
                    print(f"skipped {name} {dtype} {m}x{n}: out of device memory ({why}): {str(e).splitlines()[0][:160]}", flush=True)
                    continue
                except Exception as e:
                    print(f"{name} {dtype} {m}x{n}: failed: {type(e).__name__}: {str(e)[:200]}", file=sys.stderr)
                    continue
                if wrong:
                    print(f"{name} {dtype} {m}x{n}: {wrong} of {m} rows exceed the bound; not timed", file=sys.stderr)
                    continue
                out = [None]

                def enqueue(j, fn=fn, m=m, n=n, total=total, step=step, slots=slots):
                    o = (j % slots) * step
                    out[0] = fn(pool[o:o + total].view(m, n), m, n)

                try:
                    times, ops, method = peers.time_graph(torch, enqueue, True)
                except oom as e:
                    out[0] = None
                    torch.cuda.empty_cache()
                    print(f"skipped {name} {dtype} {m}x{n}: out of device memory while timing ({why}): {str(e).splitlines()[0][:160]}", flush=True)
                    continue
                median = statistics.median(times)
                nbytes = size * total
                rows.append(peers.csv_row(name, title, dtype, n, median, times, nbytes, min(ops, slots) * nbytes, method))
                print(f"{name:17} {dtype:4} {m:>8} x {n:<9} {median:10.2f} µs {nbytes / median / 1e3:8.1f} GB/s  ({method})", flush=True)
            del exact, magnitude
        del pool
        torch.cuda.empty_cache()
    return rows


def measure_sums(torch, sizes, sum_peers, budget, why, dtype="f32"):
    """Each (name, title, fn) of sum_peers on `dtype` arrays of each size: checked, then timed.
    f32: random values, each sum within the f32 bound of its float64 sum; i32: nonzero integers
    small enough that every partial sum is exact (plots/peers.py's pool), each sum exact. A size
    that does not fit in the pool (POOL_SHARE of the budget) is skipped with the reason."""
    rows = []
    props = torch.cuda.get_device_properties(0)
    pool_len, too_large = peers.plan_pool(sizes, 4, getattr(props, "L2_cache_size", 60 << 20), budget)
    for n in too_large:
        print(f"skipped whole-array sums {dtype} n={n}: {peers.skip_reason(4 * n, pool_len, 4, why)}", flush=True)
    sizes = [n for n in sizes if n not in too_large]
    oom = peers.out_of_memory(torch)
    try:
        if dtype == "i32":
            pool, _ = peers.exact_pool(torch, dtype, pool_len, max(sizes, default=1))
        else:
            pool = peers.random_pool(torch, pool_len, torch.float32, 2007)
    except oom as e:  # planned not to happen; every size skipped, with why
        torch.cuda.empty_cache()
        for n in sizes:
            print(f"skipped whole-array sums {dtype} n={n}: out of device memory for the pool ({why}): {str(e).splitlines()[0][:160]}", flush=True)
        return rows
    references = {}
    for name, title, fn in sum_peers:
        for n in sizes:
            stride = -(-n // 256) * 256
            slots = (pool_len - n) // stride + 1
            x0 = pool[:n]
            out = [None]

            def enqueue(j, fn=fn, n=n, stride=stride, slots=slots):
                o = (j % slots) * stride
                out[0] = fn(pool[o:o + n])

            try:
                if n not in references:
                    references[n] = peers.float64_sums(x0)
                exact, magnitude = references[n]
                got = fn(x0).reshape(()).double()
                if dtype == "i32":
                    wrong = int(float(got) != exact)  # every partial sum is exact
                else:
                    wrong = int(not abs(float(got) - exact) <= ((n - 1) * 2.0 ** -24 + 4 * 2.0 ** -53) * magnitude)
                if wrong:
                    print(f"{name} {dtype} n={n}: {float(got)} is off its float64 sum {exact} by more than the bound; not timed", file=sys.stderr)
                    continue
                times, ops, method = peers.time_graph(torch, enqueue, True)
            except oom as e:
                out[0] = None
                torch.cuda.empty_cache()
                print(f"skipped {name} {dtype} n={n}: out of device memory ({why}): {str(e).splitlines()[0][:160]}", flush=True)
                continue
            except Exception as e:
                print(f"{name} {dtype} n={n}: failed: {type(e).__name__}: {str(e)[:200]}", file=sys.stderr)
                continue
            median = statistics.median(times)
            rows.append(peers.csv_row(name, title, dtype, n, median, times, 4 * n, min(ops, slots) * 4 * n, method))
            print(f"{name:17} {dtype} n=2^{n.bit_length() - 1:<3} {median:10.2f} µs {4 * n / median / 1e3:8.1f} GB/s  ({method})", flush=True)
    pool = x0 = None  # given back before the next type's pool
    torch.cuda.empty_cache()
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows-out", default="plots/data/rows")
    parser.add_argument("--sums-out", default="plots/data/tile")
    parser.add_argument("--shapes", default=None, help="MxN,... (default: those of reduction rows-bench)")
    parser.add_argument("--sizes", default=",".join(f"2^{k}" for k in range(10, 31)))
    parser.add_argument("--dtypes", default="f32", help="element types of the whole-array sums: f32, i32 or both (the row sums take theirs)")
    parser.add_argument("--no-sums", action="store_true", help="row sums only")
    parser.add_argument("--no-rows", action="store_true", help="whole-array sums only (reduction bench runs it so)")
    parser.add_argument("--command", default="python3 plots/tile_peers.py", help="the command line for the files' headers")
    args = parser.parse_args()
    shapes = peers.row_shapes() if args.shapes is None else [
        tuple(peers.parse_size(v) for v in shape.split("x")) for shape in args.shapes.split(",")]
    sizes = [peers.parse_size(s) for s in args.sizes.split(",")]
    sum_dtypes = args.dtypes.split(",")
    if any(d not in SUM_DTYPES for d in sum_dtypes):
        sys.exit(f"--dtypes {args.dtypes}: the whole-array sums take {', '.join(SUM_DTYPES)}")
    try:
        import torch
    except ImportError:
        sys.exit("PyTorch is needed for the CUDA events and graphs (and for torch.sum); not installed here")
    if not torch.cuda.is_available():
        sys.exit("no CUDA GPU visible to PyTorch")
    props = torch.cuda.get_device_properties(0)
    versions = [f"torch {torch.__version__}"]

    row_peers = {"f32": [], "f16": [], "bf16": []}
    sum_peers = {dtype: [] for dtype in sum_dtypes}
    tl_rows, why = load_kernel("tilelang/row_sum.py")
    tl_sum, why_sum = load_kernel("tilelang/sum.py")
    if tl_rows is None or tl_sum is None:
        print(f"TileLang skipped: {why or why_sum}", file=sys.stderr)
    else:
        import tilelang
        versions.append(f"tilelang {tilelang.__version__}")
        if not args.no_rows:
            # Every row-sum shape compiled at once, on every core (nvcc takes ~2 s a kernel).
            funcs = [tl_rows.row_sum(m, n, "float32", *tl_rows.tile_shape(n)) for m, n in shapes]
            kernels = dict(zip(shapes, tilelang.par_compile(funcs, out_idx=[1])))
            row_peers["f32"].append(("tilelang_row_sum", "TileLang row sum (T.reduce_sum)", lambda x, m, n: kernels[(m, n)](x)))
            os.makedirs(args.sums_out, exist_ok=True)
            probe = (1 << 20, 256) if (1 << 20, 256) in kernels else shapes[0]
            path = os.path.join(args.sums_out, "tilelang_row_sum.cu")
            with open(path, "w") as f:
                f.write(f"// The CUDA TileLang {tilelang.__version__} generated for kernels/tilelang/row_sum.py at "
                        f"M x N = {probe[0]} x {probe[1]}, float32 (kernel.get_kernel_source()).\n")
                f.write(kernels[probe].get_kernel_source())
            print(f"generated source written to {path}")
        for dtype in sum_dtypes:
            if not args.no_sums:  # compiled only where it runs
                sum_peers[dtype].append(("tilelang_sum", "TileLang sum (passes of T.reduce_sum)", tl_sum.ArraySum(SUM_DTYPES[dtype])))
    tr_rows, why = load_kernel("triton/row_sum.py")
    tr_sum, why_sum = load_kernel("triton/sum.py")
    if tr_rows is None or tr_sum is None:
        print(f"Triton skipped: {why or why_sum}", file=sys.stderr)
    else:
        import triton
        versions.append(f"triton {triton.__version__}")
        row_peers["f32"].append(("triton_row_sum", "Triton row sum (tl.sum)", lambda x, m, n: tr_rows.row_sum(x)))
        for dtype in sum_dtypes:
            sum_peers[dtype].append(("triton_sum", "Triton sum (tl.sum + tl.atomic_add)", tr_sum.array_sum))
    for dtype in row_peers:
        row_peers[dtype].append(("torch_sum_dim1", "torch.sum(x, dim=1) (PyTorch)",
                                 lambda x, m, n: torch.sum(x, dim=1, dtype=torch.float32)))

    command = args.command
    budget, why = peers.device_budget(torch)
    print(f"device memory: {why}", flush=True)
    if not args.no_rows:
        rows = measure_rows(torch, shapes, row_peers, budget, why)
        os.makedirs(args.rows_out, exist_ok=True)
        path = os.path.join(args.rows_out, f"{peers.slug(props.name)}-peers.csv")
        with open(path, "w") as f:
            f.write("\n".join(peers.header(torch, props, ", ".join(versions), command) + [peers.COLUMNS] + rows) + "\n")
        print(f"{len(rows)} row-sum peer measurements written to {path}")
    if not args.no_sums and any(sum_peers.values()):
        sums = []
        for dtype in sum_dtypes:
            torch.cuda.empty_cache()
            budget, why = peers.device_budget(torch)
            sums += measure_sums(torch, sizes, sum_peers[dtype], budget, why, dtype)
        path = os.path.join(args.sums_out, f"{peers.slug(props.name)}.csv")
        os.makedirs(args.sums_out, exist_ok=True)
        with open(path, "w") as f:
            f.write("\n".join(peers.header(torch, props, ", ".join(versions), command) + [peers.COLUMNS] + sums) + "\n")
        print(f"{len(sums)} whole-array peer measurements written to {path}")


if __name__ == "__main__":
    main()
