#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One file that runs anywhere the service runs: heapref linked statically (its libraries
# and libc), for linux/amd64 or, cross-compiled, linux/arm64. Installs what is missing
# (scripts/install-deps.sh, --arm64 for the cross-compiler and Debian's arm64 libraries),
# builds in build-static-ARCH/ and says where the file is and how big. The amd64 file is
# built from a profile of its own runs (scripts/build-pgo.sh; Go on PATH for those).
#   bash scripts/build-static.sh [amd64|arm64] [--package]
# --package: also the Debian package of that file (cpack -G DEB), in build-static-ARCH/.
set -euo pipefail
cd "$(dirname "$0")/.."

arch=amd64 package=false
for arg in "$@"; do
  case $arg in
    amd64|arm64) arch=$arg ;;
    --package) package=true ;;
    *) echo "usage: build-static.sh [amd64|arm64] [--package]" >&2; exit 2 ;;
  esac
done
host=$(dpkg --print-architecture)
cross=()
if [ "$arch" != "$host" ]; then
  [ "$arch" = arm64 ] && [ "$host" = amd64 ] ||
    { echo "heapref: build-static.sh cross-compiles from amd64 to arm64 only (this host: $host)" >&2; exit 2; }
  bash scripts/install-deps.sh --arm64
  cross=(-DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/aarch64-linux-gnu.cmake")
else
  bash scripts/install-deps.sh
fi

dir=build-static-$arch
if [ ${#cross[@]} -eq 0 ]; then
  # built from a profile of its own runs (scripts/build-pgo.sh), which a cross-compiled
  # file cannot make here: it would run under qemu
  bash scripts/build-pgo.sh "$dir" -DHEAPREF_STATIC=ON >/dev/null
else
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DHEAPREF_STATIC=ON -DHEAPREF_TESTS=OFF \
    "${cross[@]}" >/dev/null
  cmake --build "$dir" -j"$(nproc)" >/dev/null
fi
echo "heapref: built $dir/heapref, static, linux/$arch, $(stat -c %s "$dir/heapref") bytes"
if $package; then
  (cd "$dir" && cpack -G DEB >/dev/null)
  echo "heapref: packaged $(ls "$dir"/heapref_*_"$arch".deb)"
fi
