#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What `heapref suspects` costs against `heapref analyze`, on the generated dumps of
# bench_scale.sh.
#
#   bash bench/bench_suspects.sh [SET...]      (default: mixed-1g mixed-4g)
#
# SET as in bench_scale.sh (mixed-1g, mixed-4g, list-10m, ...). For each dump, best of
# $BENCH_RUNS (default 2; single runs on a shared machine vary by a third, so 5 is
# better), one run of each in turn: `analyze --stats` and `suspects --stats --format
# json` (both from the same Release build, build-bench/). Prints each phase's wall, CPU
# and peak anonymous memory (heapref's own memory, without the mapped dump) from
# --stats, the suspects found, then per set: suspects' time against analyze's (of the
# fastest runs, and of the median runs) and its peak anonymous memory against the dump's
# size.
# Goals (issue 31): suspects within 2x of analyze; memory < 0.3x the dump.
# Exit status: 0, or 1 if heapref failed.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/bench_dump_file.sh

bench_start mixed-1g mixed-4g -- "$@"

status=0
summary=
# median "T1 T2 ...": the middle run's time (the mean of the two middle ones)
median() {
  tr ' ' '\n' <<< "$1" | grep . | sort -n |
    awk '{ t[NR] = $1 } END { print NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2 }'
}
for s in "${sets[@]}"; do
  read -r shape n b <<<"$(set_args "$s")"
  bench_dump "$shape" "$n" "$b"
  echo
  echo "== $s: $dump, $size bytes"
  # in turn, so that both see the same minutes of a machine whose speed wanders
  best_ana= walls_ana= best_sus= walls_sus= failed=
  for ((i = 0; i < ${BENCH_RUNS:-2}; i++)); do
    bench_run_once ana analyze --stats -o "$work/sus.pb.gz" &&
      bench_run_once sus suspects --stats --format json || { failed=1; break; }
  done
  [ -z "$failed" ] || { status=1; continue; }
  bench_result ana
  analyze_wall=$best
  analyze_median=$(median "$walls")
  analyze_peak=$(bench_peak_anon ana)
  echo "analyze: best wall $analyze_wall s (runs: $walls)"
  echo "| phase        | wall (s) | CPU (s)  | peak anon (MiB) |"
  echo "|---|---|---|---|"
  bench_phases ana
  bench_result sus
  suspects_wall=$best
  suspects_median=$(median "$walls")
  peak=$(bench_peak_anon sus)
  echo "suspects: best wall $suspects_wall s (runs: $walls)"
  echo "| phase        | wall (s) | CPU (s)  | peak anon (MiB) |"
  echo "|---|---|---|---|"
  bench_phases sus
  python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
for s in r["suspects"]:
    print("suspect %d: %s %s, %d bytes (%.1f%%); %s" % (s["rank"], s["kind"], " ".join(s["roots"]),
          s["bytes"], s["percent"], s["accumulation_point"]["what"]))' "$work/sus.best.out"
  summary+=$(awk -v s="$s" -v a="$analyze_wall" -v w="$suspects_wall" -v ap="$analyze_peak" \
      -v am="$analyze_median" -v wm="$suspects_median" -v p="$peak" -v size="$size" 'BEGIN {
    printf "| %s | %.0f | %.2f | %.2f | %.2f | %s | %.2f | %.0f | %.0f | %.3f | %s |", s, size / 1e6,
      a, w, w / a, (w <= 2 * a ? "met" : "NOT met"), wm / am, ap, p, p * 1048576 / size,
      (p * 1048576 / size < 0.3 ? "met" : "NOT met")
  }')$'\n'
done
echo
echo "| dump | size (MB) | analyze (s) | suspects (s) | suspects / analyze | <= 2x | of the medians | analyze peak anon (MiB) | suspects peak anon (MiB) | peak / size | < 0.3x |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s' "$summary"
exit $status
