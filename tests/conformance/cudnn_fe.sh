#!/usr/bin/env bash
# tests/conformance/cudnn_fe.sh — cudnn-frontend's own Python tests, run once with the real
# `cudnn` wheel and once with a throw-away package `cudnn` that only re-exports opgraph, then
# a table per file (passed / failed / skipped for each) and the ids that pass with the real
# wheel but not with opgraph (table.py). docs/porting.md says how to run it on the H200.
#
#   cudnn_fe.sh --fe DIR [--real-site DIR] [--opgraph-path DIR] [--out DIR]
#               [--side both|real|opgraph] [--sample N] [--test-timeout S] [--run-limit S]
#               [--binding cudnn|strict] [--python PY] [--dry-run]
#
#   --fe DIR            a checkout of github.com/NVIDIA/cudnn-frontend at release 1.23.0, outside
#                       this repository (only its test/python and include/cudnn_frontend_version.h
#                       are read; nothing is copied into our tree)
#   --real-site DIR     where the real wheel is installed (../shared/tools/peer_wheels.py DEST/c:
#                       `bash DEST/c/install.sh DIR`); needed for --side real / both. The opgraph
#                       run takes the tests' own dependencies (looseversion) from it, not `cudnn`
#   --opgraph-path DIR  a folder holding the built `opgraph` package (build-py, or a pip --target)
#   --out DIR           results: ids.txt, real.tsv, opgraph.tsv (outcomes), *.log, table.txt (default $OUT/cudnn_fe_out,
#                       /tmp/cudnn_fe_out without $OUT)
#   --side S            which runs (default both); the table needs both .tsv files in --out
#   --sample N          ids kept per big parametrised file (select_ids.py; default 24)
#   --test-timeout S    a test running longer than S seconds fails (pytest-timeout, where the
#                       interpreter has it; default 120), so one hang cannot eat a device call
#   --run-limit S       each side's pytest is interrupted (SIGINT) after S seconds; the tests not
#                       reached are missing from its outcomes (default: no limit)
#   --binding P         opgraph's binding policy for its run (OPGRAPH_BINDING; default cudnn: a
#                       buffer of another element type of the declared width is bound by address
#                       as cuDNN binds it, with an opgraph.BindingWarning; strict refuses it)
#   --dry-run           check the checkout and print what would run; run nothing
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
PIN=1.23.0
fe="" real_site="" og_path="" out="${OUT:-/tmp}/cudnn_fe_out" side=both sample=24 dry=0 test_timeout=120 run_limit=0
binding=cudnn binding_env=""
py=/opt/torch/.venv/bin/python3; [ -x "$py" ] || py=python3
while [ $# -gt 0 ]; do
  case "$1" in
    --fe) fe=$2; shift 2 ;;
    --real-site) real_site=$2; shift 2 ;;
    --opgraph-path) og_path=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --side) side=$2; shift 2 ;;
    --sample) sample=$2; shift 2 ;;
    --test-timeout) test_timeout=$2; shift 2 ;;
    --run-limit) run_limit=$2; shift 2 ;;
    --python) py=$2; shift 2 ;;
    --binding) binding=$2; shift 2 ;;
    --dry-run) dry=1; shift ;;
    *) echo "cudnn_fe.sh: unknown argument $1 (see the header)" >&2; exit 2 ;;
  esac
done
die() { echo "cudnn_fe.sh: $*" >&2; exit 2; }

[ -n "$fe" ] || die "--fe DIR is required: a checkout of NVIDIA/cudnn-frontend at $PIN"
fe=$(cd "$fe" 2>/dev/null && pwd) || die "--fe $fe: no such folder"
case "$fe/" in "$repo"/*) die "--fe $fe is inside this repository; keep cudnn-frontend's checkout outside it" ;; esac
tests="$fe/test/python"
[ -f "$tests/conftest.py" ] && [ -f "$tests/pytest.ini" ] || die "$tests has no conftest.py / pytest.ini"
version_h="$fe/include/cudnn_frontend_version.h"
[ -f "$version_h" ] || die "$version_h is missing: cannot check the release"
got=$(awk '/define CUDNN_FRONTEND_(MAJOR|MINOR|PATCH)_VERSION/ {v = v (v ? "." : "") $3} END {print v}' "$version_h")
[ "$got" = "$PIN" ] || die "the checkout is cudnn-frontend $got; this table is pinned to $PIN"
case "$side" in both|real|opgraph) ;; *) die "--side must be both, real or opgraph" ;; esac
case "$binding" in cudnn|strict) ;; *) die "--binding must be cudnn or strict" ;; esac

files=$("$py" -c "import sys; sys.path.insert(0, '$here'); import select_ids; print(' '.join(select_ids.IN_SCOPE))")
missing=""
for f in $files; do [ -f "$tests/$f" ] || missing="$missing $f"; done
[ -z "$missing" ] || die "not in $tests:$missing"

alias_dir="$out/alias"
run_pytest() {  # run_pytest SIDE PYTHONPATH: pytest over the chosen ids, resumed after a crash
  local name=$1 path=$2 t0 limit=() stop=() left round=0
  echo "== $name: PYTHONPATH=$path${binding_env:+ $binding_env}"
  "$py" -c "import pytest_timeout" 2>/dev/null && limit=(--timeout="$test_timeout")
  t0=$(date +%s)
  : > "$out/$name.tsv"; : > "$out/$name.log"
  # conformance_select.py appends each outcome to $name.tsv; a session that ended the process
  # (cudnn-frontend's conftest calls os._exit on a CUDA error) is resumed past the test that did.
  while ! grep -q '^#done' "$out/$name.tsv" && [ $round -lt 25 ]; do
    round=$((round + 1)); stop=()
    if [ "$run_limit" -gt 0 ]; then
      left=$(( run_limit - ($(date +%s) - t0) ))
      [ "$left" -gt 5 ] || { echo "$name: --run-limit $run_limit s reached" >> "$out/$name.log"; break; }
      stop=(timeout -s INT -k 20 "$left")
    fi
    echo "=== session $round" >> "$out/$name.log"
    # shellcheck disable=SC2086  # binding_env: empty, or one NAME=VALUE word
    (cd "$tests" && env $binding_env PYTHONPATH="$here:$path" OPGRAPH_CONFORMANCE_IDS="$out/ids.txt" \
       OPGRAPH_CONFORMANCE_LOG="$out/$name.tsv" "${stop[@]}" "$py" -m pytest -p conformance_select \
       -p no:cacheprovider -q -rs --continue-on-collection-errors "${limit[@]}" $files) >> "$out/$name.log" 2>&1 || true  # failures are the data
  done
  tail -n 2 "$out/$name.log"
  echo "$name: $(( $(date +%s) - t0 )) s, $round pytest session(s), $(grep -c $'\t' "$out/$name.tsv" || true) outcomes"
}

if [ "$dry" = 1 ]; then
  echo "cudnn-frontend $got at $fe"
  echo "in scope (marker L0 per its pytest.ini; big files sampled, $sample ids each):"
  for f in $files; do echo "  $f"; done
  echo "would: collect ids with the real wheel (PYTHONPATH=${real_site:-<--real-site>}), select_ids.py -> $out/ids.txt"
  [ "$side" = opgraph ] || echo "would: pytest (real wheel) -> $out/real.tsv"
  [ "$side" = real ] || echo "would: make_alias.py $alias_dir; pytest (alias over opgraph at ${og_path:-<--opgraph-path>}, OPGRAPH_BINDING=$binding) -> $out/opgraph.tsv"
  echo "would: table.py $out/real.tsv $out/opgraph.tsv $here/cudnn_fe_notes.tsv -> $out/table.txt"
  exit 0
fi

mkdir -p "$out"
if [ "$side" != opgraph ] || [ ! -f "$out/ids.txt" ]; then
  [ -n "$real_site" ] || die "--real-site DIR is needed to collect the ids (or put ids.txt in --out)"
  (cd "$tests" && PYTHONPATH="$real_site" "$py" -m pytest --collect-only -q -p no:cacheprovider $files) \
    > "$out/collected.txt" 2> "$out/collect.err" || true
  "$py" "$here/select_ids.py" "$out/collected.txt" "$sample" > "$out/ids.txt"
  echo "chosen ids: $(wc -l < "$out/ids.txt") (of $(grep -c '::' "$out/collected.txt" || true) collected)"
fi
if [ "$side" != opgraph ]; then
  [ -n "$real_site" ] || die "--real-site DIR is needed for the real wheel's run"
  run_pytest real "$real_site"
fi
if [ "$side" != real ]; then
  [ -n "$og_path" ] || die "--opgraph-path DIR is needed for opgraph's run"
  "$py" "$here/make_alias.py" "$alias_dir" > /dev/null
  # The tests' own dependencies (looseversion) come from --real-site, without the real package.
  deps="$out/deps"; rm -rf "$deps"; mkdir -p "$deps"
  if [ -n "$real_site" ]; then
    for e in "$real_site"/*; do
      case "$(basename "$e")" in cudnn|cudnn.*|nvidia_cudnn_frontend*|include|bin) ;; *) ln -s "$e" "$deps/" ;; esac
    done
  fi
  binding_env="OPGRAPH_BINDING=$binding" run_pytest opgraph "$alias_dir:$og_path:$deps"
fi
if [ -f "$out/real.tsv" ] && [ -f "$out/opgraph.tsv" ]; then
  "$py" "$here/table.py" "$out/real.tsv" "$out/opgraph.tsv" "$here/cudnn_fe_notes.tsv" | tee "$out/table.txt" || true
fi
