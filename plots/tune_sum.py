#!/usr/bin/env python3
"""The tuning sweep behind the sum's entry point (src/kernels/dispatch.rs): candidate launches of
the book's kernels, the read-only ceiling and the peers (torch, CuPy, CUB called directly,
TileLang, Triton), all in one run, interleaved size by size, for f32 and i32, measured the way
`reduction bench` measures, in rounds.

    python3 plots/tune_sum.py [--out plots/data/tuning] [--sizes 2^10,...,2^30] [--rounds 2]
                              [--kernels DIR:DIR] [--cub PATH] [--deadline SECONDS]
    python3 plots/tune_sum.py --ncu        (one launch of each profiled kernel at 2^28, for ncu)

The book's kernels are compiled from kernels/*.cu by NVRTC through CuPy's RawModule (the files
the Rust crate compiles, with the include path the crate splices) and launched by CuPy; the
peers come from plots/peers.py and plots/tile_peers.py; CUB called directly is the program
plots/cub_sum.cu, run between the rounds. Method, for every contender: its sum of an
exact-by-construction input (nonzero integers with random signs, small enough that every partial
sum is exact) is checked first (a wrong one is reported and not timed); then K back-to-back sums,
each of another input of a pool larger than several L2s, are captured into a CUDA graph and
timed by CUDA events around replays; the median of 15 to 51 replays is kept. Host-visible
times (kernel names ending in _host): one call and the copy of its result to the host, by the
host's clock, median of many calls. Writes <out>/<gpu>-sum-round<k>.csv in the benchmark's
columns, and <out>/<gpu>-rows-round<k>.csv for the row shape 4096 x 64.
"""
import argparse
import ctypes
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# plots/peers.py and plots/tile_peers.py: beside this file, or under the working directory's
# plots/ when this file was copied elsewhere (a GPU job run from the project root).
sys.path[:0] = [str(HERE), str(Path.cwd() / "plots")]
sys.dont_write_bytecode = True
import peers  # noqa: E402

MAX_OPS, MIN_REPEATS, MAX_REPEATS, TARGET_MS = 1000, 15, 51, 3.0
CUDA_INCLUDE = ["/usr/local/cuda/include/cccl", "/usr/local/cuda/include"]


class Skip(Exception):
    pass


def log(*a):
    print(*a, flush=True)


# ---------------------------------------------------------------------------------------------
# Compiling and launching the book's kernels with CuPy.

class Kernels:
    def __init__(self, cp, dirs):
        self.cp, self.dirs, self.modules = cp, dirs, {}

    def module(self, file, defines=()):
        key = (file, tuple(defines))
        if key not in self.modules:
            path = next((Path(d) / file for d in self.dirs if (Path(d) / file).exists()), None)
            if path is None:
                raise Skip(f"{file} not found in {self.dirs}")
            options = ("-std=c++17", *[f"-I{d}" for d in self.dirs], *[f"-I{d}" for d in CUDA_INCLUDE])
            # Each NAME=VALUE (or NAME(args)=body) as a #define line before the file, not a -D
            # option: a function-like macro needs no quoting that way.
            prelude = "".join("#define " + d.replace("=", " ", 1) + "\n" for d in defines)
            started = time.time()
            try:
                m = self.cp.RawModule(code=prelude + path.read_text(), options=options)
                m.compile()
            except Exception as e:
                self.modules[key] = Skip(f"{file} {defines}: {type(e).__name__}: {str(e)[:300]}")
            else:
                self.modules[key] = m
                log(f"  compiled {path} {' '.join(defines)} in {time.time() - started:.1f} s")
        m = self.modules[key]
        if isinstance(m, Skip):
            raise m
        return m

    def function(self, file, entry, defines=()):
        try:
            return self.module(file, defines).get_function(entry)
        except Skip:
            raise
        except Exception as e:
            raise Skip(f"{entry}: {type(e).__name__}: {e}")


def blocks_per_sm(function, block, shared=0):
    """The occupancy calculator's answer, through libcuda (CuPy's Function has the handle)."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        out = ctypes.c_int()
        rc = cuda.cuOccupancyMaxActiveBlocksPerMultiprocessor(ctypes.byref(out), ctypes.c_void_p(function.kernel.ptr),
                                                              ctypes.c_int(block), ctypes.c_size_t(shared))
        if rc == 0 and out.value > 0:
            return out.value
    except Exception:
        pass
    regs = max(function.num_regs, 1)
    per_warp = -(-regs * 32 // 256) * 256
    return max(1, min(2048 // block, 65536 // (per_warp * (block // 32)), 32))


def pass_grids(n, tile, cap, later_one_block, single_pass):
    """src/kernels/plan.rs's pass_grids."""
    grids, remaining = [], n
    while remaining > 0:
        tiles = -(-remaining // tile)
        grid = 1 if later_one_block and grids else (tiles if cap is None else min(tiles, max(cap, 1)))
        grids.append(grid)
        if grid == 1 or single_pass:
            break
        remaining = grid
    return grids


# ---------------------------------------------------------------------------------------------
# Timing: CuPy graphs for the book's kernels, plots/peers.py's torch graphs for the peers.

def time_graph(cp, stream, enqueue):
    start, end = cp.cuda.Event(), cp.cuda.Event()

    def capture(ops):
        with stream:
            stream.begin_capture()
            try:
                for j in range(ops):
                    enqueue(j)
            finally:
                graph = stream.end_capture()
        return graph

    def timed(graph):
        start.record(stream)
        graph.launch(stream)
        end.record(stream)
        end.synchronize()
        return cp.cuda.get_elapsed_time(start, end)

    ops = 4
    graph = capture(ops)
    graph.launch(stream)
    estimate = max(timed(graph) / ops, 1e-4)
    wanted = math.ceil(TARGET_MS / 4 / estimate)
    if wanted > ops:
        ops = min(wanted, MAX_OPS)
        graph = capture(ops)
        graph.launch(stream)
    repeats = max(MIN_REPEATS, min(MAX_REPEATS, math.ceil(TARGET_MS / (estimate * ops))))
    times = sorted(timed(graph) * 1e3 / ops for _ in range(repeats))
    return times, ops, f"graph of {ops} back-to-back, CUDA events"


def time_host(call):
    for j in range(10):
        call(j)
    t0 = time.perf_counter()
    for j in range(5):
        call(j)
    estimate_ms = max((time.perf_counter() - t0) * 1e3 / 5, 1e-3)
    calls = max(31, min(401, math.ceil(TARGET_MS * 4 / estimate_ms)))
    times = []
    for j in range(calls):
        a = time.perf_counter()
        call(j)
        times.append((time.perf_counter() - a) * 1e6)
    times.sort()
    return times, 1, f"host-visible: one call + copy of the result to the host, perf_counter, median of {calls}"


# ---------------------------------------------------------------------------------------------
# The contenders. Each prepare(n) returns (enqueue(j) on the current stream, read() -> the sum of
# input 0 after enqueue(0)), or raises Skip.

class Setup:
    def __init__(self, cp, torch, kernels, pools, props):
        self.cp, self.torch, self.k, self.pools, self.props = cp, torch, kernels, pools, props
        self.sm = props["sm_count"]

    def view(self, dtype, n, j):
        pool = self.pools[dtype]
        stride = -(-n // 256) * 256
        slots = (pool.size - n) // stride + 1
        o = (j % slots) * stride
        return pool[o:o + n]

    def slots(self, dtype, n):
        return (self.pools[dtype].size - n) // (-(-n // 256) * 256) + 1


def acc_dtype(cp, dtype):
    return cp.float32 if dtype == "f32" else cp.int32


def poisoned(cp, dtype, count):
    out = cp.empty(max(count, 1), dtype=acc_dtype(cp, dtype))
    out.view(cp.uint32)[...] = 0x7FC0DEAD  # NaN as f32, a large odd number as i32
    return out


def multipass(s, file, entry_of, block, tile, resident, dynamic_shared):
    """A multi-pass kernel as src/kernels/reducer.rs launches it."""
    cp = s.cp

    def prepare(n, dtype):
        first = s.k.function(file, entry_of(dtype))
        rest = first
        cap = None
        if resident:
            cap = s.sm * blocks_per_sm(first, block, dynamic_shared)
        grids = pass_grids(n, tile, cap, resident, False)
        a = poisoned(cp, dtype, max(grids[0::2]))
        b = poisoned(cp, dtype, max(grids[1::2], default=1))
        u64 = __import__("numpy").uint64

        def enqueue(j):
            src, m = s.view(dtype, n, j), n
            for i, g in enumerate(grids):
                dst = a if i % 2 == 0 else b
                (first if i == 0 else rest)((g,), (block,), (src, dst, u64(m)), shared_mem=dynamic_shared)
                src, m = dst, g

        def read():
            return (a if (len(grids) - 1) % 2 == 0 else b)[0].item()
        return enqueue, read, f"grids {grids}"
    return prepare


def single_pass(s, file, entry_of, block, tile, resident, kind, cap_blocks=None):
    """kernel 10's single-pass shapes, and any (in, out, n, partials, ticket) kernel."""
    cp = s.cp
    np = __import__("numpy")

    def prepare(n, dtype):
        f = s.k.function(file, entry_of(dtype))
        cap = None
        if resident:
            cap = s.sm * blocks_per_sm(f, block)
        if cap_blocks is not None:
            cap = cap_blocks
        grid = pass_grids(n, tile, cap, False, True)[0]
        out = poisoned(cp, dtype, 1)
        partials = cp.zeros(grid + 4, dtype=acc_dtype(cp, dtype))
        ticket = cp.zeros(1, dtype=cp.uint32)
        stream_ptr = lambda: cp.cuda.get_current_stream().ptr

        def enqueue(j):
            x = s.view(dtype, n, j)
            if kind == "atomic":
                cp.cuda.runtime.memsetAsync(out.data.ptr, 0, out.itemsize, stream_ptr())
                f((grid,), (block,), (x, out, np.uint64(n)))
            elif kind == "plain":  # a multi-pass kernel's entry, with a grid of one
                f((grid,), (block,), (x, out, np.uint64(n)))
            else:
                f((grid,), (block,), (x, out, np.uint64(n), partials, ticket))
        return enqueue, lambda: out[0].item(), f"grid {grid}"
    return prepare


def tiles16(s, block, loads):
    """reduce10_tiles: one tile per block, the last block adds the partials."""
    cp = s.cp
    np = __import__("numpy")

    def prepare(n, dtype):
        f = s.k.function("10_tiles.cu", f"reduce10_tiles_b{block}_l{loads}_{dtype}", TILE_DEFINES)
        per = 4  # 4-byte values per 16-byte pack
        grid = max(1, -(-n // (per * block * loads)))
        out = poisoned(cp, dtype, 1)
        partials = cp.zeros(grid + 4, dtype=acc_dtype(cp, dtype))
        ticket = cp.zeros(1, dtype=cp.uint32)

        def enqueue(j):
            f((grid,), (block,), (s.view(dtype, n, j), out, np.uint64(n), partials, ticket))
        return enqueue, lambda: out[0].item(), f"grid {grid}"
    return prepare


TILE_SHAPES_TRIED = [(128, 4), (256, 4), (256, 8), (512, 8), (512, 16), (1024, 4), (1024, 8)]
TILE_DEFINES = ("TILE_SHAPES(M,body,suffix,In,Acc)=" + " ".join(f"M(body,suffix,In,Acc,{b},{l})" for b, l in TILE_SHAPES_TRIED),)


def read_only(s):
    cp = s.cp
    np = __import__("numpy")

    def prepare(n, dtype):
        f = s.k.function("read_only.cu", f"read_only_{dtype}")
        grid = max(1, -(-n // (512 * 32)))
        out = poisoned(cp, dtype, 1)

        def enqueue(j):
            cp.cuda.runtime.memsetAsync(out.data.ptr, 0, out.itemsize, cp.cuda.get_current_stream().ptr)
            f((grid,), (512,), (s.view(dtype, n, j), out, np.uint64(n)))
        return enqueue, lambda: out[0].item(), f"grid {grid}"
    return prepare


K15_VARIANTS = {
    # name: (entry suffix, block). b1024: one virtual lane per thread, __launch_bounds__(1024, 2),
    # 32 registers and no spills (ptxas -v, CUDA 13.0, sm_90); the others: 45-48 registers.
    "base512": ("", 512),
    "b1024": ("_b1024", 1024),
}


def chunked15(s, body, variant, random_inputs):
    cp = s.cp
    np = __import__("numpy")
    suffix, block = K15_VARIANTS[variant]

    def launcher(n):
        f = s.k.function("15_reproducible.cu", f"{body}{suffix}_f32")
        chunks = -(-n // 16384)
        out = poisoned(cp, "f32", 1)
        partials = cp.zeros(2 * chunks + 4, dtype=cp.float32)
        ticket = cp.zeros(1, dtype=cp.uint32)
        return f, chunks, out, partials, ticket

    def prepare(n, dtype):
        if dtype != "f32":
            raise Skip("kernel 15 is f32 in")
        f, chunks, out, partials, ticket = launcher(n)

        def enqueue(j, x=None):
            f((chunks,), (block,), (s.view(dtype, n, j) if x is None else x, out, np.uint64(n), partials, ticket))
        # The order must not have changed: the same bits as the registered kernel on random reals.
        for m, x in random_inputs.items():
            if m > n:
                continue
            g, c2, o2, p2, t2 = launcher(m)
            g((c2,), (block,), (x, o2, np.uint64(m), p2, t2))
            ref = REFERENCE_BITS.setdefault((body, m), None)
            bits = int(o2.view(cp.uint32)[0].item())
            if variant == "base512":
                REFERENCE_BITS[(body, m)] = bits
            elif ref is not None and ref != bits:
                raise Skip(f"{body} {variant}: bits {bits:#x} at n={m} differ from the registered kernel's {ref:#x}")
        return enqueue, lambda: out[0].item(), f"grid {chunks} block {block}"
    return prepare


REFERENCE_BITS = {}


def rows_warp(s, lanes, block):
    cp = s.cp
    np = __import__("numpy")

    def prepare(m, n):
        f = s.k.function("13_rows.cu", "rows_warp_f32")
        rows_per_block = block // lanes
        grid = -(-m // rows_per_block)
        out = cp.full(m, float("nan"), dtype=cp.float32)

        def enqueue(j):
            x = s.view("f32", m * n, j)
            f((grid,), (block,), (x, out, np.uint64(m), np.uint64(n), np.uint64(n), np.uint32(lanes)))
        return enqueue, out, f"lanes {lanes} block {block} grid {grid}"
    return prepare


# ---------------------------------------------------------------------------------------------

def contenders_for(s, n, dtype, tl_sum, tr_sum, random_inputs):
    """(name, title, status, prepare) measured at n: graph-amortized."""
    out = [("read_only", "read-only ceiling (kernels/read_only.cu)", "ceiling", read_only(s))]
    k = []
    # The book's kernels as the benchmark launches them (preferred blocks), the best of them so far.
    big = n >= 1 << 25
    b = 1024 if big else 256
    k.append((f"reduce12_b{b}", "reduce12 (multi-pass)", multipass(s, "12_cub_block_reduce.cu", lambda d: f"reduce12_b{b}_{d}", b, b * 16, True, 0)))
    k.append((f"reduce10_last_block_b{b}", "reduce10_last_block", single_pass(s, "10_single_pass.cu", lambda d: f"reduce10_last_block_{d}", b, b * 16, True, "ticket")))
    k.append((f"reduce9_b{b}", "reduce9 (multi-pass)", multipass(s, "09_vectorized.cu", lambda d: f"reduce9_{d}", b, b * 16, True, 0)))
    if n <= 1 << 20:
        k.append(("reduce6_b256", "reduce6 (multi-pass)", multipass(s, "06_complete_unroll.cu", lambda d: f"reduce6_b256_{d}", 256, 512, False, 256 * 4)))
        k.append(("reduce8_b256", "reduce8 (multi-pass)", multipass(s, "08_warp_shuffle.cu", lambda d: f"reduce8_{d}", 256, 512, True, 0)))
    # One block, one launch: the small-n path.
    if n <= 1 << 16:
        for bb in (256, 512, 1024):
            k.append((f"reduce9_one_block_b{bb}", "reduce9, one block", single_pass(s, "09_vectorized.cu", lambda d: f"reduce9_{d}", bb, bb * 16, True, "plain", cap_blocks=1)))
        k.append(("reduce12_one_block_b1024", "reduce12, one block", single_pass(s, "12_cub_block_reduce.cu", lambda d: f"reduce12_b1024_{d}", 1024, 1024 * 16, True, "plain", cap_blocks=1)))
    # reduce10_tiles' shapes by size.
    if n <= 1 << 14:
        shapes = [(128, 4), (256, 8), (512, 8), (1024, 4)]
    elif n <= 1 << 22:
        shapes = [(128, 4), (256, 4), (256, 8), (512, 8)]
    else:
        shapes = [(512, 8), (512, 16), (1024, 4), (1024, 8)]
    for bb, ll in shapes:
        k.append((f"reduce10_tiles_b{bb}_l{ll}", "reduce10_tiles", tiles16(s, bb, ll)))
    if dtype == "i32":
        k.append((f"reduce10_atomic_b{b}", "reduce10_atomic", single_pass(s, "10_single_pass.cu", lambda d: f"reduce10_atomic_{d}", b, b * 16, True, "atomic")))
    if dtype == "f32" and n in (1 << 24, 1 << 26, 1 << 28, 1 << 30):
        for body in ("reduce15_reproducible", "reduce15_neumaier"):
            for variant in K15_VARIANTS:
                k.append((f"{body}_{variant}", f"{body} {variant}", chunked15(s, body, variant, random_inputs)))
    out += [(name, title, "correct", prep) for name, title, prep in k]
    return out


def torch_peers(torch, cupy, s, n, dtype, tl_sum, tr_sum):
    """(name, title, fn(x) -> 0-d tensor) of the peers on torch tensors."""
    p = [("torch_sum", "torch.sum (PyTorch)", lambda x: torch.sum(x))]
    if dtype != "f32" and n == s.first_size:
        log(f"TileLang and Triton skipped for {dtype}: kernels/tilelang/sum.py and kernels/triton/sum.py sum floats into f32")
    if dtype == "f32":
        if tl_sum is not None:
            p.append(("tilelang_sum", "TileLang sum (passes of T.reduce_sum)", tl_sum))
        if tr_sum is not None:
            p.append(("triton_sum", "Triton sum (tl.sum + tl.atomic_add)", tr_sum.array_sum))
    return p


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="plots/data/tuning")
    ap.add_argument("--sizes", default=",".join(f"2^{k}" for k in range(10, 31)))
    ap.add_argument("--dtypes", default="f32,i32")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--kernels", default=str(HERE.parent / "kernels"), help="kernel directories, first wins (DIR:DIR)")
    ap.add_argument("--cub", default=None, help="the built plots/cub_sum.cu program, run after each round")
    ap.add_argument("--deadline", type=float, default=1e9, help="seconds; later rounds stop early past it")
    ap.add_argument("--no-rows", action="store_true")
    ap.add_argument("--ncu", action="store_true", help="launch each profiled kernel once at 2^28 and exit")
    args = ap.parse_args()
    started = time.time()
    sizes = [peers.parse_size(x) for x in args.sizes.split(",")]
    dtypes = args.dtypes.split(",")
    import cupy as cp
    kernels = Kernels(cp, args.kernels.split(":"))
    dev = cp.cuda.Device()
    attrs = dev.attributes
    props = {"sm_count": attrs["MultiProcessorCount"], "l2": attrs["L2CacheSize"]}

    if args.ncu:
        return ncu_launches(cp, kernels, props)

    import torch
    os.environ.setdefault("CUPY_ACCELERATORS", "cub")
    import importlib
    import tile_peers
    tl_sum = tr_sum = None
    tl_rows = None
    mod, why = tile_peers.load_kernel("tilelang/sum.py")
    if mod is None:
        log(f"TileLang skipped: {why}")
    else:
        try:
            tl_sum = mod.ArraySum("float32")
            rmod, why = tile_peers.load_kernel("tilelang/row_sum.py")
            tl_rows = rmod
        except Exception as e:
            log(f"TileLang skipped: {type(e).__name__}: {e}")
            tl_sum = None
    tr_sum, why = tile_peers.load_kernel("triton/sum.py")
    if tr_sum is None:
        log(f"Triton skipped: {why}")
    tr_rows, _ = tile_peers.load_kernel("triton/row_sum.py")

    largest = max(sizes)
    pools = {}
    for d in dtypes:
        length = max(2 * largest, 8 * props["l2"] // 4)
        limit = max(1, min((1 << 24) // largest, 128)) if d == "f32" else max(1, min((2 ** 31 - 1) // largest, 1000))
        mags = cp.random.randint(1, limit + 1, size=length, dtype=cp.int32)
        signs = cp.random.randint(0, 2, size=length, dtype=cp.int32) * 2 - 1
        pools[d] = (mags * signs).astype(cp.float32 if d == "f32" else cp.int32)
        del mags, signs
        log(f"{d}: pool of {length} values, nonzero integers up to {limit}, random signs")
    cp.cuda.Device().synchronize()
    s = Setup(cp, torch, kernels, pools, props)
    s.first_size = sizes[0]
    rng = cp.random.default_rng(7)
    random_inputs = {m: rng.uniform(-1, 1, m, dtype=cp.float32) for m in ((1 << 24) + 12345, 1 << 26)}
    stream = cp.cuda.Stream(non_blocking=True)
    gpu = torch.cuda.get_device_properties(0).name
    slug = peers.slug(gpu)
    os.makedirs(args.out, exist_ok=True)
    versions = f"torch {torch.__version__}, cupy {cp.__version__}"

    def exact(dtype, n):
        return float(cp.sum(pools[dtype][:n], dtype=cp.float64).item())

    for rnd in range(1, args.rounds + 1):
        if rnd > 1 and time.time() - started > args.deadline:
            log(f"round {rnd} skipped: past the deadline of {args.deadline:.0f} s")
            break
        rows = []
        path = os.path.join(args.out, f"{slug}-sum-round{rnd}.csv")

        def save():  # after every size, so that a run cut short keeps what it measured
            with open(path, "w") as f:
                f.write("\n".join(peers.header(torch, torch.cuda.get_device_properties(0), versions, f"python3 plots/tune_sum.py (round {rnd})")
                                  + [peers.COLUMNS] + rows) + "\n")
        for dtype in dtypes:
            for n in sizes:
                save()
                want = exact(dtype, n)
                nbytes = 4 * n
                slots = s.slots(dtype, n)
                for name, title, status, prepare in contenders_for(s, n, dtype, tl_sum, tr_sum, random_inputs):
                    try:
                        with stream:
                            enqueue, read, detail = prepare(n, dtype)
                            enqueue(0)
                            stream.synchronize()
                            got = read()
                        if float(got) != want:
                            log(f"{name} {dtype} n={n}: WRONG {got} vs {want} ({detail}); not timed")
                            continue
                        times, ops, method = time_graph(cp, stream, enqueue)
                    except Skip as e:
                        log(f"{name} {dtype} n={n}: skipped: {e}")
                        continue
                    except Exception as e:
                        log(f"{name} {dtype} n={n}: failed: {type(e).__name__}: {str(e)[:300]}")
                        continue
                    med = statistics.median(times)
                    rows.append(peers.csv_row(name, title, dtype, n, med, times, nbytes, min(ops, slots) * nbytes, method).replace(",peer,", f",{status},", 1))
                    log(f"r{rnd} {dtype} 2^{math.log2(n):<5.2f} {name:34} {med:10.3f} us {nbytes / med / 1e3:8.1f} GB/s  {detail}")
                # The peers, graph-amortized on torch tensors, then host-visible.
                for name, title, fn in torch_peers(torch, cp, s, n, dtype, tl_sum, tr_sum):
                    try:
                        x0 = torch.from_dlpack(s.view(dtype, n, 0))
                        got = float(fn(x0).reshape(()).item())
                        if got != want:
                            log(f"{name} {dtype} n={n}: WRONG {got} vs {want}; not timed")
                            continue
                        box = [None]

                        def enq(j, fn=fn, n=n, dtype=dtype):
                            box[0] = fn(torch.from_dlpack(s.view(dtype, n, j)))
                        times, ops, method = peers.time_graph(torch, enq, True)
                    except Exception as e:
                        log(f"{name} {dtype} n={n}: failed: {type(e).__name__}: {str(e)[:300]}")
                        continue
                    med = statistics.median(times)
                    rows.append(peers.csv_row(name, title, dtype, n, med, times, nbytes, min(ops, slots) * nbytes, method))
                    log(f"r{rnd} {dtype} 2^{math.log2(n):<5.2f} {name:34} {med:10.3f} us {nbytes / med / 1e3:8.1f} GB/s  ({method})")
                # CuPy's sum (CUB) is not captured: CuPy allocates CUB's storage per call.
                try:
                    got = float(cp.sum(s.view(dtype, n, 0)).item())
                    if got != want:
                        log(f"cupy_sum_cub {dtype} n={n}: WRONG {got} vs {want}")
                    else:
                        box = [None]

                        def enq_cupy(j, n=n, dtype=dtype):
                            box[0] = cp.sum(s.view(dtype, n, j))
                        # CuPy and torch both launch on the legacy default stream here.
                        times, ops, method = peers.time_graph(torch, enq_cupy, False)
                        med = statistics.median(times)
                        rows.append(peers.csv_row("cupy_sum_cub", "cupy.sum (CUB)", dtype, n, med, times, nbytes, min(ops, slots) * nbytes, method))
                        log(f"r{rnd} {dtype} 2^{math.log2(n):<5.2f} {'cupy_sum_cub':34} {med:10.3f} us  ({method})")
                except Exception as e:
                    log(f"cupy_sum_cub {dtype} n={n}: failed: {type(e).__name__}: {str(e)[:300]}")
                # Host-visible: one call and its result on the host.
                host = [("torch_sum_host", "torch.sum(x).item(), host-visible", lambda j, n=n, dtype=dtype: torch.sum(torch.from_dlpack(s.view(dtype, n, j))).item()),
                        ("cupy_sum_cub_host", "cupy.sum(x).item() (CUB), host-visible", lambda j, n=n, dtype=dtype: cp.sum(s.view(dtype, n, j)).item())]
                for name, title, call in host:
                    try:
                        if float(call(0)) != want:
                            log(f"{name} {dtype} n={n}: WRONG")
                            continue
                        times, ops, method = time_host(call)
                    except Exception as e:
                        log(f"{name} {dtype} n={n}: failed: {type(e).__name__}: {str(e)[:300]}")
                        continue
                    med = statistics.median(times)
                    rows.append(peers.csv_row(name, title, dtype, n, med, times, nbytes, min(len(times) + 15, slots) * nbytes, method))
                    log(f"r{rnd} {dtype} 2^{math.log2(n):<5.2f} {name:34} {med:10.3f} us host-visible")
        save()
        log(f"round {rnd}: {len(rows)} measurements written to {path} ({time.time() - started:.0f} s)")
        if not args.no_rows:
            measure_rows(cp, torch, s, stream, tl_rows, tr_rows, rnd, args.out, slug, versions)
        if args.cub:
            for _ in range(120):  # the program may still be building
                if os.path.exists(args.cub) or os.path.exists(args.cub + ".failed"):
                    break
                time.sleep(1)
            if not os.path.exists(args.cub):
                log(f"CUB skipped: {args.cub} was not built")
                continue
            out = os.path.join(args.out, f"{slug}-cub-round{rnd}.csv")
            cmd = [args.cub, "--sizes", args.sizes, "--dtypes", args.dtypes, "--out", out]
            log("running " + " ".join(cmd))
            rc = subprocess.call(cmd)
            log(f"cub_sum exited {rc} ({time.time() - started:.0f} s)")


def measure_rows(cp, torch, s, stream, tl_rows, tr_rows, rnd, out_dir, slug, versions):
    m, n = 4096, 64
    nbytes = 4 * m * n
    slots = s.slots("f32", m * n)
    rows = []
    want = cp.sum(s.view("f32", m * n, 0).reshape(m, n), axis=1, dtype=cp.float64)
    for lanes in (2, 4, 8, 16, 32):
        for block in (64, 128, 256, 512):
            name = f"rows_warp_l{lanes}_b{block}"
            try:
                with stream:
                    enqueue, outbuf, detail = rows_warp(s, lanes, block)(m, n)
                    enqueue(0)
                    stream.synchronize()
                if not bool(cp.all(outbuf.astype(cp.float64) == want)):
                    log(f"{name}: WRONG")
                    continue
                times, ops, method = time_graph(cp, stream, enqueue)
            except Exception as e:
                log(f"{name}: failed: {type(e).__name__}: {str(e)[:200]}")
                continue
            med = statistics.median(times)
            rows.append(peers.csv_row(name, "rows_warp", "f32", n, med, times, nbytes, min(ops, slots) * nbytes, method).replace(",peer,", ",correct,", 1))
            log(f"r{rnd} rows 4096x64 {name:24} {med:8.3f} us  {detail}")
    fns = [("torch_sum_dim1", lambda x: torch.sum(x, dim=1))]
    if tl_rows is not None:
        try:
            k = tl_rows.compile_row_sum(n, "float32", m)
            fns.append(("tilelang_row_sum", lambda x, k=k: k(x)))
        except Exception as e:
            log(f"tilelang rows: {type(e).__name__}: {e}")
    if tr_rows is not None:
        fns.append(("triton_row_sum", tr_rows.row_sum))
    want_t = torch.from_dlpack(want)
    for name, fn in fns:
        try:
            x0 = torch.from_dlpack(s.view("f32", m * n, 0)).view(m, n)
            if not bool((fn(x0).double() == want_t).all()):
                log(f"{name}: WRONG")
                continue
            box = [None]

            def enq(j, fn=fn):
                box[0] = fn(torch.from_dlpack(s.view("f32", m * n, j)).view(m, n))
            times, ops, method = peers.time_graph(torch, enq, True)
        except Exception as e:
            log(f"{name}: failed: {type(e).__name__}: {str(e)[:200]}")
            continue
        med = statistics.median(times)
        rows.append(peers.csv_row(name, name, "f32", n, med, times, nbytes, min(ops, slots) * nbytes, method))
        log(f"r{rnd} rows 4096x64 {name:24} {med:8.3f} us  ({method})")
    path = os.path.join(out_dir, f"{slug}-rows-round{rnd}.csv")
    with open(path, "w") as f:
        f.write("\n".join(peers.header(torch, torch.cuda.get_device_properties(0), versions, f"python3 plots/tune_sum.py (rows, round {rnd})")
                          + [peers.COLUMNS] + rows) + "\n")


def ncu_launches(cp, kernels, props):
    """One launch of each kernel that the job profiles, at n = 2^28 f32 (exact inputs)."""
    import numpy as np
    n = 1 << 28
    x = (cp.random.randint(0, 2, size=n, dtype=cp.int32) * 2 - 1).astype(cp.float32)
    s = Setup(cp, None, kernels, {"f32": x}, props)
    s.view = lambda dtype, m, j: x[:m]
    todo = [("read_only", read_only(s)),
            ("reduce10_tiles_b512_l8", tiles16(s, 512, 8)),
            ("reduce10_last_block_b1024", single_pass(s, "10_single_pass.cu", lambda d: f"reduce10_last_block_{d}", 1024, 1024 * 16, True, "ticket"))]
    for body in ("reduce15_neumaier", "reduce15_reproducible"):
        for variant in K15_VARIANTS:
            todo.append((f"{body}_{variant}", chunked15(s, body, variant, {})))
    want = float(cp.sum(x, dtype=cp.float64).item())
    for name, prepare in todo:
        try:
            enqueue, read, detail = prepare(n, "f32")
            enqueue(0)
            cp.cuda.Device().synchronize()
            print(f"ncu launch {name}: {read()} (exact {want}) {detail}", flush=True)
        except Exception as e:
            print(f"ncu launch {name}: {type(e).__name__}: {e}", flush=True)


if __name__ == "__main__":
    main()
