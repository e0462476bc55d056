#!/usr/bin/env python3
"""Measure the library sums a reader would otherwise call -- torch.sum and CuPy's sum (CUB) --
the way `reduction bench` measures the book's kernels, and write the results in the same CSV
format, so that the charts carry them as peers.

    python3 plots/peers.py [--out plots/data] [--sizes 2^10,...,2^30] [--dtypes f32,i32] [--no-host]

Row sums (torch.sum(x, dim=1), TileLang, Triton) are measured by plots/tile_peers.py, which
`reduction rows-bench` runs; it shares this file's timing, CSV row and header.

Needs PyTorch and/or CuPy with a CUDA GPU; a library that is missing is skipped with a message.
Device memory: what torch.cuda.mem_get_info() reports free, or less with REDUCTION_DEVICE_MEMORY
(6GiB, 512MiB, 8GB: read as the Rust library reads it); the input pool takes at most 45% of it,
as `reduction bench`'s does, and a size that does not fit is skipped with the reason.
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


def allocator_fraction(cap, total):
    """The share of the GPU that torch's caching allocator may reserve under a cap of `cap` bytes
    (None: no limit). The pools are planned within the budget, but torch also allocates what no
    plan sees (torch.sum of int32 widens to an int64 temporary); with the memory really held those
    allocations fail, so under the cap they must fail too (issue 21: the same skips both ways)."""
    if cap is None or total <= 0 or cap >= total:
        return None
    return max(cap, 0) / total


def limit_torch_to_cap(torch):
    """Under REDUCTION_DEVICE_MEMORY, make torch refuse to reserve more than the cap on GPU 0, as it
    would on a GPU that small; the refusal is an OutOfMemoryError the scripts report as a skip."""
    text = os.environ.get(MEMORY_VAR)
    if text is None or not text.strip():
        return
    _, total = torch.cuda.mem_get_info()
    fraction = allocator_fraction(parse_memory_size(text), total)
    if fraction is not None:
        torch.cuda.set_per_process_memory_fraction(fraction, 0)


def device_budget(torch):
    """The budget on GPU 0: torch.cuda.mem_get_info()'s free memory, capped by REDUCTION_DEVICE_MEMORY
    (and torch's allocator held to the cap). A value that is not a size ends the script with the
    reason."""
    free, _ = torch.cuda.mem_get_info()
    try:
        budget = budget_from(free, os.environ.get(MEMORY_VAR))
        limit_torch_to_cap(torch)
        return budget
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


def exact_pool(torch, dtype, length, largest):
    """Nonzero integers with random signs, small enough that every partial sum of `largest` of
    them is exact (src/check/data.rs's construction), so that every peer's sum is checked bit for
    bit: magnitudes up to 2^24 / largest (at most 128) for f32, 2^31 / largest (at most 1000) for
    i32. Drawn CHECK_CHUNK values at a time into the pool, so that the temporaries are a chunk's,
    not the whole pool's."""
    limit = max(1, min((1 << 24) // largest, 128)) if dtype == "f32" else max(1, min((2 ** 31 - 1) // largest, 1000))
    gen = torch.Generator(device="cuda").manual_seed(2007)
    pool = torch.empty(length, device="cuda", dtype=torch.float32 if dtype == "f32" else torch.int32)
    for o in range(0, length, CHECK_CHUNK):
        count = min(CHECK_CHUNK, length - o)
        mags = torch.randint(1, limit + 1, (count,), device="cuda", generator=gen, dtype=torch.int32)
        signs = torch.randint(0, 2, (count,), device="cuda", generator=gen, dtype=torch.int32) * 2 - 1
        pool[o:o + count] = (mags * signs).to(pool.dtype)
    return pool, limit


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
    budget, why = device_budget(torch)
    oom = out_of_memory(torch)
    rows = []
    for dtype in args.dtypes.split(","):
        pool_len, too_large = plan_pool(sizes, 4, l2, budget)
        for n in too_large:
            print(f"skipped {dtype} n={n}: {skip_reason(4 * n, pool_len, 4, why)}")
        fitting = [n for n in sizes if n not in too_large]
        try:
            pool, limit = exact_pool(torch, dtype, pool_len, max(sizes))
        except oom as e:  # planned not to happen; every size skipped, with why
            torch.cuda.empty_cache()
            for n in fitting:
                print(f"skipped {dtype} n={n}: out of device memory for the pool ({why}): {str(e).splitlines()[0][:160]}")
            continue
        print(f"{dtype}: pool of {pool_len} values ({human_bytes(4 * pool_len)}; device memory: {why}), nonzero integers up to {limit}, random signs", file=sys.stderr)

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
        for n in fitting:
            x, slots = view(n, 0)
            try:
                exact, _ = float64_sums(x)  # exact: integers, and every partial sum is
            except oom as e:
                torch.cuda.empty_cache()
                print(f"skipped {dtype} n={n}: out of device memory for its check ({why}): {str(e).splitlines()[0][:160]}")
                continue
            for name, title, fn, capture in peers:
                out = [None]

                def enqueue(j, n=n, fn=fn):
                    out[0] = fn(view(n, j)[0])

                try:
                    got = float(fn(x))
                    if got != exact:
                        print(f"{name} {dtype} n={n}: {got} is not the exact sum {exact}; not timed", file=sys.stderr)
                        continue
                    times, ops, method = time_graph(torch, enqueue, capture)
                except oom as e:  # planned not to happen; a skip with the reason if it does
                    out[0] = None
                    torch.cuda.empty_cache()
                    print(f"skipped {name} {dtype} n={n}: out of device memory ({why}): {str(e).splitlines()[0][:160]}")
                    continue
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
        pool = x = None  # the pool and the views of it, given back before the next type's
        torch.cuda.empty_cache()

    versions = f"torch {torch.__version__}" + (f", cupy {cupy.__version__}" if cupy is not None else "")
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"{slug(props.name)}-peers.csv")
    with open(path, "w") as f:
        f.write("\n".join(header(torch, props, versions, args.command) + [COLUMNS] + rows) + "\n")
    print(f"{len(rows)} peer measurements written to {path}")


if __name__ == "__main__":
    main()
