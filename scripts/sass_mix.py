"""scripts/sass_mix.py CUBIN [ENTRY ...] — the machine code of kernel entries, counted without a GPU: instructions in
all, by opcode, and every loop (a backward branch) over 30 instructions with its size, for reading what a change
did to an issue-bound kernel (e.g. gdn_bwd_grads under a trial define: build both cubins with bench/nvrtc_cubin.cpp,
then compare). Static counts: a loop's body runs as often as its trips, which the code does not say. cuobjdump from
PATH, else from scripts/nvtools.sh's folder (fetched from PyPI on first use)."""
import collections
import os
import re
import shutil
import subprocess
import sys

LINE = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z0-9_.]+)\s*(.*?);")


def cuobjdump():
    tool = shutil.which("cuobjdump")
    if tool:
        return tool
    here = os.path.dirname(os.path.abspath(__file__))
    folder = subprocess.run(["bash", os.path.join(here, "nvtools.sh")], check=True, capture_output=True,
                            text=True).stdout.strip()
    return os.path.join(folder, "cuobjdump")


def entries(cubin, names):
    """{entry: [(address, opcode, operands, predicate)]} of the cubin's SASS."""
    args = [cuobjdump(), "-sass", cubin]
    for n in names:
        args[2:2] = ["-fun", n]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    code, cur = {}, None
    for line in out.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            cur = m.group(1)
            code[cur] = []
            continue
        m = LINE.match(line)
        if m and cur:
            code[cur].append((int(m.group(1), 16), m.group(3), m.group(4), (m.group(2) or "").strip()))
    return code


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    for name, ins in entries(sys.argv[1], sys.argv[2:]).items():
        ops = collections.Counter(op.split(".")[0] for _, op, _, _ in ins)
        print(f"{name}: {len(ins)} instructions")
        print("  " + " ".join(f"{k}:{v}" for k, v in ops.most_common(24)))
        for addr, op, arg, pred in ins:
            t = re.search(r"0x([0-9a-f]+)", arg) if op.startswith("BRA") else None
            if t and int(t.group(1), 16) < addr:
                lo = int(t.group(1), 16)
                body = [x for x in ins if lo <= x[0] <= addr]
                if len(body) > 30:
                    hg = sum(1 for x in body if x[1].startswith("HGMMA"))
                    print(f"  loop {lo:#x}..{addr:#x}: {len(body)} instructions, {hg} HGMMA {pred}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
