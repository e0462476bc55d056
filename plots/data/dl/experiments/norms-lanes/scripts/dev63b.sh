#!/usr/bin/env bash
# Session 63, call 3, on the build with RMSNorm's clusters staged by default (rms-default.diff
# applied after call 2's turns). (1) test-dl, every trial. (2) compute-sanitizer over RMSNorm's
# clusters as built now. (3) On an H200 only: by turns, RMSNorm at the long rows, the default
# (staged) against cluster_unstaged (-DDL_CLUSTER_UNSTAGED: γ from L2 as before).
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi > $R/nvidia-smi.txt 2>&1
stamp() { echo "$(date -u +%H:%M:%S) $SECONDS $*" >> $R/stamps.txt; }
stamp start
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "gpu: $gpu"
B=.gpu-bundle
REQUIRE_GPU=1 timeout 220 $B/tests/test-dl > $R/test-dl.log 2>&1
stamp test-dl rc=$?
grep -E "^test result|FAILED|panicked" $R/test-dl.log | tail -6
tar czf $OUT/r1.tgz -C $R .
for t in "memcheck rms_norm::f32::cluster" "racecheck rms_norm::bf16::cluster" "synccheck rms_norm::f32::cluster"; do
  set -- $t
  [ $SECONDS -lt 380 ] || break
  REQUIRE_GPU=1 timeout 60 compute-sanitizer --tool $1 --error-exitcode 3 $B/tests/test-dl "$2" > $R/$1-${2//:/_}.log 2>&1
  stamp $1 $2 rc=$?
  echo "$1 $2: $(grep -E '^test result|ERROR SUMMARY|RACECHECK SUMMARY' $R/$1-${2//:/_}.log | tr '\n' ' ')"
done
tar czf $OUT/r1.tgz -C $R .
if [[ $gpu == *H200* ]] && [ $SECONDS -lt 400 ]; then
  OUT=$R LN_VARIANTS="plain cluster_unstaged" LN_OPS=rms_norm LN_PARTS=bench LN_SHAPES=4096x65536,2048x131072,1024x262144,8192x128256 \
    timeout $((580 - SECONDS)) bash tests/gpu-host.sh ln-switches 2>&1 | tee $R/ln-switches.txt
  stamp switches done
fi
tar czf $OUT/r1.tgz -C $R .
