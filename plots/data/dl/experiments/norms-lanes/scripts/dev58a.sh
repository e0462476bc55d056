#!/usr/bin/env bash
# Session 58, call 1: the norms' short rows (lanes teams) with γ and β staged once a block in
# shared memory (DL_LANES_STAGED), without a test per pack (DL_NORMS_UNTESTED), and with
# LayerNorm's two passes, by turns; Nsight Compute's instructions and L1/L2 traffic of each;
# test-dl's norms under the staged lanes.
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi > $OUT/nvidia-smi.txt 2>&1
stamp() { echo "$(date -u +%H:%M:%S) $*" >> $OUT/stamps.txt; }
stamp start
OUT=$R LN_VARIANTS="plain staged_lanes untested staged_lanes_untested untested_two_pass" \
  LN_SHAPES=1048576x256,262144x1024 LN_OPS=layer_norm,rms_norm LN_PARTS=bench \
  timeout 280 bash tests/gpu-host.sh ln-switches 2>&1 | tee $OUT/ln-switches.txt
stamp switches done
runs=""
for v in plain staged_lanes untested staged_lanes_untested untested_two_pass; do runs="$runs layer_norm:bf16:1048576x256:$v"; done
runs="$runs rms_norm:bf16:1048576x256:plain rms_norm:bf16:1048576x256:staged_lanes softmax:bf16:1048576x256:plain"
OUT=$R LN_NCU_RUNS="$runs" timeout 170 bash tests/gpu-host.sh ln-ncu 2>&1 | tee $OUT/ln-ncu.txt
stamp ncu done
REDUCTION_NVRTC_OPTIONS="-DDL_LANES_STAGED" REQUIRE_GPU=1 timeout 100 .gpu-bundle/tests/test-dl norm > $OUT/test-dl-norms-staged-lanes.log 2>&1
stamp tests done rc=$?
grep -E "^test result" $OUT/test-dl-norms-staged-lanes.log
find $R -name '*.ncu-rep' -delete
