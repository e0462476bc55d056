# Source on the GPU host: unpack the peers that plots/pack_peers.sh packed, and put the complete
# ones on PYTHONPATH / LD_LIBRARY_PATH.
#
#   source plots/peers_env.sh [folder of the archives, default .gpu-peers]
#
# Idempotent: an archive is unpacked into /tmp/peers once (a marker holds its checksum), so a
# second call, or a second back-to-back device call on the same warm host, only sets the paths.
# Quack comes in two parts that may arrive in two calls: it is put on the path only when part 1
# (/tmp/peers/quack/...) matches the checksum part 2 recorded; otherwise it says which is missing.
peers_dir=${1:-.gpu-peers}
peers_root=${PEERS_ROOT:-/tmp/peers}
mkdir -p "$peers_root"
for archive in "$peers_dir"/*.tar.xz; do
  [ -f "$archive" ] || continue
  name=$(basename "$archive" .tar.xz)
  sum=$(sha256sum "$archive" | cut -d' ' -f1)
  if [ "$(cat "$peers_root/.$name.done" 2>/dev/null)" != "$sum" ]; then
    if tar xJf "$archive" -C "$peers_root"; then
      echo "$sum" > "$peers_root/.$name.done"
      echo "peers: unpacked $name into $peers_root"
    else
      echo "peers: $archive did not unpack" >&2
    fi
  fi
done
peers_path=""
if [ -f "$peers_root/.tilelang.done" ]; then
  ln -sf libz3.so.4.15 "$peers_root/tlt/z3/lib/libz3.so" 2>/dev/null
  peers_path="$peers_root/tlt"
  export LD_LIBRARY_PATH="$peers_root/tlt/z3/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
[ -f "$peers_root/.liger.done" ] && peers_path="$peers_path${peers_path:+:}$peers_root/liger"
if [ -f "$peers_root/.quack-2.done" ] || [ -f "$peers_root/.quack-1.done" ]; then
  if [ ! -f "$peers_root/.quack-2.done" ]; then
    echo "peers: Quack part 1 is here, part 2 (quack-2.tar.xz) not yet: Quack not on the path"
  elif (cd "$peers_root" && sha256sum --status -c quack/PART1.sha256 2>/dev/null); then
    # The DSL's .pth file adds dsl_packages to sys.path, but .pth files on PYTHONPATH are not read.
    peers_path="$peers_path${peers_path:+:}$peers_root/quack:$peers_root/quack/nvidia_cutlass_dsl/dsl_packages"
    echo "peers: Quack complete (both parts, checksum of part 1 matches)"
  else
    echo "peers: Quack part 2 is here but part 1 (quack-1.tar.xz, the call before) is missing or does not match: Quack not on the path"
  fi
fi
if [ -n "$peers_path" ]; then
  export PYTHONPATH="$peers_path${PYTHONPATH:+:$PYTHONPATH}"
fi
echo "peers: PYTHONPATH=${PYTHONPATH:-}"
