#!/usr/bin/env bash
# Session 60, call 1. (1) synccheck of the norms' lanes (the staged lanes' barrier; session 59's
# unrun call 3). (2) On an H200: the norms' short rows with their peers (to merge into
# plots/data/dl). (3) By turns, two rounds: the norms' parameters loaded ahead of the write
# (norms_ahead: RMSNorm's γ 2 packs ahead, LayerNorm's γ and β 1 ahead) against the default, at
# the blocks' and the long rows' shapes. (4) Nsight Compute's source counters of both norms at
# f32 1024 × 2^18, with and without. (5) test-dl's norms (planted bugs among them) under the switch.
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi > $R/nvidia-smi.txt 2>&1
stamp() { echo "$(date -u +%H:%M:%S) $*" >> $R/stamps.txt; }
stamp start
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "gpu: $gpu"
for t in bf16 f32; do
  MAX_TEST_N=70000 REQUIRE_GPU=1 timeout 60 compute-sanitizer --tool synccheck --error-exitcode 3 \
    .gpu-bundle/tests/test-dl "norm::$t::lanes" > $R/synccheck-norms-$t-lanes.log 2>&1
  stamp synccheck $t rc=$?
  echo "synccheck norms $t lanes: $(grep -E '^test result|ERROR SUMMARY' $R/synccheck-norms-$t-lanes.log | tr '\n' ' ')"
done
if [[ $gpu == *H200* ]]; then
  source plots/peers_env.sh .gpu-peers > $R/peers-env.txt 2>&1
  timeout 330 .gpu-bundle/bin/reduction dl-bench --ops layer_norm,rms_norm --dtypes bf16,f32 \
    --shapes 1048576x256,524288x512,262144x1024,131072x2048 --budget-s 0 --peers-budget-s 200 \
    --out $R/h200-norms > $R/h200-norms.log 2>&1
  stamp h200 norms rc=$?
  tail -n 30 $R/h200-norms.log
fi
OUT=$R LN_VARIANTS="plain norms_ahead" LN_OPS=layer_norm,rms_norm LN_PARTS=bench \
  LN_SHAPES=4096x4096,65536x4096,16384x16384,8192x32768,4096x65536,2048x131072,1024x262144,8192x128256 \
  timeout $((400 - SECONDS)) bash tests/gpu-host.sh ln-switches 2>&1 | tee $R/ln-switches.txt
stamp switches done
runs="layer_norm:f32:1024x262144:plain rms_norm:f32:1024x262144:plain layer_norm:f32:1024x262144:norms_ahead rms_norm:f32:1024x262144:norms_ahead"
OUT=$R LN_NCU_RUNS="$runs" timeout $((470 - SECONDS)) bash tests/gpu-host.sh ln-ncu 2>&1 | tee $R/ln-ncu.txt
stamp ncu done
REDUCTION_NVRTC_OPTIONS="-DDL_PARAMS_AHEAD=2 -DDL_LN_PARAMS_AHEAD=1" REQUIRE_GPU=1 timeout $((575 - SECONDS)) \
  .gpu-bundle/tests/test-dl norm > $R/test-dl-norms-ahead.log 2>&1
stamp tests done rc=$?
grep -E "^test result|planted|FAILED|failed" $R/test-dl-norms-ahead.log | tail -5
find $R -name '*.ncu-rep' -delete
tar czf $OUT/r.tgz -C $R . && rm -rf $R
