#!/usr/bin/env python3
"""Run each launch of OUT/ncu_select.json once (for Nsight Compute): python3 ncu_run.py CUBINS OUT"""
import json, os, sys
cubins, out = sys.argv[1], sys.argv[2]
sys.argv = [sys.argv[0], cubins, os.path.join(out, "ncu-scratch")]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import proto as P  # noqa: E402
import cupy as cp  # noqa: E402
for s in json.load(open(os.path.join(out, "ncu_select.json"))):
    op, dt, m, n, lab = s["op"], s["dtype"], s["m"], s["n"], s["config"]
    if op == "layer_norm_bwd_gamma_beta":
        continue
    cfg = next((c for c in P.candidates(op, n, dt) if c.label() == lab), None)
    if cfg is None:
        print("no config", s)
        continue
    ins = P.make_inputs(op, m, n, dt, 5)
    outs = P.alloc_outputs(op, m, n, dt)
    P.launch(op, cfg, dt, m, n, ins, outs)
    cp.cuda.Device().synchronize()
    print("ran", cfg.entry(op, dt), lab, m, n, flush=True)
    del ins, outs
    cp.get_default_memory_pool().free_all_blocks()
