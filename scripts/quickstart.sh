#!/usr/bin/env bash
# Quick start: installs what is missing, builds heapref, runs the bundled example
# program (testprogs/example: a small "leaky service") to write a real heap dump,
# and shows what heapref makes of it.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DHEAPREF_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
echo "heapref: built build/heapref"

work=examples/work
mkdir -p "$work"
(cd testprogs && go build -buildvcs=false -o "../$work/example" ./example)
"$work/example" "$work/example.hdump" >/dev/null
echo "heapref: the example wrote $work/example.hdump; running: build/heapref info $work/example.hdump"
echo
build/heapref info "$work/example.hdump"
