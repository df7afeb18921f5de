"""bench/binding_cost.py (docs/autotune.md, "Measured host cost"): the binding's own per-call cost of
execute on the CPU, with a C stand-in for torch.Tensor (bench/torch_stand_in.c) compiled by the system
C compiler. This checks that the bench runs, finds the stand-in's DLPack exchange table, checks its
outputs and prints every row; not any figure."""
import os
import re
import shutil
import subprocess
import sys

import pytest

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench")


def run_bench(*args):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return subprocess.run([sys.executable, os.path.join(BENCH, "binding_cost.py"), *args], capture_output=True,
                          text=True, env=env, timeout=300)


@pytest.mark.skipif(shutil.which(os.environ.get("CC", "cc")) is None, reason="no C compiler for the torch stand-in")
def test_binding_cost_prints_every_row():
    r = run_bench("--reps", "3", "--burst", "5", "--runs", "1")
    assert r.returncode == 0, r.stdout + r.stderr
    rows = [line.strip() for line in r.stdout.splitlines() if line.startswith("  ")]
    names = ["C++ execute", "numpy, tensor keys", "torch, tensor keys", "torch, uid keys", "attribute reads",
             "prepared pack", "binding only"]
    assert len(rows) == len(names), r.stdout
    for name, row in zip(names, rows):
        assert name in row, (name, row)
        m = re.search(r"\s(\d+\.\d+)(\s+\([+-]\d+\.\d+\))?$", row)
        assert m and float(m.group(1)) > 0, row


@pytest.mark.skipif(shutil.which(os.environ.get("CC", "cc")) is None, reason="no C compiler for the torch stand-in")
def test_binding_cost_loop_runs_one_row():
    for mode in ("exec", "prepared", "normalize", "repeat"):
        r = run_bench("--loop", mode, "--calls", "100")
        assert r.returncode == 0, r.stdout + r.stderr
        assert r.stdout.strip() == "%s: 100 calls" % mode
