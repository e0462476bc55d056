#!/usr/bin/env bash
# Everything the book verifies on a GPU host that has no Rust toolchain, in one go: the bundled
# test binaries, the four compute-sanitizer tools, and the benchmark. Build the bundle first on
# a machine with Rust (bash ../shared/gpu/bundle.sh), then run this from the project root:
#
#   OUT=results bash tests/gpu-host.sh [stages]     stages: smoke tests bench sanitize (default: all)
#
# Logs, sanitizer reports and the benchmark CSV are written under $OUT. With PACK=file.tgz the
# whole of $OUT is also packed into that file after every stage, so that a run cut short by a
# time limit still leaves what it had.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-results}
mkdir -p "$OUT"
B=.gpu-bundle
stages=${*:-smoke tests bench sanitize}
has() { [[ " $stages " == *" $1 "* ]]; }
pack() { [ -n "${PACK:-}" ] && tar czf "$PACK" -C "$OUT" . ; true; }
status=0

if has smoke; then
  echo "=== smoke"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv | tee "$OUT/nvidia-smi.csv"
  $B/bin/reduction info || exit 1
  $B/bin/reduction sum --kernel reduce7 --n 2^20 --dtype i32 || exit 1
fi

if has tests; then
  echo "=== tests (REQUIRE_GPU=1)"
  timeout 300 bash $B/run.sh > "$OUT/tests.log" 2>&1 || status=1
  grep -E "^=== |test result|FAILED|panicked|bundle result" "$OUT/tests.log" | head -40
  pack
fi

if has sanitize; then
  # Every correct kernel under each tool, at sizes up to 2^16 (the sanitizers slow kernels down
  # a hundredfold); book and compile tests need no GPU and are skipped here.
  for tool in memcheck racecheck synccheck initcheck; do
    echo "=== compute-sanitizer --tool $tool"
    for t in $B/tests/test-gpu $B/tests/test-snippets; do
      # f32, i32 and f16 cover every code path the other element types share.
      MAX_TEST_N=65537 REQUIRE_GPU=1 timeout 300 compute-sanitizer --tool $tool --error-exitcode 99 --print-limit 20 \
        "$t" --skip ::f64:: --skip ::bf16:: > "$OUT/sanitize-$tool-$(basename $t).log" 2>&1
      rc=$?
      echo "$tool $(basename $t): exit $rc; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitize-$tool-$(basename $t).log" | tail -1); $(grep 'test result' "$OUT/sanitize-$tool-$(basename $t).log" | tail -1)"
      [ $rc = 0 ] || status=1
      pack
    done
  done
  echo "=== racecheck on Harris's 2007 kernel 5 (expected to report hazards)"
  timeout 120 compute-sanitizer --tool racecheck --print-limit 4 $B/bin/reduction sum --kernel reduce5_volatile --n 100000 --block 256 \
    > "$OUT/racecheck-reduce5_volatile.log" 2>&1
  echo "exit $?; $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$OUT/racecheck-reduce5_volatile.log" | tail -1)"
  pack
fi

if has bench; then
  echo "=== bench"
  timeout 420 $B/bin/reduction bench --out "$OUT" 2> "$OUT/bench.log" | tee "$OUT/bench-summary.txt" || status=1
  pack
fi
echo "gpu-host status: $status"
exit $status
