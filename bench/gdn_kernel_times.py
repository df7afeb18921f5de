#!/usr/bin/env python3
"""Per-kernel device times of the gdn prefill cells from an Nsight Compute CSV.

Input: `ncu --metrics gpu__time_duration.sum -k regex:gdn_prefill --csv` over
GdnGpu.TimingFiveCells run with OPGRAPH_GDN_REPS=1: per cell, 4 executes of the one-pass plan
(gdn_prefill) then 4 of the two-pass plan (gdn_prefill_prep + gdn_prefill_scan). The last
execute of each mode is reported.
"""
import csv
import sys

CELLS = ["16/64 4x8192", "16/64 1x32768", "16/32 4x8192", "16/32 1x32768", "2/8 1x32768"]


def main(path):
    rows = [r for r in csv.reader(open(path)) if len(r) > 10]
    if not rows:
        print("[ gdn kernels ] no ncu rows (see la_ncu.err)")
        return 1
    hdr = rows[0]
    ki, vi = hdr.index("Kernel Name"), hdr.index("Metric Value")
    seq = [(r[ki], float(r[vi].replace(",", "")) / 1e3) for r in rows[1:]]
    print("[ gdn kernels ] cell             1-pass us    prep us    scan us   (ncu gpu__time_duration)")
    i = 0
    for cell in CELLS:
        one, two = seq[i:i + 4], seq[i + 4:i + 12]
        i += 12
        if len(one) < 4 or len(two) < 8:
            print(f"[ gdn kernels ] {cell}: launches missing")
            return 1
        assert one[-1][0] == "gdn_prefill" and two[-2][0] == "gdn_prefill_prep" and two[-1][0] == "gdn_prefill_scan", (one, two)
        print(f"[ gdn kernels ] {cell:15s} {one[-1][1]:10.1f} {two[-2][1]:10.1f} {two[-1][1]:10.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
