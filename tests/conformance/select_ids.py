#!/usr/bin/env python3
"""Chooses the test ids of a conformance run from what pytest collected (one id a line):

    python3 select_ids.py COLLECTED.txt SAMPLE_PER_BIG_FILE > CHOSEN.txt

Every id of a file in scope is kept, except in the big parametrised files (BIG), where a fixed
sample of SAMPLE_PER_BIG_FILE ids is kept: evenly spaced over the file's ids in sorted order, so
the same collection always gives the same sample. Ids of files out of scope are dropped.
"""
import sys

# The files in scope (cudnn-frontend 1.23.0, test/python; their pytest.ini selects marker L0).
IN_SCOPE = (
    "test_rmsnorm.py", "test_layernorm.py", "test_batchnorm.py", "test_instancenorm.py",
    "test_matmul_bias_relu.py", "test_conv_fprop.py", "test_conv_bias.py", "test_conv_genstats.py",
    "test_conv_reduction.py", "test_wgrads.py", "test_apply_rope.py", "test_silu_and_mul.py", "test_slice.py",
    "test_mhas.py", "test_sdpa_thd.py", "test_flexible_sdpa.py", "test_flexible_sdpa_bprop.py",
    "test_kernel_cache.py", "test_deviceless_aot_compilation.py", "test_block_scale_quantize.py",
    "test_moe_grouped_matmul.py",
)
# The big parametrised files, sampled.
BIG = ("test_mhas.py", "test_sdpa_thd.py", "test_flexible_sdpa.py", "test_flexible_sdpa_bprop.py")


def file_of(test_id):
    return test_id.split("::", 1)[0].rsplit("/", 1)[-1]


def choose(ids, per_big_file):
    by_file = {}
    for t in ids:
        t = t.strip()
        if "::" in t and file_of(t) in IN_SCOPE:
            by_file.setdefault(file_of(t), []).append(t)
    chosen = []
    for f in IN_SCOPE:
        got = sorted(set(by_file.get(f, [])))
        if f in BIG and len(got) > per_big_file:
            step = len(got) / per_big_file
            got = [got[int(i * step)] for i in range(per_big_file)]
        chosen += got
    return chosen


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: select_ids.py COLLECTED.txt SAMPLE_PER_BIG_FILE")
    with open(sys.argv[1]) as f:
        print("\n".join(choose(f.readlines(), int(sys.argv[2]))))
