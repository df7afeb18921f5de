"""bench/compare.py gdn (bench/compare_gdn.py), the same-run comparison of our gdn forward with fla and
FlashInfer that bench/run.sh gdn-peers runs on the H200, checked on the CPU: the cell list, --dry-run (each
cell declared through the binding and planned for an sm_90 target without a device, each side's mapping
printed), the refusal without torch, the table, and the two gate mappings the peers need checked through
our float64 reference engine (FlashInfer's prefill takes the linear alpha = exp(g); its decode takes
g = -exp(A_log) softplus(a + dt_bias) and beta = sigmoid(b)).

Tolerance of the reference comparisons: both sides are the float64 reference rounded to float32 outputs,
|err| <= 1e-5 + 1e-5 |ref|."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import opgraph

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench")
F32 = np.float32


@pytest.fixture(scope="module")
def cg():
    sys.path.insert(0, BENCH)
    try:
        import compare_gdn as mod
    finally:
        sys.path.remove(BENCH)
    return mod


def env_with_opgraph():
    env = dict(os.environ)
    here = os.path.dirname(os.path.dirname(os.path.abspath(opgraph.__file__)))
    env["PYTHONPATH"] = here + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_cells_are_the_issues(cg):
    cells = cg.cells()
    pre = [c for c in cells if c.kind == "prefill"]
    dec = [c for c in cells if c.kind == "decode"]
    assert [c.key for c in pre] == ["16/64@4x8192", "16/64@1x32768", "16/32@4x8192", "16/32@1x32768",
                                    "2/8@1x32768", "16/64@1x2048", "16/32@varlen8x32768"]
    var = pre[-1]
    assert var.n == 8 and var.t == 32768 and len(set(var.lengths)) > 4 and not var.equal
    assert any(L % 64 for L in var.lengths)  # lengths that end mid-chunk
    assert [(c.hv, c.n, c.t) for c in dec] == [(hv, b, b) for hv in (32, 64) for b in (1, 64, 256, 1024)]
    assert all(c.hq == 16 for c in dec)
    assert dec[-1].state_bytes() == 1024 * 64 * 128 * 128 * 4
    # every anchor names a cell
    assert set(cg.ANCHORS) <= {c.key for c in pre}
    assert [c.key for c in cg.select(cells, "all", "1x32768")] == ["16/64@1x32768", "16/32@1x32768", "2/8@1x32768"]
    assert [c.key for c in cg.select(cells, "decode", "dec16/64@B2,32@B1024")] == ["dec16/32@B1024", "dec16/64@B256"]
    assert cg.select(cells, "prefill", "dec16") == []
    assert len(cg.select(cells, "prefill", "")) == 7


def test_head_rows_are_each_sequences_first_chunk(cg):
    c = cg.Cell("prefill", 2, 4, (70, 0, 5, 64))
    assert cg.head_rows(c) == list(range(0, 64)) + list(range(70, 75)) + list(range(75, 139))
    d = cg.Cell("decode", 16, 32, batch=3)
    assert cg.head_rows(d) == [0, 1, 2]


def test_plan_labels(cg):
    assert cg.plan_label("linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=1]") == "2p"
    assert cg.plan_label("linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=0]") == "1p"
    assert cg.plan_label("linear_attention[CHAIN_SPLIT=64, PIPELINE_ARCH=1]") == "split64"
    assert cg.plan_label("linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=0]", "decode") == "decode"
    assert cg.plan_label("linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=2]") == "fused"
    assert cg.plan_label("linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=3]") == "fused-ws"
    assert cg.plan_label("linear_attention[CHAIN_SPLIT=8, PIPELINE_ARCH=2]") == "fused-split8"
    assert cg.plan_label("linear_attention[CHAIN_SPLIT=8, PIPELINE_ARCH=3]") == "fused-ws-split8"
    assert cg.plan_label("linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=4]") == "fused-ws-h"
    assert cg.plan_label("linear_attention[CHAIN_SPLIT=8, PIPELINE_ARCH=4]") == "fused-ws-h-split8"


def test_dry_run_declares_and_plans_every_cell():
    r = subprocess.run([sys.executable, os.path.join(BENCH, "compare.py"), "gdn", "--dry-run"], env=env_with_opgraph(),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert "15 cells, 0 declaration failures" in out
    blocks = out.split("\nCELL ")[1:]
    assert len(blocks) == 15
    for b in blocks:
        key = b.split()[0]
        declared = [ln for ln in b.splitlines() if ln.strip().startswith("DECLARED")]
        assert len(declared) == 1, b
        sides = [ln.split()[1] for ln in b.splitlines() if ln.strip().startswith("MAP")]
        if key.startswith("dec"):
            assert sides == ["ours", "fi", "copy", "fla"], b
            # one plan, the decode kernel; the pool is the final state (in place)
            assert declared[0].count("linear_attention[") == 1 and "decode=linear_attention" in declared[0]
            assert "overwrite_initial_state=True" in b and "gated_delta_rule_decode_pretranspose" in b
        else:
            assert sides == ["ours", "ours-bsig", "fla", "fi"], b
            # beta's logits under use_beta_sigmoid: PIPELINE_ARCH 4 (the fp16 inverse) first, at the span
            # (CHAIN_SPLIT) of ours' first plan
            bsig = [ln for ln in b.splitlines() if ln.strip().startswith("BSIG first plan")]
            assert len(bsig) == 1 and "PIPELINE_ARCH=4]" in bsig[0], b
            span = declared[0].split("CHAIN_SPLIT=")[1].split(",")[0]
            assert "fused-ws-h" in bsig[0] and "CHAIN_SPLIT=%s," % span in bsig[0], b
            assert "2p=linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=1]" in declared[0]
            assert "1p=linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=0]" in declared[0]
            assert "state_v_first=True" in b and "g = exp(ours' g)" in b
    # The chain-split rules pick splits for the one-sequence cells that leave SMs idle, and the heuristics list
    # those plans first, the warp-specialised fused one leading (the fused rule's span; the two-pass rule splits
    # only the 2/8 cell).
    two8 = next(b for b in blocks if b.startswith("2/8@1x32768"))
    assert ("our plans (sm_90, 132 SMs): fused-ws-split32=linear_attention[CHAIN_SPLIT=32, PIPELINE_ARCH=3], "
            "split64=linear_attention[CHAIN_SPLIT=64, PIPELINE_ARCH=1], "
            "fused-split32=linear_attention[CHAIN_SPLIT=32, PIPELINE_ARCH=2], 2p=") in two8
    assert "ANCHOR (2026-12-01, not same-run) fla 0.981 ms, FlashInfer 0.480 ms, FlashInfer without CP 1.409 ms" in two8
    for key, j in (("16/32@1x32768", 128), ("16/64@1x32768", 256)):
        cell = next(b for b in blocks if b.startswith(key))
        assert ("our plans (sm_90, 132 SMs): fused-ws-split%d=linear_attention[CHAIN_SPLIT=%d, PIPELINE_ARCH=3], "
                "fused-split%d=linear_attention[CHAIN_SPLIT=%d, PIPELINE_ARCH=2], "
                "fused-ws-h=linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=4], "
                "fused-ws=linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=3], "
                "fused=linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=2], 2p=" % (j, j, j, j)) in cell, key
    # A batch of several sequences that fills the device (the 4 x 8192 cells, the varlen batch): the compact-map split
    # at spans of 32 right after the unsplit fused plans (la_engine.h offers_adapt_split), and no other span.
    adapt = "fused-ws-split32=linear_attention[CHAIN_SPLIT=32, PIPELINE_ARCH=3]"
    for b in blocks:
        if not b.startswith(("2/8@", "16/32@1x32768", "16/64@1x32768")):
            assert "CHAIN_SPLIT=0, PIPELINE_ARCH=3" in b or b.startswith("dec"), b
            several = b.startswith(("16/64@4x8192", "16/32@4x8192", "16/32@varlen8x32768"))
            if several:
                assert "fused=linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=2], %s, 2p=" % adapt in b, b
            rest = b.replace(adapt, "") if several else b
            assert not any("CHAIN_SPLIT=%d," % j in rest for j in (8, 16, 32, 64, 128, 256)), b
    # The fused prefill's warp-specialised form (PIPELINE_ARCH 3) right before the eight-warp one (2), first from a
    # fifth of the SMs' worth of (sequence, head) CTAs: the 4 x 8192 cells and the 16/64 1 x 2048 cell; ahead of both
    # its fp16-inverse build's guarded form (PIPELINE_ARCH 4: l2norm in the kernel, beta given post-sigmoid).
    for key in ("16/64@4x8192", "16/32@4x8192", "16/64@1x2048"):
        cell = next(b for b in blocks if b.startswith(key))
        assert ("our plans (sm_90, 132 SMs): fused-ws-h=linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=4], "
                "fused-ws=linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=3], "
                "fused=linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=2], "
                + ("" if key == "16/64@1x2048" else adapt + ", ") + "2p=") in cell, key


@pytest.mark.parametrize("which", ["gdn", "gdn-bwd"])
def test_without_torch_it_names_what_is_missing(which):
    # torch made unimportable for the child process, whether or not it is installed here.
    code = ("import sys, importlib.abc\n"
            "class Block(importlib.abc.MetaPathFinder):\n"
            "    def find_spec(self, name, path, target=None):\n"
            "        if name == 'torch' or name.startswith('torch.'):\n"
            "            raise ImportError('No module named torch (blocked by the test)')\n"
            "sys.meta_path.insert(0, Block())\n"
            "sys.path.insert(0, %r)\n"
            "sys.argv = ['compare.py', %r, '--cells', '2/8']\n"
            "import runpy\n"
            "runpy.run_path(%r, run_name='__main__')\n") % (BENCH, which, os.path.join(BENCH, "compare.py"))
    r = subprocess.run([sys.executable, "-c", code], env=env_with_opgraph(), capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "compare.py %s: cannot run, missing: torch with CUDA" % which in r.stderr


def test_table_ratios_and_anchors(cg, capsys):
    cells = {c.key: c for c in cg.cells()}
    pre = cells["16/32@1x32768"]
    dec = cells["dec16/64@B256"]
    rows = [(pre, {"ours": 2.0, "ours-1p": 6.5, "ours-bsig": 0.8, "fla": 4.0, "fi": 1.0, "fi-nocp": 1.6},
             {"ours": (0, 0, True), "fla": (3e-3, 1e-3, True), "fi": (4e-3, 2e-3, True)}, "graph", "2p"),
            (dec, {"ours": 0.5, "fi": 0.4, "copy": 0.45}, {"ours": (0, 0, True), "fi": (1e-3, 1e-5, True)},
             "graph", "decode")]
    cg.print_tables(rows, ["x: example failure"])
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.startswith("16/32@1x32768"))
    f = line.split()
    # ours, bsig, fla, fi, fi-nocp, ours/fla, ours/fi, ours/nocp, bsig/fi
    assert f[1:10] == ["2.000", "0.800", "4.000", "1.000", "1.600", "0.500", "2.000", "1.250", "0.800"]
    assert "2.086 (anchor)" in line and "0.781 (anchor)" in line and "1.428 (anchor)" in line
    assert "ours[2p]=2.000 ours-1p=6.500 ours-bsig=0.800" in line
    dline = next(ln for ln in out.splitlines() if ln.startswith("dec16/64@B256"))
    d = dline.split()
    gbs = 2 * dec.state_bytes() / 0.5e-3 / 1e9
    assert d[1:5] == ["0.5000", "0.4000", "0.4500", "1.250"] and d[5] == "%.0f" % gbs and d[8] == "90.0%"
    assert "FAILED x: example failure" in out


def run_reference(g, pack):
    g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    g.build_plans()
    assert g.get_plan_name_at_index(g.get_selected_plan_index()).startswith("reference")
    g.execute(pack, np.empty(max(g.get_workspace_size(), 1), np.uint8))


def f32_graph():
    return opgraph.pygraph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)


def test_prefill_gate_mapping_linear_alpha_is_exp_of_ours(cg, rng):
    # FlashInfer's prefill g is the linear alpha; the benchmark hands it exp(g) of our log-space g.
    c = cg.Cell("prefill", 2, 4, (5, 0, 11))
    t, hv, d = c.t, c.hv, cg.D
    x = {"q": rng.standard_normal((t, 2, d)).astype(F32), "k": rng.standard_normal((t, 2, d)).astype(F32),
         "v": rng.standard_normal((t, hv, d)).astype(F32),
         "g": np.log(1 / (1 + np.exp(-rng.standard_normal((t, hv))))).astype(F32),
         "beta": (1 / (1 + np.exp(-rng.standard_normal((t, hv))))).astype(F32),
         "cu_seqlens": np.array([0, 5, 5, 16], np.int64),
         "h0": (0.1 * rng.standard_normal((c.n, hv, d, d))).astype(F32)}
    outs = []
    for domain in ("log", "linear"):
        vals = dict(x, g=np.exp(x["g"].astype(np.float64)).astype(F32) if domain == "linear" else x["g"])
        g = f32_graph()
        ports, o, fs = cg.declare(opgraph, g, c, vals, io="f32", gate_domain=domain)
        g.validate()
        out_o = np.full(o.dims, np.nan, F32)
        out_s = np.full(fs.dims, np.nan, F32)
        pack = {ports[p]: vals[n] for (p, n, _, _) in cg.operands(c)}
        pack.update({o: out_o, fs: out_s})
        run_reference(g, pack)
        outs.append((out_o, out_s))
    assert np.isfinite(outs[0][0]).all() and np.isfinite(outs[0][1]).all()
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_decode_gate_mapping_is_flashinfers_formula(cg, rng):
    # FlashInfer's decode computes g = -exp(A_log) softplus(a + dt_bias) and beta = sigmoid(b) itself; ours
    # declares the same with safe_gate + use_beta_sigmoid. Same result as the plain log gate and beta so formed,
    # and the pool is updated in place through state_indices.
    c = cg.Cell("decode", 2, 4, batch=3)
    n, hv, d = c.n, c.hv, cg.D
    x = {"q": rng.standard_normal((n, 2, d)).astype(F32), "k": rng.standard_normal((n, 2, d)).astype(F32),
         "v": rng.standard_normal((n, hv, d)).astype(F32), "a": rng.standard_normal((n, hv)).astype(F32),
         "b": rng.standard_normal((n, hv)).astype(F32), "cu_seqlens": np.arange(n + 1, dtype=np.int64),
         "state_indices": np.array([2, 0, 1], np.int32),
         "A_log": np.log(rng.uniform(1, 16, hv)).astype(F32), "dt_bias": (0.5 * rng.standard_normal(hv)).astype(F32)}
    pool0 = (0.1 * rng.standard_normal((n, hv, d, d))).astype(F32)

    pool = pool0.copy()
    g = f32_graph()
    ports, o, fs = cg.declare(opgraph, g, c, dict(x, pool=pool), io="f32")
    g.validate()
    out_o = np.full(o.dims, np.nan, F32)
    pack = {ports[p]: (pool if nm == "pool" else x[nm]) for (p, nm, _, _) in cg.operands(c)}
    pack.update({o: out_o, fs: pool})  # one buffer for initial and final state: in place
    run_reference(g, pack)

    a64 = x["a"].astype(np.float64) + x["dt_bias"]
    g_log = (-np.exp(x["A_log"].astype(np.float64)) * np.logaddexp(0, a64)).astype(F32)
    beta = (1 / (1 + np.exp(-x["b"].astype(np.float64)))).astype(F32)
    plain = cg.Cell("prefill", 2, 4, (1,) * n)  # same operands without the safe gate: T = N tokens, one a sequence
    h0 = pool0[x["state_indices"]]
    vals = {"q": x["q"], "k": x["k"], "v": x["v"], "g": g_log, "beta": beta, "cu_seqlens": x["cu_seqlens"], "h0": h0}
    g2 = f32_graph()
    ports2, o2, fs2 = cg.declare(opgraph, g2, plain, vals, io="f32")
    g2.validate()
    ref_o = np.full(o2.dims, np.nan, F32)
    ref_s = np.full(fs2.dims, np.nan, F32)
    pack2 = {ports2[p]: vals[nm] for (p, nm, _, _) in cg.operands(plain)}
    pack2.update({o2: ref_o, fs2: ref_s})
    run_reference(g2, pack2)

    np.testing.assert_allclose(out_o, ref_o, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(pool[x["state_indices"]], ref_s, rtol=1e-5, atol=1e-5)
    assert not np.allclose(pool, pool0)  # the pool was written


# ---- bench/compare.py gdn-bwd (bench/compare_gdn_bwd.py): gdn backward against fla (bench/run.sh
# gdn-bwd-peers): the cells, --dry-run (each cell's gdn_bwd declared through the binding and planned for an
# sm_90 target without a device, the linear_attention engine first) and the tolerances.

@pytest.fixture(scope="module")
def cb():
    sys.path.insert(0, BENCH)
    try:
        import compare_gdn_bwd as mod
    finally:
        sys.path.remove(BENCH)
    return mod


def test_cells_are_the_issues_five_and_a_varlen_batch(cb):
    keys = [c.key for c in cb.cells()]
    assert keys == ["16/64@4x8192", "16/64@1x32768", "16/32@4x8192", "16/32@1x32768", "2/8@1x32768",
                    "16/32@varlen8x32768", "16/32@varlen4x32768"]
    assert set(cb.ANCHORS) == set(keys[:5]) and set(cb.PUBLISHED) <= set(keys)
    # the issue's fla anchors: backward alone, then forward + backward
    assert cb.ANCHORS["16/64@4x8192"] == (9.922, 13.139) and cb.ANCHORS["2/8@1x32768"] == (2.709, 3.633)
    assert [c.key for c in cb.select(cb.cells(), "varlen")] == ["16/32@varlen8x32768", "16/32@varlen4x32768"]
    # FlashQLA's "32k_4seq" batch: its lengths (seed 42), 32768 tokens, the longest 215 chunks
    assert cb.FLASHQLA_VARLEN == (7212, 7072, 13725, 4759) and sum(cb.FLASHQLA_VARLEN) == 32768
    # twice fla's tolerances against the exact result for the check of fla against ours
    assert all(cb.TOL[n] == 3e-2 for n in ("dq", "dk", "dv", "dh0")) and cb.TOL["dg"] == cb.TOL["dbeta"] == 6e-2


def test_dry_run_declares_every_cell_on_our_gpu_gdn_bwd():
    r = subprocess.run([sys.executable, os.path.join(BENCH, "compare.py"), "gdn-bwd", "--dry-run"],
                       env=env_with_opgraph(), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert "7 cells, 0 declaration failures" in out
    blocks = out.split("\nCELL ")[1:]
    assert len(blocks) == 7
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
        if key == "16/32@varlen4x32768":
            assert "PUBLISHED FlashQLA backward 2.978 ms" in b
        if key.startswith("16/64@4x8192"):
            assert "dq [32768, 16, 128] dg [32768, 64] dh0 [4, 64, 128, 128]" in declared[0]


def test_process_per_cell_hands_each_cells_row_back(cb, tmp_path):
    # --process-per-cell (an 80 GB card ran out of device memory across cells in one process): a child per cell,
    # --cells <its key> with the parent's options, its rows and failures handed back as JSON and mapped to cells.
    args = cb.parse(["--process-per-cell", "--rounds", "7", "--mode", "bwd"])
    assert args.process_per_cell and args.rounds == 7
    c = cb.cells()[3]
    cmd = cb.child_command(args, c, str(tmp_path / "row.json"))
    assert cmd[1].endswith("compare_gdn_bwd.py")
    assert cmd[2:] == ["--cells", "16/32@1x32768", "--rounds", "7", "--mode", "bwd", "--row-json",
                       str(tmp_path / "row.json")]
    # the key selects exactly that cell: no key is a substring of another
    for cell in cb.cells():
        assert [x.key for x in cb.select(cb.cells(), cell.key)] == [cell.key]
    row = {"cell": c, "checks": {"dq": 5e-3}, "bwd": ({"ours": 5.0, "fla": 6.0}, "profiler")}
    data = json.loads(json.dumps({"rows": [cb.row_to_json(row)], "failed": ["x: y"]}))
    rows, failed = cb.rows_from_json(data, cb.cells())
    assert failed == ["x: y"] and len(rows) == 1
    assert rows[0]["cell"] is not c and rows[0]["cell"].key == c.key
    assert rows[0]["bwd"] == ({"ours": 5.0, "fla": 6.0}, "profiler") and rows[0]["checks"] == {"dq": 5e-3}
    assert cb.rows_from_json({}, cb.cells()) == ([], [])
    assert not cb.parse([]).process_per_cell or os.environ.get("OPGRAPH_GDN_BWD_PROCESS_PER_CELL") == "1"
