#!/usr/bin/env bash
# Session 58, call 2: the norms' short rows without the test per pack (DL_NORMS_UNTESTED), alone,
# with γ and β staged once a block (DL_LANES_STAGED), and with the merge of equal halves
# (OP_MERGE_EQUAL_HALVES), against the default, by turns; Nsight Compute of each; test-dl's norms.
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi > $OUT/nvidia-smi.txt 2>&1
stamp() { echo "$(date -u +%H:%M:%S) $*" >> $OUT/stamps.txt; }
stamp start
OUT=$R LN_VARIANTS="plain untested staged_lanes_untested untested_halves" \
  LN_SHAPES=1048576x256,262144x1024 LN_OPS=layer_norm,rms_norm LN_PARTS=bench \
  timeout 290 bash tests/gpu-host.sh ln-switches 2>&1 | tee $OUT/ln-switches.txt
stamp switches done
runs="layer_norm:bf16:1048576x256:staged_lanes_untested layer_norm:bf16:1048576x256:untested_halves"
runs="$runs rms_norm:bf16:1048576x256:untested rms_norm:bf16:1048576x256:staged_lanes_untested"
OUT=$R LN_NCU_RUNS="$runs" timeout 80 bash tests/gpu-host.sh ln-ncu 2>&1 | tee $OUT/ln-ncu.txt
stamp ncu done
for v in untested_halves staged_lanes_untested; do
  REDUCTION_NVRTC_OPTIONS="$(source /dev/stdin <<< "$(sed -n '/^switch_of()/,/^}/p' tests/gpu-host.sh)"; switch_of $v)" \
    REQUIRE_GPU=1 timeout 70 .gpu-bundle/tests/test-dl norm > $R/test-dl-norms-$v.log 2>&1
  stamp tests $v rc=$?
  echo "test-dl norm under $v: $(grep -E '^test result' $R/test-dl-norms-$v.log)"
done
find $R -name '*.ncu-rep' -delete
tar czf $OUT/r.tgz -C $R . && rm -rf $R
