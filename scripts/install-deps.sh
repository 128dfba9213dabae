#!/usr/bin/env bash
# Installs the Debian packages heapref needs to build and test, if any are missing,
# and checks that a Go toolchain is on PATH (Go programs write the dumps it reads).
# Says what it installs. Needs root (or sudo) only when something is missing.
set -euo pipefail

packages=(cmake make gcc pkg-config libdwarf-dev libelf-dev libprotobuf-c-dev
          protobuf-c-compiler zlib1g-dev libcmocka-dev python3)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "heapref: installing Debian packages: ${missing[*]}"
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
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
