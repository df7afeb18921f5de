#!/usr/bin/env bash
# bench/gdn_pending.sh — what the last session wrote without a device, checked and timed in one device call (carry
# .device-deps; ~6-8 minutes on a fresh machine):
#   1. every GdnGpu numerics case (bench/gdn_ws_suite.sh's four shards), among them PIPELINE_ARCH 4's guarded form
#      (use_qk_l2norm without use_beta_sigmoid: the fp16 build checking beta, the fp32 fallback; run_case compares
#      the verdicts it wrote with the drawn betas) on every case with l2norm, "beta up to 3" sending pairs to the
#      fallback;
#   2. GdnGpu.TimingF16Inverse: PIPELINE_ARCH 4 against 3, the proven form on every cell and the guarded form on the
#      unsplit ones (rows marked "(guarded)"), alternated, O checked against 3's;
#   3. gdn_host_overhead_gpu: one execute against a raw launch of its kernel(s);
#   4. the decode sweep under the peers' gates (OPGRAPH_DECODE_SAFE_GATE=1: safe_gate with a_log and dt_bias, beta's
#      sigmoid), to tell whether those gates are what the peers' B = 1 cell pays for.
# Logs to $OUT, the tables last.
#   bash bench/gdn_pending.sh
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/gdn_pending}
mkdir -p "$out"
B=${OPGRAPH_BUILD_DIR:-/tmp/bb}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "tree: $(git rev-parse --short HEAD 2>/dev/null || echo unknown) (the device copy's .git may lag the tree)"
OUT=$out OPGRAPH_SUITE_NUMERICS_ONLY=1 bash bench/gdn_ws_suite.sh >"$out/suite-stdout.log" 2>&1
echo "numerics: rc $?"
timeout -s KILL 200 "$B/tests/test_la_gpu" --gtest_filter='GdnGpu.TimingF16Inverse' >"$out/f16_timing.log" 2>&1
echo "TimingF16Inverse: rc $?"
timeout -s KILL 60 "$B/bench/gdn_host_overhead_gpu" >"$out/host.log" 2>&1
echo "host: rc $?"
OUT=$out OPGRAPH_DECODE_SAFE_GATE=1 timeout -s KILL 150 bash bench/gdn_decode_sweep.sh 15 >"$out/decode.log" 2>&1
echo "decode sweep (safe gate): rc $?"
echo "==== numerics (shards; failures)"
grep -E "^shard|Failure" "$out/suite-stdout.log" | head -20
echo "==== the guard's lines (pairs on the fp32 fallback)"
grep -h "guard:" "$out"/la_shard*.log 2>/dev/null | head -12
echo "==== PIPELINE_ARCH 4 against 3"
grep -E "gdn timing|Failure|^\[  (PASSED|FAILED)" "$out/f16_timing.log"
echo "==== host"
tail -12 "$out/host.log"
echo "==== decode sweep, the peers' gates"
tail -14 "$out/decode.log"
