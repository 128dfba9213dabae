#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What `heapref retained` (the dominator tree and retained sizes, docs/retained.md) costs
# on top of the analysis, on the generated dumps of bench_scale.sh.
#
#   bash bench/bench_retained.sh [SET...]      (default: mixed-1g mixed-4g)
#
# SET as in bench_scale.sh (mixed-1g, mixed-4g, list-1m, ...). For each dump, best of
# $BENCH_RUNS (default 2), one run of each in turn: `analyze --stats` and `retained
# --stats -n 20` (both from the same Release build, build-bench/). Prints each phase's
# wall, CPU and peak anonymous memory (heapref's own
# memory, without the mapped dump) from --stats, then per set: what the tree and the
# retained sizes cost, retained's best wall time less analyze's, against the whole
# analyze run, and the peak anonymous memory of retained against the dump's size. (With
# a second processor the tree is made beside pass 1's heap walk, and the "dominators"
# phase is only what is left of it after the scan: so the difference of the whole runs.)
# Goals (issue 17): the tree cheaper than the whole analysis of the same dump; memory <
# 0.3x the dump.
# Exit status: 0, or 1 if heapref failed.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/bench_dump_file.sh

bench_start mixed-1g mixed-4g -- "$@"

status=0
summary=
for s in "${sets[@]}"; do
  read -r shape n b <<<"$(set_args "$s")"
  bench_dump "$shape" "$n" "$b"
  echo
  echo "== $s: $dump, $size bytes"
  # in turn, so that both see the same minutes of a machine whose speed wanders
  best_ana= walls_ana= best_ret= walls_ret= failed=
  for ((i = 0; i < ${BENCH_RUNS:-2}; i++)); do
    bench_run_once ana analyze --stats -o "$work/ret.pb.gz" &&
      bench_run_once ret retained --stats -n 20 || { failed=1; break; }
  done
  [ -z "$failed" ] || { status=1; continue; }
  bench_result ana
  analyze_wall=$best
  echo "analyze: best wall $analyze_wall s (runs: $walls)"
  echo "| phase        | wall (s) | CPU (s)  | peak anon (MiB) |"
  echo "|---|---|---|---|"
  bench_phases ana
  bench_result ret
  retained_wall=$best
  dom=$(bench_phase_wall ret dominators)
  peak=$(bench_peak_anon ret)
  echo "retained: best wall $retained_wall s (runs: $walls)"
  echo "| phase        | wall (s) | CPU (s)  | peak anon (MiB) |"
  echo "|---|---|---|---|"
  bench_phases ret
  summary+=$(awk -v s="$s" -v a="$analyze_wall" -v r="$retained_wall" -v d="$dom" \
      -v p="$peak" -v size="$size" 'BEGIN {
    printf "| %s | %.0f | %.2f | %.2f | %.2f | %.2f | %s | %.0f | %.3f | %s |", s, size / 1e6, a, r,
      r - a, d, (r - a < a ? "met" : "NOT met"), p, p * 1048576 / size,
      (p * 1048576 / size < 0.3 ? "met" : "NOT met")
  }')$'\n'
done
echo
echo "| dump | size (MB) | analyze (s) | retained (s) | retained - analyze (s) | dominators phase (s) | < analyze | retained peak anon (MiB) | peak / size | < 0.3x |"
echo "|---|---|---|---|---|---|---|---|---|---|"
printf '%s' "$summary"
exit $status
