# Sourced by harness_device.sh and kernelset_device.sh on the device, after run_device.sh: unpacks
# flashproof from the bundle (BUNDLE/flashproof.tar.xz, bundle_harness.sh) into $W/fpbin, links its
# shipped data (runtime data, prompts, recipes) from this checkout into $W/share (FLASHPROOF_SHARE_DIR),
# puts the realistic model (and hd48 when the bundle has it) where the cases expect them, exports the
# runtime and probe variables, and defines fp: flashproof started through sid's loader.
# Needs: B (bundle), W (FP_WORK), root (repository root). Returns 1 when the bundle has no flashproof,
# 2 when it cannot be unpacked.
L=$W/prefix/usr/lib/x86_64-linux-gnu
[ -f "$B/flashproof.tar.xz" ] || { echo "no flashproof.tar.xz in the bundle (run bundle_harness.sh)" >&2; return 1; }
mkdir -p "$W/fpbin" && tar -C "$W/fpbin" -xJf "$B/flashproof.tar.xz" || return 2
# flashproof finds its suite (this checkout) from the working directory and its data through
# FLASHPROOF_SHARE_DIR: the bundle holds the binary only (src/util/shipped_data.h).
mkdir -p "$W/share"
for l in runtime=src/runtime/data prompts=fixtures/prompts models=fixtures/models suite=templates/suite; do
  ln -sfn "$root/${l#*=}" "$W/share/${l%%=*}"
done
export FLASHPROOF_SHARE_DIR=$W/share
mkdir -p "$root/fixtures/models/generated" && cp -f "$W/realistic.gguf" "$root/fixtures/models/generated/realistic.gguf"
if [ -f "$B/hd48.gguf.xz" ]; then
  [ -f "$W/hd48.gguf" ] || xz -dc "$B/hd48.gguf.xz" >"$W/hd48.gguf"
  cp -f "$W/hd48.gguf" "$root/fixtures/models/generated/hd48.gguf"
fi
export FLASHPROOF_LLAMA_SERVER=$W/prefix/usr/bin/llama-server FLASHPROOF_LOADER=$L/ld-linux-x86-64.so.2
export FLASHPROOF_LIBRARY_PATH=$(cat "$W/library-path") FLASHPROOF_PROBE_LIB=$(cat "$W/probe-path") FLASHPROOF_PROGRESS=lines
export CUDA_CACHE_PATH=$W/jit-cache CUDA_CACHE_MAXSIZE=4294967296 CUDA_MODULE_LOADING=LAZY
fp() { "$L/ld-linux-x86-64.so.2" --library-path "$L:$W/fpbin/lib:$W/drv" "$W/fpbin/flashproof" "$@"; }
# No hd48 model in the bundle: generated here from its recipe (the same seeded bytes as anywhere).
[ -f "$root/fixtures/models/generated/hd48.gguf" ] || (cd "$root" && fp make-model tests/gpu/llama-cuda/models/hd48.json >/dev/null) ||
  echo "flashproof_env.sh: could not generate the hd48 model; its case will skip" >&2
