"""The CPU paths of tests/conformance/cudnn_fe.sh: the alias package it generates is imports only
and gives opgraph's objects under the name `cudnn`; the id selection is deterministic; the table
counts per file and lists what passes with the real wheel only; --dry-run checks the checkout
(release pin, outside our tree, files present) and lists what it would run."""
import ast
import os
import subprocess
import sys
import textwrap

import pytest

import opgraph

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CONF = os.path.join(REPO, "tests", "conformance")
sys.path.insert(0, CONF)
import make_alias  # noqa: E402
import select_ids  # noqa: E402
import table  # noqa: E402

OPGRAPH_PATH = os.path.dirname(os.path.dirname(os.path.abspath(opgraph.__file__)))


def test_the_alias_package_is_imports_only(tmp_path):
    pkg = make_alias.write(str(tmp_path))
    names = sorted(os.listdir(pkg))
    assert names == ["__init__.py", "_compiled_module.py"]
    for name in names:
        tree = ast.parse(open(os.path.join(pkg, name)).read())
        kinds = {type(node).__name__ for node in tree.body}
        assert kinds <= {"Import", "ImportFrom"}, (name, kinds)


def test_the_alias_gives_opgraphs_objects_under_the_name_cudnn(tmp_path):
    make_alias.write(str(tmp_path))
    code = textwrap.dedent("""
        import numpy as np
        import cudnn, opgraph
        assert cudnn.pygraph is opgraph.pygraph
        assert cudnn._compiled_module.data_type is opgraph.data_type
        assert cudnn.backend_version is opgraph.backend_version
        assert cudnn.__version__ == opgraph.__version__
        for name in ("jit", "graph", "graph_cache", "create_kernel_cache", "create_device_properties",
                     "get_last_error_string", "backend_version_string", "cudnnGraphNotSupportedError"):
            assert getattr(cudnn, name) is getattr(opgraph, name), name
        # a cudnn-style graph through the alias, on host buffers
        g = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT, compute_data_type=cudnn.data_type.FLOAT)
        x = np.arange(-3, 3, dtype=np.float32).reshape(2, 3)
        X = g.tensor(name="X", dim=[2, 3], stride=[3, 1], data_type=cudnn.data_type.FLOAT, uid=0)
        Y = g.relu(name="relu", input=X)
        Y.set_output(True).set_uid(1)
        g.validate(); g.build_operation_graph()
        g.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
        g.check_support(); g.build_plans()
        y = np.full_like(x, np.nan)
        g.execute({0: x, 1: y, None: None}, None)
        assert (y == np.maximum(x, 0)).all()
        print("ok")
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), OPGRAPH_PATH]))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_id_selection_keeps_small_files_and_samples_big_ones_deterministically():
    ids = [f"test_rmsnorm.py::test_a[{i}]" for i in range(5)]
    ids += [f"test_mhas.py::test_sdpa[cfg{i:03d}]" for i in range(100)]
    ids += ["test_conv_fuzzer.py::test_x", "not an id", "test_slice.py::test_int8"]
    chosen = select_ids.choose(ids, 10)
    assert [t for t in chosen if t.startswith("test_rmsnorm")] == sorted(ids[:5])
    mhas = [t for t in chosen if t.startswith("test_mhas")]
    assert len(mhas) == 10 and mhas[0] == "test_mhas.py::test_sdpa[cfg000]"
    # the order of collection does not matter
    assert mhas == [t for t in select_ids.choose(list(reversed(ids)), 10) if t.startswith("test_mhas")]
    assert "test_conv_fuzzer.py::test_x" not in chosen  # out of scope
    assert "test_slice.py::test_int8" in chosen
    assert len(select_ids.IN_SCOPE) == 21 and set(select_ids.BIG) <= set(select_ids.IN_SCOPE)


def junit(path, cases):
    rows = []
    for classname, name, outcome in cases:
        inner = {"passed": "", "failed": "<failure message='x'/>", "error": "<error message='x'/>",
                 "skipped": "<skipped message='x'/>"}[outcome]
        rows.append(f'<testcase classname="{classname}" name="{name}">{inner}</testcase>')
    path.write_text(f'<testsuites><testsuite name="pytest">{"".join(rows)}</testsuite></testsuites>')
    return str(path)


def test_table_counts_per_file_and_lists_what_passes_only_with_the_real_wheel(tmp_path):
    real = junit(tmp_path / "real.xml", [("test_slice", "test_a", "passed"), ("test_slice", "test_b", "passed"),
                                         ("test_mhas", "test_s[1]", "passed"), ("test_mhas", "test_s[2]", "skipped"),
                                         ("test_mhas.TestX", "test_c", "passed")])
    ours = junit(tmp_path / "ours.xml", [("test_slice", "test_a", "passed"), ("test_slice", "test_b", "error"),
                                         ("test_mhas", "test_s[1]", "skipped"), ("test_mhas", "test_s[2]", "failed"),
                                         ("test_mhas.TestX", "test_c", "passed")])
    notes = tmp_path / "notes.tsv"
    notes.write_text("# comment\ntest_mhas.py::test_s\tneeds cuDNN 9.9's paged SDPA\n")
    lines, regressions = table.table(table.read(real), table.read(ours), table.read_notes(str(notes)))
    assert regressions == ["test_slice.py::test_b", "test_mhas.py::test_s[1]"]
    text = "\n".join(lines)
    assert "test_mhas.py" in text and "test_slice.py" in text
    row = next(line for line in lines if line.startswith("test_mhas.py"))
    assert row.split()[1:] == ["2/0/1", "1/1/1"]
    assert "test_mhas.py::test_s[1]  [skipped]  -- needs cuDNN 9.9's paged SDPA" in text
    declined = text.split("failing with opgraph, skipped with the real wheel: 1\n", 1)[1]
    assert declined.startswith("  test_mhas.py::test_s[2]")
    assert "test_mhas.py::TestX::test_c" in table.read(real)
    assert table.main(["table.py", real, ours]) == 1
    assert table.main(["table.py", real, real]) == 0


def fake_checkout(root, version="1.23.0", drop=None):
    tests = root / "test" / "python"
    tests.mkdir(parents=True)
    for name in ("conftest.py", "pytest.ini") + select_ids.IN_SCOPE:
        if name != drop:
            (tests / name).write_text("")
    major, minor, patch = version.split(".")
    (root / "include").mkdir()
    (root / "include" / "cudnn_frontend_version.h").write_text(
        f"#define CUDNN_FRONTEND_MAJOR_VERSION {major}\n#define CUDNN_FRONTEND_MINOR_VERSION {minor}\n"
        f"#define CUDNN_FRONTEND_PATCH_VERSION {patch}\n")
    return root


def run_sh(*args):
    return subprocess.run(["bash", os.path.join(CONF, "cudnn_fe.sh"), "--python", sys.executable, *args],
                          capture_output=True, text=True, timeout=120)


def test_dry_run_lists_what_it_would_run(tmp_path):
    fe = fake_checkout(tmp_path / "fe")
    r = run_sh("--fe", str(fe), "--out", str(tmp_path / "out"), "--dry-run")
    assert r.returncode == 0, r.stderr
    assert "cudnn-frontend 1.23.0" in r.stdout
    for name in select_ids.IN_SCOPE:
        assert f"  {name}\n" in r.stdout
    assert "make_alias.py" in r.stdout and "table.py" in r.stdout
    assert "OPGRAPH_BINDING=cudnn" in r.stdout  # opgraph's run binds as cuDNN does by default
    assert not (tmp_path / "out").exists()  # a dry run writes nothing
    r = run_sh("--fe", str(fe), "--binding", "strict", "--dry-run")
    assert r.returncode == 0 and "OPGRAPH_BINDING=strict" in r.stdout, r.stderr
    r = run_sh("--fe", str(fe), "--binding", "loose", "--dry-run")
    assert r.returncode == 2 and "--binding must be cudnn or strict" in r.stderr


@pytest.mark.parametrize("case", ["wrong release", "missing file", "inside the tree", "no checkout"])
def test_dry_run_refuses_a_checkout_it_cannot_use(tmp_path, case):
    if case == "wrong release":
        fe, want = fake_checkout(tmp_path / "fe", version="1.22.1"), "pinned to 1.23.0"
    elif case == "missing file":
        fe, want = fake_checkout(tmp_path / "fe", drop="test_mhas.py"), "test_mhas.py"
    elif case == "inside the tree":
        fe, want = REPO, "inside this repository"
    else:
        fe, want = tmp_path / "nothing", "no such folder"
    r = run_sh("--fe", str(fe), "--dry-run")
    assert r.returncode == 2 and want in r.stderr, r.stderr


def test_a_whole_run_on_a_stand_in_checkout_and_wheel(tmp_path):
    # The script end to end on this machine: a stand-in cudnn-frontend checkout whose tests use
    # two names, a stand-in "real wheel" that has both, opgraph through the alias that has one.
    fe = fake_checkout(tmp_path / "fe")
    tests = fe / "test" / "python"
    (tests / "pytest.ini").write_text("[pytest]\nmarkers =\n    L0: level 0\naddopts = -m L0\n")
    (tests / "conftest.py").write_text("import cudnn\n")
    (tests / "test_slice.py").write_text(textwrap.dedent("""
        import pytest
        import cudnn
        import a_test_dependency  # from --real-site, on both runs

        @pytest.mark.L0
        def test_version_string():
            assert cudnn.backend_version_string().count(".") == 2

        @pytest.mark.L0
        def test_only_the_real_wheel_has_this():
            assert cudnn.a_name_only_the_real_wheel_has() == 1

        @pytest.mark.L0
        @pytest.mark.parametrize("n", [1, 2])
        def test_pygraph(n):
            assert hasattr(cudnn, "pygraph")

        def test_not_l0():
            pass
    """))
    real_site = tmp_path / "site" / "cudnn"
    real_site.mkdir(parents=True)
    (tmp_path / "site" / "a_test_dependency.py").write_text("")
    (real_site / "__init__.py").write_text(
        "def backend_version_string():\n    return '9.19.0'\n\n"
        "def a_name_only_the_real_wheel_has():\n    return 1\n\npygraph = object\n")
    out = tmp_path / "out"
    r = run_sh("--fe", str(fe), "--real-site", str(tmp_path / "site"), "--opgraph-path", OPGRAPH_PATH,
               "--out", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    ids = (out / "ids.txt").read_text().split()
    assert ids == sorted(["test_slice.py::test_only_the_real_wheel_has_this", "test_slice.py::test_pygraph[1]",
                          "test_slice.py::test_pygraph[2]", "test_slice.py::test_version_string"])
    text = (out / "table.txt").read_text()
    row = next(line for line in text.splitlines() if line.startswith("test_slice.py"))
    assert row.split()[1:] == ["4/0/0", "3/1/0"]
    assert "passing with the real wheel, not with opgraph: 1" in text
    assert "test_slice.py::test_only_the_real_wheel_has_this  [failed]" in text
    assert (out / "alias" / "cudnn" / "__init__.py").exists()
    assert "== opgraph: PYTHONPATH=" in r.stdout and "OPGRAPH_BINDING=cudnn" in r.stdout


def test_a_session_that_ends_the_process_is_resumed_past_that_test(tmp_path):
    # cudnn-frontend's conftest calls os._exit on a CUDA error: the run records the test that was
    # running as failed and runs the rest in a new session; real and opgraph outcomes both count.
    fe = fake_checkout(tmp_path / "fe")
    tests = fe / "test" / "python"
    (tests / "pytest.ini").write_text("[pytest]\nmarkers =\n    L0: level 0\naddopts = -m L0\n")
    (tests / "conftest.py").write_text("import cudnn\n")
    (tests / "test_slice.py").write_text(textwrap.dedent("""
        import os
        import pytest
        import cudnn

        @pytest.mark.L0
        @pytest.mark.parametrize("n", [1, 2, 3, 4])
        def test_n(n):
            if n == 2 and not hasattr(cudnn, "only_real"):
                os._exit(70)
            if n == 3:
                pytest.skip("skipped on both")

        @pytest.mark.L0
        def test_z():
            pass
    """))
    site = tmp_path / "site" / "cudnn"
    site.mkdir(parents=True)
    (site / "__init__.py").write_text("only_real = 1\n")
    out = tmp_path / "out"
    r = run_sh("--fe", str(fe), "--real-site", str(tmp_path / "site"), "--opgraph-path", OPGRAPH_PATH,
               "--out", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    ours = table.read(str(out / "opgraph.tsv"))
    assert ours == {"test_slice.py::test_n[1]": "passed", "test_slice.py::test_n[2]": "failed",
                    "test_slice.py::test_n[3]": "skipped", "test_slice.py::test_n[4]": "passed",
                    "test_slice.py::test_z": "passed"}
    assert "2 pytest session(s)" in r.stdout
    assert "test_slice.py::test_n[3]\tskipped\tskipped on both\n" in (out / "opgraph.tsv").read_text()
    text = (out / "table.txt").read_text()
    row = next(line for line in text.splitlines() if line.startswith("test_slice.py"))
    assert row.split()[1:] == ["4/0/1", "3/1/1"]
    assert "test_slice.py::test_n[2]  [failed]" in text


def test_skip_reasons_follow_the_ids(tmp_path):
    real, ours = tmp_path / "real.tsv", tmp_path / "ours.tsv"
    real.write_text("a.py::t1\tpassed\na.py::t2\tskipped\tGraph not supported: overrides\n")
    ours.write_text("a.py::t1\tskipped\tTEST WAIVED: unsupported graph.\na.py::t2\tfailed\n#done\t1\n")
    assert table.read_reasons(str(ours)) == {"a.py::t1": "TEST WAIVED: unsupported graph."}
    lines, _ = table.table(table.read(str(real)), table.read(str(ours)), (), table.read_reasons(str(real)),
                           table.read_reasons(str(ours)))
    assert "  a.py::t1  [skipped]  (opgraph skip: TEST WAIVED: unsupported graph.)" in lines
    assert "  a.py::t2  (real skip: Graph not supported: overrides)" in lines


def test_the_outcome_log_reads_back(tmp_path):
    log = tmp_path / "x.tsv"
    log.write_text("start\ta.py::t1\na.py::t1\tpassed\nstart\ta.py::t2\na.py::t2\tfailed\tthe process ended\n"
                   "start\ta.py::t3\n#done\t1\n")
    assert table.read(str(log)) == {"a.py::t1": "passed", "a.py::t2": "failed"}
    import conformance_select
    outcomes, crashed, done = conformance_select.read_log(str(log))
    assert crashed == ["a.py::t3"] and done and outcomes["a.py::t2"] == "failed"
