#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages heapref needs to build and test, if any are missing,
# and checks that a Go toolchain is on PATH (Go programs write the dumps it reads).
# With --tests (scripts/test.sh), also what the test matrix (tests/e2e/toolchains.py)
# needs: qemu-user-static, and its Go toolchains fetched into the module cache. With
# --fuzz (scripts/fuzz.sh), also clang and its libFuzzer runtime. With --arm64
# (scripts/build-static.sh arm64, and the tests of heapref built for arm64), the arm64
# cross-compiler and Debian's arm64 libraries (multiarch), and qemu-user to run them.
# Says what it installs. Needs root (or sudo) only when a package is missing.
set -euo pipefail
tests=false fuzz=false arm64=false
for arg in "$@"; do
  case $arg in
    --tests) tests=true ;;
    --fuzz) fuzz=true ;;   # scripts/fuzz.sh: clang and its libFuzzer runtime
    --arm64) arm64=true ;;
    *) echo "usage: install-deps.sh [--tests] [--fuzz] [--arm64]" >&2; exit 2 ;;
  esac
done
sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)

packages=(cmake make gcc pkg-config libdwarf-dev libelf-dev libprotobuf-c-dev
          protobuf-c-compiler zlib1g-dev libcmocka-dev python3)
# qemu-aarch64-static runs the matrix's linux/arm64 test programs
$tests && packages+=(qemu-user-static)
# valgrind: tests/e2e/test_valgrind.py runs heapref under memcheck
$tests && packages+=(valgrind)
# strace: tests/e2e/test_parallel.py counts a system call per analysis
$tests && packages+=(strace)
# a JDK and Maven: tests/e2e/test_hprof.py reads heapref's hprof files with a Java
# heap-dump library from Maven Central (fetched below)
$tests && packages+=(openjdk-17-jdk-headless maven)
# chromium: tests/e2e/test_suspects.py loads the suspects' HTML page in a headless browser
$tests && packages+=(chromium)
# lintian: tests/e2e/test_install.py checks the Debian package with it; file: which
# processor each static file is for
$tests && packages+=(lintian file)
$fuzz && packages+=(clang libclang-rt-14-dev)
# gdb: tools/make_corpus.sh core writes the core seed with gcore (when the seed binary changed)
$fuzz && packages+=(gdb)
# the static arm64 file and the arm64 unit suite: Debian's arm64 packages beside the
# host's (dpkg --add-architecture arm64), linked by the cross-compiler, run under qemu
if $arm64; then
  packages+=(gcc-aarch64-linux-gnu qemu-user-static libc6-dev:arm64 libdwarf-dev:arm64
             libelf-dev:arm64 zlib1g-dev:arm64 libprotobuf-c-dev:arm64 libcmocka-dev:arm64)
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    echo "heapref: adding arm64 as a foreign architecture of dpkg (for the cross build)"
    "${sudo[@]}" dpkg --add-architecture arm64
    "${sudo[@]}" apt-get update -qq
  fi
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "heapref: installing Debian packages: ${missing[*]}"
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
else
  echo "heapref: all Debian packages present (${packages[*]})"
fi

if ! command -v go >/dev/null 2>&1; then
  echo "heapref: no 'go' on PATH: install Go (https://go.dev/dl or Debian's golang-go) to build the test programs" >&2
  exit 1
fi
echo "heapref: using $(go version)"

$tests || exit 0
# The matrix's toolchains: `GOTOOLCHAIN=go1.N.M go version` fetches each through the Go
# module proxy once (about 70 MB each), later runs find it in the module cache.
matrix="$(dirname "$0")/../tests/e2e/toolchains.py"
for t in $(python3 "$matrix" toolchains); do
  # stdout only: the first run also says "go: downloading ..." on stderr
  if ! got=$(GOTOOLCHAIN=$t go version) || [[ $got != "go version $t "* ]]; then
    echo "heapref: cannot get the Go toolchain $t of the test matrix ($matrix): $got" >&2
    echo "heapref: it comes through the Go module proxy (GOPROXY=$(go env GOPROXY)):" \
         "needs network access, and a go >= 1.21 on PATH" >&2
    exit 1
  fi
done
echo "heapref: test matrix toolchains present: $(python3 "$matrix" toolchains | tr '\n' ' ')"
# The hprof reader of tests/e2e/test_hprof.py: the NetBeans profiler's heap library
# (VisualVM's heap walker), from Maven Central into ~/.m2 once.
hprof_reader=org.netbeans.modules:org-netbeans-lib-profiler:RELEASE190
if ! mvn -q -B dependency:get -Dartifact=$hprof_reader >/dev/null; then
  echo "heapref: cannot fetch $hprof_reader from Maven Central (tests/e2e/test_hprof.py needs it)" >&2
  exit 1
fi
echo "heapref: hprof reader present: $hprof_reader"
