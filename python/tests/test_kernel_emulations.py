"""The float64 emulations of the fused prefill's lane-level arithmetic (scripts/emulate_*.py) run here, where
numpy is installed with the binding: each exits 1 when the emulated kernel's result leaves the exact one.
scripts/emulate_ws3_inverse.py: the R3 inverse (GDN_WS3_MERGE2's shuffles, GDN_WS3_DIAG8's 8 x 8 blocks and
their merge, the default 16 x 16 blocks' four-column reads) at both row strides (GDN_WS3_LD 65, 68), unwritten entries
poisoned. scripts/emulate_bwd_fused_recompute.py: the tiles the backward's fused forward recompute (gdn_bwd_fwd_fused)
writes from the rows as loaded and its folded factors, against the ones gdn_bwd_prep and gdn_bwd_fwd_scan write from
the normalised rows, over chunks with a short last one. scripts/emulate_bwd_grads_addr.py: the grads kernel's address
identities under GDN_BWD_WG_ADDR (fragment offsets, cp.async pieces, wgmma descriptors) against the engine's forms,
exhaustively in integers. scripts/emulate_bwd_fwd_stage.py: gdn_bwd_fwd_fused's staged S^T and Wn stores under
GDN_BWD_FWD_STAGE (stmatrix into the panel, 16-byte reads out), lane by lane, against the 4-byte stores' map."""
import os
import subprocess
import sys

import pytest

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts")


@pytest.mark.parametrize("ldf", ["65", "68"])
def test_ws3_inverse_emulation(ldf):
    out = subprocess.run([sys.executable, os.path.join(SCRIPTS, "emulate_ws3_inverse.py"), ldf],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    # 16 x 16, 8 x 8 (DIAG8), and at a row stride of a multiple of 4 the four-column reads (R3's default)
    assert len(lines) == (3 if int(ldf) % 4 == 0 else 2) and all("max abs error" in ln for ln in lines)


def test_bwd_fused_recompute_emulation():
    out = subprocess.run([sys.executable, os.path.join(SCRIPTS, "emulate_bwd_fused_recompute.py")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    # every workspace tile the two forms share, the padded rows' checks and the final state
    names = [ln.split("  ")[0].strip() for ln in lines]
    for tile in ("Qe", "Kd", "Wn", "P", "T", "egc", "St", "Vn", "final state"):
        assert tile in names, out.stdout


def test_bwd_grads_addr_emulation():
    out = subprocess.run([sys.executable, os.path.join(SCRIPTS, "emulate_bwd_grads_addr.py")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    # the three families, each with a count of checks made
    assert len(lines) == 3 and all("checked" in ln and int(ln.split()[-2]) > 1000 for ln in lines), out.stdout


def test_bwd_fwd_stage_emulation():
    out = subprocess.run([sys.executable, os.path.join(SCRIPTS, "emulate_bwd_fwd_stage.py")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    # S^T's 64 x 128 slice and Wn's 64 x 64 columns, every element placed
    assert lines == ["staged stores NR=4 (128 columns)  8192 elements placed, no bank conflict",
                     "staged stores NR=2 (64 columns)  4096 elements placed, no bank conflict"], out.stdout
