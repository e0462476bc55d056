"""What plots/op_peers.py and plots/dl_peers.py share: their command line, the bytes each
operation must move, the memory they may use, the rotated input pools, the check-then-time loop,
and the two files they write (the interface of /work/coord/peers-interface.md).

Nothing here imports torch at module level, so that the command line, the byte counts and the
CSV rows can be tested on a machine with no GPU (`--self-test`).

    <gpu-slug>-peers.csv          every peer measured: peers.py's columns, then op,rows
    <gpu-slug>-peers-refused.csv  every (peer, shape, type) that was not timed, and why:
                                  the library refused it, raised, or its answer was wrong
"""
import argparse
import os
import re
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.dont_write_bytecode = True  # no plots/__pycache__ beside the data
import peers  # noqa: E402  (the timing, the CSV row and the header are shared)

COLUMNS = peers.COLUMNS + ",op,rows"
REFUSED_COLUMNS = "kernel,title,status,dtype,n,rows,op,reason"
DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "i32": "int32"}
SIZES = {"f32": 4, "f16": 2, "bf16": 2, "i32": 4}
INDEX_BYTES = 8  # argmax / argmin write int64 indices, as torch does
STATS_BYTES = 4  # the saved mean and 1/σ (LayerNorm), 1/rms (RMSNorm), the losses: f32
TARGET_BYTES = 8  # cross-entropy's targets: int64
OPERATOR_OPS = ("max", "min", "argmax", "argmin", "mean_var", "sumsq")
DL_OPS = ("softmax", "log_softmax", "layer_norm", "rms_norm", "cross_entropy", "softmax_bwd",
          "layer_norm_bwd_gamma_beta", "layer_norm_bwd")
IGNORE_INDEX = -100


def parse_size(s):
    """2^k, or a plain number (1e6 too)."""
    s = s.strip()
    try:
        return 1 << int(s[2:]) if s.startswith("2^") else int(float(s))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r} is not a size (2^k or a number)") from None


def parse_shapes(text):
    """MxN,MxN,... (each side 2^k or a number)."""
    shapes = []
    for item in text.split(","):
        parts = item.strip().split("x")
        if len(parts) != 2:
            raise argparse.ArgumentTypeError(f"{item!r} is not a shape MxN")
        m, n = (parse_size(p) for p in parts)
        if m < 1 or n < 1:
            raise argparse.ArgumentTypeError(f"{item!r}: both sides must be at least 1")
        shapes.append((m, n))
    return shapes


def parse_sizes(text):
    sizes = [parse_size(s) for s in text.split(",")]
    if any(n < 1 for n in sizes):
        raise argparse.ArgumentTypeError("sizes must be at least 1")
    return sizes


def chooser(known, what):
    """An argparse type for a comma list drawn from `known`."""
    def parse(text):
        items = [s.strip() for s in text.split(",") if s.strip()]
        unknown = [s for s in items if s not in known]
        if unknown or not items:
            raise argparse.ArgumentTypeError(f"unknown {what} {unknown or text!r}; known: {', '.join(known)}")
        return items
    return parse


def parse_memory(text):
    """REDUCTION_DEVICE_MEMORY, read as the library and plots/peers.py read it (6GiB, 512MiB, 8GB
    decimal, or bytes: peers.parse_memory_size)."""
    try:
        return peers.parse_memory_size(text)
    except ValueError as e:
        raise ValueError(f"REDUCTION_DEVICE_MEMORY={text!r}: {e}") from None


def dl_shapes():
    """issue 23's shapes: M·N = 2^28 for N = 2^8 ... 2^18, then 4096 × 4096 and 8192 × 128256."""
    return [(1 << (28 - k), 1 << k) for k in range(8, 19)] + [(4096, 4096), (8192, 128256)]


def op_bytes(op, dtype, m, n):
    """What must cross memory at least once (peers-interface.md): every input read once, every
    output written once. Values in the input's type; indices int64; saved statistics, losses and
    their mean f32; targets int64. rows = m (m = 1 with n the element count: whole-array)."""
    s = SIZES[dtype]
    mn = m * n
    if op in ("max", "min", "sum"):
        return mn * s + m * s
    if op in ("argmax", "argmin"):
        return mn * s + m * INDEX_BYTES
    if op == "mean_var":
        return mn * s + 2 * m * s
    if op == "sumsq":
        return mn * s + m * s
    if op in ("softmax", "log_softmax"):
        return 2 * mn * s
    if op == "layer_norm":  # x, γ, β in; y, mean, 1/σ out
        return mn * s + 2 * n * s + mn * s + 2 * m * STATS_BYTES
    if op == "rms_norm":  # x, γ in; y, 1/rms out
        return mn * s + n * s + mn * s + m * STATS_BYTES
    if op == "cross_entropy":  # logits, targets in; M losses and their mean out
        return mn * s + m * TARGET_BYTES + m * STATS_BYTES + STATS_BYTES
    if op == "softmax_bwd":  # y, dy in; dx out
        return 3 * mn * s
    if op == "layer_norm_bwd_gamma_beta":  # dy, x, mean, 1/σ in; dγ, dβ out
        return 2 * mn * s + 2 * m * STATS_BYTES + 2 * n * s
    if op == "layer_norm_bwd":  # dy, x, γ, mean, 1/σ in; dx, dγ, dβ out (the whole backward)
        return 3 * mn * s + 3 * n * s + 2 * m * STATS_BYTES
    raise ValueError(f"no byte count for op {op!r}")


def csv_row(kernel, title, op, dtype, m, n, median, times, nbytes, working_set, method):
    """One measured line: peers.py's columns, then op and rows."""
    return peers.csv_row(kernel, title, dtype, n, median, times, nbytes, working_set, method) + f",{op},{m}"


def quote(text):
    return '"' + str(text).replace('"', "'").replace("\n", " ") + '"'


def refused_row(kernel, title, status, op, dtype, m, n, reason):
    """One line of the refused file: status is `refused` (the library said no or raised) or
    `wrong` (its answer failed the check)."""
    return f"{kernel},{quote(title)},{status},{dtype},{n},{m},{op},{quote(reason[:300])}"


class Peer:
    """A library (or tile-language) implementation of one op: fn(*inputs) -> result. `dtypes`
    limits the element types; `refuse(m, n, dtype)` returns a reason when the library is known to
    refuse a shape, so that it is recorded without being called; `capture` is whether its calls can
    go into a CUDA graph."""

    def __init__(self, kernel, title, op, fn, dtypes=None, capture=True, refuse=None, rows_only=None):
        self.kernel, self.title, self.op, self.fn = kernel, title, op, fn
        self.dtypes, self.capture, self.refuse, self.rows_only = dtypes, capture, refuse, rows_only


def base_parser(doc, default_ops, default_dtypes):
    """The command line peers-interface.md fixes, shared by both scripts."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                     epilog="Sizes and shape sides are 2^k or plain numbers.")
    parser.add_argument("--out", default=None, help="folder of <gpu-slug>-peers.csv (default: plots/data/<area>)")
    parser.add_argument("--dtypes", type=chooser(list(DTYPES), "dtype"), default=default_dtypes)
    parser.add_argument("--ops", type=chooser(default_ops, "op"), default=list(default_ops))
    parser.add_argument("--peers", default=None, help="only the peers whose kernel id starts with one of these (comma list)")
    parser.add_argument("--skip-peers", default=None, help="leave out the peers whose kernel id starts with one of these")
    parser.add_argument("--quick", action="store_true", help="a few sizes and shapes (the script's own list), f32 and bf16")
    parser.add_argument("--budget-s", type=float, default=None,
                        help="start no new shape after this many seconds (default: $REDUCTION_PEERS_BUDGET_S, else none); "
                             "what is left is listed as skipped")
    parser.add_argument("--self-test", action="store_true", help="check the command line, byte counts and CSV rows (no GPU) and exit")
    return parser


class Budget:
    """A time limit on starting new cases, so that a benchmark that runs these scripts can bound
    its own time: --budget-s, else REDUCTION_PEERS_BUDGET_S, else none."""

    def __init__(self, seconds=None, clock=None):
        import time
        self.clock = clock or time.monotonic
        if seconds is None and os.environ.get("REDUCTION_PEERS_BUDGET_S"):
            seconds = float(os.environ["REDUCTION_PEERS_BUDGET_S"])
        self.seconds, self.start, self.skipped = seconds, self.clock(), []

    def allows(self, what, until=None):
        """True while time is left (and, with `until`, before that clock time: a share); otherwise
        records `what` as skipped and returns False."""
        now = self.clock()
        if (self.seconds is None or now - self.start < self.seconds) and (until is None or now < until):
            return True
        self.skipped.append(what)
        return False

    def share(self, parts):
        """The clock time by which the first of `parts` equal shares of what is left ends (None:
        no budget), so that a run over several types does not spend it all on the first."""
        if self.seconds is None:
            return None
        now = self.clock()
        return now + max(0.0, self.start + self.seconds - now) / max(1, parts)

    def report(self, log):
        if self.skipped:
            log(f"time budget of {self.seconds:.0f} s spent: not measured: {', '.join(self.skipped)}")


def select(all_peers, args):
    def starts(peer, prefixes):
        return any(peer.kernel.startswith(p.strip()) for p in prefixes.split(",") if p.strip())
    chosen = [p for p in all_peers if p.op in args.ops]
    if args.peers:
        chosen = [p for p in chosen if starts(p, args.peers)]
    if args.skip_peers:
        chosen = [p for p in chosen if not starts(p, args.skip_peers)]
    return chosen


def import_torch():
    """torch with a CUDA GPU, or exit with the reason (status 2): the scripts are optional peers."""
    try:
        import torch
    except ImportError as e:
        sys.exit(f"PyTorch is needed for the CUDA events and graphs (and for the torch peers): {e}")
    if not torch.cuda.is_available():
        sys.exit("no CUDA GPU visible to PyTorch: nothing measured")
    return torch


class Memory:
    """What the peers may allocate: the free device memory, or REDUCTION_DEVICE_MEMORY (issue 21)
    taken as the device's free memory when it is set (less what this process already holds)."""

    def __init__(self, torch):
        self.torch = torch
        cap = os.environ.get("REDUCTION_DEVICE_MEMORY")
        self.cap = parse_memory(cap) if cap else None
        if self.cap is not None:
            peers.limit_torch_to_cap(torch)  # what no plan sees fails under the cap as it would when held

    def free(self):
        free, _ = self.torch.cuda.mem_get_info()
        if self.cap is not None:
            free = min(free, self.cap - self.torch.cuda.memory_reserved())
        return free

    def why_not(self, need):
        """None when `need` bytes fit; otherwise the reason."""
        free = self.free()
        if need <= free:
            return None
        where = f"REDUCTION_DEVICE_MEMORY={os.environ['REDUCTION_DEVICE_MEMORY']}" if self.cap is not None else "the GPU"
        return f"needs {need / 2**30:.2f} GiB, {where} has {max(free, 0) / 2**30:.2f} GiB free"


class Pool:
    """Random values of one type, larger than L2, that timed calls rotate through: slot j is
    elements [j·step, j·step + count) for inputs of `count` values."""

    def __init__(self, torch, dtype, length, seed=2007, low=-1.0, high=1.0):
        self.torch, self.dtype, self.length = torch, dtype, length
        gen = torch.Generator(device="cuda").manual_seed(seed)
        tdtype = getattr(torch, DTYPES[dtype])
        if dtype == "i32":
            self.data = torch.randint(-(1 << 30), 1 << 30, (length,), device="cuda", dtype=torch.int32, generator=gen)
        else:
            self.data = (torch.rand(length, device="cuda", dtype=torch.float32, generator=gen) * (high - low) + low).to(tdtype)

    def slots(self, count):
        step = -(-count // 256) * 256
        return max(1, (self.length - count) // step + 1), step

    def view(self, count, j, shape):
        slots, step = self.slots(count)
        o = (j % slots) * step
        return self.data[o:o + count].view(shape)


def fitting(shapes, need, memory, log, dtype):
    """The shapes (m, n) whose `need(m, n)` bytes fit in the GPU's memory; every other one is
    logged as skipped, with the reason."""
    fits = []
    for m, n in shapes:
        why = memory.why_not(need(m, n))
        if why is None:
            fits.append((m, n))
        else:
            log(f"{dtype} {m}x{n}: skipped, does not fit: {why}")
    return fits


def pool_length(torch, cases, dtype):
    """peers.py's rule: twice the largest input, and at least 8 times L2."""
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 60 << 20)
    largest = max((m * n for m, n in cases), default=1)
    return max(2 * largest, 8 * l2 // SIZES[dtype])


def measure(torch, peer, case, inputs_for, check, memory_need, memory, nbytes, slots, rows, refused, log):
    """Check `peer` on the inputs of slot 0, then time it over the rotated slots; append the
    result to rows (measured) or refused (not timed, with the reason)."""
    m, n, dtype = case
    name = f"{peer.kernel} {dtype} {m}x{n}"
    if peer.refuse is not None:
        why = peer.refuse(m, n, dtype)
        if why:
            refused.append(refused_row(peer.kernel, peer.title, "refused", peer.op, dtype, m, n, why))
            log(f"{name}: refused: {why}")
            return
    why = memory.why_not(memory_need)
    if why:
        log(f"{name}: skipped, does not fit: {why}")
        return
    try:
        got = peer.fn(*inputs_for(0))
        torch.cuda.synchronize()
        wrong = check(got, inputs_for(0))
    except peers.out_of_memory(torch) as e:  # the GPU (or the cap) is too small: a skip, as above
        log(f"{name}: skipped, out of device memory: {str(e).strip().splitlines()[0][:160] if str(e).strip() else ''}")
        torch.cuda.empty_cache()
        return
    except Exception as e:  # the library refused the shape or type, or failed
        reason = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
        refused.append(refused_row(peer.kernel, peer.title, "refused", peer.op, dtype, m, n, reason))
        log(f"{name}: refused: {reason}")
        torch.cuda.synchronize()
        return
    del got
    if wrong:
        refused.append(refused_row(peer.kernel, peer.title, "wrong", peer.op, dtype, m, n, wrong))
        log(f"{name}: WRONG, not timed: {wrong}")
        return
    out = [None]

    def enqueue(j):
        out[0] = peer.fn(*inputs_for(j))

    try:
        times, ops, method = peers.time_graph(torch, enqueue, peer.capture)
    except Exception as e:
        reason = f"timing failed: {type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
        refused.append(refused_row(peer.kernel, peer.title, "refused", peer.op, dtype, m, n, reason))
        log(f"{name}: {reason}")
        return
    out[0] = None
    median = statistics.median(times)
    working_set = min(ops, slots) * nbytes
    rows.append(csv_row(peer.kernel, peer.title, peer.op, dtype, m, n, median, times, nbytes, working_set, method))
    # Min and max as well: a lost CSV can be rebuilt whole from this line.
    print(f"{peer.kernel:34} {peer.op:26} {dtype:4} {m:>9} x {n:<10} {median:10.2f} µs {nbytes / median / 1e3:8.1f} GB/s  "
          f"[{min(times):.3f} … {max(times):.3f} µs, {len(times)} repeats]  ({method})", flush=True)


def write(out_dir, torch, versions, command, rows, refused, quiet=False):
    """Both files, rewritten whole: called after every shape, so that a run stopped by a time
    limit keeps what it measured."""
    props = torch.cuda.get_device_properties(0)
    os.makedirs(out_dir, exist_ok=True)
    header = peers.header(torch, props, ", ".join(versions), command)
    path = os.path.join(out_dir, f"{peers.slug(props.name)}-peers.csv")
    with open(path, "w") as f:
        f.write("\n".join(header + [COLUMNS] + rows) + "\n")
    refused_path = os.path.join(out_dir, f"{peers.slug(props.name)}-peers-refused.csv")
    with open(refused_path, "w") as f:
        f.write("\n".join(header + [REFUSED_COLUMNS] + refused) + "\n")
    if not quiet:
        print(f"{len(rows)} peer measurements written to {path}; {len(refused)} not timed, with the reason, in {refused_path}")


def command_line():
    """The command as it was typed, for the header (paths relative to the repository)."""
    # realpath: HERE is resolved, and the repository may sit behind a symbolic link;
    # normpath: `./plots/x.py` (a test run from the root) is `plots/x.py`
    script = os.path.relpath(os.path.realpath(sys.argv[0]), HERE.parent) if os.path.isabs(sys.argv[0]) else os.path.normpath(sys.argv[0])
    return " ".join(["python3", script] + [a if re.fullmatch(r"[\w.,^/=:+-]*", a) else repr(a) for a in sys.argv[1:]])


def self_test_common(expect):
    """GPU-free checks of what both scripts share; `expect(cond, what)` records a verdict."""
    expect(parse_size("2^10") == 1024 and parse_size("1e6") == 1000000 and parse_size("37") == 37, "sizes parse")
    expect(parse_shapes("4096x64,2^20x2^8") == [(4096, 64), (1 << 20, 256)], "shapes parse")
    for bad in ("4096", "4096x", "0x5", "ax3", "4096x64x2"):
        try:
            parse_shapes(bad)
            expect(False, f"shape {bad!r} is refused")
        except argparse.ArgumentTypeError:
            expect(True, f"shape {bad!r} is refused")
    try:
        chooser(list(DTYPES), "dtype")("f32,f64")
        expect(False, "an unknown dtype is refused")
    except argparse.ArgumentTypeError as e:
        expect("f64" in str(e), "an unknown dtype is refused, by name")
    expect(parse_memory("6GiB") == 6 << 30 and parse_memory("512MiB") == 512 << 20 and parse_memory("8GB") == 8 * 10 ** 9
           and parse_memory("1000") == 1000, "memory caps parse as the library parses them")
    shapes = dl_shapes()
    expect(all(m * n == 1 << 28 for m, n in shapes[:-2]) and shapes[0] == (1 << 20, 256) and shapes[10] == (1024, 1 << 18)
           and shapes[-2:] == [(4096, 4096), (8192, 128256)], "issue 23's shapes")
    # The byte counts peers-interface.md states, at one shape each.
    m, n = 1024, 4096
    expect(op_bytes("argmax", "f32", 1, 1 << 28) == 4 * (1 << 28) + 8, "argmax reads n values, writes one index")
    expect(op_bytes("max", "bf16", m, n) == 2 * m * n + 2 * m, "row max: M·N read, M written")
    expect(op_bytes("mean_var", "f32", m, n) == 4 * m * n + 8 * m, "mean and variance: two values a row")
    expect(op_bytes("softmax", "bf16", m, n) == 4 * m * n, "softmax reads and writes M·N")
    expect(op_bytes("layer_norm", "f32", m, n) == 8 * m * n + 8 * n + 8 * m, "LayerNorm: x, γ, β in; y, mean, 1/σ out")
    expect(op_bytes("rms_norm", "bf16", m, n) == 4 * m * n + 2 * n + 4 * m, "RMSNorm: x, γ in; y, 1/rms out")
    expect(op_bytes("cross_entropy", "bf16", m, n) == 2 * m * n + 8 * m + 4 * m + 4, "cross-entropy: logits, targets in; losses, mean out")
    expect(op_bytes("softmax_bwd", "f32", m, n) == 12 * m * n, "softmax backward: y, dy in; dx out")
    expect(op_bytes("layer_norm_bwd_gamma_beta", "f32", m, n) == 8 * m * n + 8 * m + 8 * n, "dγ, dβ: dy, x, mean, 1/σ in")
    try:
        op_bytes("median", "f32", m, n)
        expect(False, "an op with no byte count is an error")
    except ValueError:
        expect(True, "an op with no byte count is an error")
    row = csv_row("torch_amax_dim1", 'torch.amax(x, dim=1), "rows"', "max", "f32", 8, 1024, 10.0, [9.5, 10.0, 12.0],
                  op_bytes("max", "f32", 8, 1024), 4 * 8 * 1024, "graph of 4 back-to-back, CUDA events")
    import csv as csvlib
    fields = next(csvlib.reader([row]))
    names = COLUMNS.split(",")
    expect(len(fields) == len(names) == 18, f"a measured row has the 18 columns ({len(fields)})")
    record = dict(zip(names, fields))
    expect(record["op"] == "max" and record["rows"] == "8" and record["n"] == "1024" and record["status"] == "peer", "op, rows, n, status")
    expect(abs(float(record["gbps"]) - (4 * 8 * 1024 + 32) / 10e-6 / 1e9) < 0.05, "gbps = bytes / median")
    expect(record["title"] == "torch.amax(x, dim=1), \"rows\"", "a title with commas and quotes survives")
    ticks = iter([0.0, 1.0, 5.0, 11.0])
    budget = Budget(10, clock=lambda: next(ticks))
    expect(budget.allows("a") and budget.allows("b") and not budget.allows("c") and budget.skipped == ["c"],
           "a time budget stops new cases once spent, and lists them")
    ticks = iter([0.0, 0.0, 1.0, 6.0, 6.0, 7.0, 11.0])
    budget = Budget(10, clock=lambda: next(ticks))
    first = budget.share(2)  # at 0 s: the first of two types gets until 5 s
    ok = budget.allows("f32 a", first) and not budget.allows("f32 b", first)
    second = budget.share(1)  # at 6 s: the last type gets what is left, until 10 s
    expect(first == 5.0 and second == 10.0 and ok and budget.allows("bf16 a", second) and not budget.allows("bf16 b", second)
           and budget.skipped == ["f32 b", "bf16 b"], "each type gets its share of what is left, the first cannot spend it all")
    refusal = next(csvlib.reader([refused_row("liger_softmax", "Liger softmax", "refused", "softmax", "f32", 1024, 262144,
                                              'RuntimeError: "too big", really\nsecond line')]))
    expect(len(refusal) == len(REFUSED_COLUMNS.split(",")) and refusal[2] == "refused" and refusal[5] == "1024"
           and "too big" in refusal[7], "a refused row keeps its reason")


def run_self_test(script_checks):
    results = []

    def expect(cond, what):
        results.append((bool(cond), what))

    self_test_common(expect)
    script_checks(expect)
    failed = [what for ok, what in results if not ok]
    for ok, what in results:
        print(f"{'ok  ' if ok else 'FAIL'} {what}")
    print(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


def merge(out_path, paths):
    """One results file from several written by the same script on the same GPU in back-to-back
    runs (the two device calls that Quack needs): the first file's header, the commands of all,
    the rows of all. The columns must agree."""
    header, columns, body = [], None, []
    commands = []
    for path in paths:
        with open(path) as f:
            lines = f.read().splitlines()
        head = [l for l in lines if l.startswith("# ")]
        rest = [l for l in lines if not l.startswith("# ")]
        gpu = next((l for l in head if l.startswith("# gpu: ")), None)
        if header and gpu != next((l for l in header if l.startswith("# gpu: ")), None):
            raise SystemExit(f"{path}: {gpu} is not the GPU of {paths[0]}")
        if columns is not None and rest[:1] != [columns]:
            raise SystemExit(f"{path}: columns differ from {paths[0]}'s")
        commands += [l[len("# command: "):] for l in head if l.startswith("# command: ")]
        if not header:
            header, columns = head, rest[0]
        body += rest[1:]
    versions = []  # the libraries of every file, once each, in order
    for path in paths:
        with open(path) as f:
            for line in f:
                if line.startswith("# nvrtc: "):
                    versions += [v.strip() for v in line[len("# nvrtc: "):].split(",") if v.strip() not in versions]
    header = [f"# nvrtc: {', '.join(versions)}" if l.startswith("# nvrtc: ") else l for l in header if not l.startswith("# command: ")]
    header.append(f"# command: {' ; '.join(commands)}")
    with open(out_path, "w") as f:
        f.write("\n".join(header + [columns] + body) + "\n")
    print(f"{len(body)} rows from {len(paths)} files written to {out_path}")


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "merge":
        merge(sys.argv[2], sys.argv[3:])
    else:
        sys.exit("usage: python3 plots/peer_harness.py merge OUT.csv IN.csv IN.csv ...")
