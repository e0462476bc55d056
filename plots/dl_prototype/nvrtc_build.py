"""Compile kernel files with NVRTC (through ctypes), splicing the "header.cuh" includes the way
src/kernels/registry.rs does, to CUBIN for one architecture; print ptxas's register report.

    python3 nvrtc_build.py KERNEL_DIR OUT_DIR sm_90 17_softmax.cu [more.cu ...] [-D...]
"""
import ctypes, os, re, sys

def find_nvrtc():
    for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") + ["/usr/local/cuda/lib64"]:
        for name in ("libnvrtc.so.13", "libnvrtc.so"):
            p = os.path.join(d, name)
            if d and os.path.exists(p):
                return ctypes.CDLL(p)
    return ctypes.CDLL("libnvrtc.so.13")

def splice(kdir, name, included):
    out = [f'#line 1 "{name}"']
    for i, line in enumerate(open(os.path.join(kdir, name)).read().splitlines()):
        m = re.match(r'\s*#include "([^"]+)"', line)
        if m and os.path.exists(os.path.join(kdir, m.group(1))):
            h = m.group(1)
            if h not in included:
                included.add(h)
                out.append(splice(kdir, h, included))
            out.append(f'#line {i + 2} "{name}"')
        elif line.strip() == "#pragma once":
            out.append("")
        else:
            out.append(line)
    return "\n".join(out)

def compile_file(lib, kdir, name, arch, extra=()):
    src = splice(kdir, name, set()).encode()
    prog = ctypes.c_void_p()
    assert lib.nvrtcCreateProgram(ctypes.byref(prog), src, name.encode(), 0, None, None) == 0
    opts = [b"-std=c++17", b"-lineinfo", f"--gpu-architecture={arch}".encode(), b"--ptxas-options=-v"] + [o.encode() for o in extra]
    arr = (ctypes.c_char_p * len(opts))(*opts)
    rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    if rc != 0:
        return None, log.value.decode()
    lib.nvrtcGetCUBINSize(prog, ctypes.byref(size))
    cubin = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetCUBIN(prog, cubin)
    return cubin.raw, log.value.decode()

if __name__ == "__main__":
    kdir, outdir, arch, *rest = sys.argv[1:]
    extra = [a for a in rest if a.startswith("-")]
    files = [a for a in rest if not a.startswith("-")]
    lib = find_nvrtc()
    os.makedirs(outdir, exist_ok=True)
    ok = True
    for f in files:
        cubin, log = compile_file(lib, kdir, f, arch, extra)
        base = os.path.splitext(f)[0]
        open(os.path.join(outdir, f"{base}.{arch}.log"), "w").write(log)
        if cubin is None:
            print(f"FAILED {f} {arch}\n{log[-6000:]}")
            ok = False
            continue
        open(os.path.join(outdir, f"{base}.{arch}.cubin"), "wb").write(cubin)
        print(f"ok {f} {arch}: {len(cubin)} bytes")
    sys.exit(0 if ok else 1)
