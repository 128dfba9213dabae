#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The training runs of a profile-guided build (scripts/build-pgo.sh): HEAPREF, built with
# counters, analyses the dumps testprogs/gen writes for shapes the benchmarks do not time
# (list, map, slice, goroutines; `retained` and `suspects` of the map too), so that
# bench/bench_scale.sh's sets (small, records, mixed) measure the build on heaps it was
# not trained on; the default threads (one per processor) and one. The dumps (about 60
# MB) are written into WORK, which is removed after, whether the training ends or fails;
# what stays is the counts, where the build said.
#   bash scripts/pgo-train.sh [--run-with CMD] HEAPREF WORK
# --run-with: a command that runs HEAPREF (qemu-aarch64-static for an arm64 build).
set -euo pipefail
cd "$(dirname "$0")/.."
runner=()
if [ "${1:-}" = --run-with ]; then
  [ $# -ge 2 ] || { echo "pgo-train.sh: --run-with needs a command" >&2; exit 2; }
  runner=("$2")
  shift 2
fi
[ $# -eq 2 ] || { echo "usage: pgo-train.sh [--run-with CMD] HEAPREF WORK" >&2; exit 2; }
heapref=$(realpath "$1")
mkdir -p "$2"
work=$(realpath "$2")
trap 'rm -rf "$work"' EXIT   # the dumps, whether the training ends or fails
gen="$work/gen"
(cd testprogs && go build -buildvcs=false -o "$gen" ./gen)

# run NAME CMD...: heapref run as a user would; its stderr shown, and the training
# ended, if it fails.
run() {
  local name=$1
  shift
  "${runner[@]}" "$heapref" "$@" > /dev/null 2> "$work/$name.err" ||
    { cat "$work/$name.err" >&2; exit 1; }
}

# train SHAPE OBJECTS [ANALYZE_ARGS...]: one dump, analysed.
train() {
  local shape=$1 objects=$2 dump="$work/$1.hdump"
  shift 2
  "$gen" -shape "$shape" -objects "$objects" "$dump" > /dev/null
  run "$shape" analyze "$@" -o "$work/$shape.pb.gz" "$gen" "$dump"
}
train slice 300000
train goroutines 10000
train map 300000
train list 300000
# pass 1 on one thread as well: a one-core machine's walk, without workers
run map-1 analyze --threads 1 -o "$work/map.pb.gz" "$gen" "$work/map.hdump"
# the views after the scan: retained sizes (dominators) and the leak suspects
run retained retained "$gen" "$work/map.hdump"
run suspects suspects "$gen" "$work/map.hdump"
echo "heapref: trained on gen's list, slice, goroutines and map shapes (analyze, retained, suspects)"
