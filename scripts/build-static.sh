#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One file that runs anywhere the service runs: heapref linked statically (its libraries
# and libc), for linux/amd64 or, cross-compiled, linux/arm64. Installs what is missing
# (scripts/install-deps.sh, --arm64 for the cross-compiler and Debian's arm64 libraries),
# builds in build-static-ARCH/ and says where the file is and how big. Each file is built
# from a profile of its own runs (scripts/build-pgo.sh; Go on PATH for those), the arm64
# one's run under qemu-user.
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
# from a profile of its own runs (scripts/build-pgo.sh); the arm64 file's, cross-compiled,
# under qemu-user
run_with=()
[ ${#cross[@]} -eq 0 ] || run_with=(--run-with qemu-aarch64-static)
bash scripts/build-pgo.sh "${run_with[@]}" "$dir" -DHEAPREF_STATIC=ON "${cross[@]}" >/dev/null
echo "heapref: built $dir/heapref, static, linux/$arch, $(stat -c %s "$dir/heapref") bytes"
if $package; then
  (cd "$dir" && cpack -G DEB >/dev/null)
  echo "heapref: packaged $(ls "$dir"/heapref_*_"$arch".deb)"
fi
