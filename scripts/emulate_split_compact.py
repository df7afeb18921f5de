#!/usr/bin/env python3
"""GDN_SPLIT_ADAPT's span map (kernels/gdn_params.cuh, kernels/gdn_fused_span_io.cuh), emulated lane by lane.

The fused prefill's chain split under GDN_SPLIT_ADAPT (the engine's build since 2026-12-06) reads the grid's z as an
index over the spans that run. The span summaries run the F "full" spans (every span of a split sequence but its last,
span_chunks chunks each) at z = their index in sequence order, found by a warp scan of cu_seqlens (full_span_at);
their CTA (0, 0, 0) writes the span scan's map to a table (write_span_table) that the span scan reads a row a CTA:
each sequence's last span (or the whole sequence) at z = s, then the full spans at z = N + their index. A sequence of
at most split_min_chunks chunks is one span (seq_spans). This script runs those device functions as the warp executes
them (32 lanes a group, shuffles as prefix sums, ballot / ffs as the first lane) on random batches (empty sequences,
lengths around the span boundaries, thresholds 0 and > 0) and checks:
  1. the table holds every (sequence, span) the split runs exactly once, the last spans at z = s, then the full
     spans in sequence order, (-1, -1) past N + F, inside gdn_split_grid_spans rows (the host's grid);
  2. full_span_at(z) is the table's row N + z for z < F and runs nothing from F on;
  3. pass_range's token ranges of a sequence's spans tile [0, len) (a sequence left whole is one range);
  4. with split_min_chunks = 0 the set of spans is the default map's (z = s x n_spans + k, k < nsp).
Then it prints, for the issue's varlen cell (16/32 heads, lengths 3000 .. 12000 summing to 32768, 132
multiprocessors), the host's split_min_chunks (la_engine.cpp) and a list-scheduling estimate of the span scan's
critical path under both maps (CTAs dispatched in z order, then heads; ~4 us a chunk, 1 us a CTA, 1.2 us for a
CTA that returns at once): the model behind docs/linear_attention.md's account, not a measurement.
Exit 1 on a failed check.
  python3 scripts/emulate_split_compact.py [batches]
"""
import heapq
import math
import random
import sys

C = 64


def seq_spans(nch, J, tau):
    if nch <= 0:
        return 1
    if nch <= tau:
        return 1
    return (nch + J - 1) // J


def lengths_of(cu):
    return [max(cu[i + 1], cu[i]) - cu[i] for i in range(len(cu) - 1)]


def span_group(lens, s0, J, tau):
    """One warp round: per lane full, nsp, inclusive prefix of full; the group's total."""
    full, nsp = [], []
    for lane in range(32):
        s = s0 + lane
        if s < len(lens):
            n = seq_spans((lens[s] + C - 1) // C, J, tau)
            nsp.append(n)
            full.append(n - 1)
        else:
            nsp.append(1)
            full.append(0)
    incl, acc = [], 0
    for f in full:
        acc += f
        incl.append(acc)
    return full, nsp, incl, incl[31]


def full_span_at(lens, z, J, tau):
    before = 0
    for s0 in range(0, len(lens), 32):
        full, _, incl, total = span_group(lens, s0, J, tau)
        if z < before + total:
            lane = next(l for l in range(32) if z < before + incl[l])  # __ffs(__ballot(...)) - 1
            excl = incl[lane] - full[lane]
            return (s0 + lane, z - before - excl, True)
        before += total
    return (0, 0, False)


def grid_spans(T, N, J):
    return ((T + 63) // 64 + N) // J + N


def write_span_table(lens, T, J, tau):
    N = len(lens)
    rows = grid_spans(T, N, J)
    tab = [None] * rows
    before = 0
    for s0 in range(0, N, 32):
        full, nsp, incl, total = span_group(lens, s0, J, tau)
        for lane in range(32):
            s = s0 + lane
            if s >= N:
                continue
            first = N + before + incl[lane] - full[lane]
            for k in range(full[lane]):
                if first + k < rows:
                    tab[first + k] = (s, k)
            tab[s] = (s, nsp[lane] - 1)
        before += total
    for z in range(N + before, rows):
        tab[z] = (-1, -1)
    return tab, before


def token_range(length, span, J, tau):
    nsp = seq_spans((length + C - 1) // C, J, tau)
    tb = span * J * C
    te = min(tb + J * C, length)
    if span == nsp - 1:
        te = length
    return tb, te


def check_batch(lens, J, tau, fails):
    T = sum(lens)
    N = len(lens)
    expect = {(s, k) for s in range(N) for k in range(seq_spans((lens[s] + C - 1) // C, J, tau))}
    tab, F = write_span_table(lens, T, J, tau)
    rows = grid_spans(T, N, J)
    got = [e for e in tab if e is not None and e != (-1, -1)]
    ok = (None not in tab and len(got) == len(set(got)) and set(got) == expect and F + N <= rows
          and all(tab[N + z][1] < seq_spans((lens[tab[N + z][0]] + C - 1) // C, J, tau) - 1 for z in range(F))
          and all(tab[s][0] == s for s in range(N)) and tab[N:N + F] == sorted(tab[N:N + F]))
    if not ok:
        fails.append("table: lengths %s J %d tau %d" % (lens, J, tau))
        return
    for z in range(max(1, rows - N)):
        at = full_span_at(lens, z, J, tau)
        want = (tab[N + z][0], tab[N + z][1], True) if z < F else (0, 0, False)
        if at != want:
            fails.append("full_span_at(%d) = %s, table %s: lengths %s J %d tau %d" % (z, at, want, lens, J, tau))
            return
    for s in range(N):
        n = seq_spans((lens[s] + C - 1) // C, J, tau)
        ranges = [token_range(lens[s], k, J, tau) for k in range(n)]
        covered = [t for tb, te in ranges for t in range(tb, te)]
        if covered != list(range(lens[s])):
            fails.append("ranges %s of length %d (J %d tau %d)" % (ranges, lens[s], J, tau))
            return
    if tau == 0:  # the default map: z = s x n_spans + k, run where k < nsp
        n_spans = max(1, ((T + 63) // 64 + J - 1) // J)
        default = {(z // n_spans, z % n_spans) for z in range(N * n_spans)
                   if z % n_spans < seq_spans((lens[z // n_spans] + C - 1) // C, J, tau)}
        if default != expect:
            fails.append("default map differs: lengths %s J %d" % (lens, J))


def makespan(durations, sms):
    heap = [0.0] * sms
    for d in durations:
        t = heapq.heappop(heap)
        heapq.heappush(heap, t + d)
    return max(heap)


def main():
    batches = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    rng = random.Random(20261206)
    fails = []
    for _ in range(batches):
        N = rng.choice([1, 2, 3, 8, 31, 32, 33, 70])
        lens = [rng.choice([0, 1, 63, 64, 65, 127, 128, 129, rng.randint(0, 20000)]) for _ in range(N)]
        for J in (8, 16, 32, 64, 128, 256):
            for tau in (0, rng.randint(1, 400)):
                check_batch(lens, J, tau, fails)
    for f in fails[:10]:
        print("FAIL", f)
    print("%d batches x 6 span lengths x 2 thresholds: %s" % (batches, "FAILED (%d)" % len(fails) if fails else "ok"))

    # The varlen cell: the host's threshold and the span scan's list-scheduling estimate.
    L = (3000, 12000, 1000, 4097, 2048, 7000, 1123, 2500)
    HO, SMS, step, cta, noop = 32, 132, 4.0, 1.0, 1.2
    T = sum(L)
    tau = (5 * HO * ((T + 63) // 64) + 4 * SMS - 1) // (4 * SMS)
    print("varlen 16/32 (%s): split_min_chunks %d" % (", ".join(map(str, L)), tau))
    print("  unsplit: %.0f us" % makespan([((l + 63) // 64) * step + cta for l in L for _ in range(HO)], SMS))
    for J in (32, 64, 128):
        n_spans = ((T + 63) // 64 + J - 1) // J
        dflt = []
        for l in L:
            n = seq_spans((l + 63) // 64, J, 0)
            for k in range(n_spans):
                for _ in range(HO):
                    dflt.append(noop if k >= n else (min(J, (l + 63) // 64 - k * J)) * step + cta)
        tab, _ = write_span_table(list(L), T, J, tau)
        comp = []
        for s, k in tab:
            for _ in range(HO):
                if s < 0:
                    comp.append(noop)
                else:
                    tb, te = token_range(L[s], k, J, tau)
                    comp.append(((te - tb + 63) // 64) * step + cta)
        print("  spans of %3d chunks: default map %.0f us (%d CTAs), compact map %.0f us (%d CTAs)" % (
            J, makespan(dflt, SMS), len(dflt), makespan(comp, SMS), len(comp)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
