#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A Release heapref built from a profile of its own runs (profile-guided optimisation):
# built with counters, run on the training dumps of scripts/pgo-train.sh, built again
# from the counts. The same output byte for byte, a sixth fewer instructions in pass 1
# and a fifth fewer in the read (docs/performance.md, "Built from a profile").
#   bash scripts/build-pgo.sh [--run-with CMD] BUILD_DIR [CMAKE_ARGS...]
# --run-with: a command that runs the build's heapref for the training, for a
# cross-compiled build (qemu-aarch64-static: scripts/build-static.sh arm64).
# The profile is kept with a digest of the sources and the arguments it was trained
# for, and reused while they are the same (in a git checkout). Needs Go on PATH for
# the training programs; without it, builds without a profile and says so.
set -euo pipefail
cd "$(dirname "$0")/.."
run_with=()
if [ "${1:-}" = --run-with ]; then
  run_with=(--run-with "$2")
  shift 2
fi
[ $# -ge 1 ] || { echo "usage: build-pgo.sh [--run-with CMD] BUILD_DIR [CMAKE_ARGS...]" >&2; exit 2; }
dir=$1
shift
mkdir -p "$dir"
profile="$(realpath "$dir")/pgo-profile" # absolute: the compiler runs in subdirectories

configure() {
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DHEAPREF_TESTS=OFF \
    -DHEAPREF_PGO_DIR="$profile" "$@" >/dev/null
}
build() { cmake --build "$dir" -j"$(nproc)" >/dev/null; }

# What the profile was trained on: the sources as they are (staged or not) and the
# arguments; empty outside a git checkout (then it is trained every time).
trained_on() {
  local paths=(src include third_party cmake CMakeLists.txt testprogs/gen scripts/pgo-train.sh)
  git rev-parse --git-dir >/dev/null 2>&1 || return 0
  { echo "$*"; git ls-files -s -- "${paths[@]}"; git diff HEAD -- "${paths[@]}"; } |
    sha256sum | cut -d' ' -f1
}

if ! command -v go >/dev/null; then
  echo "heapref: no go on PATH for the training runs: $dir/heapref built without a profile" >&2
  configure "$@" -DHEAPREF_PGO=
  build
  exit 0
fi
digest=$(trained_on "$@")
if [ -z "$digest" ] || [ "$(cat "$profile/trained-on" 2>/dev/null)" != "$digest" ]; then
  configure "$@" -DHEAPREF_PGO=generate
  build
  rm -rf "$profile"
  bash scripts/pgo-train.sh "${run_with[@]}" "$dir/heapref" "$dir/pgo-train"
  [ -z "$digest" ] || echo "$digest" > "$profile/trained-on"
fi
configure "$@" -DHEAPREF_PGO=use
build
echo "heapref: built $dir/heapref from the profile in $profile"
