"""Rebuild the CSVs of session 32's call C from the lines the run printed (its CSV folders did not
come back from the GPU host). Medians, GB/s, entries, blocks and verdicts are the run's printed
values; each row's title, bytes, working set, repeats and method template come from the committed
row of the same kernel, type and shape (the same configuration); min_us and max_us were not
printed: NaN.

    python3 plots/data/dl/experiments/rebuild.py DL_DIR OUT
DL_DIR: plots/data/dl as of commit c236410 (the templates); OUT gets f32/ and bf16/ parts for
`reduction dl-bench --merge <plots/data as of c236410>,OUT/f32,OUT/bf16`. Quack's earlier rows
where these runs found its outputs wrong went to nvidia-h200-peers-own-run.csv after the merge.
The s32-c-*.log files are the run's stderr, less TileLang's compile progress.

Beside them, session 32's call A (the experiment behind plan::cluster_for, no peers): its CSVs as
they came back (s32-a-long-rows.csv: 1024-thread blocks beside the old planner's 512-thread teams
at N = 2^15 ... 2^18; s32-a-short-rows.csv: short rows over a whole warp with fewer packs a
thread, slower at 20 of 24 cases) and its stderr (s32-a-*.log)."""
import csv, os, re, sys
data = sys.argv[1] if len(sys.argv) > 1 else "plots/data/dl/"
log_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "s32-c-")
NOTE = "; converted from the run's printed line (its CSV did not come back): min and max not printed"

def read(path):
    lines = open(path).read().splitlines()
    header = [l for l in lines if l.startswith("# ")]
    rows = list(csv.DictReader(l for l in lines if not l.startswith("#")))
    return header, rows

ours_h, ours_t = read(data + "nvidia-h200.csv")
peers_h, peers_t = read(data + "nvidia-h200-peers.csv")
ref_h, ref_t = read(data + "nvidia-h200-peers-refused.csv")
tmpl = {(r["kernel"], r["dtype"], r["n"], r["rows"]): r for r in ours_t}
ptmpl = {(r["kernel"], r["dtype"], r["n"], r["rows"]): r for r in peers_t}
rtmpl = {r["kernel"]: r for r in ref_t}
ptitle = {r["kernel"]: r for r in peers_t}

OURS = re.compile(r"^(\w+)\s+(f32|bf16)\s+(\d+) × (\d+)\s+(\S+)\s+([\d.]+) µs\s+([\d.]+) GB/s\s+[\d.]+%\s+.*?\((\w+)\): .*grid (\d+) × (\d+) threads")
PEER = re.compile(r"^(\w+)\s+(\w+)\s+(f32|bf16)\s+(\d+) x (\d+)\s+([\d.]+) µs\s+([\d.]+) GB/s\s+\((.*)\)$")
BAD = re.compile(r"^(\w+) (f32|bf16) (\d+)x(\d+): (WRONG, not timed|refused): (.*)$")

def header(h, command):
    return [f"# command: {command}" if l.startswith("# command:") else l for l in h]

def emit(path, h, fields, rows):
    with open(path, "w", newline="") as f:
        f.write("\n".join(h) + "\n")
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)

for dtype, ours_cmd, peers_cmd in [
    ("f32", "reduction dl-bench --dtypes f32 --shapes 8192x32768,4096x65536,1024x262144 --ops softmax,log_softmax,layer_norm,rms_norm,cross_entropy --budget-s 0 --no-peers",
     "python3 plots/dl_peers.py --shapes 8192x32768,4096x65536,1024x262144 --dtypes f32 --ops softmax,log_softmax,layer_norm,rms_norm,cross_entropy"),
    ("bf16", "reduction dl-bench --dtypes bf16 --shapes 4096x65536,2048x131072,8192x128256 --ops softmax,log_softmax,layer_norm,rms_norm,cross_entropy --budget-s 0 --no-peers",
     "python3 plots/dl_peers.py --shapes 4096x65536,2048x131072,8192x128256 --dtypes bf16 --ops softmax,log_softmax,layer_norm,rms_norm,cross_entropy")]:
    ours, peers, refused = [], [], []
    for line in open(log_dir + f"{dtype}.log"):
        m = OURS.match(line)
        if not m:
            continue
        op, dt, rows, n, kernel, med, gbps, entry, grid, block = m.groups()
        t = tmpl[(kernel, dt, n, rows)]
        title = re.sub(r"\[[^\]]*\]$", f"[{entry}]", t["title"])
        bytes_ = int(t["bytes"])
        assert abs(bytes_ / (float(med) * 1e-6) / 1e9 - float(gbps)) < 0.1, (line, bytes_)
        ours.append({**t, "title": title, "block": block, "median_us": med, "min_us": "NaN", "max_us": "NaN",
                     "gbps": f"{bytes_ / (float(med) * 1e-6) / 1e9:.1f}", "method": t["method"].split(" back-to-back")[0].rsplit(" ", 1)[0] + " back-to-back launches, CUDA events" + NOTE})
    for line in open(log_dir + f"peers-{dtype}.log"):
        line = line.rstrip("\n")
        m = PEER.match(line)
        if m:
            kernel, op, dt, rows, n, med, gbps, method = m.groups()
            t = ptmpl.get((kernel, dt, n, rows))
            if t is None and kernel.startswith("torch_compile_"):
                # torch.compile at a shape it was not measured at before: its title, and the bytes
                # and working set of eager torch's same op at this shape (the same inputs and outputs).
                eager = ptmpl[("torch_" + kernel[len("torch_compile_"):], dt, n, rows)]
                t = {**eager, "kernel": kernel, "title": ptitle[kernel]["title"]}
            if t is None:
                print("no template for", kernel, dt, rows, n, file=sys.stderr)
                continue
            bytes_ = int(t["bytes"])
            assert abs(bytes_ / (float(med) * 1e-6) / 1e9 - float(gbps)) < 0.1, (line, bytes_)
            peers.append({**t, "median_us": med, "min_us": "NaN", "max_us": "NaN", "gbps": f"{bytes_ / (float(med) * 1e-6) / 1e9:.1f}", "method": method + NOTE})
            continue
        m = BAD.match(line)
        if m:
            kernel, dt, rows, n, what, reason = m.groups()
            t = rtmpl.get(kernel) or ptitle[kernel]
            refused.append({"kernel": kernel, "title": t["title"], "status": "wrong" if what.startswith("WRONG") else "refused", "dtype": dt, "n": n, "rows": rows,
                            "op": t["op"], "reason": reason})
    out = f"{sys.argv[2] if len(sys.argv) > 2 else '/tmp/s32/parts'}/{dtype}/dl/"
    os.makedirs(out, exist_ok=True)
    emit(out + "nvidia-h200.csv", header(ours_h, ours_cmd + " (CSV rebuilt from its printed lines)"), list(ours_t[0].keys()), ours)
    emit(out + "nvidia-h200-peers.csv", header(peers_h, peers_cmd + " (CSV rebuilt from its printed lines)"), list(peers_t[0].keys()), peers)
    emit(out + "nvidia-h200-peers-refused.csv", header(ref_h, peers_cmd + " (CSV rebuilt from its printed lines)"), list(ref_t[0].keys()), refused)
    print(dtype, len(ours), "ours,", len(peers), "peers,", len(refused), "refused")
