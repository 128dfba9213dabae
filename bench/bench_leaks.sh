#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What finding leaked goroutines costs (`heapref goroutines`: the runtime's leak
# definition, stack sizes, what leaked groups retain; docs/cli.md), against `analyze` of
# the same dump, on the generated dumps of bench_scale.sh.
#
#   bash bench/bench_leaks.sh [SET...]  (default: goroutines-100k mixed-1g mixed-4g
#                                                 mixedleak-1g mixedleak-4g)
#
# SET as in bench_scale.sh; goroutines-100k: 100,000 goroutines blocked in chan receive,
# half leaked (testprogs/gen -shape goroutines); mixedleak-1g, mixedleak-4g: the mixed
# heaps with their 64 holder goroutines leaked, a quarter of the heap on their stacks
# (the worst case: the whole heap marked to find them, then again for what they retain). For each dump, best of 2 (Release build,
# build-bench/): `analyze --stats` (which finds the leaks too, for its `leaked` label:
# the "leaks" phase) and `goroutines --stats` (the leaks, then the table, whose "output"
# phase holds what each leaked group retains). Prints each run's phases and per set the
# ratio goroutines / analyze. Goal (issue 30): goroutines within 1.5x of analyze.
# Exit status: 0, or 1 if heapref failed.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/bench_dump_file.sh

bench_start goroutines-100k mixed-1g mixed-4g mixedleak-1g mixedleak-4g -- "$@"

status=0
summary=
for s in "${sets[@]}"; do
  read -r shape n b <<<"$(set_args "$s")"
  bench_dump "$shape" "$n" "$b"
  echo
  echo "== $s: $dump, $size bytes"
  bench_best_of leaks analyze --stats -o "$work/leaks.pb.gz" || { status=1; continue; }
  analyze_wall=$best
  leaks=$(bench_phase_wall leaks leaks)
  echo "analyze: best wall $analyze_wall s"
  echo "| phase        | wall (s) | CPU (s)  | peak anon (MiB) |"
  echo "|---|---|---|---|"
  bench_phases leaks
  grep '^heapref: goroutines:' "$work/leaks.best.err" || true
  bench_best_of leaks goroutines --stats || { status=1; continue; }
  goroutines_wall=$best
  echo "goroutines: best wall $goroutines_wall s"
  echo "| phase        | wall (s) | CPU (s)  | peak anon (MiB) |"
  echo "|---|---|---|---|"
  bench_phases leaks
  head -3 "$work/leaks.best.out" | cut -c1-160
  summary+=$(awk -v s="$s" -v a="$analyze_wall" -v g="$goroutines_wall" -v l="$leaks" \
      -v size="$size" 'BEGIN {
    printf "| %s | %.0f | %.2f | %.2f | %.2f | %.2f | %s |", s, size / 1e6, a, l, g, g / a,
      (g <= 1.5 * a ? "met" : "NOT met")
  }')$'\n'
done
echo
echo "| dump | size (MB) | analyze (s) | its leaks phase (s) | goroutines (s) | goroutines / analyze | <= 1.5x |"
echo "|---|---|---|---|---|---|---|"
printf '%s' "$summary"
exit $status
