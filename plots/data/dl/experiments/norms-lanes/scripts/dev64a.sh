#!/usr/bin/env bash
# Written in session 63 for the next session (not run). Before LayerNorm's clusters can stage γ
# by default (-DDL_CLUSTER_STAGED_GAMMA; switches/cluster-staged-gamma/: faster in both rounds at
# 6 of 7 cluster cases on an H100): (1) test-dl's LayerNorm trials under the switch, (2) memcheck
# and racecheck over its LayerNorm clusters, (3) on an H200, by turns, the norms at the long rows:
# plain (RMSNorm's clusters staged, LayerNorm's not) against cluster_unstaged and ln_cluster_gamma.
# Carry [".gpu-bundle/bin", ".gpu-bundle/tests/test-dl"]; test-dl spends ~52 s compiling first.
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi > $R/nvidia-smi.txt 2>&1
stamp() { echo "$(date -u +%H:%M:%S) $SECONDS $*" >> $R/stamps.txt; }
stamp start
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "gpu: $gpu"
B=.gpu-bundle
REDUCTION_NVRTC_OPTIONS=-DDL_CLUSTER_STAGED_GAMMA REQUIRE_GPU=1 timeout 150 $B/tests/test-dl layer_norm > $R/test-dl-ln-gamma.log 2>&1
stamp test-dl gamma rc=$?
echo "layer_norm under the switch: $(grep -E '^test result' $R/test-dl-ln-gamma.log | tail -1)"; grep -E "FAILED|panicked" $R/test-dl-ln-gamma.log | head -5
tar czf $OUT/r1.tgz -C $R .
for tool in memcheck racecheck; do
  REDUCTION_NVRTC_OPTIONS=-DDL_CLUSTER_STAGED_GAMMA REQUIRE_GPU=1 timeout 100 compute-sanitizer --tool $tool --error-exitcode 3 \
    $B/tests/test-dl layer_norm::f32::cluster > $R/$tool-ln-f32-cluster-gamma.log 2>&1
  stamp $tool rc=$?
  echo "$tool: $(grep -E '^test result|ERROR SUMMARY|RACECHECK SUMMARY' $R/$tool-ln-f32-cluster-gamma.log | tr '\n' ' ')"
done
tar czf $OUT/r1.tgz -C $R .
if [[ $gpu == *H200* ]]; then
  OUT=$R LN_VARIANTS="plain cluster_unstaged ln_cluster_gamma" LN_OPS=layer_norm,rms_norm LN_PARTS=bench \
    LN_SHAPES=4096x65536,2048x131072,1024x262144,8192x128256 timeout $((585 - SECONDS)) bash tests/gpu-host.sh ln-switches 2>&1 | tee $R/ln-switches.txt
  stamp switches done
fi
tar czf $OUT/r1.tgz -C $R .
