#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fuzzes heapref with libFuzzer for a bounded time (tests/fuzz/README.md).
#
# Builds the fuzz targets with clang in build-fuzz/ (AddressSanitizer, UndefinedBehavior-
# Sanitizer, coverage), then runs each for FUZZ_SECONDS on a scratch copy of its seed
# corpus and regression inputs in build-fuzz/run/: the committed corpus never grows.
# Fails if any target crashes, hangs, leaks, trips a sanitizer or a check, or allocates
# more than the memory limit, and prints where the input that did it was saved.
#
# Environment (all optional):
#   FUZZ_SECONDS  run time of each target (default 60)
#   FUZZ_TARGETS  which targets, of "dump binary analyze core" (default all four)
#   FUZZ_RSS_MB   memory limit, also the largest single allocation (default 2048)
#   FUZZ_TIMEOUT  seconds one input may take before it counts as a hang (default 10)
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-dump binary analyze core}
rss_mb=${FUZZ_RSS_MB:-2048}
timeout=${FUZZ_TIMEOUT:-10}
build=build-fuzz
run="$PWD/$build/run"

# --- what it needs: heapref's packages, and clang with its libFuzzer runtime ------------------
bash scripts/install-deps.sh --fuzz

# --- build ---------------------------------------------------------------------------------
echo "=== $build: configure and build the fuzz targets"
CC=clang cmake -S . -B "$build" -DHEAPREF_FUZZ=ON -DHEAPREF_TESTS=OFF -DHEAPREF_WERROR=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
for t in $targets; do
  cmake --build "$build" -j"$(nproc)" --target "fuzz_$t" >/dev/null
done

# --- scratch corpora -------------------------------------------------------------------------
rm -rf "$run"
mkdir -p "$run"
for t in $targets; do
  mkdir -p "$run/corpus/$t" "$run/artifacts/$t"
  cp tests/fuzz/corpus/"$t"/* "$run/corpus/$t/"
  if [ -d "tests/fuzz/regressions/$t" ]; then
    cp tests/fuzz/regressions/"$t"/* "$run/corpus/$t/"
  fi
done

# The analyze and core targets' fixed binary; if the rebuilt one differs from the binary
# that wrote the committed seeds (another Go release, changed sources), new seeds come
# from it.
if [[ " $targets " == *" analyze "* || " $targets " == *" core "* ]]; then
  rc=0
  bash tests/fuzz/tools/seed_binary.sh build "$run/seed" || rc=$?
  if [ "$rc" -eq 10 ]; then
    for t in analyze core; do
      [[ " $targets " == *" $t "* ]] || continue
      echo "heapref: making the $t seeds again from the binary built here"
      rm -f "$run/corpus/$t"/*
      bash tests/fuzz/tools/make_corpus.sh "$t" "$run/corpus/$t"
      if [ -d "tests/fuzz/regressions/$t" ]; then
        cp "tests/fuzz/regressions/$t"/* "$run/corpus/$t/"
      fi
    done
  elif [ "$rc" -ne 0 ]; then
    echo "heapref: cannot build the fixed binary of the analyze and core targets" >&2
    exit 1
  fi
  export HEAPREF_FUZZ_BINARY="$run/seed/seedprog"
fi

# --- fuzz ------------------------------------------------------------------------------------
asan_options=${ASAN_OPTIONS:-detect_leaks=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/fuzz/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
failed=()
for t in $targets; do
  echo "=== fuzz_$t: $seconds s (log: $run/$t.log)"
  rc=0
  # fuzz_binary: full allocation stacks, so that the one suppressed leak (in libdwarf,
  # tests/fuzz/lsan.supp) is matched by its function and no other leak hides behind it
  unwind=
  [ "$t" = binary ] && unwind=:fast_unwind_on_malloc=0
  # fuzz_core's seed is a core of 3.9 MB: libFuzzer would cut inputs to 1 MB; its
  # dictionary holds the addresses of the seed's list nodes (tests/fuzz/README.md)
  maxlen=() dict=()
  [ "$t" = core ] && maxlen=(-max_len=4194304) dict=(-dict=tests/fuzz/dict/core.dict)
  ASAN_OPTIONS="$asan_options$unwind" "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" "${maxlen[@]}" "${dict[@]}" \
    -rss_limit_mb="$rss_mb" -malloc_limit_mb="$rss_mb" -timeout="$timeout" -print_final_stats=1 \
    -artifact_prefix="$run/artifacts/$t/" "$run/corpus/$t" >"$run/$t.log" 2>&1 || rc=$?
  grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' \
    "$run/$t.log" | sed 's/^/  /' || true
  if [ "$rc" -ne 0 ] || compgen -G "$run/artifacts/$t/*" >/dev/null; then
    failed+=("$t")
    echo "heapref: fuzz_$t FAILED (exit $rc). The end of its log:" >&2
    tail -n 40 "$run/$t.log" >&2
    for a in "$run/artifacts/$t"/*; do
      [ -e "$a" ] && echo "heapref: fuzz_$t: failing input saved at $a" >&2
    done
    echo "heapref: reproduce: ${HEAPREF_FUZZ_BINARY:+HEAPREF_FUZZ_BINARY=$HEAPREF_FUZZ_BINARY }$build/tests/fuzz/fuzz_$t INPUT" >&2
  fi
done

if ((${#failed[@]})); then
  echo "heapref: fuzzing found failures in: ${failed[*]}" >&2
  exit 1
fi
echo "heapref: fuzzing found nothing in $seconds s per target ($targets)"
