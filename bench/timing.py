"""bench/timing.py — the one timing module of the Python benchmarks (bench/compare.py).

Every comparison with a peer goes through `compare`, which enforces the method:

  * kernel time against kernel time: each side's call is captured `calls` times into a CUDA graph
    (on a private stream, after warm-up calls on that stream) and the graph's replays are timed with
    CUDA events, so neither side pays for its host launch path (Python or C++) in the figure. Each
    sample replays the graph once untimed first, so the timed replay is enqueued while the GPU is
    busy and the host's enqueue of it stays out of the window too. Where any side cannot be captured,
    EVERY side of that case is timed by the profiler's device time instead (the sum of the CUDA
    kernels' durations per call, torch.profiler / CUPTI), never one method against the other;
  * interleaved: `rounds` rounds, each side one sample per round, in an order shuffled per round
    (fixed seed), all in this one process; the figure is each side's median sample;
  * the same inputs: the caller builds every side over the same tensors;
  * outputs checked against each other: before timing, each side's outputs are poisoned (NaN), the
    side runs once, and its outputs are compared with the reference's (float64 or float32 on the
    same inputs) and with the first side's; a side that fails is reported and not timed;
  * host time measured apart (`host_us`): the minimum over bursts, from a drained queue, of the
    host time to enqueue a burst of calls, per call; whole host steps (plan, build) by `median_us`:
    interleaved rounds, each step timing itself, the median. Neither needs torch when given a drain.

A side is `Side(name, run, outputs, poison=None, on_stream=None)`: `run()` enqueues one call on
the current stream; `outputs()` returns the tensors it writes; `on_stream(s)` points the side at
stream `s` (opgraph's handle stream: `opgraph.set_stream`) before warm-up and capture.
"""
import math
import random
import statistics
import time

try:
    import torch
except ImportError:  # host_us and median_us run without torch (bench/compare.py host --dry-run)
    torch = None

class Side:
    def __init__(self, name, run, outputs, poison=None, on_stream=None):
        self.name = name
        self.run = run
        self.outputs = outputs
        self.poison = poison
        self.on_stream = on_stream


class Result:
    """One side's figure: `ms` (median per call), the samples, how it was timed."""

    def __init__(self, name, samples, method, calls):
        self.name = name
        self.samples = sorted(samples)
        self.ms = statistics.median(samples) if samples else float("nan")
        self.method = method
        self.calls = calls

    def spread(self):
        """(max - min) / median of the samples: the run's own noise for this side."""
        return (self.samples[-1] - self.samples[0]) / self.ms if self.samples else float("nan")


def _poison(side):
    if side.poison:
        side.poison()
        return
    for t in side.outputs():
        if t.is_floating_point():
            t.fill_(float("nan"))
        else:
            t.fill_(-1)


def check_outputs(sides, reference, atol, rtol):
    """Poison, run once and compare every side's outputs with `reference` (a list of float
    tensors, the same order as outputs()) and with the first side's. Returns {name: error text}
    for the sides that fail (NaN fails; an output never written stays NaN)."""
    bad = {}
    first = None
    for side in sides:
        try:
            _poison(side)
            torch.cuda.synchronize()
            side.run()
            torch.cuda.synchronize()
            outs = [t.float() for t in side.outputs()]
        except Exception as exc:  # noqa: BLE001 - a side that cannot run is reported, not timed
            bad[side.name] = "raised %s: %s" % (type(exc).__name__, str(exc).splitlines()[0][:200] if str(exc) else "")
            continue
        for i, (o, r) in enumerate(zip(outs, reference)):
            err = (o - r).abs()
            excess = (err - (atol + rtol * r.abs())).max().item()
            if not excess <= 0:
                bad[side.name] = "output %d vs the reference: max |err| %.3g (excess %.3g)" % (
                    i, err.max().item(), excess)
                break
        else:
            if first is None:
                first = outs
            else:
                for i, (o, f) in enumerate(zip(outs, first)):
                    diff = (o - f).abs()
                    excess = (diff - 2 * (atol + rtol * f.abs())).max().item()
                    if not excess <= 0:
                        bad[side.name] = "output %d vs %s: max |diff| %.3g" % (i, sides[0].name, diff.max().item())
                        break
    return bad


def agreement(a, b):
    """max |a - b| / max |b| over two outputs (a figure for the table, not a check)."""
    a, b = a.float(), b.float()
    return ((a - b).abs().max() / b.abs().max().clamp_min(1e-30)).item()


def _estimate_ms(run):
    """A rough per-call time (events around 3 eager calls after one), to size the graphs."""
    run()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(3):
        run()
    e.record()
    e.synchronize()
    return max(s.elapsed_time(e) / 3, 1e-3)


def capture(side, calls, stream, warmup=3):
    """A CUDA graph of `calls` calls of the side, captured on `stream` (warm-up calls there first,
    so one-time set-up — kernel loads, split-K scratch, workspace — happens outside the capture)."""
    if side.on_stream:
        side.on_stream(stream)
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(warmup):
            side.run()
    stream.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        for _ in range(calls):
            side.run()
    torch.cuda.synchronize()
    return graph


def _graph_sample_ms(graph, calls):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    graph.replay()  # untimed: the GPU busy while the timed replay is enqueued
    s.record()
    graph.replay()
    e.record()
    e.synchronize()
    return s.elapsed_time(e) / calls


def profiler_ms(run, calls):
    """Device time per call: the CUDA kernels' durations (torch.profiler) of `calls` calls, summed."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            run()
        torch.cuda.synchronize()
    total_us = 0.0
    for ev in prof.events():
        if getattr(ev, "device_type", None) == torch.autograd.DeviceType.CUDA:
            total_us += ev.device_time if hasattr(ev, "device_time") else ev.cuda_time
    return total_us / 1e3 / calls


def kernel_names(run):
    """The names of the GPU kernels one call launches (torch.profiler)."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        run()
        torch.cuda.synchronize()
    return sorted({ev.key for ev in prof.key_averages()
                   if getattr(ev, "device_type", None) == torch.autograd.DeviceType.CUDA})


def compare(sides, rounds=10, target_ms=2.0, max_calls=64, seed=20261202, log=print):
    """Time every side interleaved (see the module's docstring). Returns {name: Result}."""
    for side in sides:  # first calls: compile, load, allocate
        side.run()
    torch.cuda.synchronize()
    est = {side.name: _estimate_ms(side.run) for side in sides}
    # One call count for every side of the case (the slowest side's), so each graph holds as many
    # calls as the others: the same per-replay fixed cost on each side.
    calls = max(1, min(max_calls, int(math.ceil(target_ms / max(est.values())))))
    stream = torch.cuda.Stream()
    graphs, method = {}, "graph"
    for side in sides:
        try:
            graphs[side.name] = capture(side, calls, stream)
        except Exception as exc:  # noqa: BLE001 - any capture failure: the whole case on the profiler
            log("  capture of %s failed (%s: %s): every side timed by profiler device time" % (
                side.name, type(exc).__name__, str(exc).splitlines()[0][:160]))
            method = "profiler"
            graphs = {}
            torch.cuda.synchronize()
            break
    for side in sides:  # the sides' streams back to the caller's
        if side.on_stream:
            side.on_stream(torch.cuda.current_stream())
    rng = random.Random(seed)
    samples = {side.name: [] for side in sides}
    order = list(sides)
    for _ in range(rounds):
        rng.shuffle(order)
        for side in order:
            if method == "graph":
                samples[side.name].append(_graph_sample_ms(graphs[side.name], calls))
            else:
                samples[side.name].append(profiler_ms(side.run, min(calls, 8)))
    del graphs
    return {side.name: Result(side.name, samples[side.name], method, calls) for side in sides}


def host_us(run, reps=50, burst=20, drain=None):
    """Host time to enqueue one call: min over `reps` bursts of `burst` calls, each from a drained
    queue (drain: torch.cuda.synchronize unless given), of (burst time / burst), in microseconds. The
    bursts are short, so the launch queue never fills: the figure is the caller's enqueue cost, not
    the kernel's."""
    drain = drain or torch.cuda.synchronize
    for _ in range(3):
        run()
    drain()
    best = float("inf")
    for _ in range(reps):
        drain()
        t0 = time.perf_counter()
        for _ in range(burst):
            run()
        best = min(best, (time.perf_counter() - t0) / burst)
    drain()
    return best * 1e6


def median_us(columns, rounds, warm=2):
    """Host time of whole steps, like with like: `columns` is {name: step}, step() returns its own
    microseconds (it starts and stops its clock around the part that counts, so setup and teardown
    stay out) or None when it failed. `warm` untimed rounds, then `rounds` rounds, each running every
    column once in turn; returns {name: median us} (None for a column that failed in any round)."""
    samples = {name: [] for name in columns}
    for r in range(warm + rounds):
        for name, step in columns.items():
            v = step()
            if r >= warm:
                samples[name].append(v)
    return {name: (None if not v or any(x is None for x in v) else statistics.median(v))
            for name, v in samples.items()}


def geomean(xs):
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")
