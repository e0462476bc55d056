#!/usr/bin/env bash
# (Ran in session 63 as its first call, on an H100: cluster_staged ran at 4096 × 4096 only, since
# gpu-host.sh's *_staged pattern caught the name, and the test-dl runs stopped at their limits;
# dev63a.sh ran it again.)
# Written in session 62 and not run there (no GPU started). (1) By turns, two rounds, the norms at
# the long rows: plain against cluster_staged (-DDL_CLUSTER_STAGED: the clusters' γ and β staged
# in shared memory; dl-bench checks every result before timing it). (2) The norms' trials under
# the switch. (3) test-dl, every trial, as built (session 61's fixed cluster mutant and dl-bench's
# LayerNorm bound have not run on a GPU). (4) compute-sanitizer over LayerNorm's bf16 clusters
# (two passes since session 61) and RMSNorm's staged clusters.
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi > $R/nvidia-smi.txt 2>&1
stamp() { echo "$(date -u +%H:%M:%S) $SECONDS $*" >> $R/stamps.txt; }
stamp start
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "gpu: $gpu"
B=.gpu-bundle
long=4096x65536,2048x131072,1024x262144,8192x128256
OUT=$R LN_VARIANTS="plain cluster_staged" LN_OPS=layer_norm,rms_norm LN_PARTS=bench LN_SHAPES=$long \
  timeout 280 bash tests/gpu-host.sh ln-switches 2>&1 | tee $R/ln-switches.txt
stamp switches done
tar czf $OUT/r1.tgz -C $R .
REDUCTION_NVRTC_OPTIONS=-DDL_CLUSTER_STAGED REQUIRE_GPU=1 timeout 60 $B/tests/test-dl norm > $R/test-dl-staged.log 2>&1
stamp test-dl staged rc=$?
echo "staged: $(grep -E '^test result' $R/test-dl-staged.log | tail -1)"; grep -E "FAILED|panicked" $R/test-dl-staged.log | head -5
tar czf $OUT/r1.tgz -C $R .
REQUIRE_GPU=1 timeout 100 $B/tests/test-dl > $R/test-dl.log 2>&1
stamp test-dl rc=$?
grep -E "^test result|planted|FAILED|panicked" $R/test-dl.log | tail -6
tar czf $OUT/r1.tgz -C $R .
for t in "racecheck layer_norm::bf16::cluster" "racecheck rms_norm::f32::cluster -DDL_CLUSTER_STAGED" "memcheck layer_norm::bf16::cluster"; do
  set -- $t
  [ $SECONDS -lt 520 ] || break
  left=$((580 - SECONDS)); REDUCTION_NVRTC_OPTIONS="${3:-}" REQUIRE_GPU=1 timeout $((left < 90 ? left : 90)) compute-sanitizer --tool $1 --error-exitcode 3 \
    $B/tests/test-dl "$2" > $R/$1-${2//:/_}${3:+-staged}.log 2>&1
  stamp $1 $2 ${3:-} rc=$?
  echo "$1 $2 ${3:-}: $(grep -E '^test result|ERROR SUMMARY|RACECHECK SUMMARY' $R/$1-${2//:/_}${3:+-staged}.log | tr '\n' ' ')"
done
tar czf $OUT/r1.tgz -C $R .
