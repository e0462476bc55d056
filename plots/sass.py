#!/usr/bin/env python3
"""The machine code (SASS) of the book's kernels, as the book compiles them.

Compiles a kernel file with NVRTC exactly as src/runtime/nvrtc.rs does (the headers of kernels/
spliced in with #line, -std=c++17 -lineinfo, the CUDA include paths, --gpu-architecture), to a
CUBIN, disassembles it with cuobjdump (which needs nvdisasm on the PATH), and writes one file per
entry point asked for, the encodings left out:

    python3 plots/sass.py --arch sm_90 --out plots/data/sass/sm_90 reduce11_i32 reduce12_b256_i32

Needs no GPU: libnvrtc.so.13 (pip install nvidia-cuda-nvrtc==13.0.88; its lib folder on
LD_LIBRARY_PATH), the CUDA headers for kernels 11 and 12 (--include, or pip install
nvidia-cuda-runtime nvidia-cuda-cccl), and cuobjdump + nvdisasm (the CUDA toolkit, or pip install
nvidia-cuda-cuobjdump==13.2.78 nvidia-cuda-nvdisasm: PyPI has no 13.0 cuobjdump, and 13.2's reads
NVRTC 13.0's CUBINs; with them this machine wrote the committed sm_90 files byte for byte, GPU or
none). --option adds an NVRTC option, as REDUCTION_NVRTC_OPTIONS does for an experiment switch
(-DVEC_TAIL_PREDICATED); the file's first line names it. The book's generators count the instructions in
these files (src/records/sass.rs reads them for src/book/chapters/); the files say which
compiler wrote them.
"""
import argparse, ctypes, ctypes.util, os, re, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS = os.path.join(ROOT, "kernels")


def splice(name, included, out):
    out.append(f'#line 1 "{name}"')
    for i, line in enumerate(open(os.path.join(KERNELS, name)).read().splitlines()):
        m = re.match(r'\s*#include "([^"]+)"', line)
        if m and os.path.exists(os.path.join(KERNELS, m.group(1))):
            if m.group(1) not in included:
                included.append(m.group(1))
                splice(m.group(1), included, out)
            out.append(f'#line {i + 2} "{name}"')
        elif line.strip() == "#pragma once":
            out.append("")
        else:
            out.append(line)


def compile_cubin(nvrtc, name, arch, includes, extra=()):
    out = []
    splice(name, [], out)
    src = "\n".join(out).encode()
    prog = ctypes.c_void_p()
    if nvrtc.nvrtcCreateProgram(ctypes.byref(prog), src, name.encode(), 0, None, None):
        sys.exit(f"{name}: nvrtcCreateProgram failed")
    opts = [b"-std=c++17", b"-lineinfo", f"--gpu-architecture={arch}".encode()]
    for inc in includes:
        opts += [f"--include-path={inc}".encode(), f"--include-path={inc}/cccl".encode()]
    opts += [o.encode() for o in extra]
    rc = nvrtc.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    size = ctypes.c_size_t()
    nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    nvrtc.nvrtcGetProgramLog(prog, log)
    if rc:
        sys.exit(f"{name}: {log.value.decode()}")
    nvrtc.nvrtcGetCUBINSize(prog, ctypes.byref(size))
    cubin = ctypes.create_string_buffer(size.value)
    nvrtc.nvrtcGetCUBIN(prog, cubin)
    return cubin.raw


def file_of(entry):
    """The kernel file that defines an entry point: the file whose text names its stem."""
    stem = re.sub(r"(_b\d+)?(_l\d+)?_(f32|i32|f64|f16|bf16|u32)$", "", entry)
    for f in sorted(os.listdir(KERNELS)):
        if f.endswith(".cu") and re.search(rf"\b{stem}\b", open(os.path.join(KERNELS, f)).read()):
            return f
    sys.exit(f"no kernel file defines {entry}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--out", required=True)
    ap.add_argument("--include", action="append", default=[], help="a CUDA include folder (cooperative_groups.h, cccl/)")
    ap.add_argument("--option", action="append", default=[], help="an NVRTC option more, as REDUCTION_NVRTC_OPTIONS gives the book (-DVEC_TAIL_PREDICATED)")
    ap.add_argument("entries", nargs="+")
    args = ap.parse_args()
    nvrtc = ctypes.CDLL(ctypes.util.find_library("nvrtc") or "libnvrtc.so.13")
    version = (ctypes.c_int(), ctypes.c_int())
    nvrtc.nvrtcVersion(ctypes.byref(version[0]), ctypes.byref(version[1]))
    os.makedirs(args.out, exist_ok=True)
    disassembled = {}
    for entry in args.entries:
        f = file_of(entry)
        if f not in disassembled:
            with tempfile.NamedTemporaryFile(suffix=".cubin") as tmp:
                tmp.write(compile_cubin(nvrtc, f, args.arch, args.include, args.option))
                tmp.flush()
                disassembled[f] = subprocess.run(["cuobjdump", "--dump-sass", tmp.name], check=True, capture_output=True, text=True).stdout
        lines, on = [], False
        for line in disassembled[f].splitlines():
            if "Function :" in line:
                on = line.split("Function :")[1].strip() == entry
                continue
            if on and re.match(r"\s+/\*[0-9a-f]{4}\*/", line):
                lines.append(re.sub(r"\s*/\* 0x[0-9a-f]{16} \*/", "", line).rstrip())
        if not lines:
            sys.exit(f"{entry}: not in the SASS of {f}")
        more = f" and {' '.join(args.option)}" if args.option else ""
        header = (f"# SASS of {entry} ({f}), NVRTC {version[0].value}.{version[1].value} for {args.arch} with the book's options{more}, "
                  f"disassembled by cuobjdump --dump-sass (plots/sass.py)\n")
        open(os.path.join(args.out, f"{entry}.sass"), "w").write(header + "\n".join(lines) + "\n")
        print(f"{entry}: {len(lines)} instructions from {f}")


if __name__ == "__main__":
    main()
