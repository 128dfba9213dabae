#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What `heapref retained` (the dominator tree and retained sizes, docs/retained.md) costs
# on top of the analysis, on the generated dumps of bench_scale.sh.
#
#   bash bench/bench_retained.sh [SET...]      (default: mixed-1g mixed-4g)
#
# SET as in bench_scale.sh (mixed-1g, mixed-4g, list-1m, ...). For each dump, best of
# $BENCH_RUNS (default 2), one run of each in turn: `analyze --stats`, `retained --stats
# -n 20`, and the same with HEAPREF_TEST_DOMINATORS_AFTER=1 (the tree made after the
# scan, not beside pass 1's heap walk: what it costs alone), all from the same Release
# build, build-bench/. Prints each phase's wall, CPU and peak anonymous memory
# (heapref's own memory, without the mapped dump) from --stats, then per set: the three
# runs' wall times, the "dominators" phase of the tree made after the scan (the tree and
# the retained sizes) against the whole analyze run, and the peak anonymous memory of
# retained (the tree beside the scan) against the dump's size. Goals (issue 17): the
# tree's phase shorter than the whole analysis of the same dump; memory < 0.3x the dump.
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
  best_ana= walls_ana= best_ret= walls_ret= best_after= walls_after= failed=
  for ((i = 0; i < ${BENCH_RUNS:-2}; i++)); do
    bench_run_once ana analyze --stats -o "$work/ret.pb.gz" &&
      bench_run_once ret retained --stats -n 20 &&
      HEAPREF_TEST_DOMINATORS_AFTER=1 bench_run_once after retained --stats -n 20 ||
      { failed=1; break; }
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
  peak=$(bench_peak_anon ret)
  echo "retained: best wall $retained_wall s (runs: $walls)"
  echo "| phase        | wall (s) | CPU (s)  | peak anon (MiB) |"
  echo "|---|---|---|---|"
  bench_phases ret
  bench_result after
  after_wall=$best
  dom=$(bench_phase_wall after dominators)
  echo "retained, the tree after the scan: best wall $after_wall s (runs: $walls)"
  echo "| phase        | wall (s) | CPU (s)  | peak anon (MiB) |"
  echo "|---|---|---|---|"
  bench_phases after
  summary+=$(awk -v s="$s" -v a="$analyze_wall" -v r="$retained_wall" -v d="$dom" \
      -v ra="$after_wall" -v p="$peak" -v size="$size" 'BEGIN {
    printf "| %s | %.0f | %.2f | %.2f | %.2f | %.2f | %s | %.0f | %.3f | %s |", s, size / 1e6, a, ra,
      r, d, (d < a ? "met" : "NOT met"), p, p * 1048576 / size,
      (p * 1048576 / size < 0.3 ? "met" : "NOT met")
  }')$'\n'
done
echo
echo "| dump | size (MB) | analyze (s) | retained, tree after the scan (s) | retained, tree beside it (s) | dominators phase after the scan (s) | < analyze | retained peak anon (MiB) | peak / size | < 0.3x |"
echo "|---|---|---|---|---|---|---|---|---|---|"
printf '%s' "$summary"
exit $status
