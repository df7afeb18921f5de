"""bench/compare.py gdn-bwd (bench/compare_gdn_bwd.py), the same-run comparison of our gdn backward with
fla's that bench/run.sh gdn-bwd-peers runs on the H200, checked on the CPU: the cells, --dry-run (each
cell's gdn_bwd declared through the binding and planned for an sm_90 target without a device, ranked to
the linear_attention engine first), the tolerances, and the refusal without torch."""
import os
import subprocess
import sys

import pytest

import opgraph

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench")


@pytest.fixture(scope="module")
def cb():
    sys.path.insert(0, BENCH)
    try:
        import compare_gdn_bwd as mod
    finally:
        sys.path.remove(BENCH)
    return mod


def env_with_opgraph():
    env = dict(os.environ)
    here = os.path.dirname(os.path.dirname(os.path.abspath(opgraph.__file__)))
    env["PYTHONPATH"] = here + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_cells_are_the_issues_five_and_a_varlen_batch(cb):
    keys = [c.key for c in cb.cells()]
    assert keys == ["16/64@4x8192", "16/64@1x32768", "16/32@4x8192", "16/32@1x32768", "2/8@1x32768",
                    "16/32@varlen8x32768"]
    assert set(cb.ANCHORS) == set(keys[:5]) and set(cb.PUBLISHED) <= set(keys)
    # the issue's fla anchors: backward alone, then forward + backward
    assert cb.ANCHORS["16/64@4x8192"] == (9.922, 13.139) and cb.ANCHORS["2/8@1x32768"] == (2.709, 3.633)
    assert [c.key for c in cb.select(cb.cells(), "varlen")] == ["16/32@varlen8x32768"]
    # twice fla's tolerances against the exact result for the check of fla against ours
    assert all(cb.TOL[n] == 3e-2 for n in ("dq", "dk", "dv", "dh0")) and cb.TOL["dg"] == cb.TOL["dbeta"] == 6e-2


def test_dry_run_declares_every_cell_on_our_gpu_gdn_bwd():
    r = subprocess.run([sys.executable, os.path.join(BENCH, "compare.py"), "gdn-bwd", "--dry-run"],
                       env=env_with_opgraph(), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert "6 cells, 0 declaration failures" in out
    blocks = out.split("\nCELL ")[1:]
    assert len(blocks) == 6
    for b in blocks:
        key = b.split()[0]
        declared = [ln for ln in b.splitlines() if ln.strip().startswith("DECLARED")]
        assert len(declared) == 1, b
        # the GPU gdn_bwd is offered for an sm_90 target (its numerics passed on the H200)
        assert "our plans (sm_90, 132 SMs): linear_attention[" in declared[0], b
        sides = [ln.split()[1] for ln in b.splitlines() if ln.strip().startswith("MAP")]
        assert sides == ["ours", "fla"], b
        assert "torch.autograd.grad((o, final_state), (q, k, v, g, beta, h0)" in b and "state_v_first=True" in b
        if key == "16/32@1x32768":
            assert "FlashQLA backward 2.515 ms (published)" in b
        if key.startswith("16/64@4x8192"):
            assert "dq [32768, 16, 128] dg [32768, 64] dh0 [4, 64, 128, 128]" in declared[0]


def test_without_torch_it_names_what_is_missing():
    code = ("import sys, importlib.abc\n"
            "class Block(importlib.abc.MetaPathFinder):\n"
            "    def find_spec(self, name, path, target=None):\n"
            "        if name == 'torch' or name.startswith('torch.'):\n"
            "            raise ImportError('No module named torch (blocked by the test)')\n"
            "sys.meta_path.insert(0, Block())\n"
            "sys.path.insert(0, %r)\n"
            "sys.argv = ['compare.py', 'gdn-bwd', '--cells', '2/8']\n"
            "import runpy\n"
            "runpy.run_path(%r, run_name='__main__')\n") % (BENCH, os.path.join(BENCH, "compare.py"))
    r = subprocess.run([sys.executable, "-c", code], env=env_with_opgraph(), capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "compare.py gdn-bwd: cannot run, missing: torch with CUDA" in r.stderr
