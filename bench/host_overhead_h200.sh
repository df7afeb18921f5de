#!/usr/bin/env bash
# bench/host_overhead_h200.sh — the name bench/device_all.sh runs: the host-overhead
# benchmark (CPU rows + the GPU rows against a raw cuLaunchKernelEx) on the device.
exec bash "$(dirname "$0")/host_overhead.sh" "$@"
