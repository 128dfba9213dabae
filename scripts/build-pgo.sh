#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A Release heapref built from a profile of its own runs (profile-guided optimisation,
# GCC): built with counters, run on the training dumps of scripts/pgo-train.sh, built
# again from the counts. The same output byte for byte, a sixth fewer instructions in
# pass 1 and a fifth fewer in the read (docs/performance.md, "Built from a profile").
#   bash scripts/build-pgo.sh [--run-with CMD] BUILD_DIR [CMAKE_ARGS...]
# BUILD_DIR is taken from the source tree's top, as the other scripts' build dirs are.
# --run-with: a command that runs the build's heapref for the training, for a
# cross-compiled build (qemu-aarch64-static: scripts/build-static.sh arm64).
# The profile is kept with a digest of what it was trained on (the sources' contents,
# the arguments, the build's cached options and compiler, the profile's place) and
# reused while that is the same and its counts are there. Needs Go on PATH for the
# training programs; without it, builds without a profile and says so. If the
# training fails, BUILD_DIR is left holding the counting build: run this again.
set -euo pipefail
cd "$(dirname "$0")/.."
run_with=()
if [ "${1:-}" = --run-with ]; then
  [ $# -ge 2 ] || { echo "build-pgo.sh: --run-with needs a command" >&2; exit 2; }
  run_with=(--run-with "$2")
  shift 2
fi
[ $# -ge 1 ] || { echo "usage: build-pgo.sh [--run-with CMD] BUILD_DIR [CMAKE_ARGS...]" >&2; exit 2; }
dir=$1
shift
mkdir -p "$dir"
profile="$(realpath "$dir")/pgo-profile" # absolute: the compiler runs in subdirectories

# The build's own settings are explicit: a directory configured before (the test
# suite's, say) keeps its cache, and a sanitizer must not be trained into the profile.
configure() {
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DHEAPREF_TESTS=OFF \
    -DHEAPREF_SANITIZE=OFF -DHEAPREF_TSAN=OFF -DHEAPREF_FUZZ=OFF \
    -DHEAPREF_PGO_DIR="$profile" "$@" >/dev/null
}
build() { cmake --build "$dir" -j"$(nproc)" >/dev/null; }

# What a profile is trained on. GCC finds a file's counts by the object's absolute
# path, so the profile's place is part of it.
trained_on() {
  local sources=(src include third_party cmake testprogs/gen CMakeLists.txt scripts/pgo-train.sh)
  {
    echo "$profile $*"
    find "${sources[@]}" -type f -print0 | sort -z | xargs -0 sha256sum
    cmake -N -LA "$dir" 2>/dev/null | grep -E '^(HEAPREF_|CMAKE_C_|CMAKE_BUILD_TYPE)' |
      grep -v '^HEAPREF_PGO:'
    # the compiler CMake found (its path, id and version; a toolchain file's too)
    cat "$dir"/CMakeFiles/*/CMakeCCompiler.cmake
  } | sha256sum | cut -d' ' -f1
}

if ! command -v go >/dev/null; then
  echo "heapref: no go on PATH for the training runs: $dir/heapref built without a profile" >&2
  configure "$@" -DHEAPREF_PGO=
  build
  exit 0
fi
# Trained again if what it was trained on changed, or its counts are gone (then a "use"
# cached from before would stop the first configure: it is turned off). The counts
# looked for are the ones CMakeLists.txt's "use" check wants: main.c's, named by gcc
# after the object's absolute path with each / as #.
counts="$profile/$(realpath "$dir" | tr / '#')#CMakeFiles#heapref.dir#src#cli#main.c.gcda"
if [ -f "$counts" ]; then configure "$@"; else configure "$@" -DHEAPREF_PGO=; fi
digest=$(trained_on "$@")
if [ ! -f "$counts" ] || [ "$(cat "$profile/trained-on" 2>/dev/null)" != "$digest" ]; then
  configure "$@" -DHEAPREF_PGO=generate
  build
  rm -rf "$profile"
  bash scripts/pgo-train.sh "${run_with[@]}" "$dir/heapref" "$dir/pgo-train"
  echo "$digest" > "$profile/trained-on"
fi
configure "$@" -DHEAPREF_PGO=use
build
echo "heapref: built $dir/heapref from the profile in $profile"
