"""scripts/model_ws_barriers.py (the warp-specialised fused prefill's stage hand-over between its
three warpgroups, model-checked over every interleaving): the kernel's protocol passes for 0 to 6
chunks, and each way of breaking it the checker exists to catch is caught; the same for the trial
forms GDN_WS_LOADS and GDN_WS_R3 (kernels/gdn_fused_ws*.cuh)."""
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


def test_the_trial_forms_protocols_hold():
    m = load()
    for n in range(8):
        assert m.check(n, True) >= 1  # GDN_WS_LOADS
        assert m.check(n, "r3") >= 1  # GDN_WS_R3


def test_breaking_the_trial_forms_is_caught():
    m = load()
    loads_form, r3_form = m.program_loads, m.program_r3

    def loads_no_state_pair(name, n):  # a state warpgroup loads while the other still reads
        return [op for op in loads_form(name, n) if op != ("sync", ("STATE", 0))]

    def loads_wait_ignores_phase(name, n):  # AUX waits on the chunk two back's phase
        return [("mwait", max(op[1] - 2, 0)) if op[0] == "mwait" else op for op in loads_form(name, n)]

    def r3_no_state_pair(name, n):
        return [op for op in r3_form(name, n) if op != ("sync", ("STATE", 0))]

    def r3_arrive_before_norms(name, n):  # ROWS published before the rows are normalised
        ops = list(r3_form(name, n))
        for i in range(len(ops) - 1):
            if ops[i][0] == "norm" and ops[i + 1][0] == "marrive":
                ops[i], ops[i + 1] = ops[i + 1], ops[i]
        return ops

    def r3_request_before_read(name, n):  # chunk c + 3 requested before chunk c is read
        if name == "AUX":
            return r3_form(name, n)
        ops = [op for op in r3_form(name, n) if op[0] != "load" or op[1] < 3]
        out = []
        for op in ops:
            if op[0] == "read" and op[1] + 3 < n:
                out.append(("load", op[1] + 3))
            out.append(op)
        return out

    cases = [(loads_no_state_pair, "m.program_loads", True, "while S"),
             (loads_wait_ignores_phase, "m.program_loads", True, "while S|phases complete"),
             (r3_no_state_pair, "m.program_r3", "r3", "while S"),
             (r3_arrive_before_norms, "m.program_r3", "r3", "normalised"),
             (r3_request_before_read, "m.program_r3", "r3", "while S")]
    for broken, attr, form, says in cases:
        setattr(m, attr.split(".")[1], broken)
        with pytest.raises(AssertionError, match=says):
            m.check(5, form)
        m.program_loads, m.program_r3 = loads_form, r3_form

