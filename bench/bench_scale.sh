#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Scale benchmark (issue 7): `heapref analyze --stats` on generated dumps of 1M to 40M
# objects, against the time of reading the file once.
#
#   bash bench/bench_scale.sh [OPTIONS] [SET...]
#
# SET is one of these dump sets (default: all, in this order):
#   mixed-1g              gen -shape mixed -objects 10000000 -bytes 1073741824 (~1.2 GB dump)
#   mixed-4g              gen -shape mixed -objects 40000000 -bytes 4294967296 (~4.9 GB dump)
#   list-1m   list-10m    one linked list of 1M / 10M 16-byte Items held by a global
#   map-1m    map-10m     map[int64]*Item of 1M / 10M entries, each value its own Item
#   slice-1m  slice-10m   []*Item of 1M / 10M pointers to as many Items
#   small-1m  small-1g    1M / 16M objects of 8 to 32 bytes (~1 GB dump): maps of
#                         pointers to 2- and 3-word structs, strings, small slices
#   records-1g            14M objects of 16 to 64 bytes (~1 GB dump): a map[int64]*Record
#                         and a []*Record of the same 3.5M records, each with a []byte,
#                         a list of 3.5M nodes, a []any of 3.5M boxed structs
# (testprogs/gen documents the shapes.) Each dump is generated once into bench/work/
# (git-ignored) with a copy of the gen binary that wrote it, and reused by later runs:
# 8.8 GB of disk for all sets; generating mixed-4g needs ~5 GB of memory.
#
# Options:
#   --runs N        heapref runs per dump under 2 GB; the fastest is reported (default 3)
#   --big-runs N    heapref runs per dump of 2 GB or more (default 2)
#   --heapref PATH  heapref binary to measure (default build-bench/heapref, which this
#                   script builds from the work tree first: Release, from a profile,
#                   scripts/build-pgo.sh)
#   --threads N     heapref analyze --threads N (default: heapref's, one per processor)
#   --reach         also run tests/e2e/reach.py (an independent Python reachability
#                   computation) on each dump up to --reach-max bytes, and require
#                   heapref's reached objects and bytes to equal its figures exactly
#   --reach-max B   (default 1300000000, so mixed-1g and smaller: on mixed-1g reach.py took
#                   37 s of CPU and 3.4 GB; mixed-4g would need about 4x both)
#
# For each dump it prints the machine's load (1-minute average) before and after the
# runs; the floor: `cat DUMP > /dev/null` of the cached file (read once, then the fastest
# of 3, printed with all three and its speed in GB/s); heapref's warm-up run after it
# (not counted, as the floor's first read); heapref's phases (read+index, binary, pass 1,
# pass 2, output) from --stats: wall, CPU and peak anonymous memory (heapref's own
# memory, sampled every ms, without the mapped dump); the whole process's wall (the
# total), user+system CPU and peak RSS with the mapping; and a check of the reached
# totals against gen's facts, so that a broken analysis cannot post a good time: gen's
# kept_objects / kept_bytes (what it allocated and keeps, counted by itself) <= heapref's
# reached <= the runtime's live heap at dump time (memstats_heap_objects /
# memstats_heap_alloc, which add the runtime's own objects and, for maps, their storage).
# Then a summary table, a table per phase (ns per object in the dump and the phase's wall
# against the floor), the 10M/1M ratios of the shapes (linear time => the ratio of their
# objects: ~10, ~16 for small) and the issue's goals for mixed-4g, and for each
# 1 GiB-class set (mixed-1g, small-1g, records-1g) whether its total is within 10x its
# floor (issue 33). The process line adds its system CPU time, and one more run under
# `strace -f -c` counts heapref's system calls (fails above 100,000: a system call per
# object or per drain shows as millions).
# Exit status: 0, or 1 if heapref failed or a check failed.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/bench_dump_file.sh

runs=3
big_runs=2
heapref=
reach=false
reach_max=1300000000
threads=()
sets=()
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --big-runs) big_runs=$2; shift 2 ;;
    --heapref) heapref=$2; shift 2 ;;
    --reach) reach=true; shift ;;
    --reach-max) reach_max=$2; shift 2 ;;
    --threads) threads=(--threads "$2"); shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bench_scale.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) sets+=("$1"); shift ;;
  esac
done
[ ${#sets[@]} -gt 0 ] || sets=(mixed-1g mixed-4g list-1m list-10m map-1m map-10m slice-1m slice-10m small-1m small-1g records-1g)


for s in "${sets[@]}"; do set_args "$s" > /dev/null || exit 2; done

now_ns() { date +%s%N; }
load1() { cut -d' ' -f1 /proc/loadavg; }
seconds() { awk -v ns="$1" 'BEGIN {printf "%.3f", ns / 1e9}'; }

if [ -z "$heapref" ]; then
  bench_build
  heapref=build-bench/heapref
fi
for s in "${sets[@]}"; do
  read -r shape n b <<<"$(set_args "$s")"
  bench_dump "$shape" "$n" "$b"
done

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -m); heapref: $heapref ($(git rev-parse --short HEAD 2>/dev/null || echo ?)$(git diff --quiet HEAD -- src include 2>/dev/null || echo ', modified'))"
echo "built: $("$heapref" --version | sed -n 's/^built //p')"
echo "started: $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"

# floor: cat of the cached file, in seconds: one read to cache it, then the fastest of 3
# (one timed read varied 2x on the loaded machine). Prints the fastest, then all three:
# the floor moves between runs (0.039 to 0.116 s for records-1g here since 11-27,
# docs/performance.md), and every ratio with it.
cat_floor() {
  local i t0 t1 best_ns= all=
  cat "$dump" > /dev/null
  for i in 1 2 3; do
    t0=$(now_ns); cat "$dump" > /dev/null; t1=$(now_ns)
    if [ -z "$best_ns" ] || [ $((t1 - t0)) -lt "$best_ns" ]; then best_ns=$((t1 - t0)); fi
    all+="${all:+, }$(seconds $((t1 - t0)))"
  done
  echo "$(seconds "$best_ns") $all"
}

# analyze_best RUNS: runs heapref once to warm up, as the floor reads the file once
# before timing it (the first mapping of a file just read by `cat` takes 0.4-0.5 s more
# on mixed-4g: its page faults find the pages not yet active), printing that run's wall;
# then RUNS times, keeping the fastest run's stderr in $work/scale.best.err and its
# "wall cpu maxrss_kib" in $best. Returns 1 if heapref failed.
analyze_best() {
  local i t0 t1 wall
  best=
  t0=$(now_ns)
  "$heapref" analyze "${threads[@]}" -o "$work/scale.pb.gz" "$gen" "$dump" 2> "$work/scale.err" || true
  t1=$(now_ns)
  echo "warm-up: $(seconds $((t1 - t0))) s (not counted)"
  for ((i = 0; i < $1; i++)); do
    t0=$(now_ns)
    if ! /usr/bin/time -f '%U %S %M' -o "$work/scale.time" \
        "$heapref" analyze --stats "${threads[@]}" -o "$work/scale.pb.gz" "$gen" "$dump" 2> "$work/scale.err"; then
      echo "heapref failed on $dump:" >&2
      cat "$work/scale.err" >&2
      return 1
    fi
    t1=$(now_ns)
    wall=$(seconds $((t1 - t0)))
    if [ -z "$best" ] || awk -v a="$wall" -v b="${best%% *}" 'BEGIN {exit !(a < b)}'; then
      best="$wall $(awk '{printf "%.3f %d %.3f", $1 + $2, $3, $2}' "$work/scale.time")"
      cp "$work/scale.err" "$work/scale.best.err"
    fi
  done
}

# The --stats line of a phase: "stats: NAME... W s wall C s CPU peak anonymous RSS M MB".
phase_table() {
  awk '/^stats:/ {
    name = $2; for (i = 3; i <= NF - 11; i++) name = name " " $i
    printf "| %-12s | %8.3f | %8.3f | %9.1f |\n", name, $(NF-10), $(NF-7), $(NF-1)
  }' "$work/scale.best.err"
}
peak_anon_mib() { awk '/^stats:/ && $(NF-1) > m {m = $(NF-1)} END {printf "%.1f", m}' "$work/scale.best.err"; }
phase_wall() { awk -v p="$1" '/^stats:/ && index($0, "stats: " p " ") {print $(NF-10)}' "$work/scale.best.err"; }
phase_cpu() { awk -v p="$1" '/^stats:/ && index($0, "stats: " p " ") {print $(NF-7)}' "$work/scale.best.err"; }
reached() { grep -o 'reachable: [0-9]* objects, [0-9]* bytes' "$work/scale.best.err" | awk '{print $2, $4}'; }
dump_objects() { grep -o 'dump: [0-9]* objects' "$work/scale.best.err" | awk '{print $2}'; }
# phase_row SET OBJECTS FLOOR: a row of the per-phase table (ns per object, x the floor).
phase_row() {
  awk -v s="$1" -v o="$2" -v f="$3" '
    /^stats:/ {
      name = $2; for (i = 3; i <= NF - 11; i++) name = name " " $i
      w[name] = $(NF-10)
    }
    END {
      row = sprintf("| %s | %.0f | %.3f", s, o, f)
      n = split("read+index,pass 1,pass 2,output", ph, ",")
      for (i = 1; i <= n; i++)
        row = row sprintf(" | %.1f | %.2fx", w[ph[i]] * 1e9 / o, (f > 0 ? w[ph[i]] / f : 0))
      print row " |"
    }' "$work/scale.best.err"
}

# check_syscalls: one more run under `strace -f -c` counts heapref's system calls. An
# analysis makes a few hundred (open, mmap, madvise, threads); a call in a loop over
# objects or drains shows as millions (a sched_getaffinity per pass-2 drain once made 4
# million), so more than SYSCALL_MAX is a failure. Skipped without strace.
SYSCALL_MAX=100000
check_syscalls() {
  if ! command -v strace > /dev/null; then
    echo "syscalls: skipped (no strace)"
    return 0
  fi
  strace -f -c -o "$work/scale.strace" "$heapref" analyze -o "$work/scale.pb.gz" "$gen" "$dump" 2> /dev/null
  awk -v max="$SYSCALL_MAX" '$NF == "total" {n = $4} END {
    printf "syscalls: %d system calls (strace -f -c), at most %d: %s\n", n, max, n <= max ? "ok" : "FAILED"
    exit n > max
  }' "$work/scale.strace" || { sort -k4 -n -r "$work/scale.strace" | head -5; return 1; }
}

# check_totals OBJECTS BYTES: prints the check against gen's facts; returns 1 on failure.
check_totals() {
  local kept_o kept_b live_o live_b
  kept_o=$(fact kept_objects); kept_b=$(fact kept_bytes)
  live_o=$(fact memstats_heap_objects); live_b=$(fact memstats_heap_alloc)
  awk -v o="$1" -v b="$2" -v ko="$kept_o" -v kb="$kept_b" -v lo="$live_o" -v lb="$live_b" 'BEGIN {
    ok = ko <= o && o <= lo && kb <= b && b <= lb
    # (%.0f, not %d: some awks print %d as a 32-bit number)
    printf "check:   reached %.0f objects, %.0f bytes; gen kept %.0f objects, %.0f bytes (+%.0f, +%.0f); runtime live %.0f objects, %.0f bytes (-%.0f, -%.0f): %s\n",
      o, b, ko, kb, o - ko, b - kb, lo, lb, lo - o, lb - b, ok ? "ok" : "FAILED"
    exit !ok
  }'
}

# check_reach OBJECTS BYTES: reach.py's figures must equal heapref's.
check_reach() {
  local t0 t1 r
  if [ "$size" -gt "$reach_max" ]; then
    echo "reach:   skipped (dump over --reach-max $reach_max bytes)"
    return 0
  fi
  t0=$(now_ns)
  r=$(python3 tests/e2e/reach.py "$dump")
  t1=$(now_ns)
  local ro rb
  ro=$(grep -o '"objects": [0-9]*' <<<"$r" | awk '{print $2}')
  rb=$(grep -o '"bytes": [0-9]*' <<<"$r" | awk '{print $2}')
  if [ "$ro" = "$1" ] && [ "$rb" = "$2" ]; then
    echo "reach:   reach.py reaches $ro objects, $rb bytes: equal ($(seconds $((t1 - t0))) s)"
  else
    echo "reach:   reach.py reaches $ro objects, $rb bytes: DIFFERENT ($(seconds $((t1 - t0))) s)"
    return 1
  fi
}

status=0
summary=
phases=
declare -A total_of cpu_of pass1_of pass1_cpu_of objects_of
for s in "${sets[@]}"; do
  read -r shape n b <<<"$(set_args "$s")"
  bench_dump "$shape" "$n" "$b"
  nruns=$runs
  [ "$size" -lt 2000000000 ] || nruns=$big_runs
  echo
  echo "== $s: $dump, $size bytes (gen: $(fact build_seconds | xargs printf '%.1f') s to build, $(fact dump_seconds | xargs printf '%.1f') s to write, peak RSS $(($(fact peak_rss_bytes) / 1048576)) MiB)"
  load=$(load1)
  read -r floor floor_reads <<<"$(cat_floor)"
  if ! analyze_best "$nruns"; then
    status=1
    summary+="| $s | $((size / 1000000)) | - | - | - | $floor | - | - | - | - | $load | heapref FAILED |"$'\n'
    phases+="| $s | - | $floor | heapref FAILED |"$'\n'
    continue
  fi
  load="$load-$(load1)"
  read -r wall cpu maxrss sys <<<"$best"
  peak=$(peak_anon_mib)
  read -r objs bytes <<<"$(reached)"
  echo "load:    $load (1-minute average before and after the runs); best of $nruns"
  echo "floor:   cat of the cached file: $floor s ($floor_reads s; $(awk -v b="$size" -v f="$floor" 'BEGIN {printf "%.1f", b / f / 1e9}') GB/s)"
  echo "| phase        | wall (s) | CPU (s)  | peak anon (MiB) |"
  echo "|---|---|---|---|"
  phase_table
  printf '| %-12s | %8.3f | %8.3f | %9.1f |\n' "process" "$wall" "$cpu" "$peak"
  echo "process: peak RSS with the mapped dump $((maxrss / 1024)) MiB; system CPU $sys s of $cpu s"
  grep '^heapref: \(go\|reachable\|wrote\)' "$work/scale.best.err" | sed 's/^heapref: /heapref: /'
  check=ok
  check_totals "$objs" "$bytes" || { check=FAILED; status=1; }
  check_syscalls || { check="$check, syscalls FAILED"; status=1; }
  if $reach; then
    check_reach "$objs" "$bytes" || { check="$check, reach.py DIFFERENT"; status=1; }
  fi
  total_of[$s]=$wall
  cpu_of[$s]=$cpu
  pass1_of[$s]=$(phase_wall "pass 1")
  pass1_cpu_of[$s]=$(phase_cpu "pass 1")
  objects_of[$s]=$(dump_objects)
  phases+=$(phase_row "$s" "${objects_of[$s]}" "$floor")$'\n'
  summary+=$(awk -v s="$s" -v size="$size" -v o="$objs" -v w="$wall" -v c="$cpu" -v f="$floor" \
      -v p="$peak" -v l="$load" -v ck="$check" 'BEGIN {
    printf "| %s | %.0f | %.0f | %.2f | %.2f | %.3f | %.1fx | %.0f | %.3f | %.0f | %s | %s |", s, size / 1e6, o, w, c, f,
      (f > 0 ? w / f : 0), p, p * 1048576 / size, w * 1e9 / o, l, ck
  }')$'\n'
done

echo
echo "| dump | size (MB) | objects reached | total wall (s) | CPU (s) | cat floor (s) | total / floor | peak anon (MiB) | peak / size | ns / object | load before-after | check |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s' "$summary"

echo
echo "Per phase: wall ns per object in the dump, and the phase's wall / the cat floor"
echo
echo "| dump | objects in dump | cat floor (s) | read+index ns | / floor | pass 1 ns | / floor | pass 2 ns | / floor | output ns | / floor |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s' "$phases"

echo
for pair in list-1m:list-10m map-1m:map-10m slice-1m:slice-10m small-1m:small-1g; do
  small=${pair%:*} big=${pair#*:}
  if [ -n "${total_of[$small]:-}" ] && [ -n "${total_of[$big]:-}" ]; then
    awk -v s="$big / $small" -v a="${total_of[$small]}" -v b="${total_of[$big]}" \
        -v c="${cpu_of[$small]}" -v d="${cpu_of[$big]}" \
        -v p="${pass1_of[$small]}" -v q="${pass1_of[$big]}" \
        -v x="${pass1_cpu_of[$small]}" -v y="${pass1_cpu_of[$big]}" \
        -v m="${objects_of[$small]}" -v n="${objects_of[$big]}" 'BEGIN {
      printf "%-19s (linear => ~%.1fx, the ratio of objects): total wall %.1fx (%.3f -> %.3f s), CPU %.1fx (%.3f -> %.3f s); pass 1 wall %.1fx (%.3f -> %.3f s), CPU %.1fx (%.3f -> %.3f s)\n",
        s, n / m, b / a, a, b, (c > 0 ? d / c : 0), c, d, (p > 0 ? q / p : 0), p, q, (x > 0 ? y / x : 0), x, y
    }'
  fi
done

for s in mixed-1g small-1g records-1g; do
  line=$(grep "^| $s " <<<"$summary" || true)
  [ -n "$line" ] || continue
  awk -v s="$s" -v line="$line" 'BEGIN {
    split(line, f, "|"); x = f[8] + 0
    if (x > 0)
      printf "goal (issue 33), %s: total %.1fx its cat floor <= 10x: %s\n", s, x, (x <= 10 ? "met" : "NOT met")
  }'
done
if [ -n "${total_of[mixed-4g]:-}" ]; then
  read -r shape n b <<<"$(set_args mixed-4g)"
  bench_dump "$shape" "$n" "$b"
  awk -v line="$(grep '^| mixed-4g ' <<<"$summary")" 'BEGIN {
    split(line, f, "|"); w = f[5] + 0; x = f[8] + 0; r = f[10] + 0
    printf "goals (mixed-4g): total %.2f s < 20 s: %s; %.1fx the cat floor <= 10x: %s; peak anonymous memory %.3fx the dump < 0.3x: %s\n",
      w, (w < 20 ? "met" : "NOT met"), x, (x <= 10 ? "met" : "NOT met"), r, (r < 0.3 ? "met" : "NOT met")
  }'
fi
exit $status
