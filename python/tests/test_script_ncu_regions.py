"""scripts/ncu_sass_regions.py (the per-region instruction and stall breakdown of an exported ncu SASS page),
checked on a small synthetic export: regions split at BAR.SYNC, counts divided by --per, opcodes with and
without predicates, stall shares, and the folding of small regions."""
import csv
import os
import subprocess
import sys

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "ncu_sass_regions.py")
HDR = ["Address", "Source", "Warp Stall Sampling (All Samples)", "Warp Stall Sampling (Not-issued Samples)",
       "Instructions Executed", "stall_barrier", "stall_short_sb", "stall_wait", "stall_barrier (Not Issued)"]


# A barrier-split page: LDS, a predicated FFMA, BAR.SYNC, HGMMA, EXIT.
ROWS = [
    ["0x0", "  LDS R1, [R2]", "10", "9", "400", "0", "8", "1", "0"],
    ["0x10", "@P0 FFMA R3, R1, R1, R3", "6", "5", "1,200", "0", "0", "6", "0"],
    ["0x20", "  BAR.SYNC.DEFER_BLOCKING 0x0", "20", "20", "400", "20", "0", "0", "20"],
    ["0x30", "  HGMMA.64x64x16.F32.BF16 R0, gdesc[UR4], RZ", "4", "2", "800", "0", "0", "4", "0"],
    ["0x40", "  EXIT", "0", "0", "4", "0", "0", "0", "0"],
]


def write(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["Kernel Name", "k", ""])
        w.writerow(HDR)
        for r in rows:
            w.writerow(r)


def run(path, *args):
    out = subprocess.run([sys.executable, SCRIPT, path, *args], capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def test_regions_split_at_barriers_and_scaled(tmp_path):
    p = str(tmp_path / "sass.csv")
    write(p, ROWS)
    lines = run(p, "--per", "4", "--min-inst", "0")
    assert lines[0].startswith("total: 701 instructions per unit, 40 stall samples, 2 regions")
    # region 0: LDS + FFMA + BAR = 2000 / 4 = 500; 36 of 40 samples
    assert lines[1].split()[:2] == ["R0", "500"] and "90.0% samples" in lines[1]
    assert "FFMA:300" in lines[2] and "LDS:100" in lines[2] and "BAR:100" in lines[2]
    assert lines[3].split()[1].startswith("barrier:50.0%")  # 20 of 40 samples, the largest reason
    # region 1: HGMMA + EXIT = 804 / 4 = 201
    assert lines[4].split()[:2] == ["R1", "201"] and "HGMMA:200" in lines[5]


def test_small_regions_fold_away(tmp_path):
    p = str(tmp_path / "sass.csv")
    write(p, [
        ["0x0", "  IADD3 R1, R1, 1, RZ", "0", "0", "8", "0", "0", "0", "0"],
        ["0x10", "  BAR.SYNC 0x0", "0", "0", "8", "0", "0", "0", "0"],
        ["0x20", "  FADD R2, R2, R2", "50", "40", "4000", "0", "30", "20", "0"],
    ])
    lines = run(p, "--per", "8")
    assert lines[0].startswith("total: 502 instructions per unit, 50 stall samples, 2 regions")
    assert not any(line.startswith("R0 ") for line in lines)  # 2 per unit, no samples: folded
    assert any(line.startswith("R1 ") and " 500 inst" in line for line in lines)


def test_ranges_and_landmarks(tmp_path):
    p = str(tmp_path / "sass.csv")
    write(p, ROWS[:4] + [["0x40", "  MUFU.EX2 R5, R6", "0", "0", "4", "0", "0", "0", "0"]])
    lines = run(p, "--landmarks")
    # rows of the barrier, the wgmma and the ex2, with their samples and executions
    assert [ln.split()[0] for ln in lines] == ["2", "3", "4"]
    assert "BAR.SYNC" in lines[0] and "samples     20" in lines[0] and lines[0].endswith("executed 400")
    lines = run(p, "--per", "4", "--ranges", "0:2:head,2:5:tail")
    assert lines[0].split()[:5] == ["head", "[", "0,", "2)", "400.0"]  # (400 + 1200) / 4
    assert "40.0% samples" in lines[0] and "short_sb:20.0%" in lines[0]
    assert lines[1].split()[0] == "tail" and "301.0 inst" in lines[1] and "60.0% samples" in lines[1]
