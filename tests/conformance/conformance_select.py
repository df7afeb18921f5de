"""A pytest plugin (-p conformance_select) that keeps only the test ids listed in the file
$OPGRAPH_CONFORMANCE_IDS (one id a line, as select_ids.py writes them). It deselects; it
changes nothing else about the tests or their conftest."""
import os


def pytest_collection_modifyitems(config, items):
    path = os.environ.get("OPGRAPH_CONFORMANCE_IDS")
    if not path:
        return
    with open(path) as f:
        wanted = {line.strip() for line in f if line.strip()}
    keep, drop = [], []
    for item in items:
        (keep if item.nodeid in wanted else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep
