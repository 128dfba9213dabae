# SPDX-License-Identifier: Apache-2.0
# Cross-compiling heapref for linux/arm64 on Debian: the compiler of gcc-aarch64-linux-gnu
# and the arm64 libraries of Debian's multiarch (dpkg --add-architecture arm64; then
# libdwarf-dev:arm64 and the others, scripts/install-deps.sh --arm64). Test programs and
# the man page generator run under qemu-user (qemu-user-static).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static)
# pkg-config reads the arm64 .pc files only, never the host's.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
