#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Quick start: installs what is missing, builds heapref, runs the bundled example
# program (testprogs/example: a small "leaky service") to write a real heap dump,
# analyses it (heapref analyze) and shows the top reference chains with go tool pprof.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
# Release, from a profile of its own runs on generated heaps (20-40 s more; README,
# "From source", has a plain Release build, in a fresh directory or with -DHEAPREF_PGO=)
bash scripts/build-pgo.sh build >/dev/null
echo "heapref: built build/heapref"

work=examples/work
mkdir -p "$work"
(cd testprogs && go build -buildvcs=false -o "../$work/example" ./example)
"$work/example" "$work/example.hdump" >/dev/null
echo "heapref: the example wrote $work/example.hdump"
echo "running: build/heapref analyze -o $work/example.pb.gz $work/example $work/example.hdump"
echo
build/heapref analyze -o "$work/example.pb.gz" "$work/example" "$work/example.hdump"
echo
echo "the root variables, by the bytes each keeps alive: go tool pprof -tags -tagshow=root $work/example.pb.gz"
echo
go tool pprof -tags -tagshow=root "$work/example.pb.gz" 2>/dev/null | head -8
echo
echo "the same chains as a tree: build/heapref analyze --text $work/example $work/example.hdump"
echo
build/heapref analyze --text "$work/example" "$work/example.hdump" 2>/dev/null
echo
echo "next: go tool pprof -top -cum -unit=MB -tagfocus=root=main.sessions $work/example.pb.gz (what one variable holds),"
echo "      -traces (whole chains), -http=localhost:8080 (flame graph); README.md says which view answers which question"
echo
echo "heapref is build/heapref. To run it as \`heapref\`, install it:"
echo "  cmake --install build --prefix ~/.local   # ~/.local/bin/heapref (~/.local/bin must be on PATH)"
echo "  sudo cmake --install build                # /usr/local/bin/heapref"
