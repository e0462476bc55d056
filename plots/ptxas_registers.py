#!/usr/bin/env python3
"""Registers and spills of every kernel of a kernel file, as ptxas reports them through NVRTC
(`--ptxas-options=-v`), for one architecture; no GPU needed. Writes CSV to stdout:

    python3 plots/ptxas_registers.py kernels/16_extremes.cu --arch sm_90 --filter _rows_block \
        [-D 'OP_FLOAT_BLOCK_BOUNDS=__launch_bounds__(1024,2)']

NVRTC is found as libnvrtc.so.13 / .12 on the library path, or at $NVRTC_LIB (the PyPI wheel
nvidia-cuda-nvrtc installs it under site-packages/nvidia/cu13/lib; put that on LD_LIBRARY_PATH so
that NVRTC finds its builtins)."""
import argparse
import ctypes
import os
import re
import sys
from pathlib import Path

KERNELS = Path(__file__).resolve().parent.parent / "kernels"


def nvrtc():
    names = [os.environ["NVRTC_LIB"]] if os.environ.get("NVRTC_LIB") else ["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"]
    for name in names:
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    sys.exit(f"NVRTC not found (tried {', '.join(names)}; set NVRTC_LIB or LD_LIBRARY_PATH)")


def ptxas_log(lib, path, arch, defines):
    prog = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), Path(path).read_bytes(), Path(path).name.encode(), 0, None, None) != 0:
        sys.exit("nvrtcCreateProgram failed")
    opts = [f"--gpu-architecture={arch}", f"-I{KERNELS}", "--std=c++17", "-default-device", "--ptxas-options=-v"] + [f"-D{d}" for d in defines]
    arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    text = log.value.decode(errors="replace")
    if rc != 0:
        sys.exit(f"{path} does not compile for {arch}:\n{text[:4000]}")
    return text


def entries(text):
    """(entry, registers, stack bytes, spill stores, spill loads) for every entry ptxas reports."""
    out, current, spill = [], None, (0, 0, 0)
    for line in text.splitlines():
        m = re.search(r"Compiling entry function '(\w+)'", line)
        if m:
            current = m.group(1)
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            spill = tuple(int(g) for g in m.groups())
        m = re.search(r"Used (\d+) registers", line)
        if m and current:
            out.append((current, int(m.group(1)), *spill))
            current = None
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--filter", default="", help="only the entries whose name contains this")
    ap.add_argument("-D", dest="defines", action="append", default=[], help="a macro, as NVRTC's -D")
    args = ap.parse_args()
    label = " ".join(args.defines) or "default"
    print("file,arch,defines,entry,registers,stack_bytes,spill_store_bytes,spill_load_bytes")
    for name, regs, stack, stores, loads in sorted(entries(ptxas_log(nvrtc(), args.file, args.arch, args.defines))):
        if args.filter in name:
            print(f'{Path(args.file).name},{args.arch},"{label}",{name},{regs},{stack},{stores},{loads}')


if __name__ == "__main__":
    main()
