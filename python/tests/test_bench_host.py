"""bench/compare.py host, the host-cost tables of bench/run.sh host (docs/autotune.md, "Measured host
cost"), on the CPU: --dry-run runs the plan + build table and the execute table on the host reference
engine with numpy buffers (no torch, no GPU) and parses trust_gpu's raw-launch table. These check that
the code paths run and read what they must, not any figure."""
import os
import subprocess
import sys

import pytest

import opgraph

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench")

# trust_gpu --host-only's output as it prints it (bench/trust_gpu.cpp, host_overhead).
TRUST_LOG = """# trust_gpu on NVIDIA H200 (sm_90)

## 3. host enqueue per call, ns (min over 25 reps of a burst from a drained stream / burst; interleaved per burst)
gemm plan: gemm_v2_128x64s8[CLUSTER_M=1, CLUSTER_N=1]
burst    raw_launch    execute(prep)    execute(caller)    ratio    cudnn execute
1            2400.5           2650.0             2900.1     1.10           5100.0
4            2100.0           2300.0             2500.0     1.10           4800.0
64           1900.0           2050.0             2300.0     1.08           4500.0
median ratio execute(prepared) / raw_launch: 1.100 (target <= 1.15); failed calls: 0
"""


@pytest.fixture(scope="module")
def compare():
    sys.path.insert(0, BENCH)
    try:
        import compare as mod
    finally:
        sys.path.remove(BENCH)
    return mod


def test_trust_gpu_table_is_parsed(compare):
    name, rows = compare.parse_trust_host(TRUST_LOG)
    assert name == "gemm_v2_128x64s8[CLUSTER_M=1, CLUSTER_N=1]"
    assert rows == {1: (2400.5, 2650.0, 2900.1), 4: (2100.0, 2300.0, 2500.0), 64: (1900.0, 2050.0, 2300.0)}
    assert compare.parse_trust_host("no table here") == (None, {})


def test_example_builders_declare_the_example_graphs(compare):
    # The pygraph calls that build each example for both packages give the example's structure.
    for name, build in compare.EXAMPLES:
        if build is None:
            continue
        g = opgraph.pygraph(io_data_type=opgraph.data_type.BFLOAT16, intermediate_data_type=opgraph.data_type.FLOAT,
                            compute_data_type=opgraph.data_type.FLOAT)
        build(opgraph, g)
        g.validate()
        ops = sorted(n["op"] for n in __import__("json").loads(g.serialize())["nodes"])
        want = {"matmul_bias_gelu": ["matmul", "pointwise", "pointwise"], "rmsnorm": ["rmsnorm"],
                "sdpa_causal_gqa_prefill": ["sdpa"]}[name]
        assert ops == want, name


def test_trust_gemm_graph_is_trust_gpus(compare):
    # tests/gemm_gpu/gemm_gpu_util.h build_case({1, 128, 256, 256, A row-major, B column-major, bf16}).
    g, a, b, c = compare.trust_gemm_graph(opgraph, None)
    g.validate()
    assert [t.get_dim() for t in (a, b, c)] == [[1, 128, 256], [1, 256, 256], [1, 128, 256]]
    assert a.get_stride() == [32768, 256, 1] and b.get_stride() == [65536, 1, 256]
    assert c.get_data_type() == opgraph.data_type.BFLOAT16


def test_dry_run_runs_every_host_table(tmp_path):
    log = tmp_path / "trust_host.log"
    log.write_text(TRUST_LOG)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [os.path.dirname(os.path.dirname(opgraph.__file__)),
                                                     env.get("PYTHONPATH", "")] if p)
    r = subprocess.run([sys.executable, os.path.join(BENCH, "compare.py"), "host", "--dry-run", "--reps", "3",
                        "--burst", "3", "--plan-rounds", "3", "--raw-launch-log", str(log)],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert "### create_execution_plans + build_plans through Python, per example graph" in out
    for name in ("matmul_bias_gelu", "rmsnorm", "sdpa_causal_gqa_prefill", "gdn_prefill_varlen"):
        assert "PLANBUILD graph=%s ours_build=" % name in out
        assert "ours_plan=-" not in out.split("PLANBUILD graph=%s" % name)[1].splitlines()[0]
    assert "RAWLAUNCH plan=gemm_v2_128x64s8 bursts=1,4,64" in out
    assert "## add 1x64 fp32 (host reference); plan reference; output checked" in out
    assert "opgraph Python execute, prepared pack" in out
    assert "peer: " in out  # what cudnn-frontend is, or why it is absent


def fake_libcuda():
    """The tests' fake CUDA driver (tests/runtime/fake_libcuda: an sm_90 device whose launches do
    nothing), where a build has it: OPGRAPH_FAKE_LIBCUDA, else build/tests/ of this checkout."""
    path = os.environ.get("OPGRAPH_FAKE_LIBCUDA") or os.path.join(BENCH, "..", "build", "tests",
                                                                   "libopgraph_fake_libcuda.so")
    return path if os.path.exists(path) else None


@pytest.mark.skipif(fake_libcuda() is None, reason="the fake libcuda is not built (tests/CMakeLists.txt)")
def test_plan_build_table_on_a_device_handle_through_the_fake_driver():
    # The device path of table 1: a graph given a handle plans for device 0 (the fake sm_90), our
    # gemm and linear_attention plans are compiled (NVRTC) and built; the cuDNN examples have no
    # plan there (no GPU for cuDNN), which the table reports as an error row, not a crash.
    code = ("import compare, opgraph, timing\n"
            "compare.timing = timing\n"
            "class A: plan_rounds = 3; plan_target_us = 1e9; dry_run = False  # no timing target here\n"
            "print('FAILED', compare.plan_build_table(A, None, opgraph.create_handle(), None))\n")
    env = dict(os.environ, OPGRAPH_LIBCUDA=fake_libcuda())
    env["PYTHONPATH"] = os.pathsep.join(p for p in [BENCH, os.path.dirname(os.path.dirname(opgraph.__file__)),
                                                     env.get("PYTHONPATH", "")] if p)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stdout + r.stderr[-2000:]
    lines = {l.split()[1]: l for l in r.stdout.splitlines() if l.startswith("PLANBUILD ")}
    assert "plan=gemm" in lines["graph=matmul_bias_gelu"] and "ours_plan=-" not in lines["graph=matmul_bias_gelu"]
    assert "plan=linear_attention" in lines["graph=gdn_prefill_varlen"]
    assert "ours_error=" in lines["graph=sdpa_causal_gqa_prefill"]
    assert "FAILED []" in r.stdout
