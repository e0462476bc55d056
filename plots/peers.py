#!/usr/bin/env python3
"""Measure the library sums a reader would otherwise call -- torch.sum and CuPy's sum (CUB) --
the way `reduction bench` measures the book's kernels, and write the results in the same CSV
format, so that the charts carry them as peers.

    python3 plots/peers.py [--out plots/data] [--sizes 2^10,...,2^30] [--dtypes f32,i32] [--no-host]

Row sums (torch.sum(x, dim=1), TileLang, Triton) are measured by plots/tile_peers.py, which
`reduction rows-bench` runs; it shares this file's timing, CSV row and header.

Needs PyTorch and/or CuPy with a CUDA GPU; a library that is missing is skipped with a message.
Method, as in the Rust benchmark: each result is checked against the exact sum of an
exact-by-construction input (nonzero integers with random signs, small enough that every
partial sum is exact, as src/check/data.rs makes them) before it is timed; inputs rotate
through a pool larger than L2; K back-to-back sums are captured into a CUDA graph and timed with CUDA events (or, where capture fails, timed as K
back-to-back calls, which the `method` column then says); the median of many repeats is kept.
Host-visible times (kernel names ending in _host): one call and .item(), the copy of the result
to the host, by the host's clock, median of many calls. `reduction bench` runs this file in its
own run (and passes --out and --command); the file is named <gpu-slug>-peers.csv.
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


def csv_row(kernel, title, dtype, n, median, times, nbytes, working_set, method):
    """One line of the results CSV (COLUMNS) for a peer measured at n with `nbytes` read."""
    title, method = (text.replace('"', '""') for text in (title, method))  # CSV: a quote inside is doubled
    return (f"{kernel},0,\"{title}\",peer,{dtype},{n},0,rotated,{median:.3f},{times[0]:.3f},{times[-1]:.3f},"
            f"{nbytes / (median * 1e-6) / 1e9:.1f},{nbytes},{working_set},{len(times)},\"{method}\"")


def header(torch, props, versions, command):
    """The results file's header: the GPU, as `reduction bench` writes it, and the command."""
    return [
        f"# gpu: {props.name}",
        f"# compute_capability: {props.major}.{props.minor}",
        f"# sm_count: {props.multi_processor_count}",
        f"# l2_bytes: {getattr(props, 'L2_cache_size', 0)}",
        "# peak_gbps: unknown",
        "# memory_clock_mhz: 0",
        "# sm_clock_mhz: 0",
        f"# driver_cuda: {torch.version.cuda}",
        f"# nvrtc: {versions}",
        f"# date: {datetime.date.today().isoformat()}",
        f"# command: {command}",
    ]


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


def exact_pool(torch, dtype, length, largest):
    """Nonzero integers with random signs, small enough that every partial sum of `largest` of
    them is exact (src/check/data.rs's construction), so that every peer's sum is checked bit for
    bit: magnitudes up to 2^24 / largest (at most 128) for f32, 2^31 / largest (at most 1000) for
    i32."""
    limit = max(1, min((1 << 24) // largest, 128)) if dtype == "f32" else max(1, min((2 ** 31 - 1) // largest, 1000))
    gen = torch.Generator(device="cuda").manual_seed(2007)
    mags = torch.randint(1, limit + 1, (length,), device="cuda", generator=gen, dtype=torch.int32)
    signs = torch.randint(0, 2, (length,), device="cuda", generator=gen, dtype=torch.int32) * 2 - 1
    return (mags * signs).to(torch.float32 if dtype == "f32" else torch.int32), limit


def time_host(call, target_ms=TARGET_MS):
    """One call and the wait for its result on the host, by the host's clock: median of many."""
    import time
    for j in range(10):  # warm: first calls compile and allocate
        call(j)
    t0 = time.perf_counter()
    for j in range(5):
        call(j)
    estimate_ms = max((time.perf_counter() - t0) * 1e3 / 5, 1e-3)
    calls = max(31, min(401, int(target_ms * 4 / estimate_ms) + 1))
    times = []
    for j in range(calls):
        a = time.perf_counter()
        call(j)
        times.append((time.perf_counter() - a) * 1e6)
    times.sort()
    return times, f"host-visible: one call + copy of the result to the host, perf_counter, median of {calls}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="plots/data")
    parser.add_argument("--sizes", default=",".join(f"2^{k}" for k in range(10, 31)))
    parser.add_argument("--dtypes", default="f32,i32")
    parser.add_argument("--no-host", action="store_true", help="graph-amortized times only")
    parser.add_argument("--command", default="python3 plots/peers.py", help="the command line for the file's header")
    args = parser.parse_args()
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    try:
        import torch
    except ImportError:
        sys.exit("PyTorch is needed for the CUDA events and graphs (and for torch.sum); not installed here")
    if not torch.cuda.is_available():
        sys.exit("no CUDA GPU visible to PyTorch")
    os.environ.setdefault("CUPY_ACCELERATORS", "cub")
    cupy = None
    try:
        import cupy
    except ImportError:
        print("CuPy not installed: its CUB sum is skipped", file=sys.stderr)

    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 60 << 20)
    free, _ = torch.cuda.mem_get_info()
    rows = []
    for dtype in args.dtypes.split(","):
        fits = int(free * 0.4) // 4
        pool_len = min(max(2 * max(sizes), 8 * l2 // 4), fits)
        pool, limit = exact_pool(torch, dtype, pool_len, max(sizes))
        print(f"{dtype}: pool of {pool_len} values, nonzero integers up to {limit}, random signs", file=sys.stderr)

        def view(n, j):
            stride = -(-n // 256) * 256
            slots = (pool_len - n) // stride + 1
            o = (j % slots) * stride
            return pool[o:o + n], slots

        # torch.sum of int32 adds in int64 (and returns it), as a reader calling it gets.
        peers = [("torch_sum", "torch.sum (PyTorch)", lambda x: torch.sum(x), True)]
        if cupy is not None:
            # Not captured: CuPy launches on its own stream and allocates CUB's scratch per call.
            peers.append(("cupy_sum_cub", "cupy.sum (CUB)", lambda x: cupy.sum(cupy.from_dlpack(x)), False))
        for n in sizes:
            if n > pool_len:
                print(f"n={n}: skipped, {4 * n} bytes do not fit beside the pool in the GPU's free memory", file=sys.stderr)
                continue
            x, slots = view(n, 0)
            exact = float(x.double().sum())
            for name, title, fn, capture in peers:
                got = float(fn(x))
                if got != exact:
                    print(f"{name} {dtype} n={n}: {got} is not the exact sum {exact}; not timed", file=sys.stderr)
                    continue
                out = [None]

                def enqueue(j, n=n, fn=fn):
                    out[0] = fn(view(n, j)[0])

                times, ops, method = time_graph(torch, enqueue, capture)
                median = statistics.median(times)
                rows.append(csv_row(name, title, dtype, n, median, times, 4 * n, min(ops, slots) * 4 * n, method))
                print(f"{name:18} {dtype} n=2^{n.bit_length() - 1:<3} {median:10.2f} µs  {4 * n / median / 1e3:8.1f} GB/s  ({method})")
                if args.no_host:
                    continue
                # One call as a caller who reads the sum waits for it: .item() copies it back.
                times, method = time_host(lambda j, fn=fn, n=n: fn(view(n, j)[0]).item())
                median = statistics.median(times)
                rows.append(csv_row(f"{name}_host", f"{title}, .item(), host-visible", dtype, n, median, times, 4 * n, min(len(times) + 15, slots) * 4 * n, method))
                print(f"{name + '_host':18} {dtype} n=2^{n.bit_length() - 1:<3} {median:10.2f} µs  host-visible")
        del pool

    versions = f"torch {torch.__version__}" + (f", cupy {cupy.__version__}" if cupy is not None else "")
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"{slug(props.name)}-peers.csv")
    with open(path, "w") as f:
        f.write("\n".join(header(torch, props, versions, args.command) + [COLUMNS] + rows) + "\n")
    print(f"{len(rows)} peer measurements written to {path}")


if __name__ == "__main__":
    main()
