#!/usr/bin/env bash
# Everything the book verifies on a GPU host that has no Rust toolchain, in one go: the bundled
# test binaries, the four compute-sanitizer tools, and the benchmark. Build the bundle first on
# a machine with Rust (bash ../shared/gpu/bundle.sh), then run this from the project root:
#
#   OUT=results bash tests/gpu-host.sh [stages]     stages: smoke tests mistakes bench rows ncu atomic accuracy sanitize (default)
#                                                   and ops (only when named: the operators' tests and benchmark)
#                                                   and sweep (only when named: the four tools on every kernel at one size each, to their summaries)
#                                                   and racecheck (only when named: kernel 2 padded and the row kernels
#                                                   at larger sizes; sanitize already runs racecheck on every binary)
#                                                   and multigpu (only when named: it needs 2+ GPUs, and
#                                                   runs on all of them: 2, 4 or 8; see the stage)
#                                                   and book (only when named: the chapters' recorded outputs)
#                                                   and order (only when named: the entry point timed before or
#                                                   after the kernels, plots/data/experiments/entry-point-order)
#                                                   and ln-switches (only when named: LayerNorm's experiment
#                                                   switches against the default, by turns)
#                                                   and params-ahead (only when named: RMSNorm's γ loaded
#                                                   packs ahead, DL_PARAMS_AHEAD, by turns)
#                                                   and ln-ncu (only when named: Nsight Compute's instructions
#                                                   executed per SASS line, LayerNorm beside RMSNorm)
#                                                   and lanes-bound (only when named: softmax's lanes of 8
#                                                   packs at 4 blocks an SM, by turns)
#                                                   and vec-tail (only when named: kernels 9-12 with their
#                                                   leftover loads in flight, VEC_VARIANTS, by turns)
#                                                   and scratch (only when named: the same launches with
#                                                   their scratch buffers moved, bench --scratch-pads)
#                                                   and entry-ncu (only when named: the entry point's launches
#                                                   where a goal is missed, and CUB's, under Nsight Compute)
#                                                   and small-n (only when named: one block at 2^10 .. 2^14,
#                                                   every block size, then beside the peers)
#                                                   and big-tiles (only when named: the tile kernel at 512 and
#                                                   1024 threads at 2^28 and 2^30, beside the read-only kernel)
#                                                   and dl (only when named: the deep-learning reductions' tests, planted bugs and benchmark)
#                                                   and peers (only when named: plots/op_peers.py and dl_peers.py,
#                                                   with .gpu-peers/ from plots/pack_peers.sh)
#                                                   and reproducible (only when named: kernel 15's
#                                                   bits on every GPU; REQUIRE_GPUS = all of them, 2 or more)
#                                                   and capped held compare (only when named: a small
#                                                   GPU, simulated by REDUCTION_DEVICE_MEMORY=$CAP
#                                                   and then by another process holding all but $CAP;
#                                                   CAP=6GiB by default)
#   TOOLS="memcheck racecheck" restricts the sanitize stage to those compute-sanitizer tools;
#   FILTERS="reduce15 read_only" to the tests whose names contain one of them (a log each).
#
# Logs, sanitizer reports and the benchmark CSV are written under $OUT. With PACK=file.tgz the
# whole of $OUT is also packed into that file after every stage, so that a run cut short by a
# time limit still leaves what it had.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-results}
mkdir -p "$OUT"
B=.gpu-bundle
# The Python peers a host without network lacks (TileLang, Liger, Quack: plots/pack_peers.sh), for
# every stage whose Python children import them (tile-language tests, rows-bench, ops-bench, dl-bench).
if [ -d .gpu-peers ]; then source plots/peers_env.sh .gpu-peers; fi
stages=${*:-smoke tests mistakes bench rows ncu atomic accuracy sanitize}
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
  timeout ${TESTS_TIMEOUT:-540} bash $B/run.sh > "$OUT/tests.log" 2>&1 || status=1
  grep -E "^=== |test result|FAILED|panicked|bundle result|mutation score" "$OUT/tests.log" | head -60
  pack
fi

if has mistakes; then
  # The common-mistakes chapter: every broken kernel in a child process under a deadline (the
  # test binary re-executes itself; a hang is killed), what each did recorded for the book, and
  # the compute-sanitizer reports the chapter shows. Copy back:
  #   $OUT/mistakes/<gpu>.csv      -> plots/data/mistakes/<gpu>.csv
  #   $OUT/sanitizer/*.log         -> plots/data/sanitizer/
  echo "=== mistakes (each in a child process under a deadline)"
  mkdir -p "$OUT/mistakes" "$OUT/sanitizer"
  REQUIRE_GPU=1 MISTAKES_RECORD="$OUT/mistakes/" timeout 600 $B/tests/test-mistakes > "$OUT/mistakes-tests.log" 2>&1 || status=1
  grep -E "^observed:|^test gpu::|test result" "$OUT/mistakes-tests.log"
  timeout 600 $B/bin/reduction mistakes > "$OUT/mistakes-cli.txt" 2>&1 || status=1
  cat "$OUT/mistakes-cli.txt"
  pack
  # In this process, no guard: compute-sanitizer must see the kernels of the process it wraps.
  timeout 300 compute-sanitizer --tool synccheck --print-limit 3 --show-backtrace no $B/bin/reduction mistake sync_in_branch --n 10000 --runs 1 > "$OUT/sanitizer/synccheck-sync_in_branch.log" 2>&1
  echo "synccheck sync_in_branch: exit $?"
  timeout 300 compute-sanitizer --tool racecheck --print-limit 3 --show-backtrace no $B/bin/reduction mistake warp_volatile_no_syncwarp --n 10000 --runs 1 > "$OUT/sanitizer/racecheck-warp_volatile_no_syncwarp.log" 2>&1
  echo "racecheck warp_volatile_no_syncwarp: exit $?"
  timeout 300 compute-sanitizer --tool memcheck --print-limit 3 --show-backtrace no $B/bin/reduction mistake second_load_unchecked --n 10000 --runs 1 > "$OUT/sanitizer/memcheck-second_load_unchecked.log" 2>&1
  echo "memcheck second_load_unchecked: exit $?"
  grep -HE "ERROR SUMMARY|RACECHECK SUMMARY|^mistake" "$OUT"/sanitizer/*.log
  pack
fi

if has sanitize; then
  # The four compute-sanitizer tools on every kernel the book registers: every test binary of the
  # bundle that launches the book's kernels runs under each tool, so a kernel (or a test binary)
  # added later is picked up without touching this script. Skipped: the binaries whose kernels
  # are broken on purpose (mistakes, mutation, the exercises' near misses), the one that needs
  # two GPUs (multigpu), the 2^31-element ones (reliability: the same kernels, too large for the
  # tools), the Python tile languages and peers, and those that launch nothing; in the operators'
  # binary (test-ops), its planted bugs and its 2^31-element cases, for the same reasons. Sizes:
  # every size up to 2^16 + 1 (racecheck: 4097, on 4 test threads, where it finishes; with one per
  # core it did not).
  # Every test's line is kept, so that the chapter can say which kernel went through which tool
  # (src/book/chapters/sanitizers.rs reads them). Copy $OUT/sanitizer/sanitize-*.log to plots/data/sanitizer/.
  skip=" ${SANITIZE_SKIP:-test-mistakes test-mutation test-exercises test-multigpu test-reliability test-tile_languages test-peers test-dispatch test-book test-plots test-nvrtc test-browser test-skeptic test-cli} "
  mkdir -p "$OUT/sanitizer"
  for tool in ${TOOLS:-memcheck racecheck synccheck initcheck}; do
    echo "=== compute-sanitizer --tool $tool"
    # RACECHECK_THREADS=1: one test at a time (at 4, test-gpu's trials of kernel 12 and of the two-launch
    # kernels stalled with "failure to track a kernel launch"; a `reduction sum` a process did not)
    case $tool in racecheck) max_n=4097; threads=${RACECHECK_THREADS:-4};; *) max_n=65537; threads=${SANITIZE_THREADS:-8};; esac
    for t in $B/tests/test-*; do
      name=$(basename "$t")
      [[ "$skip" == *" $name "* ]] && continue
      # planted:: in test-reproducible: a launch-dependent order that the tools, which serialise the
      # launches, make deterministic (synccheck saw it as "not caught")
      case $name in test-ops) extra="--skip planted:: --skip large::";; test-dl) extra="--skip mutation::";; test-reproducible) extra="--skip planted::";; *) extra="";; esac
      for filter in ${FILTERS:-all}; do
        [ "$filter" = all ] && filter=""
        log="$OUT/sanitizer/sanitize-$tool-$name${filter:+-$filter}.log"
        started=$(date +%s)
        MAX_TEST_N=$max_n REQUIRE_GPU=1 timeout ${SANITIZE_TIMEOUT:-600} compute-sanitizer --tool $tool --error-exitcode 99 --print-limit 20 \
          "$t" $filter --skip determinism:: $extra --test-threads $threads > "$log.full" 2>&1
        rc=$?
        { echo "# MAX_TEST_N=$max_n REQUIRE_GPU=1 compute-sanitizer --tool $tool --error-exitcode 99 --print-limit 20 .gpu-bundle/tests/$name $filter --skip determinism:: $extra --test-threads $threads   ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(date -u +%F); exit $rc after $(( $(date +%s) - started )) s; the tests' lines and the tool's, padding removed)"
          grep -E '^test |^=========|^test result' "$log.full" | sed -E 's/ {2,}\.\.\. / ... /'; } > "$log"
        rm -f "$log.full"
        echo "$tool $name ${filter}: exit $rc in $(( $(date +%s) - started )) s; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1); $(grep 'test result' "$log" | tail -1)"
        [ $rc = 0 ] || status=1
        pack
      done
    done
  done
  echo "=== racecheck on Harris's 2007 kernel 5 (expected to report hazards)"
  timeout 120 compute-sanitizer --tool racecheck --print-limit 4 $B/bin/reduction sum --kernel reduce5_volatile --n 100000 --block 256 \
    > "$OUT/racecheck-reduce5_volatile.log" 2>&1
  echo "exit $?; $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$OUT/racecheck-reduce5_volatile.log" | tail -1)"
  pack
fi

if has sweep; then
  # The four tools on every kernel, each run small enough to reach the tool's summary: per binary,
  # the tests of one size or shape at which every kernel of it runs (every type, block and row
  # strategy). The four tools run at once, one lane each; a run that passes its time limit is
  # logged as stopped. Logs: $OUT/sanitizer/sanitize-<tool>-<binary>--<tag>.log -> plots/data/sanitizer/.
  mkdir -p "$OUT/sanitizer"
  sweep_end=$(( $(date +%s) + ${SWEEP_S:-900} ))
  sweep_lane() {  # tool, then binary|filter|extra arguments ...
    local tool=$1; shift
    for entry in "$@"; do
      local name=${entry%%|*} rest=${entry#*|}; local filter=${rest%%|*} extra=${rest#*|}
      local tag; tag=$(echo "$filter" | tr -c 'A-Za-z0-9\n' '_' | sed 's/_*$//'); tag=${tag:-all}
      local log="$OUT/sanitizer/sanitize-$tool-$name--$tag.log" started=$(date +%s)
      # SWEEP_S: the whole sweep's seconds; a run that would start with less than 10 left is not run.
      local lim=${SWEEP_TIMEOUT:-150} rest=$(( sweep_end - started ))
      [ $rest -lt $lim ] && lim=$rest
      [ $lim -lt 10 ] && { echo "$tool $name $filter: not run (the sweep's time is spent)"; continue; }
      # shellcheck disable=SC2086  # extra holds several arguments
      MAX_TEST_N=4097 REQUIRE_GPU=1 timeout $lim compute-sanitizer --tool $tool --error-exitcode 99 --print-limit 20 \
        "$B/tests/$name" $filter $extra --test-threads 4 > "$log.full" 2>&1
      local rc=$?
      { echo "# MAX_TEST_N=4097 REQUIRE_GPU=1 compute-sanitizer --tool $tool --error-exitcode 99 --print-limit 20 .gpu-bundle/tests/$name $filter $extra --test-threads 4   ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(date -u +%F); exit $rc after $(( $(date +%s) - started )) s; the tests' lines and the tool's, padding removed)"
        grep -E '^test |^=========|^test result' "$log.full" | sed -E 's/ {2,}\.\.\. / ... /'; } > "$log"
      rm -f "$log.full"
      echo "$tool $name $filter: exit $rc in $(( $(date +%s) - started )) s; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1); $(grep 'test result' "$log" | tail -1)"
    done
  }
  # racecheck follows every shared-memory access of every thread: the smallest shapes that still
  # take every path (the operators' whole-array launches fill the GPU at any size).
  common=("test-gpu|copy::|" "test-rows||--skip determinism::" "test-reproducible||--skip planted:: --skip determinism::" "test-snippets||--skip multigpu")
  wide=("test-gpu|n=1025|" "test-ops|n=1025|--skip planted:: --skip large::" "test-ops|x1025/1028|" "test-dl|x1001|--skip mutation::" "test-dl|columns::|")
  narrow=("test-gpu|n=1025|" "test-ops|n=129|--skip planted:: --skip large::" "test-ops|x257/257|" "test-dl|2x32|--skip mutation::" "test-dl|columns::f32::7x3|")
  pids=()
  for tool in ${TOOLS:-memcheck racecheck synccheck initcheck}; do
    if [ "$tool" = racecheck ]; then sweep_lane "$tool" "${narrow[@]}" "${common[@]}" > "$OUT/sanitizer/lane-$tool.txt" 2>&1 &
    else sweep_lane "$tool" "${wide[@]}" "${common[@]}" > "$OUT/sanitizer/lane-$tool.txt" 2>&1 & fi
    pids+=($!)
  done
  wait "${pids[@]}"
  cat "$OUT"/sanitizer/lane-*.txt
  grep -L -E 'ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards' "$OUT"/sanitizer/sanitize-*--*.log | sed 's/^/  no clean summary: /'
  pack
fi

if has racecheck; then
  # Only when named (the sanitize stage runs racecheck on every binary up to 4097 values): the
  # kernels whose shared-memory trees make racecheck slowest (kernel 2 padded, the row kernels),
  # at sizes small enough for it to finish: every size up to 4097 (8193 values a row) and every
  # block size, f32 and i32, on 4 test threads: with one per core (16) the same run had not
  # finished kernel 2's f32 sizes after 200 s; with 4 it takes seconds. The logs go to
  # plots/data/sanitizer/ for the chapter.
  echo "=== racecheck, sized to finish"
  mkdir -p "$OUT/sanitizer"
  MAX_TEST_N=4097 REQUIRE_GPU=1 timeout 400 compute-sanitizer --tool racecheck --error-exitcode 99 --print-limit 20 \
    $B/tests/test-gpu reduce2_padded:: --skip ::f64:: --skip ::bf16:: --skip ::f16:: --skip determinism:: --test-threads 4 > "$OUT/sanitizer/racecheck-reduce2_padded.log" 2>&1
  rc=$?; [ $rc = 0 ] || status=1
  echo "racecheck reduce2_padded: exit $rc; $(grep -E 'RACECHECK SUMMARY' "$OUT/sanitizer/racecheck-reduce2_padded.log" | tail -1); $(grep 'test result' "$OUT/sanitizer/racecheck-reduce2_padded.log" | tail -1)"
  MAX_TEST_N=8193 REQUIRE_GPU=1 timeout 200 compute-sanitizer --tool racecheck --error-exitcode 99 --print-limit 20 \
    $B/tests/test-rows --skip determinism:: --test-threads 4 > "$OUT/sanitizer/racecheck-rows.log" 2>&1
  rc=$?; [ $rc = 0 ] || status=1
  echo "racecheck rows: exit $rc; $(grep -E 'RACECHECK SUMMARY' "$OUT/sanitizer/racecheck-rows.log" | tail -1); $(grep 'test result' "$OUT/sanitizer/racecheck-rows.log" | tail -1)"
  pack
fi

if has ncu; then
  # Shared-memory bank conflicts of kernel 2, kernel 2 padded and kernel 3, counted by Nsight
  # Compute on the first launch of each (2^22 i32). Copy $OUT/bank-conflicts/ to plots/data/.
  echo "=== ncu: bank conflicts"
  mkdir -p "$OUT/bank-conflicts"
  metrics=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
  for k in reduce2 reduce2_padded reduce3; do
    timeout 120 ncu --clock-control none --csv --metrics $metrics --launch-count 1 --kernel-name regex:"^${k}_i32" \
      $B/bin/reduction sum --kernel $k --n 2^22 --dtype i32 --block 256 > "$OUT/bank-conflicts/$k.log" 2>&1
    echo "$k: exit $?; $(grep -c bank_conflicts "$OUT/bank-conflicts/$k.log") conflict metrics read"
  done
  # Instruction costs of kernels 1-7 (chapters 1-7): issue slots, stalls, instructions per element,
  # the first launch of a sum of 2^25 i32, blocks of 256. Copy $OUT/ncu/reduce<k>.{csv,txt} to plots/data/ncu/.
  mkdir -p "$OUT/ncu"
  metrics=smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__thread_inst_executed.sum,smsp__cycles_active.avg,dram__bytes_read.sum,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active
  for spec in "reduce1 reduce1_i32" "reduce2 reduce2_i32" "reduce3 reduce3_i32" "reduce4 reduce4_i32" "reduce5 reduce5_i32" "reduce6 reduce6_b256_i32" "reduce7 reduce7_b256_i32"; do
    set -- $spec
    timeout 120 ncu --clock-control none --launch-count 1 --kernel-name regex:"^$2\$" --section SpeedOfLight --section SchedulerStats \
      --section WarpStateStats --section InstructionStats --section Occupancy --section LaunchStats --metrics $metrics -f -o "$OUT/ncu/$1" \
      $B/bin/reduction sum --kernel $1 --n 2^25 --dtype i32 --block 256 > "$OUT/ncu/$1.log" 2>&1
    echo "$1: exit $?"
    if [ -f "$OUT/ncu/$1.ncu-rep" ]; then
      ncu -i "$OUT/ncu/$1.ncu-rep" --page details > "$OUT/ncu/$1.txt" 2>&1
      ncu -i "$OUT/ncu/$1.ncu-rep" --page raw --csv > "$OUT/ncu/$1.csv" 2>&1
      rm -f "$OUT/ncu/$1.ncu-rep"
    fi
  done
  # Where kernel 15's time goes (the determinism chapter): registers, occupancy and throughput
  # of one launch at 2^28 f32, beside the fastest plain sum. Copy $OUT/ncu/ to plots/data/ncu/.
  for spec in "reduce15_neumaier 512" "reduce15_reproducible 512" "reduce10_last_block 1024"; do
    set -- $spec
    timeout 100 ncu --clock-control none --launch-count 1 --kernel-name regex:"^$1" --section SpeedOfLight --section Occupancy \
      --section LaunchStats --section WarpStateStats $B/bin/reduction sum --kernel $1 --n 2^28 --block $2 > "$OUT/ncu/$1.txt" 2>&1
    echo "$1: exit $?; $(grep -E 'Registers Per Thread' "$OUT/ncu/$1.txt")"
  done
  pack
fi

if has atomic; then
  # One input summed 20 times: how many distinct results each single-pass kernel gives.
  echo "=== determinism of the single-pass kernels"
  { echo "# reduction sum --same-input --n 2^24 --runs 20 --block 256   ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(date -u +%F))"
    for case in "reduce10_atomic f32" "reduce10_atomic i32" "reduce10_last_block f32"; do
      set -- $case
      $B/bin/reduction sum --kernel $1 --dtype $2 --n 2^24 --runs 20 --same-input --block 256 | grep distinct
    done; } > "$OUT/atomic-determinism.log" 2>&1
  cat "$OUT/atomic-determinism.log"
  pack
fi

if has accuracy; then
  echo "=== accuracy"
  timeout 300 $B/bin/reduction accuracy --out "$OUT" > "$OUT/accuracy.txt" 2> "$OUT/accuracy.log" || status=1
  cat "$OUT/accuracy.txt"
  pack
fi

if has bench; then
  # Copy back $OUT/<gpu>.csv -> plots/data/ and $OUT/read-only/<gpu>.csv -> plots/data/read-only/
  # (the read-only kernel at every shape: the evidence for the shape of its rows), then
  # `cargo run -- bench --plot-only`.
  echo "=== bench"
  # The kernels, the read-only kernel at its 20 shapes at every size (the fastest is the ceiling
  # there; about 20 s of GPU time and the captures around them, estimated from the one-shape rows)
  # and the entry point, then the peers after each element type (plots/peers.py, plots/cub_sum.cu
  # built by nvcc, plots/tile_peers.py): $OUT/<gpu>.csv, $OUT/<gpu>-peers.csv and
  # $OUT/read-only/<gpu>.csv, written after each element type. BENCH_ARGS="--no-peers" or
  # "--sizes ..." to shorten it, BENCH_TIMEOUT to give it longer.
  timeout ${BENCH_TIMEOUT:-590} $B/bin/reduction bench --out "$OUT" ${BENCH_ARGS:-} 2> "$OUT/bench.log" | tee "$OUT/bench-summary.txt" || status=1
  pack
fi
if has order; then
  # Where the entry point is timed, and what it does to the kernels timed after it
  # (plots/data/experiments/entry-point-order/README.md): the five runs of that experiment, then
  # three that split it, each `bench --no-peers --dtype f32` of its own process, with the SM and
  # memory clocks and the power logged every 100 ms beside them. Copy back
  # $OUT/entry-point-order/<run>/<gpu>.csv -> plots/data/experiments/entry-point-order/<run>.csv.
  echo "=== order (the entry point before or after the kernels)"
  d="$OUT/entry-point-order"; mkdir -p "$d"
  # 2^19 and 2^20 too: there the entry point took 6% longer than kernel 12's own row in the
  # committed benchmark (book/generated/entry_twins.md), the same launch.
  small=2^10,2^11,2^12,2^13,2^14,2^15,2^19,2^20
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > "$d/clocks.csv" 2>&1 &
  smi=$!
  order_run() {  # name sizes bench-arguments...
    local name=$1 sizes=$2; shift 2
    echo "$name start $(date +%s.%N)" >> "$d/times.txt"
    timeout 120 $B/bin/reduction bench --no-peers --dtype f32 --sizes "$sizes" --out "$d/$name" "$@" > "$d/$name.log" 2>&1 || status=1
    echo "$name end $(date +%s.%N)" >> "$d/times.txt"
    echo "  $name: $(grep -cE '^(reduce|entry)' "$d/$name"/*.csv 2>/dev/null || echo 0) rows"
  }
  both=reduce12,reduce10_tiles_two_pass
  order_run 1-none $small --kernels $both
  order_run 2-first $small --kernels entry_point,$both --entry-point-first
  order_run 3-none $small --kernels $both
  order_run 4-last $small --kernels entry_point,$both
  order_run 5-first $small --kernels entry_point,$both --entry-point-first
  # The split: the two-pass tile kernel before kernel 12 (is it the kernel the entry point picks
  # at 2^13 and 2^14?), and the entry point first at only the sizes where it picks kernel 12, or
  # only those where it picks the tile kernel with one block.
  order_run 6-tiles-first $small --kernels reduce10_tiles_two_pass,reduce12
  order_run 7-first-reduce12 2^10,2^11,2^12 --kernels entry_point,reduce12 --entry-point-first
  order_run 8-first-one-block 2^13,2^14 --kernels entry_point,reduce12 --entry-point-first
  kill $smi 2>/dev/null
  pack
fi
# The median of every row of the results files in a run's folder (not its subfolders), on one
# line: what the stages that time variants by turns print after each run. $2: the kernels to keep
# (every one if empty); rows of an L2-resident input are left out.
medians() {
  python3 - "$1" "${2:-}" 2>/dev/null <<'PY'
import csv, glob, sys
keep = set(filter(None, sys.argv[2].split(",")))
for f in sorted(glob.glob(sys.argv[1] + "/*.csv")):
    for r in csv.DictReader(l for l in open(f) if not l.startswith("#")):
        if (not keep or r["kernel"] in keep) and r.get("cache", "rotated") == "rotated":
            shape = r["rows"] + "×" + r["n"] if r.get("rows") else r["n"]
            print(r["kernel"], r["dtype"], shape, r["median_us"], "µs", end="; ")
PY
}

# The norms' experiment switches (kernels/operators.cuh, dl_rows.cuh, 18_norms.cu; each off by
# default, set through REDUCTION_NVRTC_OPTIONS), by the names ln-switches, params-ahead and
# ln-ncu give them.
switch_of() {
  case $1 in
    plain*) echo "" ;;
    # (The staged lanes' order 0, the hoisted indices, is what -DDL_LANES_STAGED alone gave until
    # session 59; LayerNorm's lanes stage by default since, unhoisted, and unstaged_lanes undoes it.)
    staged_lanes_untested*) echo "-DDL_LANES_STAGED -DDL_NORMS_UNTESTED -DDL_LANES_STAGED_ORDER=0" ;;
    staged_lanes_fenced*) echo "-DDL_LANES_STAGED -DDL_LANES_STAGED_ORDER=1" ;;
    staged_lanes_generic*) echo "-DDL_LANES_STAGED -DDL_LANES_STAGED_ORDER=2" ;;
    staged_lanes_unhoisted*) echo "-DDL_LANES_STAGED -DDL_LANES_STAGED_ORDER=3" ;;
    staged_lanes*) echo "-DDL_LANES_STAGED -DDL_LANES_STAGED_ORDER=0" ;;
    unstaged_lanes*) echo "-DDL_LANES_UNSTAGED" ;;
    untested_halves*) echo "-DDL_NORMS_UNTESTED -DOP_MERGE_EQUAL_HALVES" ;;
    untested_tp_group4*) echo "-DDL_NORMS_UNTESTED -DDL_LN_TWO_PASS -DDL_PARAMS_GROUP=4" ;;
    untested_two_pass*) echo "-DDL_NORMS_UNTESTED -DDL_LN_TWO_PASS" ;;
    untested*) echo "-DDL_NORMS_UNTESTED" ;;
    equal_halves*) echo "-DOP_MERGE_EQUAL_HALVES" ;;
    warp_levels) echo "-DOP_BLOCK_WARP_LEVELS" ;;
    two_pass_halves) echo "-DDL_LN_TWO_PASS -DOP_MERGE_EQUAL_HALVES" ;;
    early4_tp_group4*) echo "-DDL_LN_TWO_PASS -DDL_PARAMS_GROUP=4 -DDL_PARAMS_EARLY=4" ;;
    tp_barrier1_group4*) echo "-DDL_LN_TWO_PASS -DDL_PARAMS_GROUP=4 -DDL_TEAM_ONE_BARRIER" ;;
    two_pass_group2*) echo "-DDL_LN_TWO_PASS -DDL_PARAMS_GROUP=2" ;;
    two_pass_group4*) echo "-DDL_LN_TWO_PASS -DDL_PARAMS_GROUP=4" ;;
    group2*) echo "-DDL_PARAMS_GROUP=2" ;;
    group4*) echo "-DDL_PARAMS_GROUP=4" ;;
    group8*) echo "-DDL_PARAMS_GROUP=8" ;;
    two_pass*) echo "-DDL_LN_TWO_PASS" ;;
    # RMSNorm's γ 2 packs ahead and LayerNorm's γ and β 1 ahead in every team (each switch
    # changes one op's kernels only, so one build measures both).
    norms_ahead*) echo "-DDL_PARAMS_AHEAD=2 -DDL_LN_PARAMS_AHEAD=1" ;;
    # (Since session 60 the clusters load them ahead by default: RMSNorm's 2 packs, LayerNorm's
    # clusters of 4 one; norms_not_ahead loads each pack's as it is written, as before.)
    norms_not_ahead*) echo "-DDL_PARAMS_NOT_AHEAD" ;;
    # (Since session 61 LayerNorm's clusters take two passes over the held row, and every
    # cluster's blocks meet in log2(C) levels of shuffles: cluster_before undoes both,
    # cluster_merge32 the second only, cluster_welford the first only.)
    cluster_before*) echo "-DDL_LN_CLUSTER_WELFORD -DDL_CLUSTER_MERGE_32" ;;
    cluster_merge32*) echo "-DDL_CLUSTER_MERGE_32" ;;
    cluster_welford*) echo "-DDL_LN_CLUSTER_WELFORD" ;;
    # (The norms' clusters' γ and β staged in shared memory by cp.async with the row's loads, as
    # the staged blocks do; the planner gives the room under the same option.)
    cluster_staged*) echo "-DDL_CLUSTER_STAGED" ;;
    cluster_unstaged*) echo "-DDL_CLUSTER_UNSTAGED" ;;
    # (LayerNorm's clusters stage γ alone: 64 KiB a block where γ and β took 128.)
    ln_cluster_gamma*) echo "-DDL_CLUSTER_STAGED_GAMMA" ;;
    params_ahead2) echo "-DDL_PARAMS_AHEAD=2" ;;
    params_ahead4) echo "-DDL_PARAMS_AHEAD=4" ;;
    lanes8_min4) echo "-DDL_LANES8_MIN_BLOCKS=4" ;;
    maxnreg48) echo "-DDL_BLOCK_MAXNREG=48" ;;
  esac
}

if has ln-switches; then
  # The switches against the default, by turns, two rounds: `dl-bench --planner-only` of LayerNorm
  # at LN_SHAPES, bf16 and f32 (2048 × 131072 takes a cluster per row: 8 blocks at f32, 4 at
  # bf16), and the default and the two-pass switch with blocks of 256 threads × 2 packs at bf16
  # 4096 × 4096 (RMSNorm's fastest team there). Then test-dl's LayerNorm trials (its planted bugs
  # among them) under each switch. LN_VARIANTS picks the variants (warp_levels is left out unless
  # named), LN_PARTS="bench tests" the parts, so that the stage can be split over two calls of 10
  # minutes. LN_OPS (layer_norm) the ops (dl-bench's --ops, e.g. layer_norm,rms_norm),
  # BLOCK4_SHAPES (4096x4096) the shapes of the `_block4` variants. Writes
  # $OUT/ln-switches/<variant>-<round>/dl/<gpu>.csv and a log each; nothing is copied back.
  echo "=== ln-switches (LayerNorm's experiment switches, by turns)"
  d="$OUT/ln-switches"; mkdir -p "$d"
  shapes=${LN_SHAPES:-4096x4096,1048576x256,65536x4096,2048x131072}
  variants=${LN_VARIANTS:-plain equal_halves two_pass two_pass_halves plain_block2 two_pass_block2}
  parts=" ${LN_PARTS:-bench tests} "
  for round in 1 2; do
    [[ $parts == *" bench "* ]] || break
    for v in $variants; do
      case $v in
        # The clusters' staged write at the planner's shapes (before *_staged, which it matches).
        cluster_staged*) args=(--shapes "$shapes" --dtypes bf16,f32) ;;
        *_block2) args=(--shapes 4096x4096 --dtypes bf16 --team block:2:256) ;;
        # Blocks of 4 packs a thread at 4096 × 4096: 128 threads a row at bf16, 256 at f32 (the
        # shape of TileLang's kernel there, kernels/tilelang/norms.py), against the planner's 8.
        *_block4) args=(--shapes "${BLOCK4_SHAPES:-4096x4096}" --dtypes bf16 --team block:4:128) ;;
        *_block4_f32) args=(--shapes "${BLOCK4_SHAPES:-4096x4096}" --dtypes f32 --team block:4:256) ;;
        # The staged blocks (LayerNorm's and RMSNorm's parameters in shared memory), as block4.
        *_staged) args=(--shapes "${BLOCK4_SHAPES:-4096x4096}" --dtypes bf16 --team staged:4:128) ;;
        *_staged_f32) args=(--shapes "${BLOCK4_SHAPES:-4096x4096}" --dtypes f32 --team staged:4:256) ;;
        *) args=(--shapes "$shapes" --dtypes bf16,f32) ;;
      esac
      REDUCTION_NVRTC_OPTIONS="$(switch_of $v)" timeout 150 $B/bin/reduction dl-bench --planner-only --no-peers --budget-s 0 \
        --ops "${LN_OPS:-layer_norm}" "${args[@]}" --out "$d/$v-$round" > "$d/$v-$round.log" 2>&1 || status=1
      echo "  $v, round $round: $(medians "$d/$v-$round/dl")"
    done
  done
  for v in $variants; do
    case $v in
      cluster_staged*) ;;  # (before *_staged, which it matches)
      plain* | *_block2 | *_block4 | *_block4_f32 | *_staged | *_staged_f32) continue ;;
    esac
    [[ $parts == *" tests "* ]] || break
    REDUCTION_NVRTC_OPTIONS="$(switch_of $v)" REQUIRE_GPU=1 timeout 200 $B/tests/test-dl layer_norm > "$d/test-dl-$v.log" 2>&1 || status=1
    echo "  test-dl layer_norm under $v: $(grep -E '^test result' "$d/test-dl-$v.log" | tail -1)"
  done
  pack
fi
if has params-ahead; then
  # RMSNorm's writes with each thread's γ packs loaded D packs ahead into registers
  # (DL_PARAMS_AHEAD, dl_rows.cuh) against the default, by turns, two rounds: `dl-bench
  # --planner-only` of rms_norm at PA_SHAPES, bf16 and f32. By default the write loads each pack's
  # γ behind a test, and the SASS of the long rows' cluster entries waits a round trip to L2 for
  # every pack, eight one after the other (in Nsight Compute, RMSNorm f32 1024 × 262144 waited
  # 14.1 cycles an instruction on L1TEX where softmax in the same team waited 7.6). D = 4 spills
  # 36 to 48 bytes a thread; D = 2 none at f32. Then test-dl's RMSNorm trials under D = 2 and 4.
  # PA_PARTS="bench tests" the parts.
  # Writes $OUT/params-ahead/<variant>-<round>/dl/<gpu>.csv and logs; nothing is copied back.
  echo "=== params-ahead (RMSNorm's γ loaded packs ahead, by turns)"
  d="$OUT/params-ahead"; mkdir -p "$d"
  shapes=${PA_SHAPES:-4096x4096,4096x65536,2048x131072,1024x262144}
  parts=" ${PA_PARTS:-bench tests} "
  for round in 1 2; do
    [[ $parts == *" bench "* ]] || break
    for v in ${PA_VARIANTS:-plain params_ahead2 params_ahead4}; do
      REDUCTION_NVRTC_OPTIONS="$(switch_of $v)" timeout 150 $B/bin/reduction dl-bench --planner-only --no-peers --budget-s 0 \
        --ops rms_norm --shapes "$shapes" --dtypes bf16,f32 --out "$d/$v-$round" > "$d/$v-$round.log" 2>&1 || status=1
      echo "  $v, round $round: $(medians "$d/$v-$round/dl")"
    done
  done
  for v in ${PA_VARIANTS:-params_ahead2 params_ahead4}; do
    [ "$v" = plain ] && continue
    [[ $parts == *" tests "* ]] || break
    REDUCTION_NVRTC_OPTIONS="$(switch_of $v)" REQUIRE_GPU=1 timeout 200 $B/tests/test-dl rms_norm > "$d/test-dl-$v.log" 2>&1 || status=1
    echo "  test-dl rms_norm under $v: $(grep -E '^test result' "$d/test-dl-$v.log" | tail -1)"
  done
  pack
fi
if has lanes-bound; then
  # Softmax's and log_softmax's lanes of 8 packs bounded to 4 blocks an SM (DL_LANES8_MIN_BLOCKS,
  # dl_rows.cuh: 64 registers a thread in place of 80, no local memory) against the default, by
  # turns, two rounds: `dl-bench --planner-only` at the shapes where the planner takes them (f32
  # N = 256 … 1024, bf16 512 … 2048), where torch, torch.compile, Liger and Quack were 1-2% ahead
  # in the committed data. Then test-dl's softmax trials under the switch. LB_PARTS="bench tests".
  # Writes $OUT/lanes-bound/<variant>-<round>/dl/<gpu>.csv and logs; nothing is copied back.
  echo "=== lanes-bound (softmax's lanes of 8 packs at 4 blocks an SM, by turns)"
  d="$OUT/lanes-bound"; mkdir -p "$d"
  parts=" ${LB_PARTS:-bench tests} "
  for round in 1 2; do
    [[ $parts == *" bench "* ]] || break
    for v in plain lanes8_min4; do
      REDUCTION_NVRTC_OPTIONS="$(switch_of $v)" timeout 150 $B/bin/reduction dl-bench --planner-only --no-peers --budget-s 0 \
        --ops softmax,log_softmax --shapes 1048576x256,524288x512,262144x1024,131072x2048 --dtypes f32,bf16 \
        --out "$d/$v-$round" > "$d/$v-$round.log" 2>&1 || status=1
      echo "  $v, round $round: $(medians "$d/$v-$round/dl")"
    done
  done
  if [[ $parts == *" tests "* ]]; then
    REDUCTION_NVRTC_OPTIONS="$(switch_of lanes8_min4)" REQUIRE_GPU=1 timeout 200 $B/tests/test-dl softmax > "$d/test-dl-lanes8_min4.log" 2>&1 || status=1
    echo "  test-dl softmax under lanes8_min4: $(grep -E '^test result' "$d/test-dl-lanes8_min4.log" | tail -1)"
  fi
  pack
fi
if has ln-ncu; then
  # Where LayerNorm's time goes beside RMSNorm's, the same teams: Nsight Compute's source counters
  # (instructions executed and warp stalls per SASS line) of the planner's kernel, the first launch
  # of each run, with no switch and under DL_LN_TWO_PASS. In the committed profiles
  # (plots/data/dl/ncu/) LayerNorm's cluster kernel at 1024 × 262144 f32 executed 2.1 times
  # RMSNorm's instructions (SM active cycles × executed IPC). Writes
  # $OUT/ln-ncu/<op>_<type>_<shape>-<variant>{.txt,-sass.csv,.log}; nothing is copied back.
  echo "=== ln-ncu (instructions per SASS line, LayerNorm and RMSNorm)"
  d="$OUT/ln-ncu"; mkdir -p "$d"
  # LN_NCU_RUNS: op:type:shape:variant for each profile (by default the four below, LayerNorm
  # plain and two_pass, RMSNorm plain).
  runs=${LN_NCU_RUNS:-}
  if [ -z "$runs" ]; then
    for spec in layer_norm:f32:1024x262144 rms_norm:f32:1024x262144 layer_norm:bf16:4096x4096 rms_norm:bf16:4096x4096; do
      for v in plain two_pass; do
        [[ $spec == rms_norm:* ]] && [ "$v" != plain ] && continue
        runs="$runs $spec:$v"
      done
    done
  fi
  for run in $runs; do
    IFS=: read -r op dtype shape v <<< "$run"
    name="${op}_${dtype}_${shape}-$v"
    REDUCTION_NVRTC_OPTIONS="$(switch_of $v)" timeout 150 ncu --clock-control none --launch-count 1 --kernel-name regex:"^${op}_" \
      --section SpeedOfLight --section SchedulerStats --section WarpStateStats --section InstructionStats --section SourceCounters \
      --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
      -f -o "$d/$name" $B/bin/reduction dl-bench --planner-only --no-peers --budget-s 0 --ops "$op" --dtypes "$dtype" --shapes "$shape" \
      --out "$d/run-$name" > "$d/$name.log" 2>&1 || status=1
    if [ -f "$d/$name.ncu-rep" ]; then
      ncu -i "$d/$name.ncu-rep" --page details > "$d/$name.txt" 2>&1
      # The report stays where this ncu cannot print the source page (open it in Nsight Compute).
      ncu -i "$d/$name.ncu-rep" --page source --csv --print-source sass > "$d/$name-sass.csv" 2>&1 && rm -f "$d/$name.ncu-rep"
    fi
    echo "  $name: $(grep -E 'Duration|Executed Instructions |One or More Eligible|DRAM Throughput|L2 Cache Throughput|L1/TEX Hit Rate' "$d/$name.txt" 2>/dev/null | awk '{$1=$1; print}' | tr '\n' ';') $(wc -l < "$d/$name-sass.csv" 2>/dev/null) SASS lines"
  done
  pack
fi
if has vec-tail; then
  # The 16-byte kernels' last loads (kernels/vector_load.cuh): a thread whose share is not a whole
  # number of rounds of 4 loads ends with one load and its add at a time. Two switches load them at
  # once: tail (-DVEC_TAIL_IN_FLIGHT, a function of its own that loads the last pack again past the
  # end) and pred (-DVEC_TAIL_PREDICATED, inline, one more round of predicated loads; since
  # session 51 kernel 12's default, see k12_plain below). The default
  # build and each switch of VEC_VARIANTS (default "plain pred pred_full"), by turns, two rounds, at sizes that
  # are not a whole number of rounds (2^11: two loads a thread of kernel 12's one block of 256,
  # where the committed 2^11 took longer than 2^12; 2^12 and 2^20 are whole rounds for the grids
  # there: the controls), f32, i32 and bf16 (the compiler still waits once in bf16's loop), then
  # test-gpu's trials under each switch. VEC_PARTS="bench tests" the parts.
  # Writes $OUT/vec-tail/<variant>-<round>/<gpu>.csv and logs; nothing is copied back (the tail runs
  # and their plain rounds are plots/data/experiments/vec-tail/, the book's table of them; pred's go
  # beside their own plain rounds, not with another call's: plots/data/experiments/vec-pred/; k12_pred's:
  # plots/data/experiments/vec-k12-pred/).
  echo "=== vec-tail (kernels 9-12, leftover loads in flight, by turns)"
  d="$OUT/vec-tail"; mkdir -p "$d"
  vec_switch_of() {
    case $1 in
      tail) echo "-DVEC_TAIL_IN_FLIGHT" ;;
      pred) echo "-DVEC_TAIL_PREDICATED" ;;
      # pred with kernel 12 held at 32 registers (8 blocks of 256 an SM, as the default build)
      pred_full) echo "-DVEC_TAIL_PREDICATED -DVEC_PRED_FULL_SM" ;;
      # Kernel 12's default since session 51 is the predicated round under a full SM's bound,
      # skipped where a thread has nothing left (kernels 9-11 keep the plain walk). Against it:
      # k12_plain, kernel 12's plain walk (the default before); k12_pred, the round in every
      # thread (timed as -DREDUCE12_PREDICATED_TAIL in plots/data/experiments/vec-k12-pred/).
      k12_plain) echo "-DREDUCE12_PLAIN_TAIL" ;;
      k12_pred) echo "-DREDUCE12_UNSKIPPED_ROUND" ;;
      plain) echo "" ;;
      *) echo "vec-tail: no variant $1 (plain, k12_plain, k12_pred, tail, pred, pred_full)" >&2; return 1 ;;
    esac
  }
  variants=${VEC_VARIANTS:-plain pred pred_full}
  parts=" ${VEC_PARTS:-bench tests} "
  for round in 1 2; do
    [[ $parts == *" bench "* ]] || break
    for v in $variants; do
      vec_switch_of $v > /dev/null || { status=1; continue; }
      REDUCTION_NVRTC_OPTIONS="$(vec_switch_of $v)" timeout 200 $B/bin/reduction bench --no-peers --sizes 2^11,2^12,2^20,1e6,4194305,1e7,50331647,1e8 \
        --kernels reduce9,reduce10_last_block,reduce11,reduce12,entry_point --dtype f32,i32,bf16 --out "$d/$v-$round" > "$d/$v-$round.log" 2>&1 || status=1
      echo "  $v, round $round: $(medians "$d/$v-$round" reduce12,entry_point)"
    done
  done
  if [[ $parts == *" tests "* ]]; then
    for v in $variants; do
      [ "$v" = plain ] && continue
      REDUCTION_NVRTC_OPTIONS=$(vec_switch_of $v) REQUIRE_GPU=1 timeout 300 $B/tests/test-gpu > "$d/test-gpu-$v.log" 2>&1 || status=1
      echo "  test-gpu under $(vec_switch_of $v): $(grep -E '^test result' "$d/test-gpu-$v.log" | tail -1)"
    done
  fi
  pack
fi
if has scratch; then
  # Is where a short sum's scratch buffers lie (its partial sums, the last block's ticket) what
  # makes one launch 3-15% apart from itself within a run (entry_twins.md, and
  # plots/data/experiments/entry-point-order/README.md)? The entry point's launches at the sizes
  # where its row and its kernel's row differed most, each kernel timed again SCRATCH_PADS times
  # (8 by default) from a new reducer made after a pad of 1, 2, … × 2 MiB; every row's title says
  # where its buffers were. Two runs, to see whether the same addresses give the same times.
  # Copy back $OUT/scratch/<run>/<gpu>.csv -> plots/data/experiments/scratch/<run>.csv.
  echo "=== scratch (the same launches, their scratch buffers moved)"
  d="$OUT/scratch"; mkdir -p "$d"
  for run in 1 2; do
    timeout ${SCRATCH_TIMEOUT:-200} $B/bin/reduction bench --no-peers --dtype f32,i32 --sizes 2^14,2^15,2^16,2^17,2^18,2^19,1e6,2^20 \
      --kernels reduce6,reduce12,reduce10_tiles_two_pass,entry_point --scratch-pads ${SCRATCH_PADS:-8} --out "$d/$run" > "$d/$run.log" 2>&1 || status=1
    python3 - "$d/$run" <<'PY' 2>/dev/null || true
import csv, glob, re, sys
for f in glob.glob(sys.argv[1] + "/*.csv"):
    rows = [r for r in csv.DictReader(l for l in open(f) if not l.startswith("#")) if "scratch at" in r["title"] and r["cache"] == "rotated"]
    by = {}
    for r in rows:
        at = r["title"].split("scratch at ")[1].rstrip("]")
        by.setdefault((r["kernel"], r["dtype"], r["n"], r["block"]), []).append((float(r["median_us"]), at))
    for k, v in sorted(by.items()):
        t = [x[0] for x in v]
        print("  ", *k, f"{min(t):.3f}..{max(t):.3f} µs over {len(t)} placements, {len(set(x[1] for x in v))} distinct ({100 * (max(t) / min(t) - 1):.1f}%)")
PY
  done
  pack
fi
if has entry-ncu; then
  # The entry point's first launch at the sizes where a goal of the benchmark chapter is missed or
  # close (the latency sizes 2^12 .. 2^14, 10^6 and 2^20 where CUB was ahead, 2^28 and 2^30 against
  # the read-only kernel), and CUB's own launches (plots/cub_sum.cu, built by nvcc) at the sizes
  # where it was ahead, profiled by Nsight Compute. Copy $OUT/ncu/entry_*.txt and cub_*.txt to
  # plots/data/ncu/ (entry_ncu.md reads them). ENTRY_NCU_SIZES to choose.
  echo "=== entry-ncu (the entry point's launches, and CUB's, under Nsight Compute)"
  mkdir -p "$OUT/ncu"
  sections="--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats"
  for n in ${ENTRY_NCU_SIZES:-2^12 2^13 2^14 1e6 2^20 2^28 2^30}; do
    name=entry_$(echo $n | sed 's/\^/p/')_f32
    timeout 100 ncu --clock-control none --launch-count 1 $sections $B/bin/reduction sum --n $n --dtype f32 > "$OUT/ncu/$name.txt" 2>&1
    echo "  $name: exit $?; $(grep -E '^ +[a-z].*\)x\(' "$OUT/ncu/$name.txt" | head -1 | sed 's/, Context.*//') $(grep -E '^ +Duration ' "$OUT/ncu/$name.txt" | head -1 | tr -s ' ')"
  done
  nvcc_bin=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  if $nvcc_bin -O3 -std=c++17 -arch=native -Xcompiler -fopenmp -o /tmp/cub_sum plots/cub_sum.cu > "$OUT/ncu/cub_build.log" 2>&1; then
    for n in ${CUB_NCU_SIZES:-2^12 1e6 2^20}; do
      name=cub_$(echo $n | sed 's/\^/p/')_f32
      # The program's first calls check the sum: its first launches are those of one sum.
      timeout 100 ncu --clock-control none --launch-count 2 --kernel-name regex:Reduce $sections /tmp/cub_sum --sizes $n --dtypes f32 --target-ms 0.2 > "$OUT/ncu/$name.txt" 2>&1
      echo "  $name: exit $?; $(grep -E '\)x\(' "$OUT/ncu/$name.txt" | sed 's/, Context.*//;s/^ *//' | cut -c1-160 | tr '\n' ';') $(grep -E '^ +Duration ' "$OUT/ncu/$name.txt" | tr -s ' ' | tr '\n' ';')"
    done
  else
    echo "  CUB's program did not build: $(tail -3 "$OUT/ncu/cub_build.log")"
  fi
  pack
fi
if has small-n; then
  # One launch of one block at 2^10 .. 2^14 (the entry point's first three bands: kernel 12 at 256
  # threads to 2^12, then the tile kernel's one tile at 256 and 512), at every block size:
  # committed, CUB's one-tile kernel took 1.23 µs at 2^12 f32 against kernel 12's 1.32 at 256
  # threads, the only block measured there, and the entry point 1.62 and 2.07 µs at 2^13 and 2^14
  # (the goal is 1.5) where the read-only kernel took 1.22 and 1.24. Kernels 9, 10 (tiles, two
  # pass), 11, 12 at blocks of 128 .. 1024 (a thread of 1024 loads one pack at 2^12), then once with
  # the peers at the default blocks, so that CUB and TileLang are timed in the same call. Writes
  # $OUT/small-n/b<block>/ and $OUT/small-n/peers/; nothing is copied back.
  echo "=== small-n (one block, every block size, 2^10 .. 2^14)"
  d="$OUT/small-n"; mkdir -p "$d"
  for block in 128 256 512 1024; do
    timeout 120 $B/bin/reduction bench --no-peers --sizes 2^10,2^11,2^12,2^13,2^14 --kernels reduce9,reduce10_tiles_two_pass,reduce11,reduce12,entry_point \
      --dtype f32,i32 --block $block --out "$d/b$block" > "$d/b$block.log" 2>&1 || status=1
    echo "  block $block: $(medians "$d/b$block" reduce10_tiles_two_pass,reduce12,entry_point)"
  done
  timeout 240 $B/bin/reduction bench --sizes 2^10,2^11,2^12,2^13,2^14 --kernels reduce10_tiles_two_pass,reduce12,entry_point --dtype f32,i32 \
    --out "$d/peers" > "$d/peers.log" 2>&1 || status=1
  echo "  with the peers: $(medians "$d/peers")"
  pack
fi
if has big-tiles; then
  # The entry point's first pass at 2^28 and 2^30 (reduce10_tiles_two_pass, 512 threads × 8 loads)
  # against the same kernel at 1024 × 8, the read-only kernel's best shape at 2^28 in the committed
  # data; every bench run also times the read-only kernel's 20 shapes beside them. f32, one round
  # (BT_ROUNDS for more). Writes $OUT/big-tiles/b<block>-<round>/; nothing is copied back.
  echo "=== big-tiles (the two-pass tile kernel at 512 and 1024 threads, 2^28 and 2^30)"
  d="$OUT/big-tiles"; mkdir -p "$d"
  for round in $(seq 1 ${BT_ROUNDS:-1}); do
    for block in 512 1024; do
      timeout 200 $B/bin/reduction bench --no-peers --sizes 2^28,2^30 --kernels reduce10_tiles_two_pass,entry_point --dtype f32 \
        --block $block --out "$d/b$block-$round" > "$d/b$block-$round.log" 2>&1 || status=1
      echo "  block $block, round $round: $(medians "$d/b$block-$round" reduce10_tiles_two_pass,entry_point,read_only)"
    done
  done
  pack
fi
if has multigpu; then
  # Across GPUs with NCCL, on every GPU the host has (G of them, 2 or more): the multigpu tests with
  # REQUIRE_GPUS=G (each multi-GPU trial runs on 1, 2, 4, 8 GPUs up to G, and on all G), the i32
  # sum at 2^31 per GPU, the gathered f32 sum, the all-reduce sweep 8 B .. 1 GiB for each GPU count
  # 2, 4, 8 up to G (and G) and each algorithm (NCCL's choice, ring, tree), and the totals of one
  # input on 1, 2, 4, 8 GPUs against the CPU's. Copy back:
  #   $OUT/nccl/*   -> plots/data/nccl/    (one CSV per GPU count and algorithm, and the topology)
  #   $OUT/ranks/*  -> plots/data/ranks/   (the GPU's totals; cpu.csv stays the committed one)
  # then `cargo run -- bench --plot-only`: the chapter shows each measured run beside the model's
  # prediction, and the closing table takes the measured figures.
  # RANK_COUNTS="4 8" and ALGOS="ring tree" restrict the sweeps, DET_ALGOS the totals' runs
  # (default: NCCL's choice), MULTIGPU_PARTS="tests sums sweeps totals" the parts, so that the stage
  # can be split over calls of 10 minutes (on 8 GPUs expect about 2 + 1 + 4 + 2 minutes).
  # NVLink multicast (NVLS) stays off: a program using multicast can take a shared host's GPUs out
  # of service. The binaries set NCCL_NVLS_ENABLE=0 themselves when it is unset; it is exported
  # here too, so that nothing this stage starts can turn it on, and NCCL_ALGO is left to --algo.
  echo "=== multigpu (NCCL)"
  mkdir -p "$OUT/nccl" "$OUT/ranks"
  export NCCL_NVLS_ENABLE=0 NCCL_DEBUG=${NCCL_DEBUG:-WARN}
  unset NCCL_ALGO
  nvidia-smi -L | tee "$OUT/multigpu-gpus.txt"
  nvidia-smi topo -m > "$OUT/multigpu-topo.txt" 2>&1; cat "$OUT/multigpu-topo.txt"
  G=$(grep -c '^GPU ' "$OUT/multigpu-gpus.txt")
  [ "$G" -ge 2 ] || echo "only $G GPU(s) visible: the multi-GPU stage needs 2 or more (the tests fail below)"
  counts=""; for k in 2 4 8; do [ "$k" -le "$G" ] && counts="$counts $k"; done
  [[ " $counts " == *" $G "* ]] || [ "$G" -lt 2 ] || counts="$counts $G"
  parts=" ${MULTIGPU_PARTS:-tests sums sweeps totals} "
  if [[ $parts == *" tests "* ]]; then
    want=$(( G > 2 ? G : 2 ))
    REQUIRE_GPU=1 REQUIRE_GPUS=${REQUIRE_GPUS:-$want} timeout ${MULTIGPU_TESTS_TIMEOUT:-300} $B/tests/test-multigpu > "$OUT/multigpu-tests.log" 2>&1 || status=1
    grep -E "^test |test result|^note|RIGHT|WRONG|^multi-GPU sum|rank [0-9] \(" "$OUT/multigpu-tests.log" | head -80
    pack
  fi
  if [[ $parts == *" sums "* ]]; then
    timeout 120 $B/bin/reduction multigpu sum --per-gpu 2^31 2>&1 | tee "$OUT/multigpu-sum.txt"
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
    timeout 120 $B/bin/reduction multigpu sum --per-gpu 2^28 --dtype f32 --input random --gathered 2>&1 | tee "$OUT/multigpu-sum-gathered.txt"
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
    pack
  fi
  if [[ $parts == *" sweeps "* ]]; then
    for k in ${RANK_COUNTS:-$counts}; do
      for algo in ${ALGOS:-default ring tree}; do
        echo "--- all-reduce on $k GPU(s), algorithm $algo"
        timeout ${SWEEP_TIMEOUT:-120} $B/bin/reduction multigpu allreduce --gpus "$k" --algo "$algo" --max ${SWEEP_MAX:-1GiB} --out "$OUT/nccl" \
          > "$OUT/multigpu-allreduce-x$k-$algo.txt" 2>&1 || status=1
        grep -E "^ *(8|1048576|1073741824) |sizes in|error" "$OUT/multigpu-allreduce-x$k-$algo.txt"
        pack
      done
    done
    ls -l "$OUT/nccl"
  fi
  if [[ $parts == *" totals "* ]]; then
    for algo in ${DET_ALGOS:-default}; do
      echo "--- one input on 1, 2, 4, 8 GPUs (up to $G), algorithm $algo"
      timeout ${TOTALS_TIMEOUT:-240} $B/bin/reduction multigpu determinism --algo "$algo" --out "$OUT/ranks" > "$OUT/multigpu-totals-$algo.txt" 2>&1 || status=1
      tail -30 "$OUT/multigpu-totals-$algo.txt"
      pack
    done
  fi
fi

if has rows; then
  # Row sums (chapter 13): their tests, the tile-language checks, then the benchmark (each
  # strategy and the automatic choice at M·N = 2^28, and 4096 × 64; f32, f16 and bf16), which
  # then runs plots/tile_peers.py on the same shapes: TileLang, Triton and torch.sum beside our
  # kernels, and the tile languages' whole-array sums. TileLang, if the host lacks it: unpack
  # .gpu-tilelang/tilelang.tar.xz (../shared/gpu/tilelang-pack.sh) as below. Copy back
  # $OUT/rows/*.csv to plots/data/rows/ and $OUT/rows/tile/* to plots/data/tile/, then
  # `cargo run -- bench --plot-only` redraws the row and tile-language tables and charts.
  echo "=== rows (row sums: tests with REQUIRE_GPU=1, tile-language checks, a smoke run, the benchmark and its peers)"
  mkdir -p "$OUT/rows/tile"
  if [ -f .gpu-tilelang/tilelang.tar.xz ] && ! python3 -c "import tilelang" 2>/dev/null; then
    tar xJf .gpu-tilelang/tilelang.tar.xz -C /tmp && ln -sf libz3.so.4.15 /tmp/tlt/z3/lib/libz3.so
    export PYTHONPATH=/tmp/tlt${PYTHONPATH:+:$PYTHONPATH} LD_LIBRARY_PATH=/tmp/tlt/z3/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  fi
  REQUIRE_GPU=1 timeout 240 $B/tests/test-rows > "$OUT/rows-tests.log" 2>&1 || status=1
  grep -E "FAILED|panicked|^test result" "$OUT/rows-tests.log" | head -40
  REQUIRE_GPU=1 timeout 300 $B/tests/test-tile_languages --nocapture > "$OUT/tile-tests.log" 2>&1 || status=1
  grep -E "checks passed|ignored|FAILED|panicked|^test result" "$OUT/tile-tests.log" | grep -v "^test .* ok$" | head -20
  $B/bin/reduction rows --m 64 --n 1000003 || status=1
  timeout 400 $B/bin/reduction rows-bench --out "$OUT/rows" 2> "$OUT/rows-bench.log" | tee "$OUT/rows-summary.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || { status=1; tail -5 "$OUT/rows-bench.log"; }
  ls -l "$OUT/rows" "$OUT/rows/tile"
  pack
fi

if has dl; then
  # The deep-learning reductions (chapters 17-20): their tests (every team, the traps, the six
  # planted bugs with the mutation score), then the benchmark at M·N = 2^28 and the LLM shapes,
  # f32 and bf16, which runs plots/dl_peers.py on the same shapes (torch, torch.compile, Triton,
  # and Liger-Kernel / TileLang / Quack where `source plots/peers_env.sh` put them on the path).
  # Copy back $OUT/dl/data/dl/* to plots/data/dl/, then `cargo run -- bench --plot-only`.
  echo "=== dl (deep-learning reductions: tests with REQUIRE_GPU=1, then dl-bench and its peers)"
  mkdir -p "$OUT/dl/data"
  [ -f plots/peers_env.sh ] && source plots/peers_env.sh > "$OUT/dl/peers-env.txt" 2>&1
  # About 2-4 minutes: ~20 s of compiles (ten files at once), then ~1800 small trials.
  dl_started=$SECONDS
  REQUIRE_GPU=1 timeout ${DL_TESTS_TIMEOUT:-600} $B/tests/test-dl > "$OUT/dl/tests.log" 2>&1 || status=1
  grep -E "FAILED|panicked|^test result|mutation score|compiled" "$OUT/dl/tests.log" | head -40
  echo "test-dl: $((SECONDS - dl_started)) s"
  # Bounded: no new shape of ours after --budget-s (90 s, compiles included), the peers' script
  # with --budget-s (60 s) and killed 90 s past it: ~3 minutes. DL_BENCH_ARGS="--budget-s 0
  # --peers-budget-s 0" measures everything (~2 + ~8 minutes); "--quick" five shapes.
  dl_started=$SECONDS
  timeout ${DL_BENCH_TIMEOUT:-420} $B/bin/reduction dl-bench --out "$OUT/dl/data" ${DL_BENCH_ARGS:-} 2> "$OUT/dl/bench.log" | tee "$OUT/dl/bench-summary.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || { status=1; tail -5 "$OUT/dl/bench.log"; }
  echo "dl-bench: $((SECONDS - dl_started)) s"
  ls -l "$OUT/dl/data/dl"
  pack
fi

if has ops; then
  # The operators (chapter 16): their tests (every operator, type, size and row strategy, checked
  # exactly or within the bounds; the planted bugs, with the mutation score, which must be
  # 100%), a smoke run, then the benchmark, which runs plots/op_peers.py (torch, CuPy, Triton,
  # TileLang) on the same sizes and shapes afterwards. OPS_BENCH="--quick" for a short run.
  # Copy back $OUT/operators/*.csv to plots/data/operators/, then `cargo run -- bench --plot-only`.
  echo "=== ops (operators: tests with REQUIRE_GPU=1, a smoke run, the benchmark and its peers)"
  mkdir -p "$OUT/operators"
  REQUIRE_GPU=1 timeout ${OPS_TESTS_TIMEOUT:-420} $B/tests/test-ops > "$OUT/ops-tests.log" 2>&1 || status=1
  grep -E "FAILED|panicked|^test result|mutation score" "$OUT/ops-tests.log" | head -40
  $B/bin/reduction op --op argmax --n 2^20 --dtype f16 --input ties || status=1
  timeout ${OPS_BENCH_TIMEOUT:-300} $B/bin/reduction ops-bench ${OPS_BENCH:-} --out "$OUT/operators" > "$OUT/ops-bench.log" 2>&1 || status=1
  grep -E "measurements in|peers|error" "$OUT/ops-bench.log" | head -20
  pack
fi

if has peers; then
  # The peers of the operators and of the deep-learning reductions (only when named): torch, CuPy,
  # Triton, TileLang, Liger and Quack where they can be imported. .gpu-peers/ (plots/pack_peers.sh)
  # is unpacked into /tmp/peers once; Quack needs both of its parts, which may come in two calls.
  # Copy back $OUT/operators/* -> plots/data/operators/ and $OUT/dl/* -> plots/data/dl/.
  echo "=== peers (operators, deep-learning reductions)"
  source plots/peers_env.sh .gpu-peers
  timeout ${PEERS_TIMEOUT:-600} python3 plots/op_peers.py --out "$OUT/operators" ${OP_PEERS_ARGS:-} > "$OUT/op-peers.txt" 2> "$OUT/op-peers.log" || status=1
  tail -3 "$OUT/op-peers.txt"
  timeout ${PEERS_TIMEOUT:-600} python3 plots/dl_peers.py --out "$OUT/dl" ${DL_PEERS_ARGS:-} > "$OUT/dl-peers.txt" 2> "$OUT/dl-peers.log" || status=1
  tail -3 "$OUT/dl-peers.txt"
  pack
fi

if has book; then
  # What the chapters show, written by programs (only when named): the Run-it outputs, the
  # snippets' outputs and the exercise counts. Copy back:
  #   $OUT/book/runs/*.txt      -> book/generated/runs/
  #   $OUT/book/snippets/*.txt  -> book/generated/snippets/
  #   $OUT/book/exercises.md    -> book/generated/exercises.md
  echo "=== book (Run-it outputs, snippet outputs, exercise counts)"
  mkdir -p "$OUT/book"
  timeout 300 $B/bin/reduction book-runs --out "$OUT/book/runs" > "$OUT/book/book-runs.log" 2>&1 || status=1
  REQUIRE_GPU=1 SNIPPETS_RECORD="$OUT/book/snippets" timeout 120 $B/tests/test-snippets output:: > "$OUT/book/snippets.log" 2>&1 || status=1
  REQUIRE_GPU=1 EXERCISES_RECORD="$OUT/book/exercises.md" timeout 300 $B/tests/test-exercises > "$OUT/book/exercises.log" 2>&1 || status=1
  grep -E "test result" "$OUT/book/snippets.log" "$OUT/book/exercises.log"; head -1 "$OUT/book/exercises.md"
  pack
fi

if has reproducible; then
  # Kernel 15 on every visible GPU: its launch-shape and across-GPU tests (REQUIRE_GPUS = the
  # host's count, at least 2, by default, so a host that shows one GPU fails), then the determinism levels of every kernel on
  # every GPU. Copy back $OUT/determinism/*.csv -> plots/data/determinism/.
  echo "=== reproducible (kernel 15 on every GPU)"
  G=$(nvidia-smi -L | grep -c '^GPU ')
  REQUIRE_GPU=1 REQUIRE_GPUS=${REQUIRE_GPUS:-$(( G > 2 ? G : 2 ))} timeout 200 $B/tests/test-reproducible > "$OUT/reproducible-tests.log" 2>&1 || status=1
  grep -E "across_gpus|: GPU [0-9]|test result|FAILED|failures" "$OUT/reproducible-tests.log" | head -30
  timeout 150 $B/bin/reduction determinism --out "$OUT/determinism" 2> "$OUT/determinism.log" | tee "$OUT/determinism.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || { status=1; tail -5 "$OUT/determinism.log"; }
  pack
fi

# ---- a small GPU: the suite and the commands with $CAP of device memory free ----
# `capped` sets REDUCTION_DEVICE_MEMORY=$CAP; `held` starts tests/hold_device_memory.py, which
# holds all but $CAP of the GPU, waits until it holds, runs the same, then stops it; `compare`
# says whether both gave the same skips. Each writes under $OUT/<stage>/: a log per test binary
# and command, ignored.txt (binary, test, reason: every test reported ignored) and skipped.txt
# (every "skipped ..." or "will not fit" line the commands printed).
# What runs (MEMORY_SUITE):
#   quick (default, about 2 minutes a stage): the test binaries that hold the tests which
#     declare their device memory (test-reliability, test-multigpu; test-ops's large:: trials,
#     4 GiB each), and the commands whose sizes
#     cross 6 GiB: `sum --n 2^31` (refused), `bench` at 2^29 and 2^30 (2^30 skipped),
#     plots/peers.py at 2^29 and 2^30, `rows-bench` on one shape, and plots/tile_peers.py (its
#     whole-array sums at 2^29 and 2^30: the OutOfMemoryError of issue 21).
#   full: every bundled test binary (as long as the `tests` stage) and also `accuracy`,
#     `determinism` and `exercise` (whose case past 2^31, 8 GiB, is skipped under 6 GiB; the
#     exercises' near miss that only it shows is then reported ignored, in test-exercises).
# Every other test allocates under 1 GiB, so a cap of 6 GiB changes nothing for it but what
# `gpu.memory()` reports. MEMORY_TESTS="test-gpu test-ops:large:: ..." picks the binaries (and a
# name filter for one) by hand. Each binary and command has its own timeout; a stage starts
# nothing new after MEMORY_STAGE_S seconds (default 200 quick, 900 full).
CAP=${CAP:-6GiB}
MEMORY_SUITE=${MEMORY_SUITE:-quick}
if [ "$MEMORY_SUITE" = full ]; then
  MEMORY_TESTS=${MEMORY_TESTS:-all}; MEMORY_STAGE_S=${MEMORY_STAGE_S:-900}
else
  MEMORY_TESTS=${MEMORY_TESTS:-"test-reliability test-multigpu test-ops:large::"}; MEMORY_STAGE_S=${MEMORY_STAGE_S:-200}
fi

memory_stage() {  # returns 1 if anything failed; run in a subshell with the environment it needs
  local d="$OUT/$1" started=$SECONDS rc failed=0
  mkdir -p "$d"
  local budget=$MEMORY_STAGE_S
  local tests=$MEMORY_TESTS
  [ "$tests" = all ] && tests=$(cd $B/tests && ls)
  left() { [ $((SECONDS - started)) -lt "$budget" ] || { echo "  (stage budget of ${budget} s spent: $1 not run)"; echo "$1" >> "$d/not-run.txt"; return 1; }; }
  run_entry() {  # binary, or binary:filter (the test names that contain it); returns 1 if it failed
    local entry=$1 t=${1%%:*} filter=""
    [ "$entry" != "$t" ] && filter=${entry#*:}
    [ -x "$B/tests/$t" ] || { echo "  $t: not in the bundle"; return 0; }
    left "$t" || return 0
    REQUIRE_GPU=1 timeout ${MEMORY_TEST_TIMEOUT:-240} "$B/tests/$t" $filter > "$d/$t.log" 2>&1; local rc=$?
    echo "  $entry: exit $rc; $(grep -E '^test result' "$d/$t.log" | tail -1)"
    [ $rc = 0 ] || { grep -E "^test .* FAILED|^    [^ ]" "$d/$t.log" | head -8; return 1; }
  }
  memory_commands() {  # the commands, one after another, each a log cmd-<name>.log
    R=$B/bin/reduction
    run_command() {  # name timeout expected-exit command...
      local cname=$1 limit=$2 expect=$3; shift 3
      left "$cname" || return
      timeout "$limit" "$@" > "$d/cmd-$cname.log" 2>&1; rc=$?
      echo "  $cname: exit $rc (expected $expect); $(grep -cE '(^| )skipped ' "$d/cmd-$cname.log") skip lines"
      [ "$rc" = "$expect" ] || { echo "$cname" >> "$d/failed-commands.txt"; tail -4 "$d/cmd-$cname.log"; }
      if grep -qE "Traceback|OutOfMemoryError:|CUDA_ERROR_OUT_OF_MEMORY" "$d/cmd-$cname.log"; then
        echo "  $cname: an out-of-memory error reached the output"; echo "$cname" >> "$d/failed-commands.txt"
      fi
    }
    run_command info 60 0 $R info
    run_command sum-too-large 60 1 $R sum --kernel reduce9 --n 2^31
    run_command bench 90 0 $R bench --kernels reduce9 --dtype f32 --sizes 2^29,2^30 --no-peers --out "$d/bench"
    run_command peers 90 0 python3 plots/peers.py --out "$d/peers" --sizes 2^29,2^30
    run_command rows-bench 60 0 $R rows-bench --dtype f32 --shapes 4096x64 --no-peers --out "$d/rows"
    run_command tile-peers 120 0 python3 plots/tile_peers.py --rows-out "$d/rows" --sums-out "$d/tile" --shapes 4096x64 --sizes 2^29,2^30
    if [ "$MEMORY_SUITE" = full ]; then
      run_command accuracy 150 0 $R accuracy --only sizes --seeds 1 --out "$d/accuracy"
      run_command determinism 120 0 $R determinism --runs 3 --out "$d/determinism"
      run_command exercise 120 0 $R exercise 9 --solution
    fi
  }
  # One binary at a time, then the commands: the cap counts every process's allocations since
  # the GPU was opened (as a small GPU would), so binaries run side by side would starve each other.
  rm -f "$d/failed-commands.txt"
  for entry in $tests; do run_entry "$entry" || failed=1; done
  # MEMORY_COMMANDS=0: the test binaries only (the commands' logs of an earlier run stay).
  if [ "${MEMORY_COMMANDS:-1}" = 1 ]; then memory_commands; fi
  [ -s "$d/failed-commands.txt" ] && failed=1
  # binary <TAB> test <TAB> reason, for every test reported ignored (libtest-mimic writes
  # "... ignored (reason)", the standard harness "... ignored, reason")
  for log in "$d"/test-*.log "$d"/lib-*.log "$d"/bin-*.log; do
    [ -f "$log" ] || continue
    sed -n -E -e "s/^test ([^ ]+) +\.\.\. ignored \((.*)\)$/$(basename "$log" .log)\t\1\t\2/p" \
      -e "s/^test ([^ ]+) +\.\.\. ignored(, (.*))?$/$(basename "$log" .log)\t\1\t\3/p" "$log"
  done | sort > "$d/ignored.txt"
  echo "  $(wc -l < "$d/ignored.txt") tests ignored; list in $d/ignored.txt"
  grep -HE "(^| )skipped |will not fit" "$d"/cmd-*.log 2>/dev/null | sed "s|^$d/cmd-||; s|\.log:|: |" > "$d/skipped.txt"
  echo "  $(wc -l < "$d/skipped.txt") skip lines from the commands; list in $d/skipped.txt; stage took $((SECONDS - started)) s"
  pack
  return $failed
}

if has capped; then
  echo "=== capped: REDUCTION_DEVICE_MEMORY=$CAP"
  (export REDUCTION_DEVICE_MEMORY=$CAP; memory_stage capped) || status=1
fi

if has held; then
  echo "=== held: another process holds all but $CAP of the GPU"
  mkdir -p "$OUT/held"
  rm -f "$OUT/held/holder.ready"
  python3 tests/hold_device_memory.py "$CAP" "$OUT/held/holder.ready" > "$OUT/held/holder.log" 2>&1 &
  holder=$!
  trap 'kill $holder 2>/dev/null' EXIT
  for _ in $(seq 240); do
    [ -s "$OUT/held/holder.ready" ] && break
    kill -0 $holder 2>/dev/null || break
    sleep 0.25
  done
  if [ -s "$OUT/held/holder.ready" ]; then
    echo "  holder (pid $holder): $(cat "$OUT/held/holder.ready")"
    nvidia-smi --query-gpu=memory.used,memory.free --format=csv,noheader | sed 's/^/  nvidia-smi: /'
    (unset REDUCTION_DEVICE_MEMORY; memory_stage held) || status=1
    kill -0 $holder 2>/dev/null || { echo "  the holder died during the stage"; status=1; }
  else
    echo "  the holder did not start holding:"; cat "$OUT/held/holder.log"; status=1
  fi
  kill $holder 2>/dev/null; wait $holder 2>/dev/null
  trap - EXIT
  echo "  holder stopped: $(tail -1 "$OUT/held/holder.log")"
  pack
fi

if has compare; then
  echo "=== compare: the same skips with the cap and with the memory held?"
  c="$OUT/memory-comparison.txt"
  if [ -f "$OUT/capped/ignored.txt" ] && [ -f "$OUT/held/ignored.txt" ]; then
    {
      # the test binaries both stages ran (capped may have run MEMORY_SUITE=full, held quick)
      both=$(comm -12 <(cd "$OUT/capped" && ls test-*.log 2>/dev/null | sed 's/\.log$//' | sort) <(cd "$OUT/held" && ls test-*.log 2>/dev/null | sed 's/\.log$//' | sort) | tr '\n' '|')
      echo "test binaries run in both stages: ${both%|}"
      for s in capped held; do grep -E "^(${both%|})	" "$OUT/$s/ignored.txt" | cut -f1,2 > "$OUT/$s/ignored-names.txt"; done
      # a skip line up to its reason (command: what was skipped), for the commands both ran
      cmds=$(comm -12 <(cd "$OUT/capped" && ls cmd-*.log 2>/dev/null | sed 's/^cmd-//; s/\.log$//' | sort) <(cd "$OUT/held" && ls cmd-*.log 2>/dev/null | sed 's/^cmd-//; s/\.log$//' | sort) | tr '\n' '|')
      for s in capped held; do
        grep -E "^(${cmds%|}): " "$OUT/$s/skipped.txt" | awk -F': ' '{print $1 ": " $2}' | sort > "$OUT/$s/skipped-what.txt"
      done
      if diff -q "$OUT/capped/ignored-names.txt" "$OUT/held/ignored-names.txt" >/dev/null; then
        echo "SAME TESTS IGNORED: $(wc -l < "$OUT/capped/ignored-names.txt") in both"
      else
        echo "DIFFERENT TESTS IGNORED (< capped only, > held only):"; diff "$OUT/capped/ignored-names.txt" "$OUT/held/ignored-names.txt" | grep -E '^[<>]'
      fi
      if diff -q "$OUT/capped/skipped-what.txt" "$OUT/held/skipped-what.txt" >/dev/null; then
        echo "SAME SIZES SKIPPED: $(wc -l < "$OUT/capped/skipped-what.txt") skip lines in both"
      else
        echo "DIFFERENT SIZES SKIPPED (< capped only, > held only):"; diff "$OUT/capped/skipped-what.txt" "$OUT/held/skipped-what.txt" | grep -E '^[<>]'
      fi
      echo; echo "ignored under the cap, with the reasons:"; sed 's/\t/  /g' "$OUT/capped/ignored.txt"
      echo; echo "ignored with the memory held, with the reasons:"; sed 's/\t/  /g' "$OUT/held/ignored.txt"
      echo; echo "skipped by the commands under the cap:"; cat "$OUT/capped/skipped.txt"
      echo; echo "skipped by the commands with the memory held:"; cat "$OUT/held/skipped.txt"
    } > "$c"
    head -40 "$c"
  else
    echo "run the capped and held stages first (compare reads $OUT/capped/ and $OUT/held/)"; status=1
  fi
  pack
fi

echo "gpu-host status: $status"
exit $status
