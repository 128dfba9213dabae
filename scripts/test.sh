#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole test suite: installs what the tests need, then builds and runs every test
# twice: a normal build with warnings as errors, and a build with AddressSanitizer and
# UndefinedBehaviorSanitizer; then the tests of the threaded code (the reader's halves,
# pass 1's workers and streams) a third time, built with ThreadSanitizer. Unit tests
# (cmocka) and end-to-end tests (real Go programs, real dumps, the real heapref binary)
# all run under ctest. Then each fuzz target runs for a minute (scripts/fuzz.sh, clang).
# The last line says what ran and the verdict, whatever failed on the way:
#   heapref tests: 67 passed, 0 failed, 1 skipped (ctest in build build-asan); fuzzing passed
# and the exit status is non-zero if anything failed (a test, a build, the fuzzing).
set -euo pipefail
cd "$(dirname "$0")/.."

passed=0 failed=0 skipped=0
builds=() broken=()    # the ctest builds that ran; the steps that failed outright
fuzzing="not run" stage="installing the test dependencies"

verdict() {
  local rc=$? line
  [ $rc -eq 0 ] || [ ${#broken[@]} -gt 0 ] || broken+=("$stage (exit $rc)")
  line="heapref tests: $passed passed, $failed failed, $skipped skipped"
  line+=" (ctest in ${builds[*]:-no build}); fuzzing $fuzzing"
  if [ $failed -gt 0 ] || [ ${#broken[@]} -gt 0 ]; then
    [ ${#broken[@]} -eq 0 ] || line+="; FAILED: $(IFS=,; echo "${broken[*]}" | sed 's/,/, /g')"
    echo "$line"
    exit 1
  fi
  echo "$line"
  exit 0
}
trap verdict EXIT

bash scripts/install-deps.sh --tests --arm64
jobs=$(nproc)
work="$PWD/build-e2e-work"   # built Go programs and their dumps, shared by both builds

# The static files for amd64 and arm64 (scripts/build-static.sh), for e2e_static: each
# alone in an empty root.
stage="static builds"
echo "=== $stage"
if bash scripts/build-static.sh amd64 && bash scripts/build-static.sh arm64; then
  export HEAPREF_STATIC_AMD64="$PWD/build-static-amd64/heapref"
  export HEAPREF_STATIC_ARM64="$PWD/build-static-arm64/heapref"
else
  broken+=("static builds")
fi

# Adds one ctest run's counts (its log: one line per test, then "... out of N").
count_tests() { # log
  local total p s
  total=$(sed -n 's/.*tests failed out of \([0-9]*\)$/\1/p' "$1" | tail -1)
  if [ -z "$total" ]; then return 1; fi
  p=$(grep -cE 'Test +#[0-9]+: .* Passed' "$1" || true)
  s=$(grep -cE 'Test +#[0-9]+: .*\*\*\*Skipped' "$1" || true)
  passed=$((passed + p)) skipped=$((skipped + s)) failed=$((failed + total - p - s))
}

run_suite() { # build-dir, extra cmake args...
  local dir=$1; shift
  stage="$dir: configure and build"
  echo "=== $stage"
  # Tests on and no profile, explicitly: the quick start configures build/ without tests
  # and from a profile (scripts/build-pgo.sh), and a cached HEAPREF_TESTS=OFF would leave
  # ctest nothing to run, a cached HEAPREF_PGO=use build the suite from that profile.
  if ! { cmake -S . -B "$dir" -DHEAPREF_TESTS=ON -DHEAPREF_PGO= -DHEAPREF_WERROR=ON -DHEAPREF_E2E_WORK="$work" "$@" >/dev/null &&
         cmake --build "$dir" -j"$jobs" >/dev/null; }; then
    broken+=("$dir build")
    return 0
  fi
  stage="$dir: ctest"
  echo "=== $stage"
  builds+=("$dir")
  (cd "$dir" && ctest --output-on-failure --no-tests=error -j"$jobs" ${ctest_only:+-R "$ctest_only"}) 2>&1 |
    tee "$dir/ctest.log" || true
  count_tests "$dir/ctest.log" || broken+=("$dir ctest (no summary)")
}

run_suite build -DCMAKE_BUILD_TYPE=RelWithDebInfo
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_suite build-asan -DCMAKE_BUILD_TYPE=Debug -DHEAPREF_SANITIZE=ON
# The tests of the code that runs on several threads, under ThreadSanitizer: a data race
# fails them (it found one in pass 1's streams that the other builds passed). The
# suspects' tests read the heap graph on two threads for the shared groups.
TSAN_OPTIONS=halt_on_error=1 ctest_only='^(test_dump_split|test_work_queue|e2e_parallel|e2e_suspects)$' \
  run_suite build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHEAPREF_TSAN=ON

# heapref for an arm64 host, cross-compiled (warnings as errors) and run under qemu-user:
# every unit test and fuzz regression, and the end-to-end analysis of the arm64 matrix
# entry (its Go programs under qemu too) and the man pages (generated there under qemu).
ctest_only='^(test_.*|fuzz_.*|e2e_analyze_arm64|e2e_man)$' \
  run_suite build-arm64 -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/aarch64-linux-gnu.cmake"

# Fuzzing for a bounded time: each libFuzzer target for FUZZ_SECONDS (60 by default) on
# a scratch copy of its seeds (tests/fuzz/README.md). FUZZ_SECONDS=0 skips it.
if [ "${FUZZ_SECONDS:-60}" != 0 ]; then
  stage="fuzzing"
  echo "=== fuzzing, ${FUZZ_SECONDS:-60} s per target"
  if bash scripts/fuzz.sh; then
    fuzzing="passed"
  else
    fuzzing="failed"
    broken+=("fuzzing")
  fi
else
  fuzzing="skipped (FUZZ_SECONDS=0)"
fi
