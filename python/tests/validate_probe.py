"""The H200 crash's scenario in a fresh process (run by test_errors.py and scripts/gpu_python.sh).

opgraph is imported FIRST, torch second (as pytest imported them: test_buffers.py before
test_gpu.py), CUDA is queried, and only then does the C++ core take paths it had not taken
before: an invalid matmul's validate() error, its exception translation, a frozen-graph error.
Before the fix, the module exported its static libraries' symbols and bound them lazily, so a
function first called after `import torch` could bind to a copy in a library torch loaded
RTLD_GLOBAL (SIGSEGV in validate on Python 3.12 / torch 2.11). Prints one line per check;
exit status 0 when every check passed.
Usage: python3 validate_probe.py [--no-torch]
"""
import sys

import numpy as np

import opgraph

if "--no-torch" not in sys.argv:
    try:
        import torch

        print("torch", torch.__version__, "cuda" if torch.cuda.is_available() else "no cuda", flush=True)
    except ImportError:
        print("torch not installed", flush=True)

g = opgraph.pygraph(io_data_type=np.float32, compute_data_type=np.float32)
a = g.tensor(dim=[3, 4], data_type=np.float32, name="a")
b = g.tensor(dim=[5, 2], data_type=np.float32, name="b")
g.matmul(A=a, B=b, name="mm")
for attempt in range(3):
    try:
        g.validate()
        sys.exit("validate() accepted a [3, 4] @ [5, 2] matmul")
    except opgraph.GraphNotSupportedError as e:
        msg = str(e)
        assert "'mm'" in msg and "port B" in msg and "K = 4" in msg and "K = 5" in msg, msg
print("invalid matmul:", msg, flush=True)

g2 = opgraph.pygraph(io_data_type=np.float32, compute_data_type=np.float32)
x = g2.tensor(dim=[2, 3], data_type=np.float32, name="x")
y = g2.relu(input=x)
y.set_output(True)
g2.build()
try:
    g2.relu(input=x)
    sys.exit("a frozen graph accepted a node")
except opgraph.FrozenGraphError as e:
    print("frozen:", e, flush=True)
print("probe ok", flush=True)
