#!/usr/bin/env bash
# bench/device_deps.sh — run HERE (the dev machine) before a device run that
# builds opgraph: the device image has CMake, ninja and CUDA but neither
# nlohmann-json nor GoogleTest, and nothing can be installed there. This copies
# the local Debian packages' files into .device-deps/ (git-ignored), which the
# device command carries (`carry: [".device-deps"]`):
#   .device-deps/prefix/include/nlohmann, .device-deps/prefix/share/cmake/nlohmann_json
#   .device-deps/googletest   (sources; the device script builds and installs them)
set -euo pipefail
cd "$(dirname "$0")/.."
D=.device-deps
rm -rf "$D"
mkdir -p "$D/prefix/include" "$D/prefix/share/cmake"
cp -r /usr/include/nlohmann "$D/prefix/include/"
cp -r /usr/share/cmake/nlohmann_json "$D/prefix/share/cmake/"
cp -r /usr/src/googletest "$D/googletest"
# cuDNN's C headers (enums and types for the cudnn engine; never linked), used
# by bench/run.sh only when the device image lacks them.
for h in cudnn_graph.h cudnn_graph_v9.h cudnn_version.h cudnn_version_v9.h; do
  [ -f "/usr/local/cuda/include/$h" ] && cp "/usr/local/cuda/include/$h" "$D/prefix/include/"
done
du -sh "$D"
