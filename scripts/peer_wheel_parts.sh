#!/usr/bin/env bash
# scripts/peer_wheel_parts.sh [PW] — the peers' wheels (../shared/tools/peer_wheels.py's folders a and b, and
# .dev/pw/fla) cut into three folders that each travel beside the work tree in one device call (64 MiB a call,
# tree included; the tree reached ~9.5 MiB on disk by 2026-12-06, so folder a or b beside it no longer fits):
#   PW/s/s1  the first 55 MB of the CuTe-DSL cu13 wheel (.p1)
#   PW/s/s2  the rest of it (.p2) and FlashInfer's wheel
#   PW/s/s3  the small wheels (tvm-ffi, cutlass-dsl and its base / core libs, fla-core), the cu13 wheel's sha256 and
#            install.sh, which joins .p1 + .p2 (copied to /tmp/pw by calls 1 and 2), checks the sum, installs all.
# The device calls (docs/linear_attention.md, "Same-run comparison"): carry s1: `mkdir -p /tmp/pw && cp
# .dev/pw/s/s1/* /tmp/pw/`; carry s2: `cp .dev/pw/s/s2/* /tmp/pw/`; carry s3 (and .device-deps on a fresh
# machine): `bash .dev/pw/s/s3/install.sh /tmp/site && ... bash bench/run.sh gdn-peers`.
set -euo pipefail
PW=${1:-.dev/pw}
W=nvidia_cutlass_dsl_libs_cu13-4.8.1-cp312-cp312-manylinux_2_28_x86_64.whl
[ -f "$PW/b/$W.part1" ] && [ -f "$PW/a2/$W.part2" ] && [ -f "$PW/fla/"fla_core-*.whl ] ||
  { echo "peer_wheel_parts.sh: needs $PW/b/$W.part1, $PW/a2/$W.part2 and $PW/fla/fla_core-*.whl" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat "$PW/b/$W.part1" "$PW/a2/$W.part2" > "$tmp/$W"
(cd "$tmp" && sha256sum -c "$OLDPWD/$PW/a2/$W.sha256")
rm -rf "$PW/s" && mkdir -p "$PW/s/s1" "$PW/s/s2" "$PW/s/s3"
split -b 55000000 -d "$tmp/$W" "$tmp/part."
mv "$tmp/part.00" "$PW/s/s1/$W.p1"
mv "$tmp/part.01" "$PW/s/s2/$W.p2"
cp "$PW"/a2/flashinfer_python-*.whl "$PW/s/s2/"
cp "$PW"/a2/apache_tvm_ffi-*.whl "$PW"/a2/nvidia_cutlass_dsl-*.whl "$PW"/a2/nvidia_cutlass_dsl_libs_base-*.whl \
  "$PW"/a2/nvidia_cutlass_dsl_libs_core-*.whl "$PW"/fla/fla_core-*.whl "$PW/a2/$W.sha256" "$PW/s/s3/"
cat > "$PW/s/s3/install.sh" <<'INNER'
#!/usr/bin/env bash
# install.sh TARGET: join the cu13 wheel (.p1, .p2 in /tmp/pw from the two calls before), check it, install all.
set -u; here=$(cd "$(dirname "$0")" && pwd); t=${1:-/tmp/site}; mkdir -p /tmp/pw-join "$t"
PY=/opt/torch/.venv/bin/python3; [ -x "$PY" ] || PY=python3
W=nvidia_cutlass_dsl_libs_cu13-4.8.1-cp312-cp312-manylinux_2_28_x86_64.whl
cat /tmp/pw/$W.p1 /tmp/pw/$W.p2 > /tmp/pw-join/$W && (cd /tmp/pw-join && sha256sum -c "$here/$W.sha256") ||
  rm -f /tmp/pw-join/$W
$PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$t" \
  "$here"/*.whl /tmp/pw/*.whl $(ls /tmp/pw-join/*.whl 2>/dev/null)
INNER
chmod +x "$PW/s/s3/install.sh"
du -sb "$PW/s/s1" "$PW/s/s2" "$PW/s/s3"
