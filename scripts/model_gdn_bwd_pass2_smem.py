#!/usr/bin/env python3
"""scripts/model_gdn_bwd_pass2_smem.py — the shared-memory plan of the one-pass backward's pass-2 kernel
(docs/linear_attention.md, "The one-pass design"; its first form, gdn_bwd_onepass, loads each chunk at its start):
one CTA a (sequence, head), chunks in reverse, every tile of a
chunk formed and consumed on chip, against the 227 KiB a CTA may have. The model lists a chunk's phases in the order
the kernel would run them (the products of scripts/model_gdn_bwd_fused.py's pass 2, which checks their algebra;
Kd and Qe folded into the chain's products as scalings, so they are no tiles), each phase's tile reads and writes,
and derives every tile's lifetime: an input (the rows, dO, S_c^T, the gates) from its load, LEAD phases before its
first reader, to its last reader. Over a ring of as many chunks as the longest life spans, it places the tiles by
first fit (a tile living longer than a chunk gets a slot a chunk, which may coincide where their times do not meet;
the best of several orders), checks that no two tiles live at once on the same bytes, and prints the phases, the
slots, the peak and the most bytes live at once (a bound no placement beats). Two schedules:
  - a chunk at a time (every warpgroup on the same chunk's phase; only the loads run ahead): must fit (exit 1 if not);
  - the auxiliary side a chunk ahead of the chain and the gradient side (the forward's pipelining), for the record:
    its inputs and state-free tiles then live ~2 chunks, and the bound alone is past 227 KiB;
  - the X form as gdn_bwd_onepass runs it (pass 1's T and S_c^T as inputs), with its loads a chunk ahead: must fit.
Tiles are bf16 [C][D] or [D][D] unless named: Lh and T fp16 [C][C]; `sums` the per-row fp32 partials. No GPU; the
standard library only.
  python3 scripts/model_gdn_bwd_pass2_smem.py
"""
import random
import sys

C, D = 64, 128
KIB = 1024
LIMIT = 227 * KIB  # a CTA's shared memory on sm_90
LEAD = 2  # phases a load needs before its first reader (its latency hidden behind two phases' products)
TRIES = 300  # seeded first-fit orders tried besides the three fixed ones

ROW = C * D * 2  # a [C][D] bf16 tile: 16 KiB
SQ = D * D * 2  # S_c^T or dS^T, bf16 [D][D]: 32 KiB
CC = C * C * 2  # a [C][C] 16-bit tile: 8 KiB
SIZES = {
    # the chunk's inputs (the loader's, single-buffered): l2-normalised q, k; v; dO scaled; S_c^T; gates
    "Q": ROW, "K": ROW, "V": ROW, "dO": ROW, "S": SQ, "gates": 4 * C * 4,
    # the state-free tiles (the auxiliary side: the forward's warpgroup 2 code)
    "Lh": CC, "P": CC, "T": CC, "W": ROW, "U": ROW,
    # the chain's (dS^T in registers; its bf16 copy and dVn for the gradient side)
    "dSt": SQ, "dVn": ROW,
    # the gradient side's tiles: Vn = U - W S_c (U's slot), dW and dP, dT, dL's factor, M1, M2 ([C][C])
    "Vn": ROW, "dW": ROW, "dP": CC, "dT": CC, "X": CC, "M1": CC, "M2": CC,
    # per-row partial sums (dgamma, dbeta terms), fp32
    "sums": 8 * C * 4,
    # the X form's (gdn_bwd_onepass, 2026-12-07): pass 1's T as an input, T diag(beta), X = V - e^gamma Y (over V),
    # dY, T^T dT, and dO scaled by scale e^gamma for the update (over dO)
    "Tin": CC, "Tv": CC, "Xv": ROW, "dY": ROW, "TdT": CC, "dOs": ROW,
}
INPUTS = ("Q", "K", "V", "dO", "S", "gates")
INPUTS_X = ("Q", "K", "V", "dO", "S", "Tin", "gates")

# The phases of one chunk, in the kernel's order: (name, side, reads, writes). Sides: aux (the state-free tiles), chain
# (dS in registers: its bf16 copy, dVn, the update), grad (every token gradient; its [C][D] results leave to global
# memory from registers). One phase's reads and writes happen together; a tile a phase both reads and writes
# (Vn over U) is listed in both.
PHASES = [
    ("L, P = K K^T, Q K^T (gated, masked)", "aux", ("Q", "K", "gates"), ("Lh", "P")),
    ("T = (I + L)^-1 on fp16 tiles", "aux", ("Lh",), ("T",)),
    ("W, U = T diag(beta e^gamma) K, T diag(beta) V", "aux", ("T", "K", "V", "gates"), ("W", "U")),
    # Kd = K e^(gamma_C - gamma) is no tile: dS^T Kd^T is (dS^T K^T) with its token columns scaled in the
    # accumulators before scale dO^T P accumulates into them.
    ("dS^T to bf16; dVn^T = (dS^T K^T) e^(gamma_C - gamma) + scale dO^T P", "chain", ("K", "dO", "P", "gates"),
     ("dSt", "dVn")),
    # Qe = Q e^gamma is no tile either: dO^T Qe = (dO e^gamma)^T Q, the A operand dO^T read by ldmatrix.trans into
    # registers and its token columns scaled there (a register-A wgmma, as the chain's dS^T and dVn^T operands).
    ("dS^T <- e^gamma_C dS^T + scale (dO e^gamma)^T Q - dVn^T W", "chain", ("dO", "Q", "W", "dVn", "gates"), ()),
    ("Vn = U - W S_c (over U)", "grad", ("U", "W", "S"), ("Vn",)),
    ("dW = -dVn S_c^T; dP = scale dO Vn^T", "grad", ("dVn", "S", "dO", "Vn"), ("dW", "dP")),
    ("dQe = scale dO S_c^T; dKd = Vn dS^T (registers: dq, dk parts)", "grad", ("dO", "S", "Vn", "dSt", "Q", "K",
                                                                                 "gates"), ("sums",)),
    ("dT = dW K^T diag(beta e^gamma) + dVn V^T diag(beta)", "grad", ("dW", "K", "dVn", "V", "gates"), ("dT",)),
    ("X = T^T dT; dL = -tril(X T^T); M1, M2", "grad", ("T", "dT", "P", "dP", "gates"), ("X", "M1", "M2")),
    ("dKb = T^T dW; dVb = T^T dVn (registers: dk, dv parts)", "grad", ("T", "dW", "dVn", "K", "V", "gates"),
     ("sums",)),
    ("dq += M1 K; dk += M1^T Q + M2 K + M2^T K; dbeta, dgamma rows", "grad", ("M1", "M2", "Q", "K", "X", "sums",
                                                                             "gates"), ()),
]
# Tiles that share one slot by construction (the second formed in the first's place).
SAME_SLOT = {"Vn": "U"}

# The X form as gdn_bwd_onepass runs it (kernels/gdn_bwd_onepass.cuh; its algebra scripts/model_gdn_bwd_fused.py's
# one_pass_x): T and S_c^T from pass 1, no inverse, no W, U, dW, dKb; every warpgroup on the same phase. The loads a
# chunk ahead (LEAD phases before the first reader, so during the chunk before's last phases) are what the kernel
# does not do yet: this plan says whether they fit.
PHASES_X = [
    ("dS^T to bf16; T diag(beta)", "chain", ("Tin", "gates"), ("dSt", "Tv")),
    ("Y = K S_c, X = V - e^gamma Y (over V); P = Q K^T gated", "grad", ("K", "S", "V", "Q", "gates"), ("Xv", "P")),
    ("Vn = (T diag beta) X; dVn = scale P^T dO + e^(gamma_C - gamma) K dS", "chain",
     ("Tv", "Xv", "P", "dO", "K", "dSt", "gates"), ("Vn", "dVn")),
    ("dVb = T^T dVn: dv, dY; dQe = dO S_c^T; dKd = Vn dS^T; dT = dVn (beta X)^T", "grad",
     ("Tin", "dVn", "Xv", "dO", "S", "Vn", "dSt", "Q", "K", "gates"), ("dY", "dT", "sums")),
    ("dk += dY S_c^T; T^T dT", "grad", ("dY", "S", "Tin", "dT"), ("TdT",)),
    ("dL = -tril(T^T dT T^T); K K^T; M2, F", "grad", ("TdT", "Tin", "K", "gates"), ("M2", "sums")),
    ("dP = scale dO Vn^T; M1, E", "grad", ("dO", "Vn", "gates"), ("M1", "sums")),
    ("dq += M1 K; dk += M1^T Q + M2 K + M2^T K; dO times scale e^gamma (over dO)", "grad",
     ("M1", "Q", "K", "M2", "dO", "gates"), ("dOs", "sums")),
    ("dS^T <- e^gamma_C dS^T + dOs^T Q + dY^T K; warp 0's epilogue", "chain", ("dOs", "Q", "dY", "K", "sums", "gates"),
     ()),
]
# (The kernel forms X over V and dOs over dO; here each gets a slot of its own, V and dO being a chunk's copies: the
# plan errs on the large side.)
SAME_SLOT_X = {}


def times(phases, overlap):
    """Each phase's time in its chunk's frame, and the period between chunks. In order (overlap False): phase i at
    time i, a period of every phase. Overlapped: the auxiliary phases of a chunk run while the gradient side still
    works on the chunk before (other warpgroups), so they move back by the gradient side's length and the period is
    the chain's and the gradient side's phases alone."""
    n_aux = sum(1 for p in phases if p[1] == "aux")
    n_grad = sum(1 for p in phases if p[1] == "grad")
    if not overlap:
        return list(range(len(phases))), len(phases)
    return [i - n_grad if p[1] == "aux" else i for i, p in enumerate(phases)], len(phases) - n_aux


def lifetimes(phases, at, inputs=INPUTS):
    """{tile: (first time writing or reading it, last time reading it)} over one chunk (`at`: each phase's time)."""
    first, last = {}, {}
    for i, (_, _, reads, writes) in enumerate(phases):
        for t in reads:
            if t not in first and t not in inputs:
                raise ValueError("phase %d reads %s before any phase writes it" % (i, t))
            first[t] = min(first.get(t, at[i]), at[i])
            last[t] = max(last.get(t, at[i]), at[i])
        for t in writes:
            first[t] = min(first.get(t, at[i]), at[i])
            last.setdefault(t, at[i])
    unread = [t for t in first if all(t not in r for _, _, r, _ in phases)]
    if unread:
        raise ValueError("written, never read: %s" % ", ".join(unread))
    return {t: (first[t], last[t]) for t in first}


def place(life, n, at, inputs=INPUTS, same_slot=None):
    """Offsets for the steady state over `ring` chunks (a period of ring x n times; ring: the most chunks any tile's
    life spans, from an input's load LEAD times before its first reader to its last reader). A tile living at most a
    chunk keeps one slot for every chunk; a longer one an item a chunk (e), which the first fit may still lay on the
    same bytes where their times do not meet. First fit by size (1024-byte alignment for the tiles, 16 for the
    small ones): two items share bytes only where their times do not meet. Returns {name: (offset, bytes, times)},
    the peak and the ring."""
    same_slot = SAME_SLOT if same_slot is None else same_slot
    spans = {t: ((a - LEAD) if t in inputs else a, b) for t, (a, b) in life.items()}
    ring = max(-(-(b - a + 1) // n) for a, b in spans.values())
    period = ring * n
    items = {}
    for t, (a, b) in spans.items():
        if b - a + 1 > n or t in inputs:  # an input lands where its chunk's copy may (a stage a chunk)
            for e in range(ring):
                items["%s.%d" % (t, e)] = (SIZES[t], {(e * n + i) % period for i in range(a, b + 1)})
        else:
            items[t] = (SIZES[t], {(e * n + i) % period for e in range(ring) for i in range(a, b + 1)})
    for t, base in same_slot.items():  # formed in place of `base`: one item
        if t in items and base in items:
            s0, c0 = items.pop(base)
            _, c1 = items.pop(t)
            items[base + "/" + t] = (s0, c0 | c1)

    def first_fit(order):
        placed = {}
        for name in order:
            size, cover = items[name]
            align = 1024 if size >= CC else 16
            busy = sorted((o, o + sz) for (o, sz, cv) in placed.values() if cv & cover)
            off = 0
            for lo, hi in busy:
                if off + size <= lo:
                    break
                off = max(off, (hi + align - 1) // align * align)
            placed[name] = (off, size, cover)
        return placed, max(o + sz for (o, sz, _) in placed.values())

    # First fit over orders: by size, then by start, by length, and seeded shuffles within each size; the best kept.
    rng = random.Random(1)
    orders = [sorted(items, key=lambda m: (-items[m][0], m)),
              sorted(items, key=lambda m: (-items[m][0], min(items[m][1]))),
              sorted(items, key=lambda m: (-items[m][0], -len(items[m][1])))]
    for _ in range(TRIES):
        keys = {m: rng.random() for m in items}
        orders.append(sorted(items, key=lambda m: (-items[m][0], keys[m])))
    placed, peak = min((first_fit(o) for o in orders), key=lambda r: r[1])
    names = list(placed)
    for i, m in enumerate(names):  # the check: no two items live at once on the same bytes
        for k in names[i + 1:]:
            (om, sm, cm), (ok_, sk, ck) = placed[m], placed[k]
            if cm & ck and om < ok_ + sk and ok_ < om + sm:
                raise ValueError("%s and %s overlap while both live" % (m, k))
    return placed, peak, ring


def main():
    fits = report(False)
    report(True)  # for the record: the overlapped form's lifetimes need ~2x the space
    fits_x = report(False, PHASES_X, INPUTS_X, SAME_SLOT_X, "the X form (gdn_bwd_onepass), its loads a chunk ahead")
    return 0 if fits and fits_x else 1


def report(overlap, phases=PHASES, inputs=INPUTS, same_slot=None, title=None):
    at, n = times(phases, overlap)
    life = lifetimes(phases, at, inputs)
    placed, peak, ring = place(life, n, at, inputs, same_slot)
    total = sum(SIZES[t] for t in life)
    print()
    print("pass 2, %s (C = %d, D = %d): %d phases a chunk, a chunk every %d, %d tiles, %.0f KiB if each had its "
          "own space" % (title or ("the auxiliary side a chunk ahead (overlapped)" if overlap else
                                   "one phase at a time"), C, D, len(phases), n, len(life), total / KIB))
    for i, (name, side, reads, writes) in enumerate(phases):
        print("  t %3d %-5s %-62s reads %s; writes %s" % (at[i], side, name, ",".join(reads),
                                                           ",".join(writes) or "-"))
    print("slots (offset KiB, KiB, item (.e: chunk e's copy of a tile living longer than a chunk), live times mod "
          "%d chunks):" % ring)
    for name in sorted(placed, key=lambda m: (placed[m][0], m)):
        off, size, cover = placed[name]
        print("  %7.1f %6.1f  %-8s %s" % (off / KIB, size / KIB, name, spans(sorted(cover))))
    multi = sorted({m.rsplit(".", 1)[0] for m in placed if "." in m})
    bufs = {t: len({placed[m][0] for m in placed if m.rsplit(".", 1)[0] == t}) for t in multi}
    print("tiles in more than one slot: %s" % (", ".join("%s x%d" % (t, k) for t, k in bufs.items() if k > 1)
                                               or "none"))
    live = max(sum(sz for (_, sz, cv) in placed.values() if t in cv) for t in range(ring * n))
    ok = peak <= LIMIT
    print("peak %.1f KiB against %d KiB (live at once at most %.1f KiB: no placement does better): %s" % (
        peak / KIB, LIMIT // KIB, live / KIB, "fits" if ok else "DOES NOT FIT"))
    return ok


def spans(phases):
    """[0, 1, 2, 5, 6] -> '0-2 5-6'."""
    out, start = [], None
    for i, p in enumerate(phases):
        if start is None:
            start = p
        if i + 1 == len(phases) or phases[i + 1] != p + 1:
            out.append("%d-%d" % (start, p) if p != start else "%d" % p)
            start = None
    return " ".join(out)


if __name__ == "__main__":
    sys.exit(main())
