#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Makes the seed corpus of the fuzz targets (tests/fuzz/README.md says what each seed is).
#
#   make_corpus.sh all              rewrites tests/fuzz/corpus/{dump,binary,analyze,core}/,
#                                   tests/fuzz/dict/core.dict and
#                                   tests/fuzz/seedprog/seedprog.sha256
#   make_corpus.sh core OUTDIR [DICT]
#                                   only the core seed (needs gdb), and if DICT is given
#                                   the fuzz_core dictionary of its pointers there
#   make_corpus.sh analyze OUTDIR   only the analyze seeds, into OUTDIR, from the fixed
#                                   binary as built here (scripts/fuzz.sh, when that binary
#                                   differs from the one the committed seeds came from)
#
# Needs go (with GOTOOLCHAIN downloads of the releases below), python3; for `all` also
# gcc, objcopy and qemu-user-static (the big-endian s390x and the arm64 dumps); for the
# dictionary a heapref build (HEAPREF, default build/heapref), which reads the binary's
# DWARF for make_seeds.py coredict.
set -euo pipefail

tools=$(cd "$(dirname "$0")" && pwd)
fuzz=$(dirname "$tools")
repo=$(cd "$fuzz/../.." && pwd)
seeds() { python3 "$tools/make_seeds.py" "$@"; }

work=$(mktemp -d "${TMPDIR:-/tmp}/heapref-corpus.XXXXXX")
trap 'rm -rf "$work"' EXIT

# --- analyze: dumps of the fixed binary, cut down -----------------------------------------
make_analyze() { # outdir
  local out=$1 rc=0 win
  bash "$tools/seed_binary.sh" build "$work/seed" || rc=$?
  [ "$rc" -eq 0 ] || [ "$rc" -eq 10 ] || { echo "make_corpus: cannot build the seed binary" >&2; exit 1; }
  "$work/seed/seedprog" "$work/seed.hdump"
  win=$(seeds bsswindow "$work/seed/seedprog")
  mkdir -p "$out"
  # main's globals and what they reach; no goroutine
  seeds reduce "$work/seed.hdump" "$out/globals" --data 1024 --bss "$win" \
    --goroutines 0 --objects 400 --bytes 40000
  # every goroutine's frames and what they reach; almost no globals
  seeds reduce "$work/seed.hdump" "$out/stacks" --data 64 --bss "${win%%:*}:8" \
    --goroutines 1000 --objects 200 --bytes 20000
  # both, more of the heap
  seeds reduce "$work/seed.hdump" "$out/mixed" --data 2048 --bss "${win%%:*}:4096" \
    --goroutines 1000 --objects 1000 --bytes 60000
  # a few of everything: quick to run, mutations reach every record
  seeds reduce "$work/seed.hdump" "$out/small" --data 64 --bss "$win" \
    --goroutines 3 --objects 40 --bytes 3000
  # the same heap in the go1.3 and go1.4 layouts
  seeds convert "$out/small" "$out/small-go1.3-layout" --minor 3
  seeds convert "$out/small" "$out/small-go1.4-layout" --minor 4
}

# --- dump: hand-made dumps and real ones from several Go releases and architectures ---------
# prog toolchain goarch emulator name: a testprogs program's dump, cut small
# (A release's own go command, as Go before 1.21 cannot build in module mode from a
# GOROOT inside the module cache that GOTOOLCHAIN downloads it to: see tests/e2e/progs.py.)
real_dump() {
  local prog=$1 toolchain=$2 goarch=$3 emu=$4 name=$5 bin="$work/$5.bin" goroot
  goroot=$(GOTOOLCHAIN="$toolchain" go env GOROOT)
  (cd "$repo/testprogs" &&
    env GOTOOLCHAIN=local GOROOT="$goroot" GOMODCACHE="$work/gomodcache" GOARCH="$goarch" \
      CGO_ENABLED=0 GOFLAGS= "$goroot/bin/go" build -trimpath -buildvcs=false -o "$bin" "./$prog")
  $emu "$bin" "$work/$name.hdump" >/dev/null
  seeds reduce "$work/$name.hdump" "$fuzz/corpus/dump/$name" --data 512 --bss 0:512 \
    --goroutines 3 --objects 150 --bytes 12000
}

make_dump() {
  local out="$fuzz/corpus/dump"
  rm -rf "$out" && mkdir -p "$out"
  seeds handmade "$out"
  real_dump cache go1.19.13 amd64 "" go1.19-amd64-cache
  real_dump iface go1.22.12 amd64 "" go1.22-amd64-iface
  real_dump chan go1.24.0 amd64 "" go1.24-amd64-chan
  real_dump closure local amd64 "" go1.26-amd64-closure
  real_dump globals local 386 "" go1.26-386-globals
  real_dump list local s390x qemu-s390x-static go1.26-s390x-list
  real_dump finalizer local arm64 qemu-aarch64-static go1.26-arm64-finalizer
  cp "$fuzz/corpus/analyze/small" "$out/seedprog-small"
  seeds convert "$out/go1.26-amd64-closure" "$out/go1.3-layout-closure" --minor 3
  seeds convert "$out/go1.26-amd64-closure" "$out/go1.4-layout-closure" --minor 4
}

# --- binary: small ELF files ------------------------------------------------------------------
make_binary() {
  local out="$fuzz/corpus/binary" cflags="-nostdlib -static -no-pie -Wl,--build-id=none"
  rm -rf "$out" && mkdir -p "$out"
  python3 "$tools/make_elf.py" >"$work/gostyle.S"
  gcc $cflags -o "$out/gostyle-dwarf4" "$work/gostyle.S"
  objcopy --compress-debug-sections=zlib "$out/gostyle-dwarf4" "$out/gostyle-zlib"
  objcopy --strip-debug "$out/gostyle-dwarf4" "$out/gostyle-nodwarf"
  objcopy --strip-all "$out/gostyle-dwarf4" "$out/gostyle-stripped"
  gcc $cflags -g -O2 -gdwarf-5 -o "$out/c-dwarf5-O2" "$tools/cprog.c"
  gcc $cflags -g -O0 -gdwarf-4 -o "$out/c-dwarf4-O0" "$tools/cprog.c"
  gcc -nostdlib -static-pie -fPIE -Wl,--build-id=none -g -O1 -o "$out/c-pie-dwarf5" "$tools/cprog.c"
}

# --- core: a core of the fixed binary, cut down ---------------------------------------------
# gdb stops the seed program as it exits (after its dump) and writes its core; over 1 GB,
# cut to about 3.9 MB by prune_core.py. The memory profile is on, so that every list the
# core reader follows is there to mutate: memory-profile buckets (runtime.mbuckets) and
# profile specials beside the finalizer's, finalizer blocks (runtime.allfin), Ms,
# goroutines. The linker turns the profile off in a program that never reads it
# (runtime.disableMemoryProfiling, which schedinit applies): gdb clears that before the
# runtime starts, and GODEBUG=memprofilerate=1 samples every allocation. The dictionary
# holds the addresses of the lists' nodes (make_seeds.py coredict).
make_core() { # outdir [dict]
  local out=$1 dict=${2:-} rc=0 keep=()
  local heapref=${HEAPREF:-$repo/build/heapref}
  bash "$tools/seed_binary.sh" build "$work/seed" || rc=$?
  [ "$rc" -eq 0 ] || [ "$rc" -eq 10 ] || { echo "make_corpus: cannot build the seed binary" >&2; exit 1; }
  GODEBUG=memprofilerate=1 gdb -batch -ex 'break runtime.schedinit' -ex run \
    -ex "set var 'runtime.disableMemoryProfiling' = 0" -ex delete \
    -ex 'break runtime.exit' -ex continue -ex "gcore $work/seed.core" \
    --args "$work/seed/seedprog" "$work/seed-core.hdump" >/dev/null 2>&1
  mkdir -p "$out"
  # the in-use spans' memory stays in the file even where it is zeros (with heapref to
  # find the spans; else a span of zeros in a long run of them may be cut out)
  if [ -x "$heapref" ]; then
    read -r -a keep < <(HEAPREF=$heapref seeds corekeep "$work/seed.core" "$work/seed/seedprog")
  fi
  python3 "$tools/prune_core.py" "$work/seed.core" "$out/seed" "${keep[@]}"
  rm -f "$work/seed.core"
  if [ -n "$dict" ]; then
    mkdir -p "$(dirname "$dict")"
    HEAPREF=$heapref seeds coredict "$out/seed" "$work/seed/seedprog" "$dict"
  fi
}

case ${1:-} in
all)
  rm -rf "$fuzz/corpus/analyze"
  make_analyze "$fuzz/corpus/analyze"
  sha256sum "$work/seed/seedprog" | awk '{ print $1 "  seedprog" }' >"$fuzz/seedprog/seedprog.sha256"
  make_dump
  make_binary
  rm -rf "$fuzz/corpus/core"
  make_core "$fuzz/corpus/core" "$fuzz/dict/core.dict"
  du -sh "$fuzz/corpus"/*
  ;;
analyze)
  [ $# -eq 2 ] || { echo "usage: $0 analyze OUTDIR" >&2; exit 2; }
  make_analyze "$2"
  ;;
core)
  [ $# -eq 2 ] || [ $# -eq 3 ] || { echo "usage: $0 core OUTDIR [DICT]" >&2; exit 2; }
  make_core "$2" "${3:-}"
  ;;
*)
  echo "usage: $0 all | analyze OUTDIR | core OUTDIR [DICT]" >&2
  exit 2
  ;;
esac
