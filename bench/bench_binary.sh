#!/bin/sh
# bench_binary.sh - times the binary reader on a large Go binary (testprogs/bigbin:
# net/http, encoding/json, crypto/tls, ...): `heapref types --summary` loads the ELF
# symbols and all DWARF types, members, globals and function ranges and prints only
# the table sizes. Reports wall time and peak RSS (/usr/bin/time -v) against the
# uncompressed size of .debug_info. Goal: under 1 s and under 3x .debug_info.
#
# Usage: bench/bench_binary.sh [HEAPREF] [WORKDIR]
#   HEAPREF  the heapref binary (default: build/heapref)
#   WORKDIR  where bigbin is built (default: bench/work)
# Environment: GO (go command, default go), GOTOOLCHAIN (e.g. go1.24.0 for DWARF 4).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
heapref=${1:-$root/build/heapref}
work=${2:-$root/bench/work}
go=${GO:-go}
mkdir -p "$work"
bin="$work/bigbin-$($go env GOVERSION)"
(cd "$root/testprogs" && $go build -buildvcs=false -o "$bin" ./bigbin)

"$heapref" types --summary "$bin" > "$work/summary.txt"
info=$(awk -F'\t' '$1 == "debug_info_bytes" { print $2 }' "$work/summary.txt")
best_time=; best_rss=
for i in 1 2 3; do
	/usr/bin/time -v "$heapref" types --summary "$bin" > /dev/null 2> "$work/time.txt"
	t=$(awk -F': ' '/Elapsed/ { print $2 }' "$work/time.txt")
	rss=$(awk -F': ' '/Maximum resident/ { print $2 }' "$work/time.txt")
	echo "run $i: wall $t, peak RSS ${rss} KiB"
	best_rss=$rss; best_time=$t
done
/usr/bin/time -v "$heapref" types "$bin" > /dev/null 2> "$work/time-all.txt"
echo "binary:            $bin ($(stat -c %s "$bin") bytes)"
cat "$work/summary.txt"
echo "types (full listing): wall $(awk -F': ' '/Elapsed/ { print $2 }' "$work/time-all.txt"), peak RSS $(awk -F': ' '/Maximum resident/ { print $2 }' "$work/time-all.txt") KiB"
awk -v rss="$best_rss" -v info="$info" 'BEGIN {
	printf "peak RSS / uncompressed .debug_info: %.2fx (goal < 3x)\n", rss * 1024 / info }'
echo "last wall time: $best_time (goal < 1 s)"
