# Two timing experiments behind chapters 10 to 12, with CuPy (NVRTC + CUDA graphs + events), the
# book's kernels spliced as the host splices them (from kernels/):
#  1. redux: is the i32 speed of reduce11 (cg::reduce) and reduce12 (cub::BlockReduce) over
#     reduce9 the hardware integer reduction (REDUX.SUM in their SASS)? reduce9 as written
#     (shuffles) against reduce9 with its warp sum replaced by __reduce_add_sync (redux.sync),
#     and reduce11 and reduce12, all as the two-pass sum the book runs (pass 1 over the input,
#     pass 2 one block over the partials), i32 and f32, block 256, 2^16 .. 2^24.
#  2. memset: what the zeroing of reduce10_atomic's result costs inside a graph of back-to-back
#     sums: [memset + kernel] against [kernel] alone (the result then accumulates; timed only)
#     and [memset] alone, beside reduce10_last_block and reduce9's two passes, f32.
# Every variant's sum is checked against numpy's exact int64 sum of the same input first.
# Inputs rotate through a 2 GiB pool (34 L2s); medians of 15 replays of a graph of K sums.
import csv, os, re, sys
import numpy as np
import cupy as cp

KERNELS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kernels")
OUT = sys.argv[1]  # python3 plots/timing_experiments.py OUT_DIR -> OUT_DIR/experiments.csv (plots/data/experiments/<gpu>.csv)
OPTS = ("-std=c++17", "-I/usr/local/cuda/include", "-I/usr/local/cuda/include/cccl")
BLOCK = 256
SMS = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
REDUX = """
// issue 24 experiment: the warp's sum of an int by the hardware reduction (redux.sync, sm_80+)
template <> __device__ __forceinline__ int warp_sum<int>(int v) { return __reduce_add_sync(0xffffffffu, v); }
"""


def splice(name, included, out):
    # Every `#include "x.cuh"` of kernels/ replaced by the header's text, once (as src/kernels does).
    for line in open(os.path.join(KERNELS, name)).read().splitlines():
        m = re.match(r'\s*#include "([^"]+)"', line)
        if m and os.path.exists(os.path.join(KERNELS, m.group(1))):
            if m.group(1) not in included:
                included.append(m.group(1))
                splice(m.group(1), included, out)
        elif line.strip() == "#pragma once":
            out.append("")
        else:
            out.append(line)


def source(name, patch=None):
    out = []
    splice(name, [], out)
    text = "\n".join(out) + "\n"
    return patch(text) if patch else text


def with_redux(text):
    anchor = "// ANCHOR_END: warp_sum"
    assert anchor in text
    return text.replace(anchor, anchor + REDUX, 1)


mods = {
    "reduce9": cp.RawModule(code=source("09_vectorized.cu"), options=OPTS),
    "reduce9_redux": cp.RawModule(code=source("09_vectorized.cu", with_redux), options=OPTS),
    "reduce11": cp.RawModule(code=source("11_cooperative_groups.cu"), options=OPTS),
    "reduce12": cp.RawModule(code=source("12_cub_block_reduce.cu"), options=OPTS),
    "reduce10": cp.RawModule(code=source("10_single_pass.cu"), options=OPTS),
}


def entry(variant, dtype):
    if variant == "reduce12":
        return mods["reduce12"].get_function(f"reduce12_b{BLOCK}_{dtype}")
    if variant in ("reduce10_atomic", "reduce10_last_block"):
        return mods["reduce10"].get_function(f"{variant}_{dtype}")
    base = "reduce9" if variant.startswith("reduce9") else variant
    return mods[variant].get_function(f"{base}_{dtype}")


def resident_grid(fn, n):
    # The book's rule (GridRule::ResidentBlocks): as many blocks as fit at once, no more than
    # the tiles of 16 values per thread.
    try:
        per_sm = cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(fn.ptr, BLOCK, 0)
    except Exception:
        per_sm = 2048 // BLOCK
    return int(max(1, min(SMS * per_sm, -(-n // (BLOCK * 16)))))


POOL_BYTES = 2 << 30
rng = np.random.default_rng(2007)
pools = {}
for dtype, np_t in (("i32", np.int32), ("f32", np.float32)):
    host = rng.integers(-1000, 1001, size=POOL_BYTES // 4).astype(np_t)
    host[host == 0] = 1
    pools[dtype] = (host, cp.asarray(host))


def view(dtype, n, j):
    host, dev = pools[dtype]
    stride = -(-n // 256) * 256
    slots = (len(host) - n) // stride + 1
    start = (j % slots) * stride
    return host[start:start + n], dev[start:start + n]


def time_graph(enqueue, ops, reps=15):
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        for j in range(4):
            enqueue(j, stream)
        stream.synchronize()
        stream.begin_capture()
        for j in range(ops):
            enqueue(j, stream)
        graph = stream.end_capture()
        graph.launch(stream)
        stream.synchronize()
        times = []
        for _ in range(reps):
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record(stream)
            graph.launch(stream)
            end.record(stream)
            end.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, end) * 1000.0 / ops)
    times.sort()
    return times[len(times) // 2], times[0], times[-1]


rows = []


def record(experiment, variant, dtype, n, grid, ops, timing):
    med, lo, hi = timing
    rows.append(dict(experiment=experiment, variant=variant, dtype=dtype, n=n, grid=grid, block=BLOCK, ops=ops,
                     median_us=f"{med:.3f}", min_us=f"{lo:.3f}", max_us=f"{hi:.3f}"))
    print(f"{experiment:7} {variant:24} {dtype} n=2^{n.bit_length() - 1:<2} grid={grid:<5} {med:8.3f} us  [{lo:.3f}, {hi:.3f}]", flush=True)


def ops_for(n):
    return 400 if n <= 1 << 20 else 50


# 1. redux: the two-pass sums
for dtype in ("i32", "f32"):
    for k in (16, 18, 20, 22, 24):
        n = 1 << k
        for variant in ("reduce9", "reduce9_redux", "reduce11", "reduce12"):
            if variant == "reduce9_redux" and dtype == "f32":
                continue  # redux.sync has no floating-point form
            fn = entry(variant, dtype)
            grid = resident_grid(fn, n)
            acc = cp.int32 if dtype == "i32" else cp.float32
            partials = cp.zeros(grid, dtype=acc)
            out = cp.zeros(1, dtype=acc)

            def enqueue(j, stream, fn=fn, grid=grid, partials=partials, out=out, n=n, dtype=dtype):
                _, x = view(dtype, n, j)
                fn((grid,), (BLOCK,), (x, partials, np.uint64(n)))
                fn((1,), (BLOCK,), (partials, out, np.uint64(grid)))

            host, _ = view(dtype, n, 0)
            enqueue(0, cp.cuda.get_current_stream())
            got, want = int(out.get()[0]), int(host.astype(np.int64).sum())
            if got != want:
                print(f"{variant} {dtype} n={n}: WRONG {got} != {want}; not timed")
                continue
            record("redux", variant, dtype, n, grid, ops_for(n), time_graph(enqueue, ops_for(n)))

# 2. memset: reduce10_atomic with and without the zeroing of its result
for k in (16, 20, 24):
    n = 1 << k
    dtype = "f32"
    atomic, last = entry("reduce10_atomic", dtype), entry("reduce10_last_block", dtype)
    grid = resident_grid(atomic, n)
    out = cp.zeros(1, dtype=cp.float32)
    partials = cp.zeros(grid, dtype=cp.float32)
    ticket = cp.zeros(1, dtype=cp.uint32)
    host, _ = view(dtype, n, 0)
    want = float(host.astype(np.int64).sum())

    def zero(stream):
        cp.cuda.runtime.memsetAsync(out.data.ptr, 0, 4, stream.ptr)

    def memset_and_kernel(j, stream):
        _, x = view(dtype, n, j)
        zero(stream)
        atomic((grid,), (BLOCK,), (x, out, np.uint64(n)))

    def kernel_only(j, stream):
        _, x = view(dtype, n, j)
        atomic((grid,), (BLOCK,), (x, out, np.uint64(n)))

    def memset_only(j, stream):
        zero(stream)

    def last_block(j, stream):
        _, x = view(dtype, n, j)
        last((grid,), (BLOCK,), (x, out, np.uint64(n), partials, ticket))

    for variant, fn in (("reduce10_atomic", memset_and_kernel), ("reduce10_last_block", last_block)):
        fn(0, cp.cuda.get_current_stream())
        got = float(out.get()[0])
        if got != want:
            print(f"{variant} n={n}: WRONG {got} != {want}")
    record("memset", "memset+reduce10_atomic", dtype, n, grid, ops_for(n), time_graph(memset_and_kernel, ops_for(n)))
    record("memset", "reduce10_atomic_alone", dtype, n, grid, ops_for(n), time_graph(kernel_only, ops_for(n)))
    record("memset", "memset_alone", dtype, n, 0, ops_for(n), time_graph(memset_only, ops_for(n)))
    record("memset", "reduce10_last_block", dtype, n, grid, ops_for(n), time_graph(last_block, ops_for(n)))

with open(os.path.join(OUT, "experiments.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)
print(f"{len(rows)} timings written to {OUT}/experiments.csv")
