# scripts/emulate_bwd_fwd_stage.py — GDN_BWD_FWD_STAGE's staged stores (bwd_store_staged, kernels/gdn_fused_ws3.cuh)
# emulated lane by lane for a warpgroup of four warps: each lane's wgmma accumulator fragments (f[4 t + 2 hh + e]:
# row 16 wi + lane / 4 + 8 hh, column 8 t + 2 (lane % 4) + e) go through stmatrix .x4 (lane l names row l % 8 of
# matrix l / 8; register i is the lane's pair of matrix i's row l / 4) into the 4 KiB panel, then each thread's two
# 16-byte reads of it go to the rows at dst. Checks, for NR = 4 (S^T, 128 columns) and 2 (Wn, 64): every element
# lands where the 4-byte stores put it, the panel's bytes are each written once a round, and stmatrix's matrices and
# the quarter-warps' 16-byte reads touch distinct banks (no conflict). Exits 1 on the first failure.
import sys

D = 128


def fail(msg):
    print("MISMATCH:", msg)
    sys.exit(1)


def panel_at(row, c16):
    return row * 64 + ((c16 ^ ((row >> 1) & 3)) << 4)


for nr in (4, 2):
    cols = 32 * nr
    want = {}  # (row, col) -> element id, as the 4-byte stores write them
    frag = {}  # (warp, lane, j) -> element id
    for wi in range(4):
        for lane in range(32):
            fr, fc = 16 * wi + (lane >> 2), 2 * (lane & 3)
            for j in range(16 * nr):
                t, hh, e = j >> 2, (j & 3) >> 1, j & 1
                eid = (wi, lane, j)
                frag[(wi, lane, j)] = eid
                want[(fr + 8 * hh, 8 * t + fc + e)] = eid
    got = {}
    for q in range(nr):
        panel = {}  # byte offset of a bf16 element -> element id
        for wi in range(4):
            for k in range(2):
                # stmatrix .x4: matrix i takes each lane's register i at (row lane / 4, columns 2 (lane % 4), + 1)
                addr = {}
                banks = [set() for _ in range(4)]
                for lane in range(32):
                    mi, rr = lane >> 3, lane & 7
                    row, c16 = 16 * wi + 8 * (mi & 1) + rr, 2 * k + (mi >> 1)
                    addr[(mi, rr)] = panel_at(row, c16)
                    a = panel_at(row, c16)
                    banks[mi].add((a % 128) // 16)
                if any(len(b) != 8 for b in banks):
                    fail(f"NR={nr} q={q} warp={wi} k={k}: stmatrix rows share banks")
                for lane in range(32):
                    for i in range(4):
                        j = 4 * (4 * q + 2 * k + (i >> 1)) + 2 * (i & 1)
                        r, c = lane >> 2, 2 * (lane & 3)
                        for e in range(2):
                            off = addr[(i, r)] + 2 * (c + e)
                            if off in panel:
                                fail(f"NR={nr} q={q}: panel byte {off} written twice")
                            panel[off] = frag[(wi, lane, j + e)]
        if len(panel) != 64 * 32:
            fail(f"NR={nr} q={q}: {len(panel)} panel elements written, not {64 * 32}")
        for warp in range(4):
            for quarter in range(4):  # 16-byte reads: a quarter-warp's eight on distinct banks
                for i in range(2):
                    slots = set()
                    for tl in range(8):
                        tw = 32 * warp + 8 * quarter + tl
                        ch = tw + 128 * i
                        row, c16 = ch >> 2, ch & 3
                        slots.add((panel_at(row, c16) % 128) // 16)
                    if len(slots) != 8:
                        fail(f"NR={nr} q={q}: a quarter-warp's reads share banks")
        for tw in range(128):
            for i in range(2):
                ch = tw + 128 * i
                row, c16 = ch >> 2, ch & 3
                a = panel_at(row, c16)
                for e in range(8):
                    col = 32 * q + 8 * c16 + e
                    if (row, col) in got:
                        fail(f"NR={nr}: ({row}, {col}) stored twice")
                    got[(row, col)] = panel[a + 2 * e]
    if got != want:
        bad = [k for k in want if got.get(k) != want[k]]
        fail(f"NR={nr}: {len(bad)} elements misplaced, first {bad[:3]}")
    print(f"staged stores NR={nr} ({cols} columns)  {len(got)} elements placed, no bank conflict")
