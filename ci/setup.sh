#!/usr/bin/env bash
# Installs what flashproof needs on Debian bookworm, idempotently:
#   1. the Debian build packages (system-wide, bookworm only), with the Vulkan loader and Mesa's
#      software Vulkan driver, lavapipe (libvulkan1, mesa-vulkan-drivers) for the vulkan tests;
#   2. Debian sid's llama.cpp, unpacked into a private prefix (never installed system-wide),
#      started through sid's own loader (see ../shared/RUNTIMES.md section 1), with sid's Vulkan
#      backend (libggml0-backend-vulkan). A prefix made before the Vulkan backend was added gets just
#      that package, of its libggml0's version, without a fresh download of the rest.
# Downloads are cached outside the checkout, in $FLASHPROOF_CACHE (default /var/cache/flashproof).
# Prints and records the llama.cpp version it got in $PREFIX/VERSION.
set -euo pipefail

CACHE=${FLASHPROOF_CACHE:-/var/cache/flashproof}
PREFIX=${FLASHPROOF_PREFIX:-$CACHE/sid-prefix}
LOG() { printf 'setup: %s\n' "$*" >&2; }

build_packages=(cmake g++ make pkg-config libgtest-dev libgmock-dev libcurl4-openssl-dev
                nlohmann-json3-dev libdtl-dev python3 python3-numpy python3-yaml xz-utils
                libvulkan1 mesa-vulkan-drivers)

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
mirror_uri() { debian_mirror_uri || exit 1; }

llama_ready() { [ -x "$PREFIX/usr/bin/llama-server" ] && [ -f "$PREFIX/VERSION" ]; }
vulkan_file=usr/lib/x86_64-linux-gnu/ggml/backends0/libggml-vulkan.so

apt_dir="$CACHE/apt"
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
          -o APT::Architecture=amd64 -o APT::Architectures=amd64 -o APT::Sandbox::User=root)
sid_index() {  # the private sid index: fetched when missing or when $1 = fresh
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$CACHE/debs"
  local uri keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  uri=$(mirror_uri)
  printf 'deb [signed-by=%s] %s sid main\n' "$keyring" "$uri" >"$apt_dir/sources.list"
  if [ "${1:-}" = fresh ] || ! ls "$apt_dir"/lists/*_Packages* >/dev/null 2>&1; then
    LOG "fetching the sid package index"
    apt-get "${apt_opts[@]}" update -qq
  fi
}

# Where the prefix's loader and libraries find each backend. ggml loads every backend it finds beside
# the executable (the loader, when started through it): the CPU variants go there. The Vulkan backend
# goes into llama/, which is on the library path but not where ggml looks, so only a launch that
# names it (GGML_BACKEND_PATH=libggml-vulkan.so, the vulkan cases' launch.env) pays for it: creating
# a Vulkan instance and loading the drivers added about 0.4 s to every start here.
link_backends() {
  local libdir=$1/usr/lib/x86_64-linux-gnu b n
  for b in "$libdir"/ggml/backends0/*.so; do
    n=$(basename "$b")
    if [ "$n" = libggml-vulkan.so ]; then ln -sf "../ggml/backends0/$n" "$libdir/llama/$n"
    else ln -sf "ggml/backends0/$n" "$libdir/$n"; fi
  done
}

if ! llama_ready || [ "${FLASHPROOF_REFRESH:-0}" = 1 ]; then
  sid_index fresh
  (cd "$CACHE/debs" && rm -f ./*.deb && apt-get "${apt_opts[@]}" download "${sid_packages[@]}" >/dev/null)
  LOG "unpacking ${#sid_packages[@]} sid packages into $PREFIX"
  rm -rf "$PREFIX.tmp" && mkdir -p "$PREFIX.tmp"
  for deb in "$CACHE"/debs/*.deb; do dpkg -x "$deb" "$PREFIX.tmp"; done
  link_backends "$PREFIX.tmp"
  ( cd "$CACHE/debs" && for deb in *.deb; do dpkg-deb -f "$deb" Package Version | paste -sd' '; done ) >"$PREFIX.tmp/PACKAGES"
  rm -rf "$PREFIX" && mv "$PREFIX.tmp" "$PREFIX"
  libdir="$PREFIX/usr/lib/x86_64-linux-gnu"
  "$libdir/ld-linux-x86-64.so.2" --library-path "$libdir:$libdir/llama" "$PREFIX/usr/bin/llama-server" --version \
    >"$PREFIX/VERSION" 2>&1 || { LOG "llama-server --version failed:"; cat "$PREFIX/VERSION" >&2; exit 1; }
elif [ ! -f "$PREFIX/$vulkan_file" ]; then
  # A prefix made before the Vulkan backend was added: that one package, of the version its libggml0
  # requires (= the prefix's libggml0), into the prefix as it stands.
  ggml_version=$(awk '$2=="libggml0" {print $4}' "$PREFIX/PACKAGES")
  sid_index
  vk_get() { (cd "$CACHE/debs" && apt-get "${apt_opts[@]}" download "libggml0-backend-vulkan=$ggml_version" >/dev/null 2>&1); }
  if vk_get || { sid_index fresh && vk_get; }; then
    LOG "adding sid's Vulkan backend $ggml_version to $PREFIX"
    dpkg -x "$(ls "$CACHE"/debs/libggml0-backend-vulkan_*.deb | tail -1)" "$PREFIX"
    link_backends "$PREFIX"
    echo "Package: libggml0-backend-vulkan Version: $ggml_version" >>"$PREFIX/PACKAGES"
  else
    LOG "sid no longer has libggml0-backend-vulkan $ggml_version (the prefix's libggml0): the vulkan tests will skip;" \
        "FLASHPROOF_REFRESH=1 bash ci/setup.sh makes a fresh prefix with the current sid llama.cpp"
  fi
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
