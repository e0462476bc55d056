#!/usr/bin/env bash
# Session 63, call 7 (the last of the device time). LayerNorm's clusters with γ alone staged
# (-DDL_CLUSTER_STAGED_GAMMA: 64 KiB a block, β from L2 in the write) against the default build
# (both from L2), by turns, two rounds, at the long rows; dl-bench checks every result before it
# times it.
set -u
R=$OUT/r; mkdir -p $R
echo "$(date -u +%H:%M:%S) start" > $R/stamps.txt
echo "gpu: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
OUT=$R LN_VARIANTS="plain ln_cluster_gamma" LN_OPS=layer_norm LN_PARTS=bench LN_SHAPES=4096x65536,2048x131072,1024x262144,8192x128256 \
  timeout 170 bash tests/gpu-host.sh ln-switches 2>&1 | tee $R/ln-switches.txt
echo "$(date -u +%H:%M:%S) done" >> $R/stamps.txt
tar czf $OUT/r1.tgz -C $R .
