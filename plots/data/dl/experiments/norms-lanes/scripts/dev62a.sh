#!/usr/bin/env bash
# Session 62, call 1. (1) test-dl, every trial, as built (session 61's fixed cluster mutant and
# dl-bench's LayerNorm bound have not run on a GPU). (2) The norms' trials under
# -DDL_CLUSTER_STAGED (the clusters' γ and β staged in shared memory), then by turns, two rounds,
# the norms at the long rows: plain against cluster_staged. (3) compute-sanitizer over LayerNorm's
# bf16 clusters (two passes since session 61) and RMSNorm's staged clusters. (4) With time left,
# LayerNorm's two shapes that session 61's turns lacked: plain against cluster_before.
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi > $R/nvidia-smi.txt 2>&1
stamp() { echo "$(date -u +%H:%M:%S) $SECONDS $*" >> $R/stamps.txt; }
stamp start
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "gpu: $gpu"
B=.gpu-bundle
REQUIRE_GPU=1 timeout 120 $B/tests/test-dl > $R/test-dl.log 2>&1
stamp test-dl rc=$?
grep -E "^test result|planted|FAILED|panicked" $R/test-dl.log | tail -6
REDUCTION_NVRTC_OPTIONS=-DDL_CLUSTER_STAGED REQUIRE_GPU=1 timeout 90 $B/tests/test-dl norm > $R/test-dl-staged.log 2>&1
stamp test-dl staged rc=$?
echo "staged: $(grep -E '^test result' $R/test-dl-staged.log | tail -1)"; grep -E "FAILED|panicked" $R/test-dl-staged.log | head -5
tar czf $OUT/r1.tgz -C $R .
long=2048x131072,1024x262144,8192x128256
OUT=$R LN_VARIANTS="plain cluster_staged" LN_OPS=layer_norm,rms_norm LN_PARTS=bench LN_SHAPES=$long \
  timeout $((330 - SECONDS)) bash tests/gpu-host.sh ln-switches 2>&1 | tee $R/ln-switches.txt
stamp switches done
tar czf $OUT/r1.tgz -C $R .
for t in "racecheck layer_norm::bf16::cluster" "memcheck layer_norm::bf16::cluster" "racecheck rms_norm::f32::cluster -DDL_CLUSTER_STAGED"; do
  set -- $t
  [ $SECONDS -lt 360 ] || break
  left=$((420 - SECONDS)); REDUCTION_NVRTC_OPTIONS="${3:-}" REQUIRE_GPU=1 timeout $((left < 90 ? left : 90)) compute-sanitizer --tool $1 --error-exitcode 3 \
    $B/tests/test-dl "$2" > $R/$1-${2//:/_}${3:+-staged}.log 2>&1
  stamp $1 $2 ${3:-} rc=$?
  echo "$1 $2 ${3:-}: $(grep -E '^test result|ERROR SUMMARY|RACECHECK SUMMARY' $R/$1-${2//:/_}${3:+-staged}.log | tr '\n' ' ')"
done
tar czf $OUT/r1.tgz -C $R .
