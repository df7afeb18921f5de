#!/usr/bin/env bash
# bench/gdn_h200.sh — the old name of `bash bench/run.sh gdn` (the gdn area: the linear_attention
# family's CPU suite, its GPU checks against the reference and its timing; see bench/run.sh's header
# for the steps, the variables and the result file).
exec bash "$(dirname "$0")/run.sh" gdn
