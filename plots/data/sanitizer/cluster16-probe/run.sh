#!/usr/bin/env bash
# On the GPU host (session 63): build probe.cu, run each variant plainly and under synccheck.
set -u
cd "$(dirname "$0")"
R=${OUT:-/tmp}/probe; mkdir -p $R
nvcc -arch=sm_90 -o /tmp/probe probe.cu > $R/nvcc.log 2>&1 || { cat $R/nvcc.log; exit 1; }
for v in "8 0 0" "16 0 0" "8 1 0" "16 1 0" "8 0 1" "16 0 1"; do
  set -- $v
  /tmp/probe $1 $2 $3 > $R/plain-$1-$2-$3.log 2>&1; echo "plain C=$1 token=$2 local=$3 rc=$?: $(cat $R/plain-$1-$2-$3.log)"
  timeout 60 compute-sanitizer --tool synccheck --print-limit 4 /tmp/probe $1 $2 $3 > $R/synccheck-$1-$2-$3.log 2>&1
  echo "synccheck C=$1 token=$2 local=$3 rc=$?: $(grep -E 'values wrong|ERROR SUMMARY|Missing' $R/synccheck-$1-$2-$3.log | sort | uniq -c | tr '\n' ' ')"
done
