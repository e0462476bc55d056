#!/usr/bin/env bash
# Session 63, call 2. Call 1 (dev62a.sh, on an H100) ran the staged variant at 4096 × 4096 only:
# gpu-host.sh's `*_staged` pattern caught `cluster_staged` (fixed), and its test-dl runs stopped
# at their limits (test-dl spends ~52 s compiling before the first trial). (1) By turns, two
# rounds, the norms at the long rows: plain against cluster_staged. (2) The norms' trials under
# -DDL_CLUSTER_STAGED. (3) racecheck over LayerNorm's bf16 clusters (34 of 36 in 90 s in call 1).
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi > $R/nvidia-smi.txt 2>&1
stamp() { echo "$(date -u +%H:%M:%S) $SECONDS $*" >> $R/stamps.txt; }
stamp start
echo "gpu: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
B=.gpu-bundle
long=4096x65536,2048x131072,1024x262144,8192x128256
OUT=$R LN_VARIANTS="plain cluster_staged" LN_OPS=layer_norm,rms_norm LN_PARTS=bench LN_SHAPES=$long \
  timeout 300 bash tests/gpu-host.sh ln-switches 2>&1 | tee $R/ln-switches.txt
stamp switches done
tar czf $OUT/r1.tgz -C $R .
REDUCTION_NVRTC_OPTIONS=-DDL_CLUSTER_STAGED REQUIRE_GPU=1 timeout 150 $B/tests/test-dl norm > $R/test-dl-staged.log 2>&1
stamp test-dl staged rc=$?
echo "staged: $(grep -E '^test result' $R/test-dl-staged.log | tail -1)"; grep -E "FAILED|panicked" $R/test-dl-staged.log | head -5
tar czf $OUT/r1.tgz -C $R .
left=$((585 - SECONDS))
if [ $left -gt 60 ]; then
  REQUIRE_GPU=1 timeout $left compute-sanitizer --tool racecheck --error-exitcode 3 \
    $B/tests/test-dl layer_norm::bf16::cluster > $R/racecheck-ln-bf16-cluster.log 2>&1
  stamp racecheck rc=$?
  echo "racecheck LayerNorm bf16 clusters: $(grep -E '^test result|RACECHECK SUMMARY' $R/racecheck-ln-bf16-cluster.log | tr '\n' ' ')"
fi
tar czf $OUT/r1.tgz -C $R .
