#!/usr/bin/env bash
# Adds flashproof itself to the device bundle (optional; harness_device.sh runs it there):
# BUNDLE/flashproof.tar.xz with the stripped bookworm binary and the bookworm libraries it needs that
# Debian sid's prefix does not already provide (the device starts it through sid's loader and libc,
# which run bookworm binaries unchanged).
# usage: bundle_harness.sh [FLASHPROOF_BINARY] [BUNDLE]   (defaults: build/flashproof, .gpu-bundle)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
bin=${1:-$root/build/flashproof}
BUNDLE=${2:-$root/.gpu-bundle}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/lib"
cp "$bin" "$t/flashproof" && strip "$t/flashproof"
# sid's libc6, libstdc++6, libgcc-s1, libssl3t64 and zlib1g provide these (ci/setup.sh's prefix).
skip='^(libc|libm|libstdc\+\+|libgcc_s|ld-linux-x86-64|libssl|libcrypto|libz|libresolv|libpthread|libdl|librt)\.so'
ldd "$bin" | awk '/=>/ && $3 ~ /^\// {print $3}' | while read -r l; do
  n=$(basename "$l"); [[ $n =~ $skip ]] || cp -L "$l" "$t/lib/$n"
done
tar -C "$t" -cf - flashproof lib | xz -T0 -9 >"$BUNDLE/flashproof.tar.xz"
echo "flashproof: $(cd "$root" && git describe --always --dirty) ($(stat -c %y "$bin" | cut -d. -f1)); libs: $(ls "$t/lib" | paste -sd' ')" >>"$BUNDLE/MANIFEST"
ls -la "$BUNDLE/flashproof.tar.xz" >&2
