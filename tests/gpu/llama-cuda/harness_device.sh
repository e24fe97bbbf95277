#!/usr/bin/env bash
# On the device, after run_device.sh (which unpacked sid's llama-server with the CUDA backend into
# FP_WORK and built the probe): runs flashproof itself on the cases in tests/gpu/llama-cuda/cases/
# (two expect fused attention on CUDA0 and pass; live-cuda-hd48-fa-on must fail: a silent CPU fallback),
# then an A/B of the realistic case, through sid's loader, with the probe attached by the harness (FLASHPROOF_PROBE_LIB).
# usage: harness_device.sh BUNDLE OUTDIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
B=$(cd "$1" && pwd); O=$2
W=${FP_WORK:-/tmp/fp-llama-cuda}
L=$W/prefix/usr/lib/x86_64-linux-gnu
[ -f "$B/flashproof.tar.xz" ] || { echo "harness: no flashproof.tar.xz in the bundle" >&2; exit 0; }
mkdir -p "$W/fpbin" "$O" && tar -C "$W/fpbin" -xJf "$B/flashproof.tar.xz" || exit 1
LIBS=$(cat "$W/library-path")
probe=$(cat "$W/probe-path")
# flashproof finds its suite (this checkout) from the working directory, and its data through
# FLASHPROOF_SHARE_DIR: the bundle holds the binary only (src/util/shipped_data.h).
mkdir -p "$W/share"
for l in runtime=src/runtime/data prompts=fixtures/prompts models=fixtures/models suite=templates/suite; do
  ln -sfn "$root/${l#*=}" "$W/share/${l%%=*}"
done
mkdir -p "$root/fixtures/models/generated" && cp -f "$W/realistic.gguf" "$root/fixtures/models/generated/realistic.gguf"
if [ -f "$B/hd48.gguf.xz" ]; then
  [ -f "$W/hd48.gguf" ] || xz -dc "$B/hd48.gguf.xz" >"$W/hd48.gguf"
  cp -f "$W/hd48.gguf" "$root/fixtures/models/generated/hd48.gguf"
fi
export FLASHPROOF_LLAMA_SERVER=$W/prefix/usr/bin/llama-server FLASHPROOF_LOADER=$L/ld-linux-x86-64.so.2
export FLASHPROOF_LIBRARY_PATH=$LIBS FLASHPROOF_PROBE_LIB=$probe FLASHPROOF_PROGRESS=lines FLASHPROOF_SHARE_DIR=$W/share
export CUDA_CACHE_PATH=$W/jit-cache CUDA_CACHE_MAXSIZE=4294967296 CUDA_MODULE_LOADING=LAZY
fp() { "$L/ld-linux-x86-64.so.2" --library-path "$L:$W/fpbin/lib:$W/drv" "$W/fpbin/flashproof" "$@"; }
{ echo "suite: $root"; fp gpus 2>&1; } >"$W/harness.txt"
for c in "$here"/cases/*.json; do
  n=$(basename "$c" .json)
  echo "== flashproof run $n" >>"$W/harness.txt"
  (cd "$root" && fp run "$c" --out "$W/harness/$n" --results "$W/harness-results" --golden "$W/harness-golden" \
     --record-missing-answers) >>"$W/harness.txt" 2>&1
  echo "exit $?" >>"$W/harness.txt"
  tar -C "$W" -czf "$O/harness.tar.gz" harness.txt harness 2>/dev/null
done
# A/B of the realistic case on the GPU (FP_AB_REPETITIONS launches per arm; 0 skips it).
ab_reps=${FP_AB_REPETITIONS:-3}
if [ "$ab_reps" -gt 0 ]; then
  echo "== flashproof ab live-cuda-realistic-fa-on ($ab_reps launches per arm)" >>"$W/harness.txt"
  (cd "$root" && fp ab "$here/cases/live-cuda-realistic-fa-on.json" --out "$W/harness/ab-live-cuda-realistic-fa-on"      --results "$W/harness-results" --repetitions "$ab_reps" --sustained-s 5 --quiet) >"$W/harness/ab.stdout" 2>&1
  echo "exit $?" >>"$W/harness.txt"
  tar -C "$W" -czf "$O/harness.tar.gz" harness.txt harness 2>/dev/null
fi
cat "$W/harness.txt" >&2
