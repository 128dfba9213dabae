#!/usr/bin/env bash
# The whole test suite: installs what the tests need, then builds and runs every test
# twice: a normal build with warnings as errors, and a build with AddressSanitizer and
# UndefinedBehaviorSanitizer. Unit tests (cmocka) and end-to-end tests (real Go
# programs, real dumps, the real heapref binary) all run under ctest. Then each fuzz
# target runs for a minute (scripts/fuzz.sh, clang).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh --tests
jobs=$(nproc)
work="$PWD/build-e2e-work"   # built Go programs and their dumps, shared by both builds

run_suite() { # build-dir, extra cmake args...
  local dir=$1; shift
  echo "=== $dir: configure and build"
  # Tests on explicitly: the quick start configures build/ without them, and a cached
  # HEAPREF_TESTS=OFF would otherwise leave ctest nothing to run.
  cmake -S . -B "$dir" -DHEAPREF_TESTS=ON -DHEAPREF_WERROR=ON -DHEAPREF_E2E_WORK="$work" "$@" >/dev/null
  cmake --build "$dir" -j"$jobs" >/dev/null
  echo "=== $dir: ctest"
  (cd "$dir" && ctest --output-on-failure --no-tests=error -j"$jobs")
}

run_suite build -DCMAKE_BUILD_TYPE=RelWithDebInfo
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_suite build-asan -DCMAKE_BUILD_TYPE=Debug -DHEAPREF_SANITIZE=ON

# Fuzzing for a bounded time: each libFuzzer target for FUZZ_SECONDS (60 by default) on
# a scratch copy of its seeds (tests/fuzz/README.md). FUZZ_SECONDS=0 skips it.
if [ "${FUZZ_SECONDS:-60}" != 0 ]; then
  echo "=== fuzzing, ${FUZZ_SECONDS:-60} s per target"
  bash scripts/fuzz.sh
fi
