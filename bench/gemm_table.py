"""bench/gemm_table.py — the table and plot of bench/gemm_h200.sh from the
RESULT (gemm_bench), ANCHOR (gemm_vs_torch.py) and TORCH (gemm_torch.py) lines
of one run:

  python3 bench/gemm_table.py RESULTS.txt CI_RC GPU_RC [PLOT.png]

Per shape: our pick and best variant, cuBLAS (torch.matmul, or torch eager
matmul + bias + gelu), cuDNN (TFLOP/s), the ratios, and which of ours / cuDNN
leads; geomeans of ours/cuBLAS for M >= 1024 and M <= 128; the fused epilogue
against torch eager. Where a shape has an ANCHOR line, pick, cuBLAS and cuDNN
are its figures: the three timed interleaved, round by round, in one process
(cuDNN = the cudnn family's first plan), so the chip's drift stays out of the
ratios; the best variant is then scaled from gemm_bench's own run (best/pick
of gemm_bench times the interleaved pick). Without one, gemm_bench's pick and
best cuDNN plan and gemm_torch.py's anchor, timed minutes apart.
The PNG (matplotlib, when importable) has TFLOP/s per shape for ours, cuBLAS, cuDNN."""
import math
import sys


def fnum(x):
    try:
        v = float(x)
        return v if v == v else None
    except (TypeError, ValueError):
        return None


def geo(v):
    v = [x for x in v if x]
    return math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")


ours, torch, anchor = {}, {}, {}
failed = []  # gemm_vs_torch.py's checks against torch that failed (those shapes have no ANCHOR line)
for line in open(sys.argv[1]):
    if line.startswith("CHECK FAILED"):
        failed.append(line.strip())
        continue
    tag = line.split(" ", 1)[0]
    if tag not in ("RESULT", "TORCH", "ANCHOR"):
        continue
    kv = dict(p.split("=", 1) for p in line.split()[1:])
    key = (kv["shape"], kv["chain"])
    {"RESULT": ours, "TORCH": torch, "ANCHOR": anchor}[tag][key] = kv
keys = sorted(set(ours) | set(torch) | set(anchor), key=lambda k: (k[1], [int(x) for x in k[0].split("x")]))
print("gemm on the H200: bf16 in/out, A row-major, B column-major; TFLOP/s (cuBLAS = torch.matmul or torch eager "
      "matmul+bias+gelu; src i = pick, cuBLAS and cuDNN's first plan timed interleaved in one process, "
      "s = gemm_bench then torch, cuDNN its best plan; best = gemm_bench's best variant)")
print("%-18s %-9s %7s %7s %7s %7s %6s %6s %6s %-6s %-3s %s" % ("M x N x K", "epilogue", "pick", "best", "cuBLAS",
      "cuDNN", "pk/cB", "bs/cB", "pk/cD", "leads", "src", "pick config"))
ratios = {"big": [], "small": [], "big_best": [], "small_best": []}
rows = []
for key in keys:
    o, t, a = ours.get(key, {}), torch.get(key, {}), anchor.get(key)
    pk, bs = fnum(o.get("pick_tflops")), fnum(o.get("best_tflops"))
    cb, cd = fnum(t.get("tflops")), fnum(o.get("cudnn_tflops"))
    if a:
        ipk = fnum(a.get("ours"))
        bs = bs * ipk / pk if bs and pk and ipk else ipk
        pk, cb, cd = ipk, fnum(a.get("torch")), fnum(a.get("cudnn"))
    r = lambda x, y: x / y if x and y else None
    lead = "-" if not (pk and cd) else ("ours" if pk >= cd else "cudnn")
    if key[1] == "none":
        cls = "big" if int(key[0].split("x")[0]) >= 1024 else "small"
        ratios[cls].append(r(pk, cb))
        ratios[cls + "_best"].append(r(bs, cb))
    f = lambda v: "%.1f" % v if v else "-"
    g = lambda v: "%.2f" % v if v else "-"
    print("%-18s %-9s %7s %7s %7s %7s %6s %6s %6s %-6s %-3s %s" % (key[0], key[1], f(pk), f(bs), f(cb), f(cd),
          g(r(pk, cb)), g(r(bs, cb)), g(r(pk, cd)), lead, "i" if a else "s",
          o.get("pick") or (a or {}).get("plan", "-")))
    rows.append((key, pk, cb, cd))
for name, label, target in (("big", "M >= 1024", 1.0), ("small", "M <= 128", 0.9)):
    print("geomean ours/cuBLAS %s: pick %.3f, best variant %.3f (target %.2f)" % (label, geo(ratios[name]),
          geo(ratios[name + "_best"]), target))
# The BACKEND marker's classes (engines/gemm/gemm_kernel.cpp shape_class).
def shape_class(shape):
    m, n, k = (int(x) for x in shape.split("x"))
    if m <= 64:
        return "decode (M <= 64)"
    if m <= 256:
        return "small (64 < M <= 256)"
    return "large, K < 8192" if k < 8192 else "large, K >= 8192"
per = {}
for key, pk, cb, cd in rows:
    if pk and cd:
        per.setdefault(shape_class(key[0]), []).append(pk / cd)
for name in ("decode (M <= 64)", "small (64 < M <= 256)", "large, K < 8192", "large, K >= 8192"):
    if name in per:
        v = per[name]
        print("class %-22s ours/cuDNN geomean %.2f (min %.2f, max %.2f, %d shapes)" % (name, geo(v), min(v), max(v), len(v)))
for key, pk, te, _ in rows:
    if key[1] != "none":
        if pk and te:
            print("fused %s %s: ours %.1f vs torch eager %.1f = %.2fx (target 1.25x)" % (key[0], key[1], pk, te, pk / te))
for line in failed:
    print(line)
print("test_gemm rc=%s, test_gemm_gpu rc=%s" % (sys.argv[2], sys.argv[3]))
if len(sys.argv) > 4:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(max(10, 0.5 * len(rows)), 5))
        xs = range(len(rows))
        for i, (name, col) in enumerate((("ours (pick)", 1), ("cuBLAS", 2), ("cuDNN best", 3))):
            ax.bar([x + (i - 1) * 0.27 for x in xs], [r[col] or 0 for r in rows], 0.27, label=name)
        ax.set_xticks(list(xs))
        ax.set_xticklabels([k[0] + ("" if k[1] == "none" else "\n" + k[1]) for k, *_ in rows], rotation=70, fontsize=7)
        ax.set_ylabel("TFLOP/s (bf16)")
        ax.set_title("gemm on H200: ours vs cuBLAS vs cuDNN")
        ax.legend()
        fig.tight_layout()
        fig.savefig(sys.argv[4], dpi=110)
        print("plot: %s" % sys.argv[4])
    except Exception as e:  # the table stands without the plot
        print("plot skipped: %s" % e)
