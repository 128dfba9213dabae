#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Two or more heapref builds compared on one dump, run in turn: on this machine the
# speed of the hour moves a total by more than most changes do, so each build's runs
# are spread over the same minutes and the figures are compared, not the runs.
#
#   bash bench/bench_ab.sh [--runs N] DUMP HEAPREF...
#
# DUMP is a dump bench_scale.sh generated (bench/work/gen-*.hdump), analysed with the
# gen binary kept beside it (DUMP.gen). Each round runs every HEAPREF once, in the order
# given, `analyze --stats`; N rounds (default 7). Prints per HEAPREF the min / median
# of: the whole run's wall time, read+index, pass 1's wall time and its CPU time (s).
# A build given twice is measured twice. The last round's profiles are compared,
# decompressed: a build whose profile differs from the first one's is said so.
set -euo pipefail
runs=7
if [ "${1:-}" = --runs ]; then
  [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || { echo "bench_ab.sh: --runs needs a number over 0" >&2; exit 2; }
  runs=$2
  shift 2
fi
[ $# -ge 2 ] || { echo "usage: bench_ab.sh [--runs N] DUMP HEAPREF..." >&2; exit 2; }
dump=$1
shift
[ -f "$dump" ] && [ -x "$dump.gen" ] || { echo "bench_ab.sh: no $dump with its $dump.gen" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

total=() read=() pass1=() pass1_cpu=() # by the build's place in the list
for ((k = 0; k < runs; k++)); do
  i=0
  for b in "$@"; do
    t0=$(date +%s%N)
    "$b" analyze --stats -o "$work/$i.pb.gz" "$dump.gen" "$dump" 2> "$work/err" ||
      { cat "$work/err" >&2; exit 1; }
    t1=$(date +%s%N)
    total[$i]+="$(awk -v ns=$((t1 - t0)) 'BEGIN { printf "%.3f", ns / 1e9 }') "
    read[$i]+="$(awk '/^stats: read\+index/ { print $3 }' "$work/err") "
    pass1[$i]+="$(awk '/^stats: pass 1/ { print $4 }' "$work/err") "
    pass1_cpu[$i]+="$(awk '/^stats: pass 1/ { print $7 }' "$work/err") "
    i=$((i + 1))
  done
done

# min / median of the numbers on stdin
spread() { tr ' ' '\n' | grep . | sort -n | awk '{ a[NR] = $1 } END { printf "%s / %s", a[1], a[int((NR + 1) / 2)] }'; }
echo "$dump, $runs rounds, min / median (s):"
i=0
for b in "$@"; do
  same=""
  if [ "$i" -gt 0 ] && ! cmp -s <(gzip -dc "$work/0.pb.gz") <(gzip -dc "$work/$i.pb.gz"); then
    same="  (its profile differs from the first build's)"
  fi
  echo "$b: total $(echo "${total[$i]}" | spread)  read+index $(echo "${read[$i]}" | spread)  pass 1 $(echo "${pass1[$i]}" | spread)  pass 1 CPU $(echo "${pass1_cpu[$i]}" | spread)$same"
  i=$((i + 1))
done
