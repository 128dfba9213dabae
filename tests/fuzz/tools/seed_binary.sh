#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The fixed binary of the fuzz_analyze target: tests/fuzz/seedprog built reproducibly
# (a pinned Go release, -trimpath, no VCS stamp, no cgo), so that it is byte for byte
# the binary that wrote the committed seed dumps (its sha256 is in
# tests/fuzz/seedprog/seedprog.sha256).
#
#   seed_binary.sh build OUTDIR
#       builds OUTDIR/seedprog; says whether it matches the recorded sha256 and exits
#       0 if it does, 10 if it differs (the committed seeds then do not fit it: see
#       make_corpus.sh analyze), 1 if it cannot build
#   seed_binary.sh run OUTDIR RUNNER INPUT...
#       builds it, then runs RUNNER INPUT... with HEAPREF_FUZZ_BINARY set to it (ctest's
#       fuzz_analyze_inputs); a binary that differs is a warning: the inputs still run
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
SEED_GO=${SEED_GO:-go1.24.0}

build() { # outdir
  local out want got
  out=$(mkdir -p "$1" && cd "$1" && pwd)
  (cd "$here/seedprog" &&
    env GOTOOLCHAIN="$SEED_GO" GOFLAGS= CGO_ENABLED=0 GOOS=linux GOARCH=amd64 GOAMD64=v1 \
      go build -trimpath -buildvcs=false -o "$out/seedprog.tmp" . ) || return 1
  mv "$out/seedprog.tmp" "$out/seedprog"
  want=$(cut -d' ' -f1 "$here/seedprog/seedprog.sha256" 2>/dev/null || true)
  got=$(sha256sum "$out/seedprog" | cut -d' ' -f1)
  if [ "$want" != "$got" ]; then
    echo "seed_binary: $out/seedprog (sha256 $got) differs from the binary of the committed" \
         "seeds ($want): built by another Go release or from changed sources" >&2
    return 10
  fi
  return 0
}

case ${1:-} in
build)
  [ $# -eq 2 ] || { echo "usage: $0 build OUTDIR" >&2; exit 2; }
  build "$2"
  ;;
run)
  [ $# -ge 4 ] || { echo "usage: $0 run OUTDIR RUNNER INPUT..." >&2; exit 2; }
  out=$2 runner=$3
  shift 3
  rc=0
  build "$out" || rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 10 ]; then
    echo "seed_binary: cannot build the fixed binary" >&2
    exit 1
  fi
  HEAPREF_FUZZ_BINARY="$(cd "$out" && pwd)/seedprog" exec "$runner" "$@"
  ;;
*)
  echo "usage: $0 build OUTDIR | run OUTDIR RUNNER INPUT..." >&2
  exit 2
  ;;
esac
