#!/usr/bin/env bash
# Installs what flashproof needs on Debian bookworm, idempotently:
#   1. the Debian build packages (system-wide, bookworm only), with the Vulkan loader and Mesa's
#      software Vulkan driver, lavapipe (libvulkan1, mesa-vulkan-drivers) for the vulkan tests;
#   2. Debian sid's llama.cpp, unpacked into a private prefix (never installed system-wide),
#      started through sid's own loader (see docs/runtimes.md section 1), with sid's Vulkan
#      backend (libggml0-backend-vulkan; Mesa's lavapipe from bookworm runs it on the CPU), at exactly the
#      versions ci/sid.lock names: the runtime changes only when the lock does.
# Downloads are cached outside the checkout, in $FLASHPROOF_CACHE (default /var/cache/flashproof),
# one .deb per version in $FLASHPROOF_CACHE/debs: a locked version found there installs without the
# mirror, even after sid has moved on. Prints and records the llama.cpp version in $PREFIX/VERSION.
#
# usage: ci/setup.sh [--update-lock]
#   --update-lock   move to what Debian sid has now, on purpose: rewrites ci/sid.lock, prints what
#                   changed (old -> new per package), installs it. Gate the new build before you
#                   commit the lock: docs/upgrade-gate.md ("A new Debian build").
# env: FLASHPROOF_CACHE, FLASHPROOF_PREFIX (default $FLASHPROOF_CACHE/sid-prefix),
#      FLASHPROOF_SID_LOCK (default ci/sid.lock), FLASHPROOF_REFRESH=1 (unpack the prefix again),
#      FLASHPROOF_NO_CHROMIUM=1 (no chromium, below)
set -euo pipefail

CACHE=${FLASHPROOF_CACHE:-/var/cache/flashproof}
PREFIX=${FLASHPROOF_PREFIX:-$CACHE/sid-prefix}
LOG() { printf 'setup: %s\n' "$*" >&2; }
LOCK=${FLASHPROOF_SID_LOCK:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/sid.lock}
update_lock=0
for arg in "$@"; do
  case $arg in
    --update-lock) update_lock=1 ;;
    -h | --help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) LOG "unknown argument '$arg' (expected --update-lock or --help)"; exit 64 ;;
  esac
done

build_packages=(cmake g++ make pkg-config libgtest-dev libgmock-dev libcurl4-openssl-dev
                nlohmann-json3-dev libdtl-dev libboost-math-dev libpcre2-dev libssl-dev python3 python3-numpy python3-yaml xz-utils
                libvulkan1 mesa-vulkan-drivers clang-format)

# Debian's chromium renders the HTML report in the report:render_chromium test (that test skips,
# exit 125, without it). Measured here: 41 s (apt-get update included), 290 MB installed;
# FLASHPROOF_NO_CHROMIUM=1 leaves it out.
[ "${FLASHPROOF_NO_CHROMIUM:-0}" = 1 ] || build_packages+=(chromium)

missing=()
for p in "${build_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  LOG "installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- Debian sid's llama.cpp into a private prefix -------------------------------------------
sid_packages=(llama.cpp-tools libllama0 libggml0 libggml0-backend-vulkan python3-gguf
              libc6 libstdc++6 libgcc-s1 libgomp1 libssl3t64 zlib1g)

# shellcheck source=ci/debian_mirror.sh
. "$(dirname "${BASH_SOURCE[0]}")/debian_mirror.sh"
# shellcheck source=ci/sid_lock.sh
. "$(dirname "${BASH_SOURCE[0]}")/sid_lock.sh"

sid_lock_install "${sid_packages[@]}"
cat >"$CACHE/env.sh.tmp.$$" <<ENV
# Written by ci/setup.sh: where the private sid llama.cpp lives.
FLASHPROOF_PREFIX=$PREFIX
FLASHPROOF_LLAMA_SERVER=$PREFIX/usr/bin/llama-server
FLASHPROOF_LOADER=$PREFIX/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
FLASHPROOF_LIBRARY_PATH=$PREFIX/usr/lib/x86_64-linux-gnu:$PREFIX/usr/lib/x86_64-linux-gnu/llama
FLASHPROOF_GGUF_PYTHONPATH=$PREFIX/usr/lib/python3/dist-packages
ENV
mv "$CACHE/env.sh.tmp.$$" "$CACHE/env.sh"
LOG "llama.cpp from Debian sid: $(grep -m1 '^version' "$PREFIX/VERSION" || head -1 "$PREFIX/VERSION")"
