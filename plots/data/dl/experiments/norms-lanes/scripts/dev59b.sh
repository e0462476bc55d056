#!/usr/bin/env bash
# Session 59, call 2: the build whose LayerNorm lanes stage γ and β once a block (unhoisted, the
# default since), against -DDL_LANES_UNSTAGED (the default before), by turns, two rounds, at the
# short rows; test-dl (every trial, the planted bugs among them); the norms' lanes under racecheck
# and memcheck; then the same build's planner beside its peers at two shapes. On an H200 first a
# dl-bench of the norms at the short rows with the peers, to merge into plots/data/dl.
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi > $R/nvidia-smi.txt 2>&1
stamp() { echo "$(date -u +%H:%M:%S) $*" >> $R/stamps.txt; }
stamp start
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "gpu: $gpu"
source plots/peers_env.sh .gpu-peers > $R/peers-env.txt 2>&1
SHAPES=1048576x256,524288x512,262144x1024,131072x2048
if [[ $gpu == *H200* ]]; then
  timeout 300 .gpu-bundle/bin/reduction dl-bench --ops layer_norm,rms_norm --dtypes bf16,f32 \
    --shapes $SHAPES --budget-s 0 --peers-budget-s 120 --out $R/h200-norms > $R/h200-norms.log 2>&1
  stamp h200 norms rc=$?
  tail -n 25 $R/h200-norms.log
  SHAPES=1048576x256,262144x1024
fi
OUT=$R LN_VARIANTS="plain unstaged_lanes" LN_SHAPES=$SHAPES LN_OPS=layer_norm LN_PARTS=bench \
  timeout 200 bash tests/gpu-host.sh ln-switches 2>&1 | tee $R/ln-switches.txt
stamp switches done
REQUIRE_GPU=1 timeout 200 .gpu-bundle/tests/test-dl > $R/test-dl.log 2>&1
stamp test-dl rc=$?
grep -E "^test result|mutation score|planted|FAILED|failed" $R/test-dl.log | tail -n 8
for tool in racecheck memcheck; do
  for t in bf16 f32; do
    [ $SECONDS -lt 500 ] || break
    MAX_TEST_N=70000 REQUIRE_GPU=1 timeout 40 compute-sanitizer --tool $tool --error-exitcode 3 \
      .gpu-bundle/tests/test-dl "norm::$t::lanes" > $R/$tool-norms-$t-lanes.log 2>&1
    stamp $tool $t rc=$?
    echo "$tool norms $t lanes: $(grep -E '^test result|ERROR SUMMARY|RACECHECK SUMMARY' $R/$tool-norms-$t-lanes.log | tr '\n' ' ')"
  done
done
if [ $SECONDS -lt 440 ]; then
  timeout $((585 - SECONDS)) .gpu-bundle/bin/reduction dl-bench --planner-only --ops layer_norm --dtypes bf16,f32 \
    --shapes 1048576x256,262144x1024 --budget-s 0 --peers-budget-s $((480 - SECONDS)) --out $R/peers > $R/peers.log 2>&1
  stamp peers rc=$?
  grep -E "µs" $R/peers.log | tail -n 20
fi
find $R -name '*.ncu-rep' -delete
tar czf $OUT/r.tgz -C $R . && rm -rf $R
