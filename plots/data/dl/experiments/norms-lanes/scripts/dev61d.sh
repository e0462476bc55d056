#!/usr/bin/env bash
# Session 61, call 2 (dev61d.sh: little device time left): test-dl first (every trial, the
# planted bugs among them), then by turns, two rounds, LayerNorm's cluster shapes: the default
# build (plain) against cluster_before (session 60's build).
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi > $R/nvidia-smi.txt 2>&1
stamp() { echo "$(date -u +%H:%M:%S) $SECONDS $*" >> $R/stamps.txt; }
stamp start
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "gpu: $gpu"
B=.gpu-bundle
REQUIRE_GPU=1 timeout 90 $B/tests/test-dl > $R/test-dl.log 2>&1
stamp test-dl rc=$?
grep -E "^test result|planted|FAILED|panicked" $R/test-dl.log | tail -8
tar czf $OUT/r1.tgz -C $R .
OUT=$R LN_VARIANTS="plain cluster_before" LN_OPS=layer_norm LN_PARTS=bench LN_SHAPES=4096x65536,2048x131072,1024x262144 \
  bash tests/gpu-host.sh ln-switches 2>&1 | tee $R/ln-switches.txt
stamp switches done
tar czf $OUT/r1.tgz -C $R .
