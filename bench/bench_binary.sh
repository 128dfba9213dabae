#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench_binary.sh - times the binary reader on a large Go binary (testprogs/bigbin:
# net/http, encoding/json, crypto/tls, go/types and most of the rest of the standard
# library): `heapref types --summary` loads the ELF symbols and all DWARF types,
# members, globals and function ranges and prints only the table sizes. Reports wall
# time and peak RSS (/usr/bin/time -v, worst of 3 runs) against the uncompressed size
# of .debug_info. Goal: under 1 s and under 3x .debug_info.
#
# It does so for each Go toolchain in TOOLCHAINS: by default the machine's Go (1.25+
# writes DWARF 5) and go1.24.0 (DWARF 4), which the go command fetches into its module
# cache if needed (GOTOOLCHAIN). It also reports, for each, heapref's own baseline
# (RSS of a run that loads nothing), the first function-variable request (`heapref vars
# --pc` at main.main: it opens the second libdwarf handle, with the location lists)
# and the full `types` listing.
#
# Usage: bench/bench_binary.sh [HEAPREF] [WORKDIR]
#   HEAPREF  the heapref binary (default: build/heapref)
#   WORKDIR  where bigbin is built (default: bench/work)
# Environment: GO (go command, default go); TOOLCHAINS (space-separated GOTOOLCHAIN
# values, "local" for the machine's Go; default "local go1.24.0"); RUNS (default 3).
# DIEs are counted with readelf (binutils) when it is there.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
heapref=${1:-$root/build/heapref}
work=${2:-$root/bench/work}
go=${GO:-go}
toolchains=${TOOLCHAINS:-local go1.24.0}
runs=${RUNS:-3}
mkdir -p "$work"

# measure OUT CMD...: runs CMD under /usr/bin/time -v; sets $wall (s) and $rss (KiB)
measure() {
	out=$1
	shift
	/usr/bin/time -v "$@" > "$out" 2> "$work/time.txt" || true
	wall=$(awk -F': ' '/Elapsed/ { n = split($2, p, ":"); s = 0
		for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.2f", s }' "$work/time.txt")
	rss=$(awk -F': ' '/Maximum resident/ { print $2 }' "$work/time.txt")
}

measure /dev/null "$heapref"
echo "heapref baseline (usage message, nothing loaded): peak RSS ${rss} KiB"
echo

table=
for tc in $toolchains; do
	version=$(GOTOOLCHAIN=$tc $go env GOVERSION)
	bin="$work/bigbin-$version"
	(cd "$root/testprogs" && GOTOOLCHAIN=$tc $go build -buildvcs=false -o "$bin" ./bigbin)
	size=$(stat -c %s "$bin")
	dies=n/a
	if command -v readelf > /dev/null 2>&1; then
		dies=$(readelf --debug-dump=info "$bin" 2> /dev/null |
		       grep -cE '^ *<[0-9]+><[0-9a-f]+>: Abbrev Number: [1-9]' || true)
	fi
	"$heapref" types --summary "$bin" > "$work/summary.txt"
	field() { awk -F'\t' -v k="$1" '$1 == k { print $2 }' "$work/summary.txt"; }
	info=$(field debug_info_bytes)

	echo "== $version: $bin ($size bytes, $dies DIEs)"
	cat "$work/summary.txt"
	worst_wall=0
	worst_rss=0
	i=1
	while [ "$i" -le "$runs" ]; do
		measure /dev/null "$heapref" types --summary "$bin"
		echo "types --summary run $i: wall ${wall} s, peak RSS ${rss} KiB"
		worst_wall=$(awk -v a="$wall" -v b="$worst_wall" 'BEGIN { print (a > b ? a : b) }')
		[ "$rss" -gt "$worst_rss" ] && worst_rss=$rss
		i=$((i + 1))
	done
	ratio=$(awk -v rss="$worst_rss" -v info="$info" 'BEGIN { printf "%.2f", rss * 1024 / info }')
	echo "peak RSS / uncompressed .debug_info: ${ratio}x (goal < 3x); wall ${worst_wall} s (goal < 1 s)"

	pc=$(GOTOOLCHAIN=$tc $go tool nm "$bin" | awk '$3 == "main.main" && !n++ { print $1 }')
	if [ -n "$pc" ]; then
		measure /dev/null "$heapref" vars --pc "0x$pc" "$bin"
		echo "first frame (vars --pc main.main): wall ${wall} s, peak RSS ${rss} KiB"
	fi
	measure /dev/null "$heapref" types "$bin"
	echo "types (full listing): wall ${wall} s, peak RSS ${rss} KiB"
	echo

	row=$(printf '| %s | %s | %s | %s | %s | %s | %s | %s s | %s KiB | %sx |' "$version" \
		"$(field dwarf_version)" "$size" "$dies" "$info" "$(field types)" \
		"$(field functions)" "$worst_wall" "$worst_rss" "$ratio")
	table="$table$row
"
done

echo "| Go | DWARF | binary (B) | DIEs | .debug_info (B) | types | functions | wall | peak RSS | RSS / .debug_info |"
echo "|---|---|---|---|---|---|---|---|---|---|"
printf '%s' "$table"
