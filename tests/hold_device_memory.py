#!/usr/bin/env python3
"""Hold all but LEAVE of GPU 0's free memory until stopped, so that the book's tests and commands
meet a GPU that really has only that much free (tests/gpu-host.sh, stage `held`):

    python3 tests/hold_device_memory.py 6GiB READY_FILE

Allocates with PyTorch in 1 GiB pieces (the last one smaller), checks with
torch.cuda.mem_get_info() what is left, writes one line to READY_FILE (held bytes, free bytes),
then sleeps until it receives SIGTERM or SIGINT. LEAVE is written as REDUCTION_DEVICE_MEMORY is
(6GiB, 512MiB, 8GB). Exit 2 when it cannot hold (no PyTorch, no GPU, less free than LEAVE).
"""
import os
import signal
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "plots"))
import peers  # noqa: E402  (the size syntax and human_bytes)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    try:
        leave = peers.parse_memory_size(sys.argv[1])
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
    ready = sys.argv[2]
    try:
        import torch
    except ImportError:
        print("error: PyTorch is needed to hold device memory", file=sys.stderr)
        sys.exit(2)
    if not torch.cuda.is_available():
        print("error: no CUDA GPU visible to PyTorch", file=sys.stderr)
        sys.exit(2)
    free, total = torch.cuda.mem_get_info()
    if free <= leave:
        print(f"error: only {peers.human_bytes(free)} free, not more than the {peers.human_bytes(leave)} to leave", file=sys.stderr)
        sys.exit(2)
    held, pieces, piece = 0, [], 1 << 30
    while free - held - leave >= 2 << 20:  # the caching allocator rounds to 2 MiB
        size = min(piece, (free - held - leave) // (2 << 20) * (2 << 20))
        pieces.append(torch.empty(size, dtype=torch.uint8, device="cuda"))
        held += size
    torch.cuda.synchronize()
    left, _ = torch.cuda.mem_get_info()
    line = f"held {held} bytes ({peers.human_bytes(held)}) of {peers.human_bytes(total)}; {left} bytes ({peers.human_bytes(left)}) left free"
    print(line, flush=True)
    with open(ready, "w") as f:
        f.write(line + "\n")
    stop = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.append(True))
    while not stop:
        time.sleep(0.5)
    del pieces
    print("released", flush=True)


if __name__ == "__main__":
    main()
