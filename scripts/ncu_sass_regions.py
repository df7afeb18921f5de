#!/usr/bin/env python3
"""scripts/ncu_sass_regions.py — where a kernel's instructions and stalls go, region by region.

Reads the SASS page that Nsight Compute exports for one profiled launch,

    ncu --section SourceCounters --section WarpStateStats -k regex:<kernel> -c 1 -o rep <cmd>
    ncu -i rep.ncu-rep --page source --csv --print-source sass > sass.csv

and splits the instructions at every BAR.SYNC (a region = the code between two barriers, in address
order). Per region it prints the instructions executed per warp and UNIT (--per: e.g. warps x chunks
of the launch, so a chunked kernel reads per warp and chunk), the share of the stall samples, the
most frequent opcodes and the top stall reasons. Regions below --min-inst and --min-samples are folded away.

    python3 scripts/ncu_sass_regions.py sass.csv --per $((8 * 8 * 512))   # 8 CTAs x 8 warps x 512 chunks

--ranges START:END:NAME,... prints those instruction ranges instead (rows of the SASS page from 0, END
excluded; chosen by landmarks such as HGMMA, MUFU.EX2 or HMMA, which --landmarks lists with their rows), e.g.
the warp-specialised prefill's auxiliary side phase by phase (bench/results/2026-12-04-gdn-ws3-profile-*.txt).
"""
import argparse
import csv
import sys


def num(x):
    try:
        return float(x.replace(",", ""))
    except ValueError:
        return 0.0


def opcode(src):
    t = src.split()
    if not t:
        return ""
    op = t[1] if t[0].startswith("@") and len(t) > 1 else t[0]
    return op.split(".")[0]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--per", type=float, default=1.0, help="divide instruction counts by this (warps x units)")
    ap.add_argument("--min-inst", type=float, default=5.0)
    ap.add_argument("--min-samples", type=float, default=0.005, help="fraction of all stall samples")
    ap.add_argument("--ops", type=int, default=8, help="opcodes listed per region")
    ap.add_argument("--ranges", default="", help="START:END:NAME,... rows of the SASS page (END excluded)")
    ap.add_argument("--landmarks", action="store_true", help="list the rows of barriers, wgmma, mma, ex2, exits")
    a = ap.parse_args(argv)
    rows = list(csv.reader(open(a.csv, newline="")))
    hdr_at = next(i for i, r in enumerate(rows) if "Source" in r and "Instructions Executed" in r)
    hdr, data = rows[hdr_at], rows[hdr_at + 1:]
    ix = {h: i for i, h in enumerate(hdr)}
    samp_col = next((h for h in hdr if h.startswith("Warp Stall Sampling (All")), None)
    stall_cols = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
    data = [r for r in data if len(r) >= len(hdr)]
    if a.landmarks or a.ranges:
        return ranges(a, data, ix, samp_col, stall_cols)
    regions, cur = [], None
    tot_i = tot_s = 0.0
    for r in data:
        if len(r) < len(hdr):
            continue
        src = r[ix["Source"]]
        ie = num(r[ix["Instructions Executed"]])
        s = num(r[ix[samp_col]]) if samp_col else 0.0
        if cur is None:
            cur = {"start": src.strip()[:48], "inst": 0.0, "samp": 0.0, "ops": {}, "stalls": {}}
        cur["inst"] += ie
        cur["samp"] += s
        tot_i += ie
        tot_s += s
        op = opcode(src)
        cur["ops"][op] = cur["ops"].get(op, 0.0) + ie
        for c in stall_cols:
            cur["stalls"][c] = cur["stalls"].get(c, 0.0) + num(r[ix[c]])
        if "BAR.SYNC" in src:
            regions.append(cur)
            cur = None
    if cur is not None:
        regions.append(cur)
    print("total: %.0f instructions per unit, %.0f stall samples, %d regions" % (tot_i / a.per, tot_s, len(regions)))
    for i, g in enumerate(regions):
        if g["inst"] / a.per < a.min_inst and g["samp"] < a.min_samples * max(tot_s, 1.0):
            continue
        ops = sorted(g["ops"].items(), key=lambda x: -x[1])[: a.ops]
        st = sorted(g["stalls"].items(), key=lambda x: -x[1])[:4]
        print("R%-3d %8.0f inst  %5.1f%% samples  from: %s" % (i, g["inst"] / a.per, 100.0 * g["samp"] / max(tot_s, 1.0),
                                                            g["start"]))
        print("      ops: " + " ".join("%s:%.0f" % (k, v / a.per) for k, v in ops))
        print("      stalls: " + " ".join("%s:%.1f%%" % (k[6:], 100.0 * v / max(tot_s, 1.0)) for k, v in st))
    return 0


def ranges(a, data, ix, samp_col, stall_cols):
    samples = [num(r[ix[samp_col]]) if samp_col else 0.0 for r in data]
    tot_s = max(sum(samples), 1.0)
    if a.landmarks:
        keys = ("BAR.", "SYNCS", "HGMMA", "WARPGROUP", "HMMA", "MUFU.EX2", "EXIT", "SETMAXNREG")
        for i, r in enumerate(data):
            src = r[ix["Source"]].strip()
            if any(k in src for k in keys):
                print("%5d  %-60s samples %6.0f  executed %.0f" % (i, src[:60], samples[i],
                                                                   num(r[ix["Instructions Executed"]])))
        return 0
    for spec in a.ranges.split(","):
        lo, hi, name = spec.split(":", 2)
        lo, hi = int(lo), int(hi)
        inst = sum(num(data[i][ix["Instructions Executed"]]) for i in range(lo, hi))
        samp = sum(samples[lo:hi])
        st = {}
        for i in range(lo, hi):
            for c in stall_cols:
                st[c] = st.get(c, 0.0) + num(data[i][ix[c]])
        top = sorted(st.items(), key=lambda x: -x[1])[:4]
        print("%-14s [%5d, %5d)  %8.1f inst  %5.1f%% samples  %s" % (
            name, lo, hi, inst / a.per, 100.0 * samp / tot_s,
            " ".join("%s:%.1f%%" % (k[6:], 100.0 * v / tot_s) for k, v in top)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
