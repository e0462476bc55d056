#!/usr/bin/env bash
# Session 58, call 3: the build whose norms' lanes go without the test per pack by default:
# test-dl (every trial, the planted bugs among them), the norms' lanes trials under memcheck, and
# the planner's teams at the short rows of calls 1 and 2.
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi > $OUT/nvidia-smi.txt 2>&1
stamp() { echo "$(date -u +%H:%M:%S) $*" >> $OUT/stamps.txt; }
stamp start
timeout 50 .gpu-bundle/bin/reduction dl-bench --planner-only --no-peers --budget-s 0 --ops layer_norm,rms_norm \
  --shapes 1048576x256,262144x1024 --dtypes bf16,f32 --out $R/planner > $R/planner.log 2>&1
stamp planner rc=$?
grep -E "µs|error" $R/planner.log | tail -n 12
REQUIRE_GPU=1 timeout 300 .gpu-bundle/tests/test-dl > $R/test-dl.log 2>&1
stamp test-dl rc=$?
grep -E "^test result|planted|caught|FAILED|failed" $R/test-dl.log | tail -n 8
for t in bf16 f32; do
  MAX_TEST_N=70000 REQUIRE_GPU=1 timeout 60 compute-sanitizer --tool memcheck --error-exitcode 3 .gpu-bundle/tests/test-dl "norm::$t::lanes" > $R/memcheck-norms-$t-lanes.log 2>&1
  stamp memcheck $t rc=$?
  echo "memcheck norms $t lanes: $(grep -E '^test result|ERROR SUMMARY' $R/memcheck-norms-$t-lanes.log | tr '\n' ' ')"
done
tar czf $OUT/r.tgz -C $R . && rm -rf $R
