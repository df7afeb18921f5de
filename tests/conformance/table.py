#!/usr/bin/env python3
"""Prints the conformance table of two runs of cudnn-frontend's Python tests: one with the real
`cudnn` wheel, one with the alias package over opgraph (tests/conformance/cudnn_fe.sh).

    python3 table.py REAL OPGRAPH [NOTES.tsv]

Each input is the outcome file conformance_select.py writes (.tsv: "id<TAB>outcome" lines) or a
pytest --junitxml file (.xml). Per test file: passed / failed / skipped for each run
(an error counts as failed); then every test id that passes with the real wheel and does not
pass with opgraph, each with its opgraph outcome and, when NOTES.tsv names it, why (a test that
needs what only the real cuDNN backend gives says so there; lines "id-prefix<TAB>reason"); then
every id that fails with opgraph where the real wheel skipped it (opgraph should decline where
cudnn does). A skip's reason, where the outcome file records one, follows the id.
Exit status: 0 when no id passes with the real wheel only, 1 otherwise.
"""
import sys
import xml.etree.ElementTree as ET
from collections import OrderedDict

OUTCOMES = ("passed", "failed", "skipped")


def read(path):
    """{test id: outcome} from an outcome file (.tsv) or a junit xml file; the id is
    'file.py::name[params]' (or 'file.py::Class::name')."""
    if not path.endswith(".xml"):
        return read_tsv(path)
    out = OrderedDict()
    for case in ET.parse(path).getroot().iter("testcase"):
        classname, name = case.get("classname", ""), case.get("name", "")
        parts = classname.split(".")
        # pytest writes classname 'test_x' or 'test_x.TestClass'; the file is the first part
        file = parts[0] + ".py"
        test_id = "::".join([file] + parts[1:] + [name])
        if case.find("failure") is not None or case.find("error") is not None:
            outcome = "failed"
        elif case.find("skipped") is not None:
            outcome = "skipped"
        else:
            outcome = "passed"
        out[test_id] = outcome
    return out


def read_tsv(path):
    """{test id: outcome} from conformance_select.py's log ("start" and "#done" lines skipped)."""
    out = OrderedDict()
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 2 and parts[0] != "start" and not parts[0].startswith("#"):
                out[parts[0]] = parts[1] if parts[1] in OUTCOMES else "failed"
    return out


def read_reasons(path):
    """{test id: skip reason} from conformance_select.py's log (a third column); {} for junit xml."""
    out = {}
    if not path or path.endswith(".xml"):
        return out
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 3 and parts[0] != "start" and not parts[0].startswith("#") and parts[1] == "skipped":
                out[parts[0]] = parts[2]
    return out


def read_notes(path):
    notes = []
    if not path:
        return notes
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            prefix, _, reason = line.partition("\t")
            notes.append((prefix, reason))
    return notes


def note_for(test_id, notes):
    return next((reason for prefix, reason in notes if test_id.startswith(prefix)), "")


def table(real, ours, notes=(), real_reasons=None, our_reasons=None):
    """The table's lines and the ids that pass with the real wheel only. *_reasons: {id: skip
    reason} of each run (read_reasons), printed after a skipped id."""
    real_reasons, our_reasons = real_reasons or {}, our_reasons or {}
    files = OrderedDict()
    for results, side in ((real, 0), (ours, 1)):
        for test_id, outcome in results.items():
            counts = files.setdefault(test_id.split("::", 1)[0], [dict.fromkeys(OUTCOMES, 0) for _ in range(2)])
            counts[side][outcome] += 1
    lines = [f"{'file':40} {'real p/f/s':>14} {'opgraph p/f/s':>14}"]
    total = [dict.fromkeys(OUTCOMES, 0) for _ in range(2)]
    for file, counts in sorted(files.items()):
        cells = []
        for side in range(2):
            c = counts[side]
            for k in OUTCOMES:
                total[side][k] += c[k]
            cells.append("/".join(str(c[k]) for k in OUTCOMES))
        lines.append(f"{file:40} {cells[0]:>14} {cells[1]:>14}")
    lines.append(f"{'total':40} {'/'.join(str(total[0][k]) for k in OUTCOMES):>14} "
                 f"{'/'.join(str(total[1][k]) for k in OUTCOMES):>14}")
    regressions = [t for t, o in real.items() if o == "passed" and ours.get(t) != "passed"]
    lines.append("")
    lines.append(f"passing with the real wheel, not with opgraph: {len(regressions)}")
    for t in regressions:
        why = note_for(t, notes)
        skip = f"  (opgraph skip: {our_reasons[t]})" if t in our_reasons else ""
        lines.append(f"  {t}  [{ours.get(t, 'not run')}]{skip}" + (f"  -- {why}" if why else ""))
    declined = [t for t, o in real.items() if o == "skipped" and ours.get(t) == "failed"]
    lines.append("")
    lines.append(f"failing with opgraph, skipped with the real wheel: {len(declined)}")
    for t in declined:
        skip = f"  (real skip: {real_reasons[t]})" if t in real_reasons else ""
        why = note_for(t, notes)
        lines.append(f"  {t}{skip}" + (f"  -- {why}" if why else ""))
    return lines, regressions


def main(argv):
    if len(argv) not in (3, 4):
        sys.exit("usage: table.py REAL OPGRAPH [NOTES.tsv]  (outcome .tsv or junit .xml files)")
    lines, regressions = table(read(argv[1]), read(argv[2]), read_notes(argv[3] if len(argv) == 4 else None),
                               read_reasons(argv[1]), read_reasons(argv[2]))
    print("\n".join(lines))
    return 1 if regressions else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
