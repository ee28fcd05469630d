#!/usr/bin/env bash
# Installs the build under test into a scratch prefix, then builds a separate
# project against it twice, with find_package(vinfer) and with pkg-config,
# and runs each on a photo. Arguments: BUILD_DIR PHOTO.
set -euo pipefail
build=$1 photo=$2
here=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cmake --install "$build" --prefix "$T/prefix" >/dev/null
for f in include/vinfer/engine.hpp lib/libvinfer.a lib/cmake/vinfer/vinferConfig.cmake lib/pkgconfig/vinfer.pc bin/vinfer; do
  [ -e "$T/prefix/$f" ] || { echo "not installed: $f"; exit 1; }
done
cmake -S "$here" -B "$T/cmake" -DCMAKE_PREFIX_PATH="$T/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$T/cmake" >/dev/null
"$T/cmake/consumer" "$photo"
PKG_CONFIG_PATH="$T/prefix/lib/pkgconfig" c++ -std=c++20 -O1 "$here/main.cpp" -o "$T/pc-consumer" \
  $(PKG_CONFIG_PATH="$T/prefix/lib/pkgconfig" pkg-config --cflags --libs --static vinfer)
"$T/pc-consumer" "$photo"
