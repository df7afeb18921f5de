"""scripts/model_ws_barriers.py (the warp-specialised fused prefill's stage hand-over between its
three warpgroups, model-checked over every interleaving): the kernel's protocol passes for 0 to 6
chunks, and each way of breaking it the checker exists to catch is caught."""
import importlib.util
import os

import pytest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "model_ws_barriers.py")


def load():
    spec = importlib.util.spec_from_file_location("model_ws_barriers", SCRIPT)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def test_the_kernels_protocol_holds():
    m = load()
    for n in range(7):
        assert m.check(n) >= 1


def test_breaking_it_is_caught():
    m = load()
    kernel = m.program

    def no_empty_wait(name, n):  # AUX loads a stage without waiting for the state side
        return [op for op in kernel(name, n) if not (op[0] == "sync" and op[1][0] == "EMPTY")]

    def load_before_wait(name, n):  # AUX loads, then waits
        ops = list(kernel(name, n))
        for i in range(len(ops) - 1):
            if ops[i][0] == "sync" and ops[i + 1][0] == "load":
                ops[i], ops[i + 1] = ops[i + 1], ops[i]
        return ops

    def arrive_every_chunk(name, n):  # the state side arrives EMPTY with no load left to pair it
        if name == "AUX":
            return kernel(name, n)
        ops = []
        for c in range(n):
            ops += [("sync", ("FULL", c % 2)), ("read", c), ("arrive", ("EMPTY", c % 2))]
        return ops

    def read_before_full(name, n):  # the state side reads before the stage is handed over
        if name == "AUX":
            return kernel(name, n)
        ops = []
        for c in range(n):
            ops += [("read", c), ("sync", ("FULL", c % 2))]
            if c + 2 < n:
                ops.append(("arrive", ("EMPTY", c % 2)))
        return ops

    for broken, says in [(no_empty_wait, "while S"), (load_before_wait, "while S"),
                         (arrive_every_chunk, "left with"), (read_before_full, "before AUX finished")]:
        m.program = broken
        with pytest.raises(AssertionError, match=says):
            m.check(4)
    m.program = kernel
