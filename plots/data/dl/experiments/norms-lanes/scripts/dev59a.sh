#!/usr/bin/env bash
# Session 59, call 1. On an H200: the norms' short rows (the default build, lanes untested since
# session 58) with their peers, a dl-bench to merge into plots/data/dl. On any GPU: the staged
# lanes (DL_LANES_STAGED) as they were, fenced (ORDER=1) and through generic addresses (ORDER=2),
# against the default, by turns, two rounds; test-dl's norms under the two new ones.
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi > $R/nvidia-smi.txt 2>&1
stamp() { echo "$(date -u +%H:%M:%S) $*" >> $R/stamps.txt; }
stamp start
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "gpu: $gpu"
SHAPES=1048576x256,524288x512,262144x1024,131072x2048
if [[ $gpu == *H200* ]]; then
  source plots/peers_env.sh .gpu-peers > $R/peers-env.txt 2>&1
  timeout 330 .gpu-bundle/bin/reduction dl-bench --ops layer_norm,rms_norm --dtypes bf16,f32 \
    --shapes 1048576x256,524288x512,262144x1024,131072x2048 --budget-s 0 --peers-budget-s 150 \
    --out $R/h200-norms > $R/h200-norms.log 2>&1
  stamp h200 norms rc=$?
  tail -n 25 $R/h200-norms.log
  SHAPES=1048576x256,262144x1024
fi
left=$((560 - SECONDS))
OUT=$R LN_VARIANTS="plain staged_lanes staged_lanes_unhoisted" \
  LN_SHAPES=$SHAPES LN_OPS=layer_norm,rms_norm LN_PARTS=bench \
  timeout $((left > 60 ? left - 100 : 30)) bash tests/gpu-host.sh ln-switches 2>&1 | tee $R/ln-switches.txt
stamp switches done
v=staged_lanes_unhoisted
opts="$(source /dev/stdin <<< "$(sed -n '/^switch_of()/,/^}/p' tests/gpu-host.sh)"; switch_of $v)"
REDUCTION_NVRTC_OPTIONS="$opts" REQUIRE_GPU=1 timeout $((580 - SECONDS)) .gpu-bundle/tests/test-dl norm > $R/test-dl-norms-$v.log 2>&1
stamp tests $v rc=$?
echo "test-dl norm under $v: $(grep -E '^test result' $R/test-dl-norms-$v.log)"
for tool in racecheck memcheck; do
  for t in bf16 f32; do
    [ $SECONDS -lt 540 ] || break
    REDUCTION_NVRTC_OPTIONS="$opts" MAX_TEST_N=70000 REQUIRE_GPU=1 timeout $((590 - SECONDS)) compute-sanitizer --tool $tool --error-exitcode 3 \
      .gpu-bundle/tests/test-dl "norm::$t::lanes" > $R/$tool-norms-$t-lanes-$v.log 2>&1
    stamp $tool $t rc=$?
    echo "$tool norms $t lanes under $v: $(grep -E '^test result|ERROR SUMMARY|RACECHECK SUMMARY' $R/$tool-norms-$t-lanes-$v.log | tr '\n' ' ')"
  done
done
find $R -name '*.ncu-rep' -delete
tar czf $OUT/r.tgz -C $R . && rm -rf $R
