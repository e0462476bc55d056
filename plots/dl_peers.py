#!/usr/bin/env python3
"""Measure the library and tile-language versions of issue 23's deep-learning reductions --
softmax, log_softmax, LayerNorm, RMSNorm, cross-entropy, softmax's backward and LayerNorm's
backward -- the way `reduction dl-bench` measures the book's, in the CSV of
/work/coord/peers-interface.md.

    python3 plots/dl_peers.py [--out plots/data/dl] [--shapes 2^20x2^8,...,4096x4096,8192x128256]
                              [--dtypes f32,bf16] [--ops softmax,...] [--peers torch,liger,...]

Peers: torch eager (F.softmax, F.log_softmax, F.layer_norm, F.rms_norm, F.cross_entropy with
ignore_index, the backward ops torch's autograd calls); torch.compile of the same
(mode="default", dynamic=False, fullgraph=True: one compile a shape, done by the check, outside
the timing); Triton (kernels/triton/softmax.py, norms.py, cross_entropy.py, in the style of
Triton's fused-softmax and layer-norm tutorials); TileLang (kernels/tilelang/softmax.py,
norms.py); Liger-Kernel and Quack where they can be imported (plots/pack_peers.sh packs them for a
host without network; plots/peers_env.sh puts them on the path). A peer that refuses a shape
(Liger: rows over 65536 values) or answers wrongly is written to <gpu-slug>-peers-refused.csv with
its reason; a shape that does not fit in the free memory (or REDUCTION_DEVICE_MEMORY) is skipped
with the reason.

Checks, on the inputs of the first rotation slot, against float64 references computed in chunks of
rows: every output element within one ulp of the output type (and, for f16, half its subnormal
spacing) plus 1e-5 of its scale (softmax: of the value; log_softmax, the norms: of |value| + 1;
softmax backward: of y); dγ and dβ within 1e-5 + 2^-24·√M of the column's sum of |terms| (an f32
accumulation over M rows); the cross-entropy mean within one ulp of the input type plus 1e-5.
Inputs: uniform in [-1, 1); γ in [0.5, 1.5), β in [-0.5, 0.5); targets uniform, one row in 16
ignore_index (-100). Timing: inputs rotated through a pool larger than L2 (backward ops: y or x from
one slot, dy from the next), K back-to-back calls in a CUDA graph timed by CUDA events (K
back-to-back calls where capture fails, which `method` says), median of repeats.
"""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.dont_write_bytecode = True
import peer_harness as H  # noqa: E402
from op_peers import accumulation, load_kernel, rounding, subnormal  # noqa: E402

ACC_RTOL = 1e-5
CHUNK = 1 << 24  # values per chunk of rows in the float64 references
SAMPLE = 1 << 22  # values per sampled chunk of a row-wise output's check (three: start, middle, end)
LN_EPS, RMS_EPS = 1e-5, 1e-6
FLOATS = ("f32", "f16", "bf16")


def row_chunks(m, n, chunk=None):
    step = max(1, (chunk or CHUNK) // n)
    return [(r, min(m, r + step)) for r in range(0, m, step)]


def first_bad(bad, have, want, what):
    count = int(bad.sum())
    if count == 0:
        return None
    i = int(bad.reshape(-1).nonzero()[0])
    return f"{count} of {bad.numel()} {what} wrong; the first: got {float(have.reshape(-1)[i])}, want {float(want.reshape(-1)[i])}"


def sampled_chunks(m, n):
    """The row chunks a check looks at: all of them where the rows hold at most 3 chunks of values,
    else the first, the middle and the last (the start, a middle and the tail of the tensor)."""
    chunks = row_chunks(m, n, SAMPLE)
    return chunks if len(chunks) <= 3 else [chunks[0], chunks[len(chunks) // 2], chunks[-1]]


def verdict(torch, op, got, inputs, cache=None):
    """None if `got` is right for `inputs` (the peer's own arguments); otherwise why not. Row-wise
    outputs are checked on sampled_chunks; reductions over all rows (the loss's mean, dγ, dβ) on all
    of them. With `cache` (a dict for one case, emptied before the next) the float64 references are
    computed once for all the peers of an op."""
    def memo(key, compute):
        if cache is None:
            return compute()
        if key not in cache:
            cache[key] = compute()
        return cache[key]

    if op in ("softmax", "log_softmax", "layer_norm", "rms_norm"):
        x = inputs[0]
        m, n = x.shape
        y = got[0] if isinstance(got, (tuple, list)) else got
        if y.shape != x.shape:
            return f"output shape {tuple(y.shape)}, want {tuple(x.shape)}"
        r, tiny = rounding(torch, y), subnormal(torch, y)
        for r0, r1 in sampled_chunks(m, n):
            def reference(r0=r0, r1=r1):
                c = x[r0:r1].double()
                if op == "softmax":
                    want = torch.softmax(c, dim=1)
                elif op == "log_softmax":
                    want = torch.log_softmax(c, dim=1)
                elif op == "layer_norm":
                    mean = c.mean(dim=1, keepdim=True)
                    var = ((c - mean) ** 2).mean(dim=1, keepdim=True)
                    want = (c - mean) / torch.sqrt(var + LN_EPS) * inputs[1].double() + inputs[2].double()
                else:
                    want = c / torch.sqrt((c * c).mean(dim=1, keepdim=True) + RMS_EPS) * inputs[1].double()
                return want
            want = memo((op, r0), reference)
            scale = want if op == "softmax" else want.abs() + 1  # softmax: relative; the others: of |value| + 1
            bound = r * want.abs() + ACC_RTOL * scale.abs() + tiny
            have = y[r0:r1].double()
            why = first_bad(~((have - want).abs() <= bound), have, want, f"{op} values (rows {r0}..{r1 - 1})")
            if why:
                return why
        return None
    if op == "cross_entropy":
        x, target = inputs
        m, n = x.shape

        def reference():
            total = torch.zeros((), dtype=torch.float64, device=x.device)
            live = target != H.IGNORE_INDEX
            for r0, r1 in row_chunks(m, n):
                c = x[r0:r1].double()
                ok = live[r0:r1]
                loss = torch.logsumexp(c, dim=1) - c.gather(1, torch.where(ok, target[r0:r1], 0)[:, None])[:, 0]
                total += torch.where(ok, loss, 0.0).sum()
            return total / live.sum()
        want = memo((op,), reference)
        have = torch.as_tensor(got).double().reshape(())
        bound = ({"torch.float16": 2.0 ** -10, "torch.bfloat16": 2.0 ** -7}.get(str(x.dtype), 0.0) + ACC_RTOL) * want.abs()
        return first_bad(~((have - want).abs() <= bound), have, want, "mean losses")
    if op == "softmax_bwd":
        y, dy = inputs
        m, n = y.shape
        r, tiny = rounding(torch, got), subnormal(torch, got)
        for r0, r1 in sampled_chunks(m, n):
            yc = y[r0:r1].double()

            def reference(r0=r0, r1=r1, yc=yc):
                gc = dy[r0:r1].double()
                return yc * (gc - (yc * gc).sum(dim=1, keepdim=True))
            want = memo((op, r0), reference)
            have = got[r0:r1].double()
            bound = r * want.abs() + ACC_RTOL * yc.abs() + tiny
            why = first_bad(~((have - want).abs() <= bound), have, want, f"dx values (rows {r0}..{r1 - 1})")
            if why:
                return why
        return None
    if op in ("layer_norm_bwd_gamma_beta", "layer_norm_bwd"):
        if op == "layer_norm_bwd":
            dy, x, w, _b, mean, rstd = inputs
            dx, dw, db = got
        else:
            dy, x, mean, rstd = inputs
            dw, db = got
        m, n = x.shape

        def xhat(r0, r1):
            return (x[r0:r1].double() - mean[r0:r1].double()[:, None]) * rstd[r0:r1].double()[:, None]

        def columns():
            sums = torch.zeros((4, n), dtype=torch.float64, device=x.device)  # dγ, dβ and their scales
            for r0, r1 in row_chunks(m, n):
                g, xh = dy[r0:r1].double(), xhat(r0, r1)
                sums[0] += (g * xh).sum(dim=0)
                sums[1] += g.sum(dim=0)
                sums[2] += (g * xh).abs().sum(dim=0)
                sums[3] += g.abs().sum(dim=0)
            return sums
        want_w, want_b, scale_w, scale_b = memo(("columns",), columns)
        if op == "layer_norm_bwd":
            for r0, r1 in sampled_chunks(m, n):
                gw = dy[r0:r1].double() * w.double()
                xh = xhat(r0, r1)
                want = rstd[r0:r1].double()[:, None] * (gw - gw.mean(dim=1, keepdim=True) - xh * (gw * xh).mean(dim=1, keepdim=True))
                have = dx[r0:r1].double()
                bound = rounding(torch, dx) * want.abs() + ACC_RTOL * rstd[r0:r1].double()[:, None] * (gw.abs() + 1) + subnormal(torch, dx)
                why = first_bad(~((have - want).abs() <= bound), have, want, f"dx values (rows {r0}..{r1 - 1})")
                if why:
                    return why
        for name, have_t, want, scale in (("dγ", dw, want_w, scale_w), ("dβ", db, want_b, scale_b)):
            have = have_t.double().reshape(n)
            bound = rounding(torch, have_t) * want.abs() + accumulation(m) * scale + subnormal(torch, have_t)
            why = first_bad(~((have - want).abs() <= bound), have, want, f"{name} values")
            if why:
                return why
        return None
    raise ValueError(op)


class Inputs:
    """The inputs of each op at one shape and type: slot 0 for the check, rotated slots for the
    timing. The big operands (x, y, dy) are views of the pool; γ, β, the targets and the saved
    statistics are small and made once (targets: one row of the pool's slots each)."""

    def __init__(self, torch, pool, m, n, dtype, ops):
        self.torch, self.pool, self.m, self.n = torch, pool, m, n
        self.slots, _ = pool.slots(m * n)
        tdtype = getattr(torch, H.DTYPES[dtype])
        gen = torch.Generator(device="cuda").manual_seed(m * 7919 + n)
        self.w = (torch.rand(n, device="cuda", generator=gen) + 0.5).to(tdtype)
        self.b = (torch.rand(n, device="cuda", generator=gen) - 0.5).to(tdtype)
        if "cross_entropy" in ops:
            t = torch.randint(0, n, (self.slots, m), device="cuda", generator=gen)
            t[torch.rand((self.slots, m), device="cuda", generator=gen) < 1 / 16] = H.IGNORE_INDEX
            self.targets = t
        x0 = self.x(0)
        self.y0 = None
        if "softmax_bwd" in ops:  # the check's y is a real softmax output
            self.y0 = torch.empty_like(x0)
            for r0, r1 in row_chunks(m, n):
                self.y0[r0:r1] = torch.softmax(x0[r0:r1].double(), dim=1).to(tdtype)
        if "layer_norm_bwd_gamma_beta" in ops or "layer_norm_bwd" in ops:
            self.mean = torch.empty(m, device="cuda", dtype=torch.float32)
            self.rstd = torch.empty(m, device="cuda", dtype=torch.float32)
            for r0, r1 in row_chunks(m, n):
                c = x0[r0:r1].double()
                self.mean[r0:r1] = c.mean(dim=1).float()
                self.rstd[r0:r1] = torch.rsqrt(((c - c.mean(dim=1, keepdim=True)) ** 2).mean(dim=1) + LN_EPS).float()

    def x(self, j):
        return self.pool.view(self.m * self.n, j, (self.m, self.n))

    def of(self, op, j):
        x, nxt = self.x(j), self.x(j + 1)
        if op in ("softmax", "log_softmax"):
            return (x,)
        if op == "layer_norm":
            return (x, self.w, self.b)
        if op == "rms_norm":
            return (x, self.w)
        if op == "cross_entropy":
            return (x, self.targets[j % self.slots])
        if op == "softmax_bwd":
            return (self.y0 if j == 0 else x, nxt)
        if op == "layer_norm_bwd_gamma_beta":
            return (nxt, x, self.mean, self.rstd)
        if op == "layer_norm_bwd":
            return (nxt, x, self.w, self.b, self.mean, self.rstd)
        raise ValueError(op)

    def big_operands(self, op):
        return 2 if op in ("softmax_bwd", "layer_norm_bwd_gamma_beta", "layer_norm_bwd") else 1


def build_peers(torch, args, versions, log):
    import torch.nn.functional as F
    peers = []

    def add(kernel, title, op, fn, dtypes=FLOATS, capture=True, refuse=None):
        peers.append(H.Peer(kernel, title, op, fn, dtypes=dtypes, capture=capture, refuse=refuse))

    def want(prefix):
        chosen = not args.peers or any(prefix.startswith(p) or p.startswith(prefix) for p in args.peers.split(","))
        return chosen and not (args.skip_peers and any(prefix.startswith(p) for p in args.skip_peers.split(",")))

    # The same functions eager and compiled: what a model's forward (and autograd's backward) calls.
    def gamma_beta(dy, x, mean, rstd):
        xhat = (x.float() - mean[:, None]) * rstd[:, None]
        return (dy.float() * xhat).sum(0).to(dy.dtype), dy.float().sum(0).to(dy.dtype)

    def softmax_bwd_math(y, dy):
        yf, gf = y.float(), dy.float()
        return (yf * (gf - (yf * gf).sum(-1, keepdim=True))).to(y.dtype)

    shapes_of = {}

    def eager_gamma_beta(dy, x, mean, rstd):
        # aten sizes dγ and dβ from γ and β (which dγ, dβ do not read): ones of the right shape
        key = (x.shape[1], x.dtype)
        if key not in shapes_of:
            shapes_of[key] = torch.ones(x.shape[1], device=x.device, dtype=x.dtype)
        w = shapes_of[key]
        return tuple(torch.ops.aten.native_layer_norm_backward(
            dy, x, [x.shape[1]], mean[:, None], rstd[:, None], w, w, [False, True, True])[1:])

    eager = {
        "softmax": ("F.softmax(x, dim=-1)", lambda x: F.softmax(x, dim=-1)),
        "log_softmax": ("F.log_softmax(x, dim=-1)", lambda x: F.log_softmax(x, dim=-1)),
        "layer_norm": ("F.layer_norm(x, (N,), γ, β)", lambda x, w, b: F.layer_norm(x, (x.shape[1],), w, b, LN_EPS)),
        "rms_norm": ("F.rms_norm(x, (N,), γ)", lambda x, w: F.rms_norm(x, (x.shape[1],), w, RMS_EPS)),
        "cross_entropy": ("F.cross_entropy(x, t, ignore_index=-100)", lambda x, t: F.cross_entropy(x, t, ignore_index=H.IGNORE_INDEX)),
        "softmax_bwd": ("torch._softmax_backward_data (autograd's softmax backward)",
                        lambda y, dy: torch._softmax_backward_data(dy, y, -1, y.dtype)),
        "layer_norm_bwd_gamma_beta": ("aten.native_layer_norm_backward, output_mask [dx no, dγ, dβ]", eager_gamma_beta),
        "layer_norm_bwd": ("aten.native_layer_norm_backward (dx, dγ, dβ: autograd's LayerNorm backward)",
                           lambda dy, x, w, b, mean, rstd: torch.ops.aten.native_layer_norm_backward(
                               dy, x, [x.shape[1]], mean[:, None], rstd[:, None], w, b, [True, True, True])),
    }
    if want("torch_"):
        for op, (title, fn) in eager.items():
            add(f"torch_{op}", f"{title} (PyTorch eager)", op, fn)
    if want("torch_compile"):
        import torch._dynamo
        for key in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit", "accumulated_recompile_limit"):
            if hasattr(torch._dynamo.config, key):
                setattr(torch._dynamo.config, key, 100000)  # one compile a shape, never a silent fall back to eager
        compiled_math = {"layer_norm_bwd_gamma_beta": ("(dy·x̂).sum(0), dy.sum(0) in f32", gamma_beta),
                         "softmax_bwd": ("y·(dy − Σ y·dy) in f32", softmax_bwd_math)}
        for op, (title, fn) in eager.items():
            if op == "layer_norm_bwd":
                continue
            title, fn = compiled_math.get(op, (title, fn))
            add(f"torch_compile_{op}", f"torch.compile({title}, mode=default, dynamic=False)", op,
                torch.compile(fn, mode="default", dynamic=False, fullgraph=True))

    if want("triton"):
        sm, why1 = load_kernel("triton/softmax.py")
        nm, why2 = load_kernel("triton/norms.py")
        ce, why3 = load_kernel("triton/cross_entropy.py")
        if sm is None or nm is None or ce is None:
            log(f"Triton skipped: {why1 or why2 or why3}")
        else:
            import triton
            versions.append(f"triton {triton.__version__}")
            add("triton_softmax", "Triton softmax (fused-softmax tutorial; online softmax past 16384)", "softmax", sm.softmax)
            add("triton_log_softmax", "Triton log_softmax (as its softmax)", "log_softmax", sm.log_softmax)
            add("triton_layer_norm", "Triton LayerNorm (layer-norm tutorial; row in registers up to 8192)", "layer_norm", nm.layer_norm)
            add("triton_rms_norm", "Triton RMSNorm (as its LayerNorm)", "rms_norm", nm.rms_norm)
            add("triton_cross_entropy", "Triton cross-entropy (online logsumexp per row, then torch's mean)", "cross_entropy", ce.cross_entropy)
            add("triton_softmax_bwd", "Triton softmax backward (row dot product, then dx)", "softmax_bwd", sm.softmax_bwd)
            add("triton_layer_norm_bwd_gamma_beta", "Triton dγ, dβ (tutorial's two stages: groups of rows, then the partials)",
                "layer_norm_bwd_gamma_beta", nm.layer_norm_bwd_gamma_beta)

    if want("tilelang"):
        tsm, why1 = load_kernel("tilelang/softmax.py")
        tnm, why2 = load_kernel("tilelang/norms.py")
        if tsm is None or tnm is None:
            log(f"TileLang skipped: {why1 or why2}")
        else:
            import tilelang
            versions.append(f"tilelang {tilelang.__version__}")
            kernels = {}
            jobs = []
            for m, n in args.shapes:
                for d in args.dtypes:
                    if d not in FLOATS:
                        continue
                    name = H.DTYPES[d]
                    shape = tsm.tile_shape(n)
                    if "softmax" in args.ops:
                        jobs.append((("softmax", m, n, d), tsm.softmax(m, n, name, *shape), [1]))
                    if "log_softmax" in args.ops:
                        jobs.append((("log_softmax", m, n, d), tsm.softmax(m, n, name, *shape, log=True), [1]))
                    if "cross_entropy" in args.ops:
                        jobs.append((("cross_entropy", m, n, d), tsm.row_cross_entropy(m, n, name, *shape), [2]))
                    if "layer_norm" in args.ops:
                        jobs.append((("layer_norm", m, n, d), tnm.layer_norm(m, n, name, *tnm.tile_shape(n), eps=LN_EPS), [3, 4, 5]))
                    if "rms_norm" in args.ops:
                        jobs.append((("rms_norm", m, n, d), tnm.layer_norm(m, n, name, *tnm.tile_shape(n), eps=RMS_EPS, rms=True), [3, 4, 5]))
            for out_idx in ([1], [2], [3, 4, 5]):
                batch = [(k, f) for k, f, o in jobs if o == out_idx]
                if not batch:
                    continue
                try:
                    kernels.update(zip([k for k, _ in batch], tilelang.par_compile([f for _, f in batch], out_idx=out_idx)))
                except Exception as e:  # one kernel that does not compile: compile them one by one, keep the rest
                    log(f"TileLang: a batch failed to compile ({type(e).__name__}: {str(e)[:200]}); compiling one by one")
                    for k, f in batch:
                        try:
                            kernels[k] = tilelang.compile(f, out_idx=out_idx)
                        except Exception as e1:
                            kernels[k] = e1

            def kernel(op, x):
                k = kernels.get((op, x.shape[0], x.shape[1], H.DTYPES_BY_TORCH[x.dtype]))
                if k is None:
                    raise RuntimeError("not compiled for this shape")
                if isinstance(k, Exception):
                    raise RuntimeError(f"TileLang did not compile it: {type(k).__name__}: {str(k).splitlines()[0][:200] if str(k) else ''}")
                return k

            add("tilelang_softmax", "TileLang softmax (online softmax over tiles; one read where the row is one tile)", "softmax",
                lambda x: kernel("softmax", x)(x))
            add("tilelang_log_softmax", "TileLang log_softmax (as its softmax)", "log_softmax", lambda x: kernel("log_softmax", x)(x))
            add("tilelang_layer_norm", "TileLang LayerNorm (per-tile mean and M2, Chan's merge)", "layer_norm",
                lambda x, w, b: kernel("layer_norm", x)(x, w, b)[0])
            add("tilelang_rms_norm", "TileLang RMSNorm", "rms_norm", lambda x, w: kernel("rms_norm", x)(x, w, w)[0])
            add("tilelang_cross_entropy", "TileLang cross-entropy (online logsumexp per row, then torch's mean)", "cross_entropy",
                lambda x, t: (lambda loss: loss.sum() / (t != H.IGNORE_INDEX).sum())(kernel("cross_entropy", x)(x, t)))

    if want("liger"):
        try:
            import liger_kernel
            from liger_kernel.ops import softmax as lsm, layer_norm as lln, rms_norm as lrms, cross_entropy as lce
            from liger_kernel.ops.utils import calculate_settings
            try:
                from importlib.metadata import version
                versions.append(f"liger-kernel {version('liger-kernel')}")
            except Exception:
                versions.append(f"liger-kernel {getattr(liger_kernel, '__version__', '?')}")

            def liger_softmax_bwd(y, dy):
                block, warps = calculate_settings(y.shape[1])
                return lsm._softmax_backward(dy, y, block, warps, y.shape[1] > block)

            def liger_ln_bwd(dy, x, w, b, mean, rstd):
                return lln.layer_norm_backward(dy, x, w, b, mean, rstd)[:3]

            add("liger_softmax", "Liger-Kernel softmax (LigerSoftmaxFunction's forward)", "softmax", lambda x: lsm._softmax_forward(x)[0])
            add("liger_layer_norm", "Liger-Kernel LayerNorm (layer_norm_forward)", "layer_norm", lambda x, w, b: lln.layer_norm_forward(x, w, b, LN_EPS)[0])
            add("liger_rms_norm", "Liger-Kernel RMSNorm (rms_norm_forward, casting mode llama)", "rms_norm",
                lambda x, w: lrms.rms_norm_forward(x, w, RMS_EPS, 0.0, "llama", None)[0])
            # Its forward syncs (.item() on the count of live targets): no CUDA graph.
            add("liger_cross_entropy", "Liger-Kernel cross-entropy (cross_entropy_forward, reduction mean; no gradient written)", "cross_entropy",
                lambda x, t: lce.cross_entropy_forward(x, t, None, H.IGNORE_INDEX, 0.0, 0.0, "mean", None, False)[0], capture=False)
            add("liger_softmax_bwd", "Liger-Kernel softmax backward (_softmax_backward)", "softmax_bwd", liger_softmax_bwd)
            add("liger_layer_norm_bwd", "Liger-Kernel LayerNorm backward (layer_norm_backward: dx, dγ, dβ)", "layer_norm_bwd", liger_ln_bwd)
        except Exception as e:
            log(f"Liger-Kernel skipped: cannot be imported: {type(e).__name__}: {e}")

    if want("quack"):
        try:
            import importlib  # quack/__init__ exports functions named like its modules: import the modules
            qsm, qrms, qce = (importlib.import_module(f"quack.{m}") for m in ("softmax", "rmsnorm", "cross_entropy"))
            try:
                from importlib.metadata import version
                versions.append(f"quack-kernels {version('quack-kernels')}, nvidia-cutlass-dsl {version('nvidia-cutlass-dsl')}")
            except Exception:
                versions.append("quack-kernels")
            f32 = {}

            def as_f32(t):  # Quack's LayerNorm takes γ and β in f32 only
                key = (t.data_ptr(), t.dtype)
                if key not in f32:
                    f32[key] = t.float()
                return f32[key]

            add("quack_softmax", "Quack softmax (softmax_fwd, CuTe DSL)", "softmax", qsm.softmax_fwd)
            add("quack_rms_norm", "Quack RMSNorm (rmsnorm_fwd, rstd stored)", "rms_norm",
                lambda x, w: qrms.rmsnorm_fwd(x, w, eps=RMS_EPS, store_rstd=True)[0])
            add("quack_layer_norm", "Quack LayerNorm (layernorm_fwd, γ and β in f32, mean and rstd stored)", "layer_norm",
                lambda x, w, b: qrms.layernorm_fwd(x, as_f32(w), as_f32(b), eps=LN_EPS, return_rstd=True, return_mean=True)[0])
            add("quack_cross_entropy", "Quack cross-entropy (cross_entropy_fwd per row, then torch's mean)", "cross_entropy",
                lambda x, t: qce.cross_entropy_fwd(x, t, ignore_index=H.IGNORE_INDEX).sum() / (t != H.IGNORE_INDEX).sum())
            add("quack_softmax_bwd", "Quack softmax backward (softmax_bwd)", "softmax_bwd", lambda y, dy: qsm.softmax_bwd(dy, y))
            add("quack_layer_norm_bwd", "Quack LayerNorm backward (layernorm_bwd: dx, dγ, dβ)", "layer_norm_bwd",
                lambda dy, x, w, b, mean, rstd: qrms.layernorm_bwd(x, as_f32(w), dy, rstd, mean)[:3])
        except Exception as e:
            log(f"Quack skipped: cannot be imported: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    return peers


QUICK_SHAPES = [(1 << 20, 1 << 8), (1 << 14, 1 << 14), (1 << 10, 1 << 18), (4096, 4096), (8192, 128256)]
COMPILE_SHAPES = [(1 << 18, 1 << 10), (4096, 4096), (8192, 128256)]  # "auto": those of these the run has


def compile_shapes(text, shapes):
    """--compile-shapes: auto (COMPILE_SHAPES among the run's, else its first and last), all, or a list.
    torch.compile costs ~1.4 s a (op, shape, type) on the H200 host (round 1), more than the timing."""
    if text == "all":
        return list(shapes)
    if text == "auto":
        chosen = [s for s in shapes if s in COMPILE_SHAPES]
        return chosen or sorted({shapes[0], shapes[-1]}, key=shapes.index)
    return H.parse_shapes(text)


def main():
    parser = H.base_parser(__doc__, H.DL_OPS, ["f32", "bf16"])
    parser.add_argument("--shapes", type=H.parse_shapes, default=H.dl_shapes(),
                        help="MxN,... (default: M·N = 2^28 for N = 2^8 ... 2^18, 4096x4096, 8192x128256)")
    parser.add_argument("--compile-shapes", default="auto",
                        help="where torch.compile is measured: auto (2^18x2^10, 4096x4096, 8192x128256 where the run has them), all, or MxN,...")
    args = parser.parse_args()
    if args.self_test:
        return H.run_self_test(self_test)
    if "i32" in args.dtypes:
        parser.error("the deep-learning reductions take f32, f16 or bf16")
    if args.quick:
        args.shapes = QUICK_SHAPES
    try:
        compiled_at = compile_shapes(args.compile_shapes, args.shapes)
    except Exception as e:
        parser.error(f"--compile-shapes: {e}")
    torch = H.import_torch()
    H.DTYPES_BY_TORCH = {getattr(torch, v): k for k, v in H.DTYPES.items()}
    out_dir = args.out or "plots/data/dl"
    log = lambda s: print(s, file=sys.stderr, flush=True)
    versions = [f"torch {torch.__version__}"]
    chosen = H.select(build_peers(torch, args, versions, log), args)
    memory = H.Memory(torch)
    budget = H.Budget(args.budget_s)
    rows, refused = [], []
    # torch.compile last: its compiles are the slowest part, and the first a time budget drops.
    passes = [([p for p in chosen if not p.kernel.startswith("torch_compile")], args.shapes, ""),
              ([p for p in chosen if p.kernel.startswith("torch_compile")], compiled_at, " (torch.compile)")]
    for group, shapes, what in passes:
        if not group or not shapes:
            continue
        for i, dtype in enumerate(args.dtypes):
            until = budget.share(len(args.dtypes) - i)  # bf16 keeps its share when f32 runs long
            size = H.SIZES[dtype]
            # Room for the pool (two slots of the largest shape at least), the outputs and the checks.
            need = lambda m, n: 4 * m * n * size + 3 * CHUNK * 8 + (1 << 30)
            fits = H.fitting(shapes, need, memory, log, dtype)
            if not fits:
                continue
            pool = H.Pool(torch, dtype, H.pool_length(torch, fits, dtype))
            for m, n in fits:
                if not budget.allows(f"{dtype} {m}x{n}{what}", until):
                    continue
                inputs = Inputs(torch, pool, m, n, dtype, {p.op for p in group})
                refs = {}  # the float64 references of this case, shared by the peers of an op
                for peer in group:
                    if peer.dtypes is not None and dtype not in peer.dtypes:
                        continue
                    op = peer.op
                    H.measure(torch, peer, (m, n, dtype), lambda j, op=op: inputs.of(op, j),
                              lambda got, ins, op=op: verdict(torch, op, got, ins, refs.setdefault(op, {})),
                              2 * m * n * size + 3 * CHUNK * 8, memory, H.op_bytes(op, dtype, m, n), inputs.slots, rows, refused, log)
                del inputs, refs
                torch.cuda.empty_cache()
                H.write(out_dir, torch, versions, H.command_line(), rows, refused, quiet=True)
            del pool
            torch.cuda.empty_cache()
    budget.report(log)
    H.write(out_dir, torch, versions, H.command_line(), rows, refused)
    return 0


def self_test(expect):
    parser = H.base_parser(__doc__, H.DL_OPS, ["f32", "bf16"])
    parser.add_argument("--shapes", type=H.parse_shapes, default=H.dl_shapes())
    args = parser.parse_args(["--ops", "softmax,cross_entropy", "--shapes", "4096x4096,8192x128256"])
    expect(args.ops == ["softmax", "cross_entropy"] and args.dtypes == ["f32", "bf16"] and args.shapes == [(4096, 4096), (8192, 128256)],
           "the command line of peers-interface.md parses (f32 and bf16 by default)")
    expect(len(parser.parse_args([]).shapes) == 13, "13 shapes by default")
    shapes = H.dl_shapes()
    expect(compile_shapes("auto", shapes) == COMPILE_SHAPES and compile_shapes("all", shapes) == shapes
           and compile_shapes("auto", [(64, 64), (8, 8), (4, 4)]) == [(64, 64), (4, 4)]
           and compile_shapes("4096x4096", shapes) == [(4096, 4096)], "--compile-shapes: auto, all, a list")
    expect(H.op_bytes("layer_norm_bwd", "bf16", 1024, 4096) == 3 * 2 * 1024 * 4096 + 3 * 2 * 4096 + 8 * 1024,
           "LayerNorm's backward: dy, x, γ, mean, 1/σ in; dx, dγ, dβ out")
    expect(row_chunks(1 << 20, 256) == [(r, r + (1 << 16)) for r in range(0, 1 << 20, 1 << 16)], "references in chunks of 2^24 values")
    expect(row_chunks(3, 1 << 25) == [(0, 1), (1, 2), (2, 3)], "a row longer than a chunk is one chunk")
    selected = H.select([H.Peer("torch_softmax", "", "softmax", None), H.Peer("torch_compile_softmax", "", "softmax", None),
                         H.Peer("liger_softmax", "", "softmax", None), H.Peer("liger_rms_norm", "", "rms_norm", None)],
                        parser.parse_args(["--peers", "torch,liger", "--skip-peers", "torch_compile", "--ops", "softmax"]))
    expect([p.kernel for p in selected] == ["torch_softmax", "liger_softmax"], "--peers, --skip-peers and --ops select peers")


if __name__ == "__main__":
    sys.exit(main())
