#!/usr/bin/env python3
"""scripts/model_ws_barriers.py — the warp-specialised fused prefill's stage hand-over
(src/engines/linear_attention/kernels/gdn_fused.cu, ws::ws_pass under GDN_FUSED_WS), model-checked
over every interleaving.

Three processes, as the kernel's three warpgroups run them (128 threads each):
  AUX  chunk c: write chunk c's stage (factors, P, T_v, Wn: stage c % 2); after the inverse,
       if c + 1 < n: sync EMPTY((c + 1) % 2) when c >= 1, then load chunk c + 1's rows into
       stage (c + 1) % 2; last, arrive FULL(c % 2). Before the loop it loads chunk 0 (stage 0).
  S0, S1  chunk c: sync FULL(c % 2); read stage c % 2 (and stage O in its V panel); arrive
       EMPTY(c % 2) when c + 2 < n.
Named-barrier semantics (PTX bar.sync / bar.arrive with a count of 384): a barrier completes once
384 threads have arrived or synced in its current phase; the syncing threads wait for completion.

Checked for n = 0 .. N chunks, over every interleaving (breadth-first over the state space):
no deadlock; a stage is never loaded or written by AUX for chunk c while S0 or S1 still reads it
for chunk c - 2; S0 / S1 read chunk c's stage only after AUX finished writing it; every barrier is
idle (no pending arrivals) when all three have finished.

    python3 scripts/model_ws_barriers.py [N]   (default 6; prints one line a chunk count)
"""
import sys
from collections import deque

THREADS = {"AUX": 128, "S0": 128, "S1": 128}


def program(name, n):
    """The process's operations in order: (kind, arg)."""
    ops = []
    if name == "AUX":
        if n > 0:
            ops.append(("load", 0))
        for c in range(n):
            ops.append(("write", c))  # factors, P, T_v, Wn of chunk c into stage c % 2
            if c + 1 < n:
                if c >= 1:
                    ops.append(("sync", ("EMPTY", (c + 1) % 2)))
                ops.append(("load", c + 1))
            ops.append(("arrive", ("FULL", c % 2)))
    else:
        for c in range(n):
            ops.append(("sync", ("FULL", c % 2)))
            ops.append(("read", c))  # the products of chunk c and its O staging in stage c % 2
            if c + 2 < n:
                ops.append(("arrive", ("EMPTY", c % 2)))
    return ops


def check(n):
    names = ["AUX", "S0", "S1"]
    progs = {p: program(p, n) for p in names}
    barriers = [("FULL", 0), ("FULL", 1), ("EMPTY", 0), ("EMPTY", 1)]
    # State: program counters, per barrier (count, waiters frozenset), stage owner info:
    # stage_chunk[s] = chunk whose data stage s holds; done_reading[(proc, chunk)] implied by pc.
    start = (tuple(0 for _ in names), tuple((0, frozenset()) for _ in barriers))
    seen = {start}
    q = deque([start])
    bidx = {b: i for i, b in enumerate(barriers)}

    def reads_done(pcs, proc, chunk):
        """Whether proc has finished its read of `chunk` (its pc is past that op)."""
        ops = progs[proc]
        for i, op in enumerate(ops):
            if op == ("read", chunk):
                return pcs[names.index(proc)] > i
        return True  # no such read (chunk out of range)

    def wrote(pcs, chunk):
        ops = progs["AUX"]
        for i, op in enumerate(ops):
            if op == ("arrive", ("FULL", chunk % 2)) and i > ops.index(("write", chunk)):
                return pcs[0] > i
        return False

    while q:
        pcs, bars = q.popleft()
        if all(pcs[i] == len(progs[p]) for i, p in enumerate(names)):
            for i, (cnt, w) in enumerate(bars):
                if cnt or w:
                    raise AssertionError(f"n={n}: barrier {barriers[i]} left with {cnt} arrivals, waiters {set(w)}")
            continue
        moved = False
        for i, p in enumerate(names):
            if pcs[i] == len(progs[p]):
                continue
            if any(p in w for _, w in bars):
                continue  # waiting at a barrier
            kind, arg = progs[p][pcs[i]]
            nb = list(bars)
            if kind in ("load", "write"):
                c = arg
                # Stage c % 2 held chunk c - 2: both readers must be done with it.
                for r in ("S0", "S1"):
                    if not reads_done(pcs, r, c - 2):
                        raise AssertionError(f"n={n}: AUX {kind}s chunk {c} into stage {c % 2} while {r} reads chunk {c - 2}")
            elif kind == "read":
                if not wrote(pcs, arg):
                    raise AssertionError(f"n={n}: {p} reads chunk {arg} before AUX finished writing it")
            elif kind in ("sync", "arrive"):
                j = bidx[arg]
                cnt, w = nb[j]
                cnt += THREADS[p]
                if cnt > 384:
                    raise AssertionError(f"n={n}: barrier {arg} over-arrived")
                if cnt == 384:  # completes: release the waiters (and p itself)
                    nb[j] = (0, frozenset())
                else:
                    nb[j] = (cnt, w | {p} if kind == "sync" else w)
            npcs = list(pcs)
            npcs[i] += 1
            st = (tuple(npcs), tuple(nb))
            # A waiter's pc already points past its sync; it just may not move while listed.
            if st not in seen:
                seen.add(st)
                q.append(st)
            moved = True
        if not moved:
            raise AssertionError(f"n={n}: deadlock at pcs {pcs}, barriers {bars}")
    return len(seen)


def main(argv):
    top = int(argv[1]) if len(argv) > 1 else 6
    for n in range(0, top + 1):
        states = check(n)
        print(f"n = {n} chunks: {states} states, no deadlock, no stage overwritten or read early, barriers idle at exit")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
