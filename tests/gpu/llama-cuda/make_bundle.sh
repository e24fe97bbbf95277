#!/usr/bin/env bash
# Builds the bundle that carries Debian sid's CUDA backend of llama.cpp to the H200 device machine
# (docs/gpu-checks.md, "A real llama-server with the CUDA backend"). Run here, on the bookworm build
# machine, after ci/setup.sh (which made the private sid prefix). Writes BUNDLE (default
# .gpu-bundle in the repository root; list it in .git/info/exclude and name it in the device call's
# carry):
#   prefix.tar.xz               the sid prefix of ci/setup.sh (llama-server, sid's loader and libraries)
#   libggml-cuda.sm90.so.xz     sid's libggml0-backend-cuda, cut to the compute_90 PTX (fatbin_keep_arch.py)
#   libcudart.so.12.xz          sid non-free's libcudart12 (CUDA runtime 12.4; the device has CUDA 13 only)
#   realistic.gguf.xz           fixtures/models/generated/realistic.gguf (head size 128, 2 KV heads),
#                               only with FP_BUNDLE_MODEL=1 (run_device.sh generates it otherwise)
#   hd48.gguf.xz                (if generated) the head-size-48 model of models/hd48.json
#   MANIFEST                    package versions, sha256 of every file
# The packages come from the Debian mirror this machine's apt already uses (as ci/setup.sh finds it),
# suite sid, components contrib and non-free, through a private apt state; nothing is installed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
BUNDLE=${1:-$root/.gpu-bundle}
CACHE=${FLASHPROOF_CACHE:-/var/cache/flashproof}
PREFIX=${FLASHPROOF_PREFIX:-$CACHE/sid-prefix}
work=$CACHE/cuda-debs
LOG() { printf 'make_bundle: %s\n' "$*" >&2; }

[ -x "$PREFIX/usr/bin/llama-server" ] || { LOG "no sid prefix at $PREFIX: run ci/setup.sh first"; exit 1; }
[ -f "$root/fixtures/models/generated/realistic.gguf" ] || { LOG "no realistic.gguf: run build/flashproof make-model"; exit 1; }

. "$root/ci/debian_mirror.sh"
mirror_uri() { debian_mirror_uri || exit 1; }

apt_dir=$work/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$work/debs"
printf 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s sid contrib non-free\n' "$(mirror_uri)" \
  >"$apt_dir/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
          -o APT::Architecture=amd64 -o APT::Architectures=amd64 -o APT::Sandbox::User=root)
LOG "fetching the sid contrib/non-free index"
apt-get "${apt_opts[@]}" update -qq
(cd "$work/debs" && rm -f ./*.deb && apt-get "${apt_opts[@]}" download libggml0-backend-cuda libcudart12 >/dev/null)

cuda_deb=$(ls "$work"/debs/libggml0-backend-cuda_*.deb)
cudart_deb=$(ls "$work"/debs/libcudart12_*.deb)
cuda_ver=$(dpkg-deb -f "$cuda_deb" Version)
ggml_ver=$(awk '$2=="libggml0" {print $4}' "$PREFIX/PACKAGES")
# libggml0-backend-cuda must match the prefix's libggml0 exactly (its Depends says so).
[ "$cuda_ver" = "$ggml_ver" ] || { LOG "libggml0-backend-cuda $cuda_ver does not match the prefix's libggml0 $ggml_ver: move the lock to what sid has now (bash ci/setup.sh --update-lock)"; exit 1; }

x=$work/x
rm -rf "$x" && mkdir -p "$x"
dpkg -x "$cuda_deb" "$x"
dpkg -x "$cudart_deb" "$x"
rm -rf "$BUNDLE" && mkdir -p "$BUNDLE"
LOG "cutting libggml-cuda.so to sm_90"
python3 "$here/fatbin_keep_arch.py" "$x/usr/lib/x86_64-linux-gnu/ggml/backends0/libggml-cuda.so" "$work/libggml-cuda.sm90.so" --arch 90
LOG "compressing (xz -9; a minute or two on 2 cores)"
xz -T0 -9 -c "$work/libggml-cuda.sm90.so" >"$BUNDLE/libggml-cuda.sm90.so.xz"
xz -9 -c "$(readlink -f "$x/usr/lib/x86_64-linux-gnu/libcudart.so.12")" >"$BUNDLE/libcudart.so.12.xz"
# Without the Vulkan backend (41 MB; make_vulkan_bundle.sh carries it when wanted).
tar -C "$PREFIX" --exclude=./usr/lib/x86_64-linux-gnu/ggml/backends0/libggml-vulkan.so \
  --exclude=./usr/lib/x86_64-linux-gnu/llama/libggml-vulkan.so -cf - . | xz -T0 -9 >"$BUNDLE/prefix.tar.xz"
# The realistic model (17 MB of random weights, which do not compress) only with FP_BUNDLE_MODEL=1:
# without it run_device.sh generates it on the device with the bundled flashproof (bundle_harness.sh)
# from the committed recipe, and the call stays under the device's 64 MiB carry.
if [ "${FP_BUNDLE_MODEL:-0}" = 1 ]; then
  xz -T0 -6 -c "$root/fixtures/models/generated/realistic.gguf" >"$BUNDLE/realistic.gguf.xz"
else
  rm -f "$BUNDLE/realistic.gguf.xz"
fi
# Optional: the head-size-48 model (build/flashproof make-model tests/gpu/llama-cuda/models/hd48.json).
hd48=$root/fixtures/models/generated/hd48.gguf
[ -f "$hd48" ] && xz -T0 -9 -c "$hd48" >"$BUNDLE/hd48.gguf.xz"
{
  echo "made: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "llama-server: $(grep -m1 '^version' "$PREFIX/VERSION")"
  sed 's/^/prefix: /' "$PREFIX/PACKAGES"
  echo "cuda backend: $(dpkg-deb -f "$cuda_deb" Package Version | paste -sd' ')"
  echo "cuda runtime: $(dpkg-deb -f "$cudart_deb" Package Version | paste -sd' ')"
  echo "libggml-cuda.so sha256 (as packaged): $(sha256sum "$x/usr/lib/x86_64-linux-gnu/ggml/backends0/libggml-cuda.so" | cut -d' ' -f1)"
  echo "libggml-cuda.so sha256 (sm_90 cut):   $(sha256sum "$work/libggml-cuda.sm90.so" | cut -d' ' -f1)"
  echo "realistic.gguf sha256: $(sha256sum "$root/fixtures/models/generated/realistic.gguf" | cut -d' ' -f1)"
  [ -f "$hd48" ] && echo "hd48.gguf sha256: $(sha256sum "$hd48" | cut -d' ' -f1)"
  (cd "$BUNDLE" && sha256sum ./*.xz)
} >"$BUNDLE/MANIFEST"
rm -f "$work/libggml-cuda.sm90.so"
du -ab "$BUNDLE" | sort -n >&2
