#!/usr/bin/env python3
"""Measure the library sums a reader would otherwise call -- torch.sum and CuPy's sum (CUB) --
the way `reduction bench` measures the book's kernels, and write the results in the same CSV
format, so that the charts carry them as peers.

    python3 plots/peers.py [--out plots/data] [--sizes 2^10,...,2^30]

Row sums (torch.sum(x, dim=1), TileLang, Triton) are measured by plots/tile_peers.py, which
`reduction rows-bench` runs; it shares this file's timing, CSV row and header.

Needs PyTorch and/or CuPy with a CUDA GPU; a library that is missing is skipped with a message.
Device memory: what torch.cuda.mem_get_info() reports free, or less with REDUCTION_DEVICE_MEMORY
(6GiB, 512MiB, 8GB: read as the Rust library reads it); the input pool takes at most 45% of it,
as `reduction bench`'s does, and a size that does not fit is skipped with the reason.
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


# ---- device memory: REDUCTION_DEVICE_MEMORY, as src/runtime/device_memory.rs reads it ----

MEMORY_VAR = "REDUCTION_DEVICE_MEMORY"
MEMORY_UNITS = (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("TB", 10 ** 12),
                ("GB", 10 ** 9), ("MB", 10 ** 6), ("KB", 1000), ("kB", 1000), ("B", 1))
POOL_SHARE = 0.45  # of the budget: limits::POOL_SHARE, as the Rust benchmarks' pools
CHECK_CHUNK = 1 << 24  # values checked at once: the float64 copies of a chunk, not of a whole input


def parse_memory_size(text):
    """6GiB, 512MiB, 8GB, 1.5GiB or a number of bytes, as bytes; ValueError with how to write one.
    The same syntax and results as the Rust library's parse_size (tests/tile_languages.rs checks)."""
    bad = ValueError(f"{text!r} is not a memory size (write 6GiB, 512MiB, 8GB or a number of bytes)")
    number, scale = text.strip(), 1
    for unit, unit_scale in MEMORY_UNITS:
        if number.endswith(unit):
            number, scale = number[: -len(unit)].rstrip(), unit_scale
            break
    if not number or any(c not in "0123456789." for c in number) or number.count(".") > 1 or number == ".":
        raise bad
    whole, _, fraction = number.partition(".")
    fraction = fraction[:30]
    value = int(whole or "0") * scale + (int(fraction) * scale // 10 ** len(fraction) if fraction else 0)
    if value >= 1 << 64:
        raise ValueError(f"{text!r} is more bytes than any GPU has")
    return value


def human_bytes(n):
    """1536 -> 1.5 KiB, as the Rust side writes sizes."""
    units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
    value, unit = float(n), 0
    while value >= 1024 and unit + 1 < len(units):
        value, unit = value / 1024, unit + 1
    return f"{n} B" if unit == 0 else f"{value:.1f} {units[unit]}"


def budget_from(free, cap_text):
    """(bytes this script may use on the GPU, a sentence saying where the figure comes from)."""
    if cap_text is None or not cap_text.strip():
        return free, f"{human_bytes(free)} free"
    cap = parse_memory_size(cap_text)
    if cap < free:
        return cap, f"{human_bytes(cap)} under {MEMORY_VAR}={cap_text} ({human_bytes(free)} really free)"
    return free, f"{human_bytes(free)} free ({MEMORY_VAR}={cap_text} is more)"


def device_budget(torch):
    """The budget on GPU 0: torch.cuda.mem_get_info()'s free memory, capped by REDUCTION_DEVICE_MEMORY.
    A value that is not a size ends the script with the reason."""
    free, _ = torch.cuda.mem_get_info()
    try:
        return budget_from(free, os.environ.get(MEMORY_VAR))
    except ValueError as e:
        sys.exit(f"error: {MEMORY_VAR}: {e}")


def plan_pool(lengths, element_bytes, l2_bytes, budget):
    """The pool's length for inputs of these lengths, as limits::pool_values computes it: twice the
    largest, and eight L2s at least, but at most POOL_SHARE of the budget; and the lengths that do
    not fit in it."""
    want = max(2 * max(lengths, default=0), 8 * l2_bytes // element_bytes)
    pool_len = min(want, int(budget * POOL_SHARE) // element_bytes)
    return pool_len, [n for n in lengths if n > pool_len]


def skip_reason(nbytes, pool_len, element_bytes, why):
    return (f"{human_bytes(nbytes)} does not fit in the pool of {human_bytes(pool_len * element_bytes)} "
            f"({int(POOL_SHARE * 100)}% of {why})")


def out_of_memory(torch):
    """The exception torch raises when an allocation fails."""
    return getattr(torch, "OutOfMemoryError", None) or torch.cuda.OutOfMemoryError


def random_pool(torch, length, dtype, seed):
    """`length` values uniform in [-1, 1) of `dtype` on the GPU, drawn in chunks so that no float32
    temporary of the whole pool is made."""
    gen = torch.Generator(device="cuda").manual_seed(seed)
    pool = torch.empty(length, device="cuda", dtype=dtype)
    for o in range(0, length, CHECK_CHUNK):
        chunk = torch.rand(min(CHECK_CHUNK, length - o), device="cuda", dtype=torch.float32, generator=gen)
        pool[o:o + chunk.numel()] = chunk.mul_(2).sub_(1)
    return pool


def float64_sums(x):
    """(sum, sum of |x|) of a 1-D tensor in float64, a chunk at a time."""
    total = magnitude = 0.0
    for o in range(0, x.numel(), CHECK_CHUNK):
        chunk = x[o:o + CHECK_CHUNK].double()
        total += float(chunk.sum())
        magnitude += float(chunk.abs().sum())
    return total, magnitude


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="plots/data")
    parser.add_argument("--sizes", default=",".join(f"2^{k}" for k in range(10, 31)))
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
    budget, why = device_budget(torch)
    pool_len, too_large = plan_pool(sizes, 4, l2, budget)
    print(f"device memory: {why}; input pool of {pool_len} f32 values ({human_bytes(4 * pool_len)})", file=sys.stderr)
    for n in too_large:
        print(f"skipped n={n}: {skip_reason(4 * n, pool_len, 4, why)}")
    sizes = [n for n in sizes if n not in too_large]
    try:
        pool = random_pool(torch, pool_len, torch.float32, 2007)
    except out_of_memory(torch) as e:  # planned not to happen; every size skipped, with why
        for n in sizes:
            print(f"skipped n={n}: out of device memory for the pool ({why}): {str(e).splitlines()[0][:160]}")
        sizes, pool = [], None

    def view(n, j):
        stride = -(-n // 256) * 256
        slots = (pool_len - n) // stride + 1
        o = (j % slots) * stride
        return pool[o:o + n], slots

    peers = [("torch_sum", "torch.sum (PyTorch)", lambda x: torch.sum(x), True)]
    if cupy is not None:
        # Not captured: CuPy launches on its own stream and allocates CUB's scratch per call.
        peers.append(("cupy_sum_cub", "cupy.sum (CUB)", lambda x: cupy.sum(cupy.from_dlpack(x)), False))

    rows = []
    for name, title, fn, capture in peers:
        for n in sizes:
            x, slots = view(n, 0)
            out = [None]

            def enqueue(j, n=n, fn=fn):
                out[0] = fn(view(n, j)[0])

            try:
                got = float(fn(x))
                exact, magnitude = float64_sums(x)
                bound = ((n - 1) * 2.0 ** -24 + 4 * 2.0 ** -53) * magnitude
                if not abs(got - exact) <= bound:
                    print(f"{name} n={n}: {got} vs {exact} exceeds the bound {bound}; not timed", file=sys.stderr)
                    continue
                times, ops, method = time_graph(torch, enqueue, capture)
            except out_of_memory(torch) as e:  # planned not to happen; a skip with the reason if it does
                out[0] = None
                torch.cuda.empty_cache()
                print(f"skipped {name} n={n}: out of device memory ({why}): {str(e).splitlines()[0][:160]}")
                continue
            median = statistics.median(times)
            rows.append(csv_row(name, title, "f32", n, median, times, 4 * n, min(ops, slots) * 4 * n, method))
            print(f"{name:14} n=2^{n.bit_length() - 1:<3} {median:10.2f} µs  {4 * n / median / 1e3:8.1f} GB/s  ({method})")

    versions = f"torch {torch.__version__}" + (f", cupy {cupy.__version__}" if cupy is not None else "")
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"{slug(props.name)}-peers.csv")
    with open(path, "w") as f:
        f.write("\n".join(header(torch, props, versions, "python3 plots/peers.py") + [COLUMNS] + rows) + "\n")
    print(f"{len(rows)} peer measurements written to {path}")

if __name__ == "__main__":
    main()
