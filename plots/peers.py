#!/usr/bin/env python3
"""Measure the library sums a reader would otherwise call -- torch.sum and CuPy's sum (CUB) --
the way `reduction bench` measures the book's kernels, and write the results in the same CSV
format, so that the charts carry them as peers.

    python3 plots/peers.py [--out plots/data] [--sizes 2^10,...,2^30]
    python3 plots/peers.py --rows [--out plots/data/rows] [--shapes 4096x64,2^20x2^8,...]

With --rows it measures row sums instead, torch.sum(x, dim=1) of M x N matrices at the shapes
of `reduction rows-bench`, in the same format (n is the row length N, bytes the M*N*4 read).

Needs PyTorch and/or CuPy with a CUDA GPU; a library that is missing is skipped with a message.
Method, as in the Rust benchmark: each result is checked against a float64 sum of the same
input before it is timed; inputs rotate through a pool larger than L2; K back-to-back sums are
captured into a CUDA graph and timed with CUDA events (or, where capture fails, timed as K
back-to-back calls, which the `method` column then says); the median of many repeats is kept.
The file is named <gpu-slug>-peers.csv and merged with <gpu-slug>.csv when charts are drawn.
"""
import argparse
import datetime
import os
import re
import statistics
import sys

COLUMNS = "kernel,chapter,title,status,dtype,n,block,cache,median_us,min_us,max_us,gbps,bytes,working_set_bytes,repeats,method"
TARGET_MS = 3.0
MIN_REPEATS, MAX_REPEATS, MAX_OPS = 15, 51, 1000


def parse_size(s):
    return 1 << int(s[2:]) if s.startswith("2^") else int(float(s))


def row_shapes():
    """The shapes of `reduction rows-bench` (src/kernels/rows.rs, default_shapes): 4096 x 64, then
    M*N = 2^28 from 2^20 x 2^8 to 2^4 x 2^24."""
    return [(4096, 64)] + [(1 << (28 - k), 1 << k) for k in range(8, 25)]


def measure_rows(torch, shapes, pool, pool_len):
    """torch.sum(x, dim=1) at each shape, checked row by row against float64, then timed."""
    rows = []
    for m, n in shapes:
        total = m * n
        if total > pool_len:
            print(f"torch_sum_dim1 {m}x{n}: larger than the pool; skipped", file=sys.stderr)
            continue
        step = -(-total // 256) * 256
        slots = (pool_len - total) // step + 1

        def view(j, m=m, n=n, total=total, step=step, slots=slots):
            o = (j % slots) * step
            return pool[o:o + total].view(m, n)

        x = view(0)
        got = torch.sum(x, dim=1).double()
        exact = x.double().sum(dim=1)
        bound = ((n - 1) * 2.0 ** -24 + 4 * 2.0 ** -53) * x.double().abs().sum(dim=1)
        wrong = int((~((got - exact).abs() <= bound)).sum())
        if wrong:
            print(f"torch_sum_dim1 {m}x{n}: {wrong} of {m} rows exceed the bound; not timed", file=sys.stderr)
            continue
        out = [None]

        def enqueue(j, view=view):
            out[0] = torch.sum(view(j), dim=1)

        times, ops, method = time_graph(torch, enqueue, True)
        median = statistics.median(times)
        nbytes = 4 * total
        rows.append(f"torch_sum_dim1,0,\"torch.sum(x, dim=1) (PyTorch)\",peer,f32,{n},0,rotated,{median:.3f},{times[0]:.3f},"
                    f"{times[-1]:.3f},{nbytes / (median * 1e-6) / 1e9:.1f},{nbytes},{min(ops, slots) * nbytes},{len(times)},\"{method}\"")
        print(f"torch_sum_dim1 {m:>8} x {n:<9} {median:10.2f} µs  {nbytes / median / 1e3:8.1f} GB/s  ({method})")
    return rows


def slug(name):
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9]", "-", name.lower())).strip("-")


def time_graph(torch, enqueue, capture):
    """Per-call GPU time in µs of K back-to-back calls of enqueue(j), median of repeats."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def run(ops, graph):
        start.record()
        if graph is not None:
            graph.replay()
        else:
            for j in range(ops):
                enqueue(j)
        end.record()
        end.synchronize()
        return start.elapsed_time(end)

    def build(ops):
        if not capture:
            return None
        try:
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                for j in range(ops):  # warm, outside the capture: allocators settle
                    enqueue(j)
            torch.cuda.current_stream().wait_stream(stream)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                for j in range(ops):
                    enqueue(j)
            return graph
        except Exception as e:  # a library that cannot be captured is timed call by call
            print(f"  (no graph: {type(e).__name__}: {str(e)[:80]})", file=sys.stderr)
            return None

    ops = 4
    graph = build(ops)
    run(ops, graph)
    estimate = max(run(ops, graph) / ops, 1e-4)
    wanted = min(MAX_OPS, int(TARGET_MS / 4 / estimate) + 1)
    if wanted > ops:
        ops = wanted
        graph = build(ops)
        run(ops, graph)
    repeats = max(MIN_REPEATS, min(MAX_REPEATS, int(TARGET_MS / (estimate * ops)) + 1))
    times = sorted(run(ops, graph) * 1e3 / ops for _ in range(repeats))
    method = f"graph of {ops} back-to-back, CUDA events" if graph is not None else f"{ops} back-to-back calls, CUDA events"
    return times, ops, method


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=None, help="default: plots/data, or plots/data/rows with --rows")
    parser.add_argument("--sizes", default=",".join(f"2^{k}" for k in range(10, 31)))
    parser.add_argument("--rows", action="store_true", help="row sums, torch.sum(x, dim=1), instead of full sums")
    parser.add_argument("--shapes", default=None, help="with --rows: MxN,... (default: those of reduction rows-bench)")
    args = parser.parse_args()
    if args.out is None:
        args.out = "plots/data/rows" if args.rows else "plots/data"
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    shapes = row_shapes() if args.shapes is None else [
        tuple(parse_size(v) for v in shape.split("x")) for shape in args.shapes.split(",")]
    try:
        import torch
    except ImportError:
        sys.exit("PyTorch is needed for the CUDA events and graphs (and for torch.sum); not installed here")
    if not torch.cuda.is_available():
        sys.exit("no CUDA GPU visible to PyTorch")
    os.environ.setdefault("CUPY_ACCELERATORS", "cub")
    cupy = None
    if not args.rows:
        try:
            import cupy
        except ImportError:
            print("CuPy not installed: its CUB sum is skipped", file=sys.stderr)

    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 60 << 20)
    largest = max(m * n for m, n in shapes) if args.rows else max(sizes)
    pool_len = max(2 * largest, 8 * l2 // 4)
    gen = torch.Generator(device="cuda").manual_seed(2007)
    pool = torch.rand(pool_len, device="cuda", dtype=torch.float32, generator=gen) * 2 - 1

    def view(n, j):
        stride = -(-n // 256) * 256
        slots = (pool_len - n) // stride + 1
        o = (j % slots) * stride
        return pool[o:o + n], slots

    peers = [] if args.rows else [("torch_sum", "torch.sum (PyTorch)", lambda x: torch.sum(x), True)]
    if cupy is not None:
        # Not captured: CuPy launches on its own stream and allocates CUB's scratch per call.
        peers.append(("cupy_sum_cub", "cupy.sum (CUB)", lambda x: cupy.sum(cupy.from_dlpack(x)), False))

    rows = measure_rows(torch, shapes, pool, pool_len) if args.rows else []
    for name, title, fn, capture in peers:
        for n in sizes:
            x, slots = view(n, 0)
            got = float(fn(x))
            exact = float(x.double().sum())
            bound = ((n - 1) * 2.0 ** -24 + 4 * 2.0 ** -53) * float(x.double().abs().sum())
            if not abs(got - exact) <= bound:
                print(f"{name} n={n}: {got} vs {exact} exceeds the bound {bound}; not timed", file=sys.stderr)
                continue
            out = [None]

            def enqueue(j, n=n, fn=fn):
                out[0] = fn(view(n, j)[0])

            times, ops, method = time_graph(torch, enqueue, capture)
            median = statistics.median(times)
            working_set = min(ops, slots) * n * 4
            rows.append(f"{name},0,{title},peer,f32,{n},0,rotated,{median:.3f},{times[0]:.3f},{times[-1]:.3f},"
                        f"{4 * n / (median * 1e-6) / 1e9:.1f},{4 * n},{working_set},{len(times)},\"{method}\"")
            print(f"{name:14} n=2^{n.bit_length() - 1:<3} {median:10.2f} µs  {4 * n / median / 1e3:8.1f} GB/s  ({method})")

    header = [
        f"# gpu: {props.name}",
        f"# compute_capability: {props.major}.{props.minor}",
        f"# sm_count: {props.multi_processor_count}",
        f"# l2_bytes: {l2}",
        "# peak_gbps: unknown",
        "# memory_clock_mhz: 0",
        "# sm_clock_mhz: 0",
        f"# driver_cuda: {torch.version.cuda}",
        f"# nvrtc: torch {torch.__version__}" + (f", cupy {cupy.__version__}" if cupy is not None else ""),
        f"# date: {datetime.date.today().isoformat()}",
        "# command: python3 plots/peers.py" + (" --rows" if args.rows else ""),
    ]
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"{slug(props.name)}-peers.csv")
    with open(path, "w") as f:
        f.write("\n".join(header + [COLUMNS] + rows) + "\n")
    print(f"{len(rows)} peer measurements written to {path}")


if __name__ == "__main__":
    main()
