# SPDX-License-Identifier: Apache-2.0
# Sourced by the benchmarks (bash). Its functions:
#
#   bench_build                     builds heapref in build-bench (Release, no tests, from
#                                   a profile: scripts/build-pgo.sh), as users get it
#   bench_dump SHAPE OBJECTS BYTES  makes sure bench/work/ holds the dump testprogs/gen
#                                   writes for `-shape SHAPE -objects OBJECTS -bytes BYTES`
#                                   (BYTES matters for the mixed shape only), generating it
#                                   if missing. Sets $dump, $gen (the binary that wrote the
#                                   dump: heapref needs that very binary), $facts (gen's
#                                   JSON facts) and $size (the dump's bytes).
#   set_args SET                    "shape objects bytes" of a named set (mixed-1g, ...)
#   bench_start DEFAULT_SET... -- SET...
#                                   the sets asked for (else the defaults) into $sets,
#                                   each checked; the Release build made, $heapref set,
#                                   and the machine, commit and load printed
#   bench_best_of TAG CMD...        runs "$heapref CMD... $gen $dump" $BENCH_RUNS times
#                                   (default 2); keeps the fastest run's stdout and stderr
#                                   in $work/TAG.best.out and $work/TAG.best.err, its wall
#                                   seconds in $best, every run's in $walls
#   bench_run_once TAG CMD...       one such run, added to TAG's (best_TAG, walls_TAG;
#                                   set them empty first): runs of two commands in turn
#   bench_result TAG                TAG's fastest and every run's wall into $best, $walls
#   bench_phases TAG                the --stats phases of that run as table rows
#   bench_phase_wall TAG PHASE      one phase's wall seconds
#   bench_peak_anon TAG             its peak anonymous memory (MiB: without the mapped dump)
#
# Each dump keeps its own copy of the gen binary ($dump.gen), so rebuilding gen after a
# change never pairs an old dump with a new binary. A dump is written under a temporary
# name and renamed when complete, so an interrupted generation leaves no half dump.
# The variables $objects and $bytes, when set before sourcing, keep the old interface:
# the mixed dump is made and $dump etc. set at once.
work=bench/work

bench_build() {
  bash scripts/build-pgo.sh build-bench >/dev/null
}

# bench_dump_name SHAPE OBJECTS BYTES: the dump's path (the mixed shape keeps the name
# it had before there were shapes).
bench_dump_name() {
  if [ "$1" = mixed ]; then
    echo "$work/gen-$2-$3.hdump"
  else
    echo "$work/gen-$1-$2.hdump"
  fi
}

bench_dump() {
  local shape=$1 n=$2 b=$3
  dump=$(bench_dump_name "$shape" "$n" "$b")
  gen=$dump.gen
  facts=$dump.facts.json
  # A dump from before $dump.gen existed was written by $work/gen.
  if [ -s "$dump" ] && [ ! -e "$gen" ] && [ -x "$work/gen" ] && [ "$shape" = mixed ]; then
    cp "$work/gen" "$gen"
  fi
  if [ ! -s "$dump" ] || [ ! -x "$gen" ] || [ ! -s "$facts" ]; then
    mkdir -p "$work"
    (cd testprogs && go build -buildvcs=false -o "../$gen.tmp" ./gen)
    echo "generating $dump (-shape $shape -objects $n -bytes $b)..." >&2
    "$gen.tmp" -shape "$shape" -objects "$n" -bytes "$b" "$dump.tmp" > "$facts.tmp"
    mv "$facts.tmp" "$facts"
    mv "$gen.tmp" "$gen"
    mv "$dump.tmp" "$dump"
  fi
  size=$(stat -L -c %s "$dump")
}

# set_args SET: "shape objects bytes" of a named dump set (mixed-1g, list-10m, ...);
# an unknown set is an error (status 1, a message naming it).
set_args() {
  case $1 in
    mixed-1g) echo "mixed 10000000 1073741824" ;;
    mixed-4g) echo "mixed 40000000 4294967296" ;;
    mixed-16g) echo "mixed 160000000 17179869184" ;; # 20 GB: the benchmark's, never CI's
    list-1m|map-1m|slice-1m) echo "${1%-1m} 1000000 0" ;;
    list-10m|map-10m|slice-10m) echo "${1%-10m} 10000000 0" ;;
    small-1m) echo "small 1000000 0" ;;
    small-1g) echo "small 16000000 0" ;;
    records-1g) echo "records 14000000 0" ;;
    goroutines-100k) echo "goroutines 100000 0" ;;
    mixedleak-1g) echo "mixedleak 10000000 1073741824" ;;
    mixedleak-4g) echo "mixedleak 40000000 4294967296" ;;
    *) echo "$(basename "$0"): unknown set $1" >&2; return 1 ;;
  esac
}

# fact KEY: a number from $facts (gen prints one flat JSON object).
fact() {
  grep -o "\"$1\":[-0-9.e+]*" "$facts" | cut -d: -f2
}

if [ -n "${objects:-}" ]; then
  bench_build
  bench_dump mixed "$objects" "${bytes:-1073741824}"
fi

bench_best_of() {
  local tag=$1 i
  printf -v "best_$tag" '%s' ''
  printf -v "walls_$tag" '%s' ''
  for ((i = 0; i < ${BENCH_RUNS:-2}; i++)); do
    bench_run_once "$@" || return 1
  done
  bench_result "$tag"
}
# bench_run_once TAG CMD...: one run of "$heapref CMD... $gen $dump", added to TAG's runs
# (best_TAG, walls_TAG: empty to start); its output kept as bench_best_of's if fastest.
bench_run_once() {
  local tag=$1 t0 t1 wall b w
  shift
  b=best_$tag
  w=walls_$tag
  t0=$(date +%s%N)
  if ! "$heapref" "$@" "$gen" "$dump" > "$work/$tag.out" 2> "$work/$tag.err"; then
    echo "heapref $* failed on $dump:" >&2
    cat "$work/$tag.err" >&2
    return 1
  fi
  t1=$(date +%s%N)
  wall=$(awk -v ns=$((t1 - t0)) 'BEGIN {printf "%.3f", ns / 1e9}')
  printf -v "$w" '%s' "${!w:+${!w} }$wall"
  if [ -z "${!b:-}" ] || awk -v a="$wall" -v b="${!b}" 'BEGIN {exit !(a < b)}'; then
    printf -v "$b" '%s' "$wall"
    cp "$work/$tag.err" "$work/$tag.best.err"
    cp "$work/$tag.out" "$work/$tag.best.out"
  fi
}
# bench_result TAG: TAG's runs as bench_best_of leaves them, in $best and $walls.
bench_result() {
  local b=best_$1 w=walls_$1
  best=${!b}
  walls=${!w}
}
bench_phases() { awk '/^stats:/ {
    name = $2; for (i = 3; i <= NF - 11; i++) name = name " " $i
    printf "| %-12s | %8.3f | %8.3f | %9.1f |\n", name, $(NF-10), $(NF-7), $(NF-1)
  }' "$work/$1.best.err"; }
bench_phase_wall() { awk -v p="$2" '/^stats:/ && index($0, "stats: " p " ") {print $(NF-10)}' "$work/$1.best.err"; }
bench_peak_anon() { awk '/^stats:/ && $(NF-1) > m {m = $(NF-1)} END {printf "%.1f", m}' "$work/$1.best.err"; }

bench_start() {
  local defaults=()
  while [ "$1" != -- ]; do defaults+=("$1"); shift; done
  shift
  sets=("$@")
  [ ${#sets[@]} -gt 0 ] || sets=("${defaults[@]}")
  for s in "${sets[@]}"; do set_args "$s" > /dev/null || exit 2; done
  bench_build
  heapref=build-bench/heapref
  echo "machine: $(nproc) cores, $(uname -m); heapref: $heapref ($(git rev-parse --short HEAD 2>/dev/null || echo ?)$(git diff --quiet HEAD -- src include 2>/dev/null || echo ', modified'))"
  echo "built: $("$heapref" --version | sed -n 's/^built //p')"
  echo "started: $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
}
