#!/usr/bin/env bash
# Session 60, the last call (little device time left): the build of a25d23b (LayerNorm's staged
# lanes at an unaligned barrier; the clusters' parameters ahead) under synccheck, which refused
# the aligned one in call 1, then test-dl (planted bugs among them), then racecheck and memcheck
# of the norms' lanes as time allows. Every stage packs what it has.
set -u
R=$OUT/r; mkdir -p $R
stamp() { echo "$(date -u +%H:%M:%S) $*" >> $R/stamps.txt; tar czf $OUT/r.tgz -C $R . ; }
nvidia-smi > $R/nvidia-smi.txt 2>&1
stamp start
echo "gpu: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
lanes() {  # tool type seconds
  MAX_TEST_N=70000 REQUIRE_GPU=1 timeout $3 compute-sanitizer --tool $1 --error-exitcode 3 \
    .gpu-bundle/tests/test-dl "norm::$2::lanes" > $R/$1-norms-$2-lanes.log 2>&1
  stamp $1 $2 rc=$?
  echo "$1 norms $2 lanes: $(grep -E '^test result|ERROR SUMMARY|RACECHECK SUMMARY' $R/$1-norms-$2-lanes.log | tr '\n' ' ')"
}
lanes synccheck bf16 30
lanes synccheck f32 30
REQUIRE_GPU=1 timeout 60 .gpu-bundle/tests/test-dl > $R/test-dl.log 2>&1
stamp test-dl rc=$?
grep -E "^test result|mutation score" $R/test-dl.log
lanes racecheck bf16 40
lanes memcheck bf16 20
