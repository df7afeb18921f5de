#!/usr/bin/env bash
# tests/conformance/device_run.sh COMMIT [SIDE] — one H200 call of the conformance run, from the
# repository root of the carried tree (docs/porting.md, "The conformance run"). It expects, carried:
#   .dev/cfw    a clean worktree of COMMIT with .device-deps copied in (bench/device_deps.sh)
#   .dev/fe     cudnn-frontend's test/python and include/cudnn_frontend_version.h at v1.23.0
#   .dev/pw/c   ../shared/tools/peer_wheels.py's real wheel and looseversion
#   .dev/cfo1   (optional) ids.txt and real.tsv of an earlier call, for SIDE=opgraph
# It installs the real wheel, builds the extension in /tmp/bp while the real wheel's run goes,
# runs opgraph's, and writes $OUT/table.txt, $OUT/ids.txt and $OUT/cfo.tgz (outcomes and logs).
# Environment: TT per-test limit (60 s), RL / OL the real / opgraph run limits (170 s each);
# OPGRAPH_CUDNN_INCLUDE_UNVERIFIED=1 would let the opgraph side's cuDNN engine do what has not yet
# run on the H200 (docs/environment.md); it gates nothing today and no id needs it.
set -u
R=$PWD; W=$R/.dev/cfw; O=${OUT:-/tmp/o}; SHA=$1; SIDE=${2:-both}; mkdir -p "$O"
echo "# cudnn-frontend conformance, $(date -u +%FT%TZ), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
echo "# OPGRAPH_CUDNN_INCLUDE_UNVERIFIED=${OPGRAPH_CUDNN_INCLUDE_UNVERIFIED:-unset}"
echo "# opgraph commit $SHA; python $(python3 -c 'import sys;print(sys.version.split()[0])'); torch $(python3 -c 'import torch;print(torch.__version__, "cudnn", torch.backends.cudnn.version())' 2>/dev/null)"
rm -rf /tmp/cfe; cp -r "$R/.dev/fe" /tmp/cfe; mkdir -p /tmp/cfo; [ -d "$R/.dev/cfo1" ] && cp "$R"/.dev/cfo1/* /tmp/cfo/
bash "$R/.dev/pw/c/install.sh" /tmp/site > "$O/install.log" 2>&1 || echo "install failed"
NB=$(python3 -c "import nanobind;print(nanobind.cmake_dir())")
t0=$(date +%s)
( cd "$W" && cmake -S python -B /tmp/bp -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$W/.device-deps/prefix" \
    -Dnanobind_DIR="$NB" && cmake --build /tmp/bp -j16 --target _C ) > /tmp/build.log 2>&1 &
bp=$!
cd "$W"
A=(--fe /tmp/cfe --real-site /tmp/site --opgraph-path /tmp/bp --out /tmp/cfo --test-timeout "${TT:-60}")
[ "$SIDE" = opgraph ] || bash tests/conformance/cudnn_fe.sh "${A[@]}" --side real --run-limit "${RL:-170}"
wait $bp; echo "build rc=$? in $(( $(date +%s) - t0 )) s"; tail -2 /tmp/build.log
PYTHONPATH=/tmp/bp python3 -c "import opgraph; print('opgraph backend_version', opgraph.backend_version())"
bash tests/conformance/cudnn_fe.sh "${A[@]}" --side opgraph --run-limit "${OL:-170}"
cp /tmp/cfo/table.txt /tmp/cfo/ids.txt "$O/" 2>/dev/null
cp /tmp/build.log /tmp/cfo/
tar czf "$O/cfo.tgz" -C /tmp --exclude=cfo/alias cfo
