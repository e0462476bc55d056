#!/usr/bin/env bash
# Session 59, call 3 (the committed default: LayerNorm's lanes staged). On an H200: a dl-bench of
# the norms at the short rows with their peers, to merge into plots/data/dl, and Nsight Compute's
# profile of LayerNorm bf16 2^20 × 256. On an H100: Nsight Compute of LayerNorm bf16 at 2^20 × 256
# and 2^18 × 2^10, the default against -DDL_LANES_UNSTAGED (instructions, L2, DRAM).
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi > $R/nvidia-smi.txt 2>&1
stamp() { echo "$(date -u +%H:%M:%S) $*" >> $R/stamps.txt; }
stamp start
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "gpu: $gpu"
# The staged lanes' one barrier is reached in a row by threads with rows and after the loop by
# warps without: synccheck of the norms' lanes trials.
for t in bf16 f32; do
  MAX_TEST_N=70000 REQUIRE_GPU=1 timeout 60 compute-sanitizer --tool synccheck --error-exitcode 3 \
    .gpu-bundle/tests/test-dl "norm::$t::lanes" > $R/synccheck-norms-$t-lanes.log 2>&1
  stamp synccheck $t rc=$?
  echo "synccheck norms $t lanes: $(grep -E '^test result|ERROR SUMMARY' $R/synccheck-norms-$t-lanes.log | tr '\n' ' ')"
done
if [[ $gpu == *H200* ]]; then
  source plots/peers_env.sh .gpu-peers > $R/peers-env.txt 2>&1
  timeout 400 .gpu-bundle/bin/reduction dl-bench --ops layer_norm,rms_norm --dtypes bf16,f32 \
    --shapes 1048576x256,524288x512,262144x1024,131072x2048 --budget-s 0 --peers-budget-s 200 \
    --out $R/h200-norms > $R/h200-norms.log 2>&1
  stamp h200 norms rc=$?
  tail -n 30 $R/h200-norms.log
  runs="layer_norm:bf16:1048576x256:plain layer_norm:bf16:1048576x256:unstaged_lanes"
else
  runs="layer_norm:bf16:1048576x256:plain layer_norm:bf16:1048576x256:unstaged_lanes"
  runs="$runs layer_norm:bf16:262144x1024:plain layer_norm:bf16:262144x1024:unstaged_lanes"
fi
OUT=$R LN_NCU_RUNS="$runs" timeout $((580 - SECONDS)) bash tests/gpu-host.sh ln-ncu 2>&1 | tee $R/ln-ncu.txt
stamp ncu done
find $R -name '*.ncu-rep' -delete
tar czf $OUT/r.tgz -C $R . && rm -rf $R
