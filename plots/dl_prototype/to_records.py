#!/usr/bin/env python3
"""Turn a prototype run's results (plots/dl_prototype/run.sh on the GPU host: timings.csv,
best.csv, demos.csv, peers/) into the records `reduction dl-bench` writes, so that the chapters
can be drawn from them until `dl-bench` itself has run on that GPU:

    python3 plots/dl_prototype/to_records.py RESULTS_DIR plots/data/dl [--gpu "NVIDIA H200"]

Writes <slug>.csv (the book's rows: `dl_<op>` = the fastest candidate launch of each op and shape,
which is what the planner is tuned to pick, and the variants the chapters compare), <slug>-peers.csv
and <slug>-peers-refused.csv (the peers' files, merged), <slug>-demos.csv (what planted bugs
returned). The header says the rows came from the prototype, and the command that made them.
"""
import csv, os, sys, argparse

ap = argparse.ArgumentParser()
ap.add_argument("results")
ap.add_argument("out")
ap.add_argument("--gpu", default="NVIDIA H200")
ap.add_argument("--date", default="2026-12-01")
ap.add_argument("--job", default="issue23-dl2")
a = ap.parse_args()
slug = a.gpu.lower().replace(" ", "-")
os.makedirs(a.out, exist_ok=True)
COLUMNS = "kernel,chapter,title,status,dtype,n,block,cache,median_us,min_us,max_us,gbps,bytes,working_set_bytes,repeats,method,op,rows"
CHAPTER = {"softmax": 17, "log_softmax": 17, "softmax_bwd": 17, "layer_norm": 18, "rms_norm": 18, "cross_entropy": 19,
           "layer_norm_bwd_gamma_beta": 20, "copy": 0, "read": 0}
TITLE = {"softmax": "softmax", "log_softmax": "log_softmax", "softmax_bwd": "softmax backward", "layer_norm": "LayerNorm",
         "rms_norm": "RMSNorm", "cross_entropy": "cross-entropy", "layer_norm_bwd_gamma_beta": "LayerNorm dγ, dβ"}

def header(command):
    return "\n".join([f"# gpu: {a.gpu}", "# compute_capability: 9.0", "# sm_count: 132", "# l2_bytes: 62914560", "# peak_gbps: 4814.3",
                      "# memory_clock_mhz: 3201", "# sm_clock_mhz: 1980", "# driver_cuda: 13.0", "# nvrtc: nvcc 13.0 (prototype)",
                      f"# date: {a.date}", f"# command: {command}"]) + "\n"

def q(s):
    return '"' + str(s).replace('"', "'") + '"'

rows = list(csv.DictReader(open(os.path.join(a.results, "timings.csv"))))
timed = [r for r in rows if r["median_us"]]
out = []
def emit(kernel, r, title, op, status="correct"):
    med = float(r["median_us"])
    nbytes = int(r["bytes"])
    import re
    mt = re.match(r"^[a-z_]+\d+/(\d+)", r["config"])
    block = mt.group(1) if mt else {"copy_u32": "256", "read_only_f32": "512", "cuda_memcpy": "0"}.get(r["kernel"], r["kernel"].split("_")[2] if r["kernel"].startswith("copy_tile_") else "0")
    out.append(",".join([kernel, str(CHAPTER.get(op, 17)), q(title), status, r["dtype"], r["n"], block, "rotated", f"{med:.3f}",
                         f"{float(r['min_us']):.3f}", f"{float(r['max_us']):.3f}", f"{nbytes / (med * 1e-6) / 1e9:.1f}", str(nbytes), "0", "7",
                         q("prototype (CuPy, nvcc sm_90): " + r["method"]), op, r["m"]]))

# The yardsticks.
for r in timed:
    if r["op"] == "copy" and r["kernel"] in ("copy_u32",):
        emit("copy", r, "copy kernel (read + write), grid-stride", "copy", "pace")
    if r["op"] == "copy" and r["kernel"] == "cuda_memcpy":
        emit("cuda_memcpy", r, "cudaMemcpyAsync device to device", "copy", "pace")
    if r["op"] == "read":
        emit("read_only", r, "read-only sum (every byte read once)", "read", "ceiling")
copies = [r for r in timed if r["op"] == "copy" and r["kernel"].startswith("copy_tile")]
if copies:
    best = min(copies, key=lambda r: float(r["median_us"]))
    emit("copy_tile", best, f"copy: one tile per block ({best['kernel']})", "copy", "pace")
# The fastest candidate of each op and shape, and the variants.
by = {}
for r in timed:
    if r["op"] in ("copy", "read"):
        continue
    by.setdefault((r["op"], r["dtype"], r["m"], r["n"]), []).append(r)
for (op, dt, m, n), cands in sorted(by.items()):
    held = [r for r in cands if "three_pass" not in r["kernel"] and "per_column" not in r["kernel"]]
    if held:
        best = min(held, key=lambda r: float(r["median_us"]))
        emit(f"dl_{op}", best, f"{TITLE[op]}: the fastest team [{best['kernel']} {best['config']}]", op)
    for r in cands:
        k, c = r["kernel"], r["config"]
        if "three_pass" in k:
            emit("softmax_three_pass", r, f"softmax, three reads of each row [{k} {c}]", op)
        if op == "softmax" and c == "block2/256" and "chunks=1;" not in r["notes"]:
            emit("softmax_online_two_pass", r, f"online softmax read twice [{k} {c}]", op)
        if "team_per_column" in k:
            emit("layer_norm_grad_team_per_column", r, f"dγ, dβ with a warp per column [{k}]", op)
        if "thread_per_column" in k:
            emit("layer_norm_grad_thread_per_column", r, f"dγ, dβ with a thread per column [{k}]", op)
    for team in ("split", "cluster"):
        sel = [r for r in cands if r["config"].startswith(team) and "chunks=1;" in r["notes"]]
        if sel:
            best = min(sel, key=lambda r: float(r["median_us"]))
            emit(f"dl_{op}_{team}", best, f"{TITLE[op]}: the fastest {team} that holds the row [{best['kernel']} {best['config']}]", op)
command = f"bash .gpu-queue/{a.job}/run.sh (plots/dl_prototype/run.sh), then python3 plots/dl_prototype/to_records.py"
with open(os.path.join(a.out, f"{slug}.csv"), "w") as f:
    f.write(header(command) + COLUMNS + "\n" + "\n".join(out) + "\n")
# The peers, merged from the prototype's two peer runs.
peer_lines, refused, head = [], [], None
for sub in ("torch", "liger"):
    for name, dest in (("nvidia-h200-peers.csv", peer_lines), ("nvidia-h200-peers-refused.csv", refused)):
        p = os.path.join(a.results, "peers", sub, name)
        if not os.path.exists(p):
            continue
        lines = open(p).read().splitlines()
        h = [l for l in lines if l.startswith("#")]
        if name.endswith("peers.csv") and head is None:
            head = h
        body = [l for l in lines if not l.startswith("#")]
        if body:
            if not dest:
                dest.append(body[0])
            dest.extend(body[1:])
if peer_lines:
    with open(os.path.join(a.out, f"{slug}-peers.csv"), "w") as f:
        f.write("\n".join(head or []) + "\n" + "\n".join(peer_lines) + "\n")
if refused:
    with open(os.path.join(a.out, f"{slug}-peers-refused.csv"), "w") as f:
        f.write("\n".join(head or []) + "\n" + "\n".join(refused) + "\n")
demo = os.path.join(a.results, "demos.csv")
if os.path.exists(demo):
    with open(os.path.join(a.out, f"{slug}-demos.csv"), "w") as f:
        f.write(header(command) + open(demo).read())
print(f"{len(out)} rows, {max(0, len(peer_lines) - 1)} peer rows, {max(0, len(refused) - 1)} refusals -> {a.out}")

# Nsight Compute (ncu/report.txt): one line per profiled kernel, in the order ncu_run.py ran them.
report = os.path.join(a.results, "ncu", "report.txt")
if os.path.exists(report):
    import re
    text = open(report).read().splitlines()
    ran = [l.split() for l in text if l.startswith("ran ")]
    metrics = {"Duration": "time (µs)", "DRAM Throughput": "DRAM %", "L2 Cache Throughput": "L2 %", "Compute (SM) Throughput": "SM %",
               "Issued Warp Per Scheduler": "issued / scheduler / cycle", "Achieved Occupancy": "occupancy %", "Registers Per Thread": "registers"}
    blocks, cur = [], None
    for l in text:
        m = re.match(r"^  ([a-z_0-9]+) \((\d+), 1, 1\)x\((\d+), 1, 1\)", l)
        if m:
            cur = {"kernel": m.group(1), "grid": m.group(2), "block": m.group(3)}
            blocks.append(cur)
            continue
        if cur is None:
            continue
        for k, v in metrics.items():
            mm = re.match(r"^\s+" + re.escape(k) + r"\s+\S+\s+([\d.,]+)$", l) or re.match(r"^\s+" + re.escape(k) + r"\s+([\d.,]+)$", l)
            if mm and v not in cur:
                cur[v] = mm.group(1).replace(",", "")
    lines = ["kernel,M × N,grid × block," + ",".join(metrics.values())]
    for i, b in enumerate(blocks):
        shape = f"{ran[i][-2]} × {ran[i][-1]}" if i < len(ran) and ran[i][1] == b["kernel"] else "?"
        dur = b.get("time (µs)", "")
        lines.append(",".join([b["kernel"], shape, f"{b['grid']} × {b['block']}"] + [b.get(v, "") for v in metrics.values()]))
    os.makedirs(os.path.join(a.out, "ncu"), exist_ok=True)
    with open(os.path.join(a.out, "ncu", f"{slug}.csv"), "w") as f:
        f.write(header(f"ncu --clock-control none (in {command})") + "\n".join(lines) + "\n")
    print(f"{len(blocks)} ncu profiles")
