#!/usr/bin/env python3
"""bench/binding_cost.py — the Python binding's own per-call cost of execute, on the CPU.

  PYTHONPATH=build-py python3 bench/binding_cost.py [--reps 300] [--burst 50] [--runs 3] [--n 8]
  PYTHONPATH=build-py python3 bench/binding_cost.py --loop exec|prepared|normalize|repeat --calls N

No torch, no GPU: an add of two [1, n] fp32 tensors planned on the host reference engine (so
the run itself is short), timed as compare.py host times execute (bench/timing.py host_us: the
minimum over --reps bursts of --burst calls, per call; the minimum of --runs runs). Rows:

  C++ execute                 g._execute_repeat(pack, ws, burst) / burst: no Python per call
  numpy, tensor keys          g.execute({A: a, B: b, C: c}) with numpy arrays
  torch, tensor keys          the same with stand-in torch tensors (bench/torch_stand_in.c: a C
                              type offering torch.Tensor's DLPack C exchange table and `dtype`,
                              compiled here with the system C compiler and installed as
                              sys.modules["torch"]), and a stand-in torch workspace
  torch, uid keys             the same keyed by int uids
  torch, attribute reads      torch, tensor keys with the exchange table off
                              (_C._torch_exchange_api(False)): data_ptr(), is_cuda, ...
  torch, prepared pack        g.execute(g.prepare_variant_pack(pack), ws)
  binding only                g._normalize_only(pack, ws): the walk, workspace, handle, route

and each Python row's figure above the C++ execute. The stand-in is no model of torch's own
attribute and exchange-call costs (the device run, compare.py host, has those); it times the
binding's side of the same path. Exit 1 when an output is wrong.

--loop runs N calls of one row (torch, tensor keys; prepared; _normalize_only; _execute_repeat in
bursts of 50) and nothing else, for an instruction count that does not wander as times do:
instructions per call = (Ir of --calls 22000 - Ir of --calls 2000) / 20000, each run under
`OPENBLAS_NUM_THREADS=1 valgrind --tool=callgrind python3 bench/binding_cost.py --loop ...`
(the real python3 binary, not a pyenv shim). docs/autotune.md "Measured host cost" has both.
"""
import argparse
import os
import subprocess
import sys
import sysconfig
import tempfile
import types

HERE = os.path.dirname(os.path.abspath(__file__))


def stand_in_torch():
    """Compiles bench/torch_stand_in.c (once per source change, in the temp dir) and installs a
    `torch` module whose Tensor is its type, with dtype objects printed as torch's."""
    src = os.path.join(HERE, "torch_stand_in.c")
    out_dir = os.path.join(tempfile.gettempdir(), "opgraph-torch-stand-in-%d" % int(os.path.getmtime(src)))
    so = os.path.join(out_dir, "torch_stand_in" + sysconfig.get_config_var("EXT_SUFFIX"))
    if not os.path.exists(so):
        os.makedirs(out_dir, exist_ok=True)
        cc = os.environ.get("CC", "cc")
        subprocess.run([cc, "-O2", "-shared", "-fPIC", "-I" + sysconfig.get_paths()["include"], src, "-o",
                        so + ".tmp"], check=True)
        os.replace(so + ".tmp", so)
    sys.path.insert(0, out_dir)
    import torch_stand_in

    torch = types.ModuleType("torch")

    class dtype:
        def __init__(self, name):
            self.name = name

        def __str__(self):
            return "torch." + self.name

    torch.Tensor = torch_stand_in.Tensor
    torch.float32, torch.uint8 = dtype("float32"), dtype("uint8")
    sys.modules["torch"] = torch
    return torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--burst", type=int, default=50)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--n", type=int, default=8, help="the add's row length")
    ap.add_argument("--loop", choices=("exec", "prepared", "normalize", "repeat"),
                    help="only run --calls calls of this row (for callgrind)")
    ap.add_argument("--calls", type=int, default=20000)
    args = ap.parse_args()
    torch = stand_in_torch()
    import numpy as np

    import opgraph
    sys.path.insert(0, HERE)
    import timing

    found, enabled = opgraph._C._torch_exchange_api()
    if not (found and enabled):
        print("the binding did not find the stand-in's exchange table: (found, enabled) = (%s, %s)" % (found, enabled))
        return 1
    F = opgraph.data_type.FLOAT
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 1, args.n)).astype(np.float32)
    c = np.full((1, args.n), np.nan, np.float32)
    g = opgraph.pygraph(io_data_type=F, intermediate_data_type=F, compute_data_type=F)
    A, B = g.tensor_like(a, name="a"), g.tensor_like(b, name="b")
    C = g.add(a=A, b=B)
    C.set_output(True).set_data_type(F)
    g.build([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    ta, tb, tc = (torch.Tensor(x, torch.float32) for x in (a, b, c))
    ws = torch.Tensor(np.zeros(256, np.uint8), torch.uint8)
    numpy_pack = {A: a, B: b, C: c}
    torch_pack = {A: ta, B: tb, C: tc}
    uid_pack = {A.get_uid(): ta, B.get_uid(): tb, C.get_uid(): tc}
    prepared = g.prepare_variant_pack(torch_pack)
    for pack, w in ((numpy_pack, None), (torch_pack, ws), (uid_pack, ws), (prepared, ws)):
        c[...] = np.nan
        g.execute(pack, w)
        if not np.allclose(c, a + b, rtol=1e-6):
            print("WRONG output for %s" % type(pack).__name__)
            return 1

    if args.loop:
        run = {"exec": lambda: g.execute(torch_pack, ws), "prepared": lambda: g.execute(prepared, ws),
               "normalize": lambda: g._normalize_only(torch_pack, ws),
               "repeat": lambda: g._execute_repeat(torch_pack, ws, 50)}[args.loop]
        for _ in range(args.calls // 50 if args.loop == "repeat" else args.calls):
            run()
        print("%s: %d calls" % (args.loop, args.calls))
        return 0

    def attribute_reads():
        opgraph._C._torch_exchange_api(False)
        try:
            return timing.host_us(lambda: g.execute(torch_pack, ws), args.reps, args.burst, lambda: None)
        finally:
            opgraph._C._torch_exchange_api(True)

    rows = [
        ("C++ execute (_execute_repeat)",
         lambda: timing.host_us(lambda: g._execute_repeat(torch_pack, ws, args.burst), args.reps, 1,
                                lambda: None) / args.burst),
        ("Python execute, numpy, tensor keys",
         lambda: timing.host_us(lambda: g.execute(numpy_pack), args.reps, args.burst, lambda: None)),
        ("Python execute, torch, tensor keys",
         lambda: timing.host_us(lambda: g.execute(torch_pack, ws), args.reps, args.burst, lambda: None)),
        ("Python execute, torch, uid keys",
         lambda: timing.host_us(lambda: g.execute(uid_pack, ws), args.reps, args.burst, lambda: None)),
        ("Python execute, torch, attribute reads", attribute_reads),
        ("Python execute, torch, prepared pack",
         lambda: timing.host_us(lambda: g.execute(prepared, ws), args.reps, args.burst, lambda: None)),
        ("binding only (_normalize_only, torch)",
         lambda: timing.host_us(lambda: g._normalize_only(torch_pack, ws), args.reps, args.burst, lambda: None)),
    ]
    best = {name: float("inf") for name, _ in rows}
    for _ in range(args.runs):  # the rows interleaved run by run; each row's minimum
        for name, run in rows:
            best[name] = min(best[name], run())
    print("# bench/binding_cost.py: add [1, %d] fp32 on the host reference; us per call, min over %d bursts of %d "
          "calls, min of %d runs" % (args.n, args.reps, args.burst, args.runs))
    cpp = best[rows[0][0]]
    for name, _ in rows:
        above = "" if name.startswith(("C++", "binding")) else "  (%+.2f)" % (best[name] - cpp)
        print("  %-42s %6.2f%s" % (name, best[name], above))
    return 0


if __name__ == "__main__":
    sys.exit(main())
