#!/usr/bin/env python3
"""Registers, stack frame and spills of every declared gemm kernel, as ptxas reports them.

The gemm family's declared specialisations (gemm_declared.cpp, the CI compile
set) are compiled with NVRTC for sm_90a with the runtime's options
(runtime/nvrtc_compiler.cpp: nvrtc_options) plus --ptxas-options=-v, which
adds ptxas's resource report to the log and leaves the code unchanged.

Where the specialisations come from: `opgraph cache warm --all --family gemm`
run with OPGRAPH_LOG_LEVEL=2 into a throw-away cache prints each one's
specialised source; this script keeps its prelude (the #define lines) and
appends the kernel file read from --src, offering every kernel header under
--src as NVRTC does (embedded names: src/engines/<family>/kernels/...,
src/runtime/kernels/include/...). So one opgraph binary names the
specialisations and any source tree (a worktree of an older commit, say) is
measured with them.

  scripts/gemm_kernel_resources.py --cli build/tools/opgraph --src . > after.tsv
  scripts/gemm_kernel_resources.py --compare before.tsv after.tsv

Output: one tab-separated line per kernel: name, registers, stack frame bytes,
spill store bytes, spill load bytes, machine-code bytes (the cubin's .text
sections: a change in the generated code shows there first). --compare prints both side by side and
exits 1 when a kernel uses more registers or spills more after than before.
Needs libnvrtc (CUDA 12 or 13) and Python 3.8+; no GPU.
"""
import argparse
import ctypes
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

# runtime/nvrtc_compiler.cpp nvrtc_options("sm_90a"), then the report.
OPTIONS = ["--gpu-architecture=sm_90a", "-std=c++17", "-default-device", "--ptxas-options=-v"]


def load_nvrtc():
    for name in ("libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"):
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    sys.exit("gemm_kernel_resources: libnvrtc cannot be loaded (libnvrtc.so.13 / .12 / .so)")


def kernel_headers(src):
    """Every file NVRTC may include, by its embedded name (src/CMakeLists.txt's rule)."""
    out = {}
    engines = os.path.join(src, "src", "engines")
    for fam in sorted(os.listdir(engines)):
        kdir = os.path.join(engines, fam, "kernels")
        if not os.path.isdir(kdir):
            continue
        for f in sorted(os.listdir(kdir)):
            if f.endswith((".cu", ".cuh")):
                with open(os.path.join(kdir, f)) as fh:
                    out[f"{fam}/kernels/{f}"] = fh.read()
    inc = os.path.join(src, "src", "runtime", "kernels", "include")
    for root, _, files in os.walk(inc):
        for f in sorted(files):
            if f.endswith((".cuh", ".h")):
                path = os.path.join(root, f)
                with open(path) as fh:
                    out[os.path.relpath(path, inc)] = fh.read()
    return out


def specialisations(cli):
    """(kernel name, source name, prelude text) of every declared gemm kernel."""
    with tempfile.TemporaryDirectory(prefix="gemm-resources-") as cache:
        env = dict(os.environ, OPGRAPH_LOG_LEVEL="2", OPGRAPH_COMPILED_CACHE=cache)
        run = subprocess.run([cli, "cache", "warm", "--all", "--family", "gemm", "--arch", "sm_90a"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if run.returncode != 0:
        sys.exit(f"gemm_kernel_resources: {cli} cache warm failed ({run.returncode}):\n{run.stderr[-4000:]}")
    head = re.compile(r"^\[opgraph\] kernel 'gemm/(\w+)' for sm_90a: specialised source:$")
    line_mark = re.compile(r'^#line 1 "([\w/.]+)"$')
    out, cur = [], None
    for line in run.stderr.splitlines():
        m = head.match(line)
        if m:
            cur = {"name": m.group(1), "prelude": [], "source": None}
            continue
        if cur is None:
            continue
        if line.startswith("[opgraph] "):
            cur = None
            continue
        if cur["source"] is None:
            cur["prelude"].append(line)
            lm = line_mark.match(line)
            if lm:
                cur["source"] = lm.group(1)
                out.append((cur["name"], cur["source"], "\n".join(cur["prelude"]) + "\n"))
    if not out:
        sys.exit("gemm_kernel_resources: the warm log named no gemm kernel (OPGRAPH_LOG_LEVEL=2 output changed?)")
    return out


def text_bytes(cubin):
    """Bytes of machine code in the cubin's .text.* sections (ELF64 little-endian)."""
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)

    def section(i):
        return struct.unpack_from("<IIQQQQ", cubin, shoff + i * shentsize)  # name, type, flags, addr, offset, size

    strtab = section(shstrndx)
    total = 0
    for i in range(shnum):
        name_off, _, _, _, _, size = section(i)
        start = strtab[4] + name_off
        name = cubin[start:cubin.index(b"\0", start)]
        if name.startswith(b".text."):
            total += size
    return total


def compile_report(lib, name, text, headers):
    prog = ctypes.c_void_p()
    names = list(headers.keys())
    texts = (ctypes.c_char_p * len(names))(*[headers[n].encode() for n in names])
    hnames = (ctypes.c_char_p * len(names))(*[n.encode() for n in names])
    if lib.nvrtcCreateProgram(ctypes.byref(prog), text.encode(), name.encode(), len(names), texts, hnames) != 0:
        sys.exit(f"gemm_kernel_resources: nvrtcCreateProgram failed for {name}")
    opts = (ctypes.c_char_p * len(OPTIONS))(*[o.encode() for o in OPTIONS])
    rc = lib.nvrtcCompileProgram(prog, len(OPTIONS), opts)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    buf = ctypes.create_string_buffer(max(size.value, 1))
    lib.nvrtcGetProgramLog(prog, buf)
    log = buf.value.decode(errors="replace")
    if rc != 0:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
        sys.exit(f"gemm_kernel_resources: {name} does not compile:\n{log[-4000:]}")
    lib.nvrtcGetCUBINSize(prog, ctypes.byref(size))
    cubin = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetCUBIN(prog, cubin)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    code = text_bytes(cubin.raw)
    frame = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", log)
    regs = re.search(r"Used (\d+) registers", log)
    if not frame or not regs:
        sys.exit(f"gemm_kernel_resources: no ptxas report for {name}:\n{log[-2000:]}")
    return int(regs.group(1)), int(frame.group(1)), int(frame.group(2)), int(frame.group(3)), code


def measure(args):
    lib = load_nvrtc()
    headers = kernel_headers(args.src)
    if args.list and os.path.exists(args.list):
        with open(args.list) as fh:
            kernels = [tuple(k) for k in json.load(fh)]
    else:
        kernels = specialisations(args.cli)
        if args.list:
            with open(args.list, "w") as fh:
                json.dump(kernels, fh)
    for name, source, prelude in kernels:
        if args.only and not re.search(args.only, name):
            continue
        if source not in headers:
            sys.exit(f"gemm_kernel_resources: {source} is not under {args.src}/src/engines")
        row = compile_report(lib, name, prelude + headers[source], headers)
        print(name + "".join(f"\t{x}" for x in row), flush=True)


def read_tsv(path):
    rows = {}
    with open(path) as fh:
        for line in fh:
            f = line.rstrip("\n").split("\t")
            if len(f) == 6 and f[1].isdigit():
                rows[f[0]] = tuple(int(x) for x in f[1:])
    return rows


def compare(before_path, after_path):
    before, after = read_tsv(before_path), read_tsv(after_path)
    worse = 0
    print(f"{'kernel':<58} {'regs':>9} {'frame':>9} {'spill st':>9} {'spill ld':>9} {'code bytes':>13}")
    for name in sorted(set(before) | set(after)):
        b, a = before.get(name), after.get(name)
        if b is None or a is None:
            print(f"{name:<58} only {'after' if b is None else 'before'}")
            continue
        cells = [f"{x}" if x == y else f"{x}->{y}" for x, y in zip(b, a)]
        bad = a[0] > b[0] or a[2] > b[2] or a[3] > b[3]
        worse += bad
        print(f"{name:<58} {cells[0]:>9} {cells[1]:>9} {cells[2]:>9} {cells[3]:>9} {cells[4]:>13}"
              f"{'  WORSE' if bad else ''}")
    same = sum(1 for n in before if n in after and before[n][:4] == after[n][:4])
    print(f"{len(after)} kernels; {same} with the same registers, frame and spills; {worse} with more registers or "
          "spills after")
    return 1 if worse else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", default="build/tools/opgraph", help="an opgraph binary (names the specialisations)")
    ap.add_argument("--src", default=".", help="the source tree whose kernels are measured")
    ap.add_argument("--list", help="JSON file of the specialisations: read when it exists, else written (skips the "
                    "warm on later runs)")
    ap.add_argument("--only", help="measure only the kernels whose name matches this regular expression")
    ap.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"), help="compare two outputs")
    args = ap.parse_args()
    if args.compare:
        sys.exit(compare(*args.compare))
    measure(args)


if __name__ == "__main__":
    main()
