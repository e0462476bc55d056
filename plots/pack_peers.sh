#!/usr/bin/env bash
# Pack the Python peers that a GPU host without network lacks -- TileLang, Liger-Kernel and Quack
# (on the CuTe DSL) -- as archives that a device call can carry (64 MiB a call, all included).
# The host has torch 2.11 (cu130), triton 3.6, numpy, einops and cuda-bindings, Python 3.12, x86_64.
#
#   bash plots/pack_peers.sh [tilelang] [liger] [quack]      (default: all three; from anywhere in the repo)
#
# writes, in the git-ignored folder .gpu-peers/:
#   tilelang.tar.xz   ~33 MB  TileLang 0.1.15, apache-tvm-ffi, libz3, and four small wheels
#   liger.tar.xz      <1 MB   liger-kernel 0.8.5 (pure Python over Triton)
#   quack-1.tar.xz    ~52 MB  part 1 of Quack 0.6.5: the CuTe DSL's two big libraries (_cutlass_ir,
#                             the MLIR compiler, 193 MB; libcute_dsl_runtime, 44 MB)
#   quack-2.tar.xz    ~5 MB   part 2: quack-kernels 0.6.5, nvidia-cutlass-dsl 4.8.1 and its base, core
#                             and cu13 packages but those two, apache-tvm-ffi, torch-c-dlpack-ext
# The Quack stack is 72 MB as one xz -9 archive, more than a call can carry. xz's x86 filter and a
# 256 MiB dictionary over its two libraries together bring it to 57 MB: one call can carry both parts
# beside the repository and nothing else big, but not beside the Rust bundle and TileLang. So it can
# also travel in two back-to-back calls to the same warm host (which keeps /tmp between them): part
# 1 alone first, part 2 (~5 MB) beside whatever the second call carries. Nothing is stripped or
# left out: the wheels' shared libraries are already stripped, and libcute_dsl_runtime.so is what
# the DSL's JIT links compiled kernels against.
#
# On the GPU host (carry [".gpu-peers"]): `source plots/peers_env.sh` unpacks what is there into
# /tmp/peers (once: it is idempotent) and sets PYTHONPATH and LD_LIBRARY_PATH for every peer that
# is complete; Quack only once both of its parts are there, each checked against its checksum.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
out=.gpu-peers
mkdir -p "$out"
what=${*:-tilelang liger quack}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pip_get() {  # wheels for the GPU host's Python (3.12, x86_64 manylinux); --no-deps: each need is named
  python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d "$@"
}
unpack() {  # unpack wheels $2... into folder $1
  local dir=$1; shift
  mkdir -p "$dir"
  for w in "$@"; do python3 -m zipfile -e "$w" "$dir"; done
}

for part in $what; do
  case $part in
  tilelang)
    pip_get "$work/tl-wheels" tilelang==0.1.15 "apache-tvm-ffi>=0.1.11,<0.1.13" "z3-solver>=4.13.0,<4.15.5" \
      torch-c-dlpack-ext ml-dtypes cloudpickle psutil tqdm
    unpack "$work/tlt" "$work"/tl-wheels/*.whl
    # One copy of libz3 (the wheel ships it twice); symbols are not needed to run.
    rm -rf "$work"/tlt/z3_solver-*.data "$work/tlt/z3/lib/libz3.so"
    strip --strip-unneeded "$work"/tlt/z3/lib/libz3.so.* "$work"/tlt/tilelang/lib/*.so 2>/dev/null || true
    tar cf - -C "$work" tlt | xz --x86 --lzma2=preset=9e,dict=128MiB > "$out/tilelang.tar.xz"
    ;;
  liger)
    pip_get "$work/liger-wheels" liger-kernel==0.8.5
    unpack "$work/liger" "$work"/liger-wheels/*.whl
    tar cf - -C "$work" liger | xz -T0 -9 > "$out/liger.tar.xz"
    ;;
  quack)
    pip_get "$work/quack-wheels" quack-kernels==0.6.5 nvidia-cutlass-dsl==4.8.1 nvidia-cutlass-dsl-libs-base==4.8.1 \
      nvidia-cutlass-dsl-libs-core==4.8.1 nvidia-cutlass-dsl-libs-cu13==4.8.1 "apache-tvm-ffi>=0.1.11,<0.1.13" \
      torch-c-dlpack-ext==0.1.5
    unpack "$work/quack" "$work"/quack-wheels/*.whl
    # Part 1: the two big libraries, the MLIR compiler (_cutlass_ir, 193 MB) and the runtime JIT-compiled
    # kernels link against (libcute_dsl_runtime, 44 MB); part 2: everything else (~5 MB), small enough
    # to ride along in the call that runs the benchmarks.
    ir=quack/nvidia_cutlass_dsl/dsl_packages/cutlass/_mlir/_mlir_libs/_cutlass_ir.cu13.cpython-312-x86_64-linux-gnu.so
    rt=quack/nvidia_cutlass_dsl/cu13/lib/libcute_dsl_runtime.so
    test -f "$work/$ir" && test -f "$work/$rt"
    # Part 2 records part 1's checksums, so the host can tell that the two belong together.
    (cd "$work" && sha256sum "$ir" "$rt") > "$work/quack/PART1.sha256"
    filters="--x86 --lzma2=preset=9e,dict=256MiB"  # x86 code compresses ~5% better through the BCJ filter
    tar cf - -C "$work" "$ir" "$rt" | xz $filters > "$out/quack-1.tar.xz"
    tar cf - -C "$work" --exclude="$ir" --exclude="$rt" quack | xz $filters > "$out/quack-2.tar.xz"
    ;;
  *) echo "unknown part $part (tilelang, liger, quack)" >&2; exit 2 ;;
  esac
done
(cd "$out" && sha256sum *.tar.xz > SHA256SUMS)
ls -la "$out"
