#!/usr/bin/env bash
# Session 63, call 4. Call 3's synccheck over rms_norm::f32::cluster (the default build, RMSNorm's
# clusters staged) reported "Barrier error detected. Missing wait." at ClusterExchange::open's
# mbarrier arrive, in the clusters of 16 only. synccheck had not run on clusters of 16 before:
# is it the staging, or every cluster of 16? synccheck over softmax's, log_softmax's, softmax
# backward's and LayerNorm's clusters of 16 (nothing staged), then RMSNorm's under -DDL_CLUSTER_UNSTAGED, then RMSNorm's clusters of
# 2 to 8 at bf16 as built.
set -u
R=$OUT/r; mkdir -p $R
stamp() { echo "$(date -u +%H:%M:%S) $SECONDS $*" >> $R/stamps.txt; }
stamp start
echo "gpu: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
B=.gpu-bundle
sc() { # name, options, filters...
  local name=$1 opts=$2; shift 2
  REDUCTION_NVRTC_OPTIONS="$opts" REQUIRE_GPU=1 timeout 110 compute-sanitizer --tool synccheck --error-exitcode 3 --print-limit 40 \
    $B/tests/test-dl "$@" > $R/synccheck-$name.log 2>&1
  stamp $name rc=$?
  echo "$name: $(grep -E '^test result|ERROR SUMMARY' $R/synccheck-$name.log | tr '\n' ' ') at: $(grep -E '^=========     at ' $R/synccheck-$name.log | sort | uniq -c | head -3 | tr '\n' ' ')"
}
sc others-f32-cluster16 "" f32::cluster16 --skip mutation:: --skip rms_norm
tar czf $OUT/r1.tgz -C $R .
sc rms-f32-cluster16-unstaged -DDL_CLUSTER_UNSTAGED rms_norm::f32::cluster16 --skip mutation::
tar czf $OUT/r1.tgz -C $R .
[ $SECONDS -lt 250 ] && sc rms-bf16-cluster "" rms_norm::bf16::cluster:: --skip mutation::
tar czf $OUT/r1.tgz -C $R .
