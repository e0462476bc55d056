#!/usr/bin/env bash
# Session 61, call 1. (1) By turns, two rounds, at the norms' cluster shapes: the default build
# (plain: LayerNorm's clusters by two passes over the held row, every cluster's blocks met in
# log2(C) levels) against cluster_before (both undone: the build of session 60) and
# cluster_merge32 (the two passes only); softmax's clusters, plain against cluster_merge32.
# (2) LayerNorm with a cluster forced where the planner gives a block (bf16 4096 × 65536,
# f32 8192 × 32768), each round. (3) test-dl, every trial, under the default build.
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi > $R/nvidia-smi.txt 2>&1
stamp() { echo "$(date -u +%H:%M:%S) $SECONDS $*" >> $R/stamps.txt; }
stamp start
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "gpu: $gpu"
B=.gpu-bundle
long=4096x65536,2048x131072,1024x262144,8192x128256
OUT=$R LN_VARIANTS="plain cluster_before cluster_merge32" LN_OPS=layer_norm,rms_norm LN_PARTS=bench LN_SHAPES=$long \
  timeout $((300 - SECONDS)) bash tests/gpu-host.sh ln-switches 2>&1 | tee $R/ln-switches.txt
stamp norms switches done
mkdir -p $R/forced
for round in 1 2; do
  for f in "bf16 4096x65536 cluster:2:8:512" "f32 8192x32768 cluster:2:8:512"; do
    set -- $f
    timeout 60 $B/bin/reduction dl-bench --planner-only --no-peers --budget-s 0 --ops layer_norm,rms_norm --shapes $2 --dtypes $1 \
      --team $3 --out $R/forced/$1-$2-$round > $R/forced/$1-$2-$round.log 2>&1
    echo "forced $f round $round: $(grep -E 'µs' $R/forced/$1-$2-$round.log | tail -2 | tr '\n' ' ')"
  done
done
stamp forced done
mkdir -p $R/softmax
for round in 1 2; do
  for v in plain cluster_merge32; do
    o=""; [ $v = cluster_merge32 ] && o="-DDL_CLUSTER_MERGE_32"
    REDUCTION_NVRTC_OPTIONS="$o" timeout 80 $B/bin/reduction dl-bench --planner-only --no-peers --budget-s 0 --ops softmax \
      --shapes $long --dtypes bf16,f32 --out $R/softmax/$v-$round > $R/softmax/$v-$round.log 2>&1
    stamp softmax $v $round rc=$?
  done
done
REQUIRE_GPU=1 timeout $((575 - SECONDS)) $B/tests/test-dl > $R/test-dl.log 2>&1
stamp test-dl rc=$?
grep -E "^test result|planted|FAILED|panicked" $R/test-dl.log | tail -8
tar czf $OUT/r.tgz -C $R . && rm -rf $R
