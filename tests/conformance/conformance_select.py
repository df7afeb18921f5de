"""A pytest plugin (-p conformance_select) for tests/conformance/cudnn_fe.sh. It changes nothing
about the tests or their conftest; it only chooses which run and records how each ended.

OPGRAPH_CONFORMANCE_IDS  a file of test ids (one a line, as select_ids.py writes them): only
                         those run (the others are deselected).
OPGRAPH_CONFORMANCE_LOG  a file the outcome of each test is appended to as it finishes, one line
                         "id<TAB>passed|failed|skipped" (a skip adds "<TAB>reason", the message
                         pytest.skip was given, so a waive shows why), and "start<TAB>id" before it starts,
                         "#done<TAB>exit status" when the session ends. Ids the file already holds
                         an outcome for are not run again, and a test that started and has no
                         outcome (it ended the process: cudnn-frontend's conftest calls os._exit on
                         a CUDA error) is recorded as failed. So a session that died is resumed by
                         running pytest again with the same file (cudnn_fe.sh does).
"""
import os

_phases = {}


def _log_path():
    return os.environ.get("OPGRAPH_CONFORMANCE_LOG")


def _append(line):
    path = _log_path()
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")


def read_log(path):
    """({id: outcome}, [ids started without an outcome], done?) from a log file."""
    outcomes, started, done = {}, [], False
    if not path or not os.path.exists(path):
        return outcomes, started, done
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if parts[0] == "#done":
                done = True
            elif parts[0] == "start" and len(parts) >= 2:
                started.append(parts[1])
            elif len(parts) >= 2:
                outcomes[parts[0]] = parts[1]
    return outcomes, [t for t in started if t not in outcomes], done


def pytest_collection_modifyitems(config, items):
    path = os.environ.get("OPGRAPH_CONFORMANCE_IDS")
    wanted = None
    if path:
        with open(path) as f:
            wanted = {line.strip() for line in f if line.strip()}
    outcomes, crashed, _ = read_log(_log_path())
    for t in crashed:
        _append(f"{t}\tfailed\tthe process ended during this test")
        outcomes[t] = "failed"
    keep, drop = [], []
    for item in items:
        ok = (wanted is None or item.nodeid in wanted) and item.nodeid not in outcomes
        (keep if ok else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep


def pytest_runtest_logstart(nodeid, location):
    _append(f"start\t{nodeid}")


_reasons = {}


def _skip_reason(report):
    """The message of a skip (pytest's longrepr is (file, line, 'Skipped: message')), one line."""
    r = report.longrepr
    text = r[2] if isinstance(r, tuple) and len(r) == 3 else str(r or "")
    if text.startswith("Skipped: "):
        text = text[len("Skipped: "):]
    return " ".join(text.split())[:300]


def pytest_runtest_logreport(report):
    phases = _phases.setdefault(report.nodeid, [])
    phases.append("failed" if report.failed else "skipped" if report.skipped else "passed")
    if report.skipped and report.nodeid not in _reasons:
        _reasons[report.nodeid] = _skip_reason(report)
    if report.when == "teardown":
        del _phases[report.nodeid]
        reason = _reasons.pop(report.nodeid, "")
        outcome = "failed" if "failed" in phases else "skipped" if "skipped" in phases else "passed"
        _append(f"{report.nodeid}\t{outcome}" + (f"\t{reason}" if outcome == "skipped" and reason else ""))


def pytest_sessionfinish(session, exitstatus):
    _append(f"#done\t{int(exitstatus)}")
