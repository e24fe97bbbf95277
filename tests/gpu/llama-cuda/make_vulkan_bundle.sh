#!/usr/bin/env bash
# Builds the bundle that carries Debian sid's Vulkan backend of llama.cpp to the H200 device machine
# (docs/gpu-checks.md, "Vulkan on the H200"). Run here, after ci/setup.sh (whose sid prefix holds the
# Vulkan backend) and `build/flashproof make-model` (the realistic model). Writes VKBUNDLE (default
# .gpu-bundle-vulkan in the repository root; git-ignored; name it in the device call's carry):
#   vulkan.tar.xz      the small part, new here: sid's libggml-vulkan.so (the prefix's own, same
#                      version as its libggml0); bookworm's Vulkan loader (libvulkan1) and libglvnd0
#                      (libGLdispatch.so.0, which the NVIDIA Vulkan driver libGLX_nvidia.so.0 needs);
#                      the small head-size models of models/*.json and the tiny model (a few MB)
#   prefix.tar.xz      the sid prefix without its Vulkan backend  } hard links to .gpu-bundle's
#   realistic.gguf.xz  head size 128, 2 KV heads                  } files where they exist (no new
#                                                                 } xz), else made here
#   flashproof.tar.xz  flashproof itself (bundle_harness.sh), from build/flashproof
#   MANIFEST           versions and sha256 of every file
# The whole folder is what one device call carries (about 40 MB: the CUDA backend stays out).
# bookworm's packages come through this machine's own apt (apt-get download: nothing is installed).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
VKBUNDLE=${1:-$root/.gpu-bundle-vulkan}
MAIN=${FP_MAIN_BUNDLE:-$root/.gpu-bundle}
CACHE=${FLASHPROOF_CACHE:-/var/cache/flashproof}
PREFIX=${FLASHPROOF_PREFIX:-$CACHE/sid-prefix}
FP=${FP_FLASHPROOF:-$root/build/flashproof}
LOG() { printf 'make_vulkan_bundle: %s\n' "$*" >&2; }

lib=usr/lib/x86_64-linux-gnu
vk=$PREFIX/$lib/ggml/backends0/libggml-vulkan.so
[ -f "$vk" ] || { LOG "no Vulkan backend in $PREFIX: run ci/setup.sh first"; exit 1; }
[ -x "$FP" ] || { LOG "no flashproof binary at $FP: build it first"; exit 1; }
realistic=$root/fixtures/models/generated/realistic.gguf
[ -f "$realistic" ] || { LOG "no realistic.gguf: run build/flashproof make-model fixtures/models/*.json"; exit 1; }

t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/vk/lib" "$t/vk/models" "$t/debs"
cp "$vk" "$t/vk/libggml-vulkan.so"
(cd "$t/debs" && apt-get -o APT::Sandbox::User=root download libvulkan1 libglvnd0 >/dev/null)
for deb in "$t"/debs/*.deb; do dpkg -x "$deb" "$t/x"; done
cp -a "$t"/x/$lib/libvulkan.so.1* "$t"/x/$lib/libGLdispatch.so.0* "$t/vk/lib/"
# The small models: the tiny model (head size 32) and models/*.json (head sizes 36, 48, 64, 80),
# generated here when missing.
"$FP" make-model "$root/fixtures/models/tiny.json" "$here"/models/*.json >/dev/null
cp "$root/fixtures/models/generated/tiny.gguf" "$t/vk/models/"
for r in "$here"/models/*.json; do
  cp "$root/fixtures/models/generated/$(basename "$r" .json).gguf" "$t/vk/models/"
done
{
  for deb in "$t"/debs/*.deb; do echo "bookworm: $(dpkg-deb -f "$deb" Package Version | paste -sd' ')"; done
  echo "vulkan backend: $(awk '$2=="libggml0-backend-vulkan"' "$PREFIX/PACKAGES")"
  echo "prefix libggml0: $(awk '$2=="libggml0"' "$PREFIX/PACKAGES")"
  (cd "$t/vk" && sha256sum libggml-vulkan.so models/*.gguf)
} >"$t/vk/VERSIONS"

rm -rf "$VKBUNDLE" && mkdir -p "$VKBUNDLE"
LOG "compressing the Vulkan part (xz -9; about a minute on 2 cores)"
tar -C "$t/vk" -cf - . | xz -T0 -9 >"$VKBUNDLE/vulkan.tar.xz"
# The parts the CUDA bundle already has, as they are; made here only where it does not have them.
share() {  # NAME MAKE-COMMAND...
  local name=$1; shift
  if [ -f "$MAIN/$name" ]; then ln "$MAIN/$name" "$VKBUNDLE/$name" 2>/dev/null || cp "$MAIN/$name" "$VKBUNDLE/$name"
  else LOG "making $name (not in $MAIN)"; "$@" >"$VKBUNDLE/$name"; fi
}
share prefix.tar.xz sh -c "tar -C '$PREFIX' --exclude=./$lib/ggml/backends0/libggml-vulkan.so --exclude=./$lib/llama/libggml-vulkan.so -cf - . | xz -T0 -9"
share realistic.gguf.xz xz -T0 -6 -c "$realistic"
{
  echo "made: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "llama-server: $(grep -m1 '^version' "$PREFIX/VERSION")"
  sed 's/^/vulkan.tar.xz: /' "$t/vk/VERSIONS"
  echo "realistic.gguf sha256: $(sha256sum "$realistic" | cut -d' ' -f1)"
  (cd "$VKBUNDLE" && sha256sum ./*.xz)
} >"$VKBUNDLE/MANIFEST"
bash "$here/bundle_harness.sh" "$FP" "$VKBUNDLE"
du -ab "$VKBUNDLE" | sort -n >&2
