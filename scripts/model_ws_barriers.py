#!/usr/bin/env python3
"""scripts/model_ws_barriers.py — the warp-specialised fused prefill's stage hand-over
(src/engines/linear_attention/kernels/gdn_fused_ws*.cuh under GDN_FUSED_WS), model-checked over every
interleaving. The default is the two-stage form (ws::ws_pass, GDN_WS_R3=0); --r3 is the engine's
PIPELINE_ARCH 3 since 0b900ea (ws::ws3_pass); --loads a trial on ws_pass.

Three processes, as the kernel's three warpgroups run them (128 threads each):
  AUX  chunk c: write chunk c's stage (factors, P, T_v, Wn: stage c % 2); after the inverse,
       if c + 1 < n: sync EMPTY((c + 1) % 2) when c >= 1, then load chunk c + 1's rows into
       stage (c + 1) % 2; last, arrive FULL(c % 2). Before the loop it loads chunk 0 (stage 0).
  S0, S1  chunk c: sync FULL(c % 2); read stage c % 2 (and stage O in its V panel); arrive
       EMPTY(c % 2) when c + 2 < n.
Named-barrier semantics (PTX bar.sync / bar.arrive with a count of 384): a barrier completes once
384 threads have arrived or synced in its current phase; the syncing threads wait for completion.

With --loads, the GDN_WS_LOADS hand-over (the state side requests the rows):
  S0, S1  before the loop: load their half of chunks 0 and 1's rows, each half followed by an arrive
       on ROWS(stage) (cp.async.mbarrier.arrive: modelled as landing at once, the earliest it can).
       Chunk c: sync FULL(c % 2); read stage c % 2; when c + 2 < n: sync STATE (the two state
       warpgroups, 256 threads), load their half of chunk c + 2's rows into stage c % 2, arrive
       ROWS(c % 2).
  AUX  chunk c: wait ROWS(c % 2) for phase c / 2 (mbarrier.try_wait.parity with parity (c / 2) % 2:
       it passes while the barrier's current phase has the other parity), write, arrive FULL(c % 2).
  ROWS(s) is an mbarrier of 256 arrivals a phase. Checked besides: AUX passes its wait only with the
  phase c / 2 just completed (never a later one), and a stage's rows are loaded for chunk c only
  after S0, S1 finished reading chunk c - 2 there and AUX wrote it.

With --r3, GDN_WS_R3 (ws3_pass: three row stages, two product stages):
  S0, S1  before the loop: load their half of chunks 0, 1, 2's rows (row stage c % 3), then
       normalise ("norm", the half they loaded) chunks 0 and 1, each followed by an arrive on ROWS(c % 3)
       (a plain mbarrier arrive: they waited for their own copies). Chunk c: sync FULL(c % 2);
       read row stage c % 3 and product stage c % 2; when c + 2 < n: norm chunk c + 2, arrive
       ROWS((c + 2) % 3); when c + 3 < n: sync STATE, load chunk c + 3 into row stage c % 3.
  AUX  chunk c: wait ROWS(c % 3) for phase c / 3, read row stage c % 3 (q, k, the norms), write
       product stage c % 2, arrive FULL(c % 2).
  Checked: rows are loaded into a row stage only after S0, S1 and AUX are done reading its
  previous chunk; a chunk is normalised only after both halves are loaded; AUX reads chunk c's
  rows only after both halves were normalised, and writes product stage c % 2 only after S0, S1
  finished reading chunk c - 2 there; S0, S1 read chunk c only after AUX wrote it.

Checked for n = 0 .. N chunks, over every interleaving (breadth-first over the state space):
no deadlock; a stage is never loaded or written by AUX for chunk c while S0 or S1 still reads it
for chunk c - 2; S0 / S1 read chunk c's stage only after AUX finished writing it; every barrier is
idle (no pending arrivals) when all three have finished.

    python3 scripts/model_ws_barriers.py [N] [--loads | --r3]   (default 6; prints one line a chunk count)
"""
import sys
from collections import deque

THREADS = {"AUX": 128, "S0": 128, "S1": 128}


def program_loads(name, n):
    """GDN_WS_LOADS: the process's operations in order."""
    ops = []
    if name == "AUX":
        for c in range(n):
            ops.append(("mwait", c))  # ROWS(c % 2), phase c // 2
            ops.append(("write", c))
            ops.append(("arrive", ("FULL", c % 2)))
    else:
        for c in range(min(n, 2)):
            ops.append(("load", c))
            ops.append(("marrive", c % 2))
        for c in range(n):
            ops.append(("sync", ("FULL", c % 2)))
            ops.append(("read", c))
            if c + 2 < n:
                ops.append(("sync", ("STATE", 0)))
                ops.append(("load", c + 2))
                ops.append(("marrive", c % 2))
    return ops


def program_r3(name, n):
    """GDN_WS_R3: the process's operations in order."""
    ops = []
    if name == "AUX":
        for c in range(n):
            ops.append(("mwait", c))  # ROWS(c % 3), phase c // 3
            ops.append(("auxread", c))  # q, k, the norms of row stage c % 3
            ops.append(("write", c))  # product stage c % 2
            ops.append(("arrive", ("FULL", c % 2)))
    else:
        for c in range(min(n, 3)):
            ops.append(("load", c))
        for c in range(min(n, 2)):
            ops.append(("norm", c))
            ops.append(("marrive", c % 3))
        for c in range(n):
            ops.append(("sync", ("FULL", c % 2)))
            ops.append(("read", c))
            if c + 2 < n:
                ops.append(("norm", c + 2))
                ops.append(("marrive", (c + 2) % 3))
            if c + 3 < n:
                ops.append(("sync", ("STATE", 0)))
                ops.append(("load", c + 3))
    return ops


def program(name, n, loads=False):
    """The process's operations in order: (kind, arg)."""
    if loads == "r3":
        return program_r3(name, n)
    if loads:
        return program_loads(name, n)
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


def check(n, loads=False):
    names = ["AUX", "S0", "S1"]
    progs = {p: (program(p, n, loads) if loads else program(p, n)) for p in names}
    barriers = [("FULL", 0), ("FULL", 1), ("EMPTY", 0), ("EMPTY", 1), ("STATE", 0)]
    need = {("FULL", 0): 384, ("FULL", 1): 384, ("EMPTY", 0): 384, ("EMPTY", 1): 384, ("STATE", 0): 256}
    # State: program counters, per named barrier (count, waiters frozenset), per ROWS mbarrier
    # (arrivals in its current phase, phases completed); who read what follows from the pcs.
    nrows = 3 if loads == "r3" else 2
    start = (tuple(0 for _ in names), tuple((0, frozenset()) for _ in barriers), tuple((0, 0) for _ in range(nrows)))
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

    def done_op(pcs, proc, op):
        """Whether proc has executed op (its pc is past it); False when it has no such op."""
        ops = progs[proc]
        return op in ops and pcs[names.index(proc)] > ops.index(op)

    def loaded_by(pcs, proc, chunk):
        """Whether proc has loaded its half of chunk's rows."""
        return done_op(pcs, proc, ("load", chunk))

    while q:
        pcs, bars, mb = q.popleft()
        if all(pcs[i] == len(progs[p]) for i, p in enumerate(names)):
            for i, (cnt, w) in enumerate(bars):
                if cnt or w:
                    raise AssertionError(f"n={n}: barrier {barriers[i]} left with {cnt} arrivals, waiters {set(w)}")
            for s_, (cnt, _) in enumerate(mb):
                if cnt:
                    raise AssertionError(f"n={n}: ROWS({s_}) left with {cnt} arrivals")
            continue
        moved = False
        for i, p in enumerate(names):
            if pcs[i] == len(progs[p]):
                continue
            if any(p in w for _, w in bars):
                continue  # waiting at a barrier
            kind, arg = progs[p][pcs[i]]
            nb = list(bars)
            nm = list(mb)
            if kind == "mwait":
                c = arg
                cnt, done = nm[c % nrows]
                if done % 2 == (c // nrows) % 2:
                    continue  # the current phase has the awaited parity: not yet complete
                if done != c // nrows + 1:
                    raise AssertionError(f"n={n}: AUX passes ROWS({c % nrows}) for chunk {c} with {done} phases complete")
                for r in ("S0", "S1"):
                    if not loaded_by(pcs, r, c):
                        raise AssertionError(f"n={n}: AUX passes ROWS for chunk {c} before {r} loaded it")
                    if loads == "r3" and not done_op(pcs, r, ("norm", c)):
                        raise AssertionError(f"n={n}: AUX passes ROWS for chunk {c} before {r} normalised it")
            elif kind == "norm":  # its own rows: the copies it waited for
                if not loaded_by(pcs, p, arg):
                    raise AssertionError(f"n={n}: {p} normalises chunk {arg} before it loaded its half")
            elif kind == "auxread":
                pass  # its order is checked by the loads' rule
            elif loads == "r3" and kind in ("load", "write"):
                c = arg
                back = 3 if kind == "load" else 2  # the chunk that held the stage before
                for r in ("S0", "S1"):
                    if not reads_done(pcs, r, c - back):
                        raise AssertionError(f"n={n}: {p} {kind}s chunk {c} while {r} reads chunk {c - back}")
                if kind == "load" and c >= 3 and not done_op(pcs, "AUX", ("auxread", c - 3)):
                    raise AssertionError(f"n={n}: {p} loads chunk {c} before AUX read chunk {c - 3}")
            elif kind == "marrive":
                cnt, done = nm[arg]
                cnt += THREADS[p]
                nm[arg] = (0, done + 1) if cnt == 256 else (cnt, done)
            elif kind in ("load", "write"):
                c = arg
                # Stage c % 2 held chunk c - 2: both readers must be done with it.
                for r in ("S0", "S1"):
                    if not reads_done(pcs, r, c - 2):
                        raise AssertionError(f"n={n}: {p} {kind}s chunk {c} into stage {c % 2} while {r} reads chunk {c - 2}")
                if kind == "load" and c >= 2 and not wrote(pcs, c - 2):
                    raise AssertionError(f"n={n}: {p} loads chunk {c} into stage {c % 2} before AUX wrote chunk {c - 2}")
            elif kind == "read":
                if not wrote(pcs, arg):
                    raise AssertionError(f"n={n}: {p} reads chunk {arg} before AUX finished writing it")
            elif kind in ("sync", "arrive"):
                j = bidx[arg]
                cnt, w = nb[j]
                cnt += THREADS[p]
                if cnt > need[arg]:
                    raise AssertionError(f"n={n}: barrier {arg} over-arrived")
                if cnt == need[arg]:  # completes: release the waiters (and p itself)
                    nb[j] = (0, frozenset())
                else:
                    nb[j] = (cnt, w | {p} if kind == "sync" else w)
            npcs = list(pcs)
            npcs[i] += 1
            st = (tuple(npcs), tuple(nb), tuple(nm))
            # A waiter's pc already points past its sync; it just may not move while listed.
            if st not in seen:
                seen.add(st)
                q.append(st)
            moved = True
        if not moved:
            raise AssertionError(f"n={n}: deadlock at pcs {pcs}, barriers {bars}")
    return len(seen)


def main(argv):
    loads = "r3" if "--r3" in argv else "--loads" in argv
    args = [a for a in argv[1:] if a not in ("--loads", "--r3")]
    top = int(args[0]) if args else 6
    for n in range(0, top + 1):
        states = check(n, loads)
        tag = " (GDN_WS_R3)" if loads == "r3" else " (GDN_WS_LOADS)" if loads else ""
        print(f"n = {n} chunks{tag}: {states} states, no deadlock, "
              "no stage overwritten or read early, barriers idle at exit")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
