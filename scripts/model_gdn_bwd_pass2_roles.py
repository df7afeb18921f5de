#!/usr/bin/env python3
"""scripts/model_gdn_bwd_pass2_roles.py — what pass 2 of the one-pass backward (gdn_bwd_onepass, the X form of
scripts/model_gdn_bwd_fused.py's one_pass_x) costs a chunk when its products are split by role, full width on one
warpgroup each (the FlashQLA structure), against the form the kernel runs now (every product a column quarter on
every warpgroup, between CTA-wide barriers). For d = 128, C = 64 on one H100 / H200 multiprocessor:
  - each product's tensor cycles (2 M N K / 4096 dense bf16 flops a cycle) and the shared-memory bytes its wgmma
    reads (A once and B once full width; A four times in the column-quarter form, every warpgroup reading the whole
    A tile for its 32 or 16 columns), per role and in all, against 128 bytes a cycle;
  - the chain's path a chunk: the only work that waits on the chunk after's dS (K dS -> dVn -> dVb -> dY -> the
    update -> dS^T to bf16), which sets how fast chunks can follow each other whatever runs beside it;
  - each role's accumulators live at once (fp32 registers a thread: M N / 128), plus a fixed allowance for
    addresses and epilogue values, against setmaxnreg's split of the 65536 registers over four warpgroups.
Checks (exit 1 on failure): every product's inputs are made by an earlier product of the chunk or are the chunk's
inputs; the roles' register budgets fit; and the estimate, max(tensor cycles / efficiency, shared-memory cycles,
the chain's path), prints the pass-2 time at 16/64, 4 x 8192 (256 chains of 128 chunks over 132 multiprocessors at
1.755 GHz) beside the column-quarter form's measured ~40k cycles a chunk (bench/results/
2026-12-07-gdn-onepass-red-tma-h100.txt). Epilogues, barriers and loads are not modelled (the loads are TMA's,
off the warps). No GPU; the standard library only.
  python3 scripts/model_gdn_bwd_pass2_roles.py
"""
import sys

C, D = 64, 128
FLOPS = 4096  # dense bf16 flops a cycle a multiprocessor (H100 / H200)
SMEM = 128  # shared-memory bytes a cycle
TILE = {"Q": C * D, "K": C * D, "X": C * D, "dO": C * D, "S": D * D, "dS": D * D, "T": C * C, "TV": C * C,
        "P": C * C, "Vn": C * D, "dVn": C * D, "dY": C * D, "dT": C * C, "TdT": C * C, "M1": C * C, "M2": C * C,
        "Kd": C * D, "Y": C * D, "dOs": C * D}
INPUTS = {"Q", "K", "X", "dO", "S", "T", "dS"}  # X: v as loaded (X formed over it); dS: the chain's bf16 copy
# (name, role, M, N, K, A tile, B tile, writes). Roles: aux (dS-free: the chunk's own rows and S_c), grad (needs
# dS), chain (holds dS^T in registers: the update only). dVn = s P^T dO + (e^(gamma_C - gamma) K) dS in one
# accumulator on the grad role (Kd: K with its rows scaled, written with Q / K's normalisation); the update's A is
# dO^T with its token columns scaled (dOs, over dO after the aux role's last read) and dY^T.
PRODUCTS = [
    ("Y = K S_c", "aux", C, D, D, "K", "S", ("X", "Y")),  # X = V - e^gamma Y over V; Y kept for <Y, dY>
    ("Q K^T", "aux", C, C, D, "Q", "K", ("P",)),
    ("T diag(beta) (epilogue)", "aux", 0, 0, 0, "T", "T", ("TV",)),
    ("Vn = TV X", "aux", C, D, C, "TV", "X", ("Vn",)),
    ("dQe = dO S_c^T", "aux", C, D, D, "dO", "S", ()),
    ("dP = dO Vn^T", "aux", C, C, D, "dO", "Vn", ("M1", "dOs")),
    ("K K^T", "aux", C, C, D, "K", "K", ()),
    ("dq += M1 K", "aux", C, D, C, "M1", "K", ()),
    ("dVn = s P^T dO + Kd dS", "grad", C, D, C + D, "P", "dS", ("dVn",)),  # two products, one accumulator
    ("dVb = T^T dVn", "grad", C, D, C, "T", "dVn", ("dY",)),
    ("dKd = Vn dS^T", "grad", C, D, D, "Vn", "dS", ()),
    ("dT = dVn (beta X)^T", "grad", C, C, D, "dVn", "X", ("dT",)),
    ("dk += dY S_c^T", "grad", C, D, D, "dY", "S", ()),
    ("T^T dT", "grad", C, C, C, "T", "dT", ("TdT",)),
    ("dL = -(T^T dT) T^T", "grad", C, C, C, "TdT", "T", ("M2",)),
    ("dk += M1^T Q", "grad", C, D, C, "M1", "Q", ()),
    ("dk += M2 K + M2^T K", "grad", C, D, 2 * C, "M2", "K", ()),
    ("dS^T += dOs^T Q + dY^T K (two 64-row halves)", "chain", 2 * C, D, 2 * C, "dOs", "Q", ("dS",)),
]
# The chain's path a chunk (each waits on the one before; dS^T's bf16 copy closes the loop into the next chunk).
CHAIN_PATH = ["dVn = s P^T dO + Kd dS", "dVb = T^T dVn", "dS^T += dOs^T Q + dY^T K (two 64-row halves)"]
# Accumulators live at once a role (fp32 [M][N] over its 128 threads) at its busiest, and setmaxnreg's split.
LIVE = {"aux": [("dq", C, D), ("Y / Vn / dP", C, D)], "grad": [("dk", C, D), ("dVn / dVb / dT", C, D)],
        "chain": [("dS^T", D, D)], "producer": []}
OVERHEAD = {"aux": 32, "grad": 32, "chain": 32, "producer": 24}  # addresses, epilogue values, loop state
BUDGET = {"aux": 160, "grad": 160, "chain": 168, "producer": 24}  # setmaxnreg a thread (multiples of 8)


def tensor_cycles(m, n, k):
    return 2 * m * n * k / FLOPS


def main():
    ok = True
    made = set(INPUTS)
    role_t, role_full, role_quarter = {}, {}, {}
    for name, role, m, n, k, a, b, writes in PRODUCTS:
        for t in (a, b):
            if t not in made and not (t == "dOs" and "dO" in made):
                print("FAIL: %s reads %s before any product makes it" % (name, t))
                ok = False
        made.update(writes)
        if m == 0:
            continue
        t = tensor_cycles(m, n, k)
        # bytes: bf16 A (M x K) and B (K x N) tiles as read by the wgmma; column-quarter: A by all four warpgroups
        a_bytes, b_bytes = 2 * m * k, 2 * k * n
        role_t[role] = role_t.get(role, 0) + t
        role_full[role] = role_full.get(role, 0) + a_bytes + b_bytes
        role_quarter[role] = role_quarter.get(role, 0) + 4 * a_bytes + b_bytes
    tensor = sum(role_t.values())
    full, quarter = sum(role_full.values()), sum(role_quarter.values())
    print("pass 2 a chunk (C = %d, d = %d), by role: tensor cycles | shared-memory KiB read full width | "
          "column quarters" % (C, D))
    for r in ("aux", "grad", "chain"):
        print("  %-6s %6.0f | %6.1f | %6.1f" % (r, role_t[r], role_full[r] / 1024, role_quarter[r] / 1024))
    print("  all    %6.0f | %6.1f (%4.0f cycles) | %6.1f (%4.0f cycles)" % (
        tensor, full / 1024, full / SMEM, quarter / 1024, quarter / SMEM))
    by_name = {p[0]: p for p in PRODUCTS}
    path = sum(tensor_cycles(*by_name[n][2:5]) for n in CHAIN_PATH)
    # each step of the path hands a tile to the next through shared memory: its bf16 writes at 128 bytes a cycle
    hand = (2 * C * D * 2 + 2 * D * D) / SMEM  # dVn, dY and dS^T's bf16 copy
    print("the chain's path: %.0f tensor cycles + %.0f cycles of hand-over stores (dVn, dY, dS^T): %.0f" % (
        path, hand, path + hand))
    print("registers a thread (accumulators + allowance) against setmaxnreg:")
    total = 0
    for r, accs in LIVE.items():
        need = sum(m * n // 128 for _, m, n in accs) + OVERHEAD[r]
        total += BUDGET[r]
        fits = need <= BUDGET[r]
        ok = ok and fits
        print("  %-8s %3d of %3d (%s)%s" % (r, need, BUDGET[r], ", ".join(a for a, _, _ in accs) or "TMA only",
                                            "" if fits else "  OVER"))
    if total > 512:
        print("FAIL: setmaxnreg's budgets sum to %d > 512 a thread over four warpgroups" % total)
        ok = False
    for eff in (1.0, 0.8, 0.6):
        est = max(tensor / eff, full / SMEM, path + hand)
        ms = 256 * 128 / 132 * est / 1.755e9 * 1e3
        print("at %3.0f%% of the tensor peak: ~%.0f cycles a chunk, pass 2 ~%.2f ms at 16/64, 4 x 8192 (the column-"
              "quarter form measured ~40k cycles, 5.39 ms on the H100)" % (eff * 100, est, ms))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
