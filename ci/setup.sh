#!/usr/bin/env bash
# Installs what flashproof needs on Debian bookworm, idempotently:
#   1. the Debian build packages (system-wide, bookworm only);
#   2. Debian sid's llama.cpp, unpacked into a private prefix (never installed system-wide),
#      started through sid's own loader (see ../shared/RUNTIMES.md section 1).
# Downloads are cached outside the checkout, in $FLASHPROOF_CACHE (default /var/cache/flashproof).
# Prints and records the llama.cpp version it got in $PREFIX/VERSION.
set -euo pipefail

CACHE=${FLASHPROOF_CACHE:-/var/cache/flashproof}
PREFIX=${FLASHPROOF_PREFIX:-$CACHE/sid-prefix}
LOG() { printf 'setup: %s\n' "$*" >&2; }

build_packages=(cmake g++ make pkg-config libgtest-dev libgmock-dev libcurl4-openssl-dev
                nlohmann-json3-dev libdtl-dev libssl-dev python3 python3-numpy python3-yaml xz-utils)

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
sid_packages=(llama.cpp-tools libllama0 libggml0 python3-gguf
              libc6 libstdc++6 libgcc-s1 libgomp1 libssl3t64 zlib1g)

# shellcheck source=ci/debian_mirror.sh
. "$(dirname "${BASH_SOURCE[0]}")/debian_mirror.sh"
mirror_uri() { debian_mirror_uri || exit 1; }

llama_ready() { [ -x "$PREFIX/usr/bin/llama-server" ] && [ -f "$PREFIX/VERSION" ]; }

if ! llama_ready || [ "${FLASHPROOF_REFRESH:-0}" = 1 ]; then
  apt_dir="$CACHE/apt"
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$CACHE/debs"
  uri=$(mirror_uri)
  keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  printf 'deb [signed-by=%s] %s sid main\n' "$keyring" "$uri" >"$apt_dir/sources.list"
  apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
            -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
            -o APT::Architecture=amd64 -o APT::Architectures=amd64 -o APT::Sandbox::User=root)
  LOG "fetching the sid package index"
  apt-get "${apt_opts[@]}" update -qq
  (cd "$CACHE/debs" && rm -f ./*.deb && apt-get "${apt_opts[@]}" download "${sid_packages[@]}" >/dev/null)
  LOG "unpacking ${#sid_packages[@]} sid packages into $PREFIX"
  rm -rf "$PREFIX.tmp" && mkdir -p "$PREFIX.tmp"
  for deb in "$CACHE"/debs/*.deb; do dpkg -x "$deb" "$PREFIX.tmp"; done
  libdir="$PREFIX.tmp/usr/lib/x86_64-linux-gnu"
  # ggml looks for its backends beside the executable, which is the loader when started through it.
  for b in "$libdir"/ggml/backends0/*.so; do ln -sf "ggml/backends0/$(basename "$b")" "$libdir/$(basename "$b")"; done
  ls "$PREFIX.tmp"/var/cache 2>/dev/null >/dev/null || true
  ( cd "$CACHE/debs" && for deb in *.deb; do dpkg-deb -f "$deb" Package Version | paste -sd' '; done ) >"$PREFIX.tmp/PACKAGES"
  rm -rf "$PREFIX" && mv "$PREFIX.tmp" "$PREFIX"
  libdir="$PREFIX/usr/lib/x86_64-linux-gnu"
  "$libdir/ld-linux-x86-64.so.2" --library-path "$libdir:$libdir/llama" "$PREFIX/usr/bin/llama-server" --version \
    >"$PREFIX/VERSION" 2>&1 || { LOG "llama-server --version failed:"; cat "$PREFIX/VERSION" >&2; exit 1; }
fi

cat >"$CACHE/env.sh" <<ENV
# Written by ci/setup.sh: where the private sid llama.cpp lives.
FLASHPROOF_PREFIX=$PREFIX
FLASHPROOF_LLAMA_SERVER=$PREFIX/usr/bin/llama-server
FLASHPROOF_LOADER=$PREFIX/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
FLASHPROOF_LIBRARY_PATH=$PREFIX/usr/lib/x86_64-linux-gnu:$PREFIX/usr/lib/x86_64-linux-gnu/llama
FLASHPROOF_GGUF_PYTHONPATH=$PREFIX/usr/lib/python3/dist-packages
ENV
LOG "llama.cpp from Debian sid: $(grep -m1 '^version' "$PREFIX/VERSION" || head -1 "$PREFIX/VERSION")"
