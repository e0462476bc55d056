#!/usr/bin/env bash
# issue 23 prototype: build the fused deep-learning kernels (kernels/17_*.cu to kernels/20_*.cu) with nvcc for sm_90,
# check them on traps and time every candidate launch with CuPy (proto.py), the copy and read
# ceilings beside them; then torch eager and Liger-Kernel (the peers helper's plots/dl_peers.py,
# a snapshot) in the same run; then Nsight Compute on the best launches that miss the goal.
set -u
start=$(date +%s)
K=$JOB/kernels
B=/tmp/issue23-cubin
S=/tmp/issue23-src
mkdir -p "$B" "$S" "$OUT/build" "$OUT/ncu" "$OUT/peers"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv > "$OUT/nvidia-smi.csv" 2>&1
cp "$K"/*.cuh "$S"/
# One CUBIN per kernel file and element type, built in parallel.
for f in 17_softmax 18_norms 19_cross_entropy 20_layer_norm_grad; do
  for dt in f32 f16 bf16; do
    sed -E "/^[A-Z_]+ENTRIES\([a-z0-9_]+, (f32|f16|bf16)\)\$/{/, $dt\)\$/!d}" "$K/$f.cu" > "$S/$f-$dt.cu"
    (nvcc -cubin -arch=sm_90 -std=c++17 -O3 -lineinfo -Xptxas -v -DDL_FULL_MENU -I"$S" -o "$B/$f-$dt.cubin" "$S/$f-$dt.cu" > "$OUT/build/$f-$dt.log" 2>&1 \
      || echo "FAILED $f-$dt: $(grep -m3 error "$OUT/build/$f-$dt.log")") &
  done
done
# Two planted bugs for the chapter's demonstrations (what a broken kernel returns): the merge
# without the rescale, and e^x without the shift; f32 softmax entries only.
for bug in rescale_missing shift_missing; do
  D=/tmp/issue23-src-$bug; mkdir -p "$D"; cp "$S"/*.cuh "$D"/
  python3 - "$D/dl_rows.cuh" "$bug" <<'PY'
import sys
p, bug = sys.argv[1], sys.argv[2]
s = open(p).read()
if bug == "rescale_missing":
    old, new = "        return MaxSum{m, rescaled(a.max, a.sum, m) + rescaled(b.max, b.sum, m)};", "        return MaxSum{m, a.sum + b.sum};"
else:
    old = "    ExpSumOf e{m == -infinity() ? 0.0f : m, 0.0f};  // −∞ values then give 0, NaN stays NaN\n    values(e);\n    return MaxSum{m, e.s};"
    new = "    ExpSumOf e{0.0f, 0.0f};\n    values(e);\n    return MaxSum{0.0f, e.s};"
assert s.count(old) == 1, (bug, s.count(old))
open(p, "w").write(s.replace(old, new))
PY
  sed -E "/^[A-Z_]+ENTRIES\([a-z0-9_]+, (f32|f16|bf16)\)\$/{/, f32\)\$/!d}" "$K/17_softmax.cu" > "$D/17_softmax.cu"
  mkdir -p /tmp/issue23-planted
  (nvcc -cubin -arch=sm_90 -std=c++17 -O3 -DDL_FULL_MENU -I"$D" -o "/tmp/issue23-planted/$bug.cubin" "$D/17_softmax.cu" > "$OUT/build/planted-$bug.log" 2>&1 || echo "FAILED planted $bug") &
done
for f in copy read_only proto_copy; do
  src="$K/$f.cu"; [ -f "$src" ] || src="$JOB/$f.cu"
  cp "$src" "$S/$f.cu"
  (nvcc -cubin -arch=sm_90 -std=c++17 -O3 -I"$S" -o "$B/$f.cubin" "$S/$f.cu" > "$OUT/build/$f.log" 2>&1 || echo "FAILED $f") &
done
wait
echo "=== built $(ls $B | wc -l) CUBINs in $(( $(date +%s) - start )) s"
grep -h -B1 "spill" "$OUT"/build/1*.log | grep -v "0 bytes spill stores" | grep -c spill | xargs echo "entries with spills:"

budget=$(( ${JOB_LIMIT:-300} - ($(date +%s) - start) - 95 ))
echo "=== proto.py (budget ${budget} s)"
PLANTED=/tmp/issue23-planted timeout $(( budget + 20 )) python3 "$JOB/proto.py" "$B" "$OUT" --budget $budget > "$OUT/proto-stdout.txt" 2>&1
echo "proto: exit $? at $(( $(date +%s) - start )) s"
grep -E "^(device|===|traps|ceilings|  FAIL|  ERROR|    NOT TIMED|below goal)" "$OUT/proto.log" | head -40
sed -n '/=== summary/,$p' "$OUT/proto.log"

echo "=== peers (snapshot of the peers helper's plots/dl_peers.py): torch eager, then Liger-Kernel"
P=$JOB/peers
( cd "$P" && source plots/peers_env.sh .gpu-peers > "$OUT/peers/env.txt" 2>&1
  timeout 40 python3 plots/dl_peers.py --out "$OUT/peers/torch" --dtypes f32,bf16 --peers torch --skip-peers torch_compile > "$OUT/peers/torch.log" 2>&1
  echo "torch eager: exit $?"
  left=$(( ${JOB_LIMIT:-300} - ($(date +%s) - start) - 45 ))
  [ $left -gt 10 ] && timeout $left python3 plots/dl_peers.py --out "$OUT/peers/liger" --dtypes f32,bf16 --peers liger \
      --shapes 2^20x2^8,2^18x2^10,2^16x2^12,2^13x2^15,2^12x2^16,2^10x2^18,4096x4096,8192x128256 > "$OUT/peers/liger.log" 2>&1
  echo "liger: exit $?" )
tail -3 "$OUT/peers/torch.log" "$OUT/peers/liger.log" 2>/dev/null

echo "=== ncu on the best launches below the goal ($(( $(date +%s) - start )) s)"
regex=$(python3 -c "import json;s=json.load(open('$OUT/ncu_select.json'));print('|'.join(sorted({x['entry'] for x in s if x['op']!='layer_norm_bwd_gamma_beta'}))[:1500])" 2>/dev/null)
left=$(( ${JOB_LIMIT:-300} - ($(date +%s) - start) - 5 ))
if [ -n "$regex" ] && [ $left -gt 15 ]; then
  timeout $left ncu --clock-control none --kernel-name regex:"^($regex)\$" \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats \
    --section SchedulerStats --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read.sum,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active \
    python3 "$JOB/ncu_run.py" "$B" "$OUT" > "$OUT/ncu/report.txt" 2>&1
  echo "ncu: exit $?; $(grep -cE '^\s+Duration' "$OUT/ncu/report.txt") kernels profiled"
  grep -E "^  [a-z_0-9]+_(f32|bf16)|Duration|DRAM Throughput|Achieved Occupancy" "$OUT/ncu/report.txt" | head -48
fi
rm -rf "$B" "$S" "$OUT/ncu-scratch"
echo "=== done in $(( $(date +%s) - start )) s"; ls -la "$OUT"
