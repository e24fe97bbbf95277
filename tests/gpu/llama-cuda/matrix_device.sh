#!/usr/bin/env bash
# The H200 support matrix (docs/support-matrix.md), in one device call of under ~8 minutes: Debian
# sid's llama-server with its CUDA backend, the CUPTI probe attached by flashproof, case
# cases/live-cuda-realistic-fa-on.json (all layers on CUDA0, fused attention expected there):
#   kv   the realistic model (head size 128) over every KV cache type llama-server accepts as a same
#        pair and the mixed pairs that matter (`--kv all`: the runtime data's kv_cache), flag on and off
#   hd   models generated from fixtures/models/realistic.json with head sizes 32..256 (48 has no CUDA
#        Flash Attention kernel; 72 is in ggml-cuda's list), f16 K/V, flag on and off
# Needs the bundle of make_bundle.sh with flashproof in it (bundle_harness.sh); unpacks it and builds
# the probe through run_device.sh (config `setup`) unless FP_WORK already has them.
# usage (repository root, on the device): bash tests/gpu/llama-cuda/matrix_device.sh BUNDLE OUTDIR
# OUTDIR gets (8 files at most): device.txt, matrix-kv.{txt,json}, matrix-hd.{txt,json}, report.html
# (both matrices), matrix.stdout.txt (flashproof's output), matrix-logs.tar.gz (every row's
# evidence.log, timed.log and kernels.tsv).
# env: FP_WORK (default /tmp/fp-llama-cuda), FP_MATRIX_DEADLINE_S (default 450: the kv matrix may run
# until 55% of it, the hd matrix until all of it; a matrix cut short says which rows did not run),
# FP_MATRIX_HEAD_SIZES (default 32,40,48,64,72,80,96,112,128,192,256), FP_MATRIX_KV (default all),
# FP_MATRIX_ROUNDS (default 3), FP_MATRIX_CASE (another case file, e.g. a CPU case for a dry run of
# this script's plumbing on a machine without a GPU).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
B=$(cd "$1" && pwd); O=$2
W=${FP_WORK:-/tmp/fp-llama-cuda}
L=$W/prefix/usr/lib/x86_64-linux-gnu
DEADLINE=${FP_MATRIX_DEADLINE_S:-450}
HEADS=${FP_MATRIX_HEAD_SIZES:-32,40,48,64,72,80,96,112,128,192,256}
KV=${FP_MATRIX_KV:-all}
ROUNDS=${FP_MATRIX_ROUNDS:-3}
t0=$(date +%s)
mkdir -p "$O" "$W"
: >"$W/matrix-device.txt"
log() { printf '[%4ds] %s\n' "$(($(date +%s) - t0))" "$*" | tee -a "$W/matrix-device.txt" >&2; }

if [ ! -f "$W/library-path" ] || [ ! -f "$W/probe-path" ]; then
  log "unpacking the bundle and building the probe (run_device.sh setup)"
  bash "$here/run_device.sh" "$B" "$W/setup-out" setup >/dev/null 2>&1 || { log "run_device.sh setup failed"; }
  cp -f "$W/setup-out/device.txt" "$O/device.txt" 2>/dev/null
fi
[ -f "$W/library-path" ] && [ -f "$W/probe-path" ] || { log "no library path or probe after setup: see device.txt"; exit 1; }
[ -f "$B/flashproof.tar.xz" ] || { log "no flashproof.tar.xz in the bundle (bash tests/gpu/llama-cuda/bundle_harness.sh)"; exit 1; }
mkdir -p "$W/fpbin" && tar -C "$W/fpbin" -xJf "$B/flashproof.tar.xz" || exit 1
# flashproof finds its suite (this checkout) from the working directory and its data through
# FLASHPROOF_SHARE_DIR: the bundle holds the binary only (src/util/shipped_data.h).
mkdir -p "$W/share"
for l in runtime=src/runtime/data prompts=fixtures/prompts models=fixtures/models suite=templates/suite; do
  ln -sfn "$root/${l#*=}" "$W/share/${l%%=*}"
done
export FLASHPROOF_SHARE_DIR=$W/share
mkdir -p "$root/fixtures/models/generated" && cp -f "$W/realistic.gguf" "$root/fixtures/models/generated/realistic.gguf"
export FLASHPROOF_LLAMA_SERVER=$W/prefix/usr/bin/llama-server FLASHPROOF_LOADER=$L/ld-linux-x86-64.so.2
export FLASHPROOF_LIBRARY_PATH=$(cat "$W/library-path") FLASHPROOF_PROBE_LIB=$(cat "$W/probe-path") FLASHPROOF_PROGRESS=lines
export CUDA_CACHE_PATH=$W/jit-cache CUDA_CACHE_MAXSIZE=4294967296 CUDA_MODULE_LOADING=LAZY
fp() { "$L/ld-linux-x86-64.so.2" --library-path "$L:$W/fpbin/lib:$W/drv" "$W/fpbin/flashproof" "$@"; }
{
  echo "suite: $root"
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
  "$FLASHPROOF_LOADER" --library-path "$FLASHPROOF_LIBRARY_PATH" "$FLASHPROOF_LLAMA_SERVER" --version 2>&1 | grep -E '^(version|built)'
  "$FLASHPROOF_LOADER" --library-path "$FLASHPROOF_LIBRARY_PATH" "$FLASHPROOF_LLAMA_SERVER" --help 2>&1 | grep -A1 -E '^-ct[kv],'
  fp gpus 2>&1
} >>"$W/matrix-device.txt"

case_file=${FP_MATRIX_CASE:-$here/cases/live-cuda-realistic-fa-on.json}
rm -rf "$W/m" && mkdir -p "$W/m/kv" "$W/m/hd"
run_matrix() {  # NAME UNTIL_S ARGS...
  local name=$1 until=$2; shift 2
  local left=$((until - ($(date +%s) - t0)))
  if ((left < 20)); then log "$name: not run (deadline)"; return; fi
  log "$name: flashproof matrix $* (at most ${left} s)"
  (cd "$root" && timeout -s TERM -k 20 "$left" "$L/ld-linux-x86-64.so.2" --library-path "$L:$W/fpbin/lib:$W/drv" \
     "$W/fpbin/flashproof" matrix "$case_file" "$@" --rounds "$ROUNDS" --models "$W/models" --out "$W/m/$name/matrix-$name") \
    >>"$O/matrix.stdout.txt" 2>&1
  log "$name: exit $?"
  cp -f "$W/m/$name/matrix-$name/matrix.txt" "$O/matrix-$name.txt" 2>/dev/null
  cp -f "$W/m/$name/matrix-$name/matrix.json" "$O/matrix-$name.json" 2>/dev/null
}
run_matrix kv $((DEADLINE * 55 / 100)) --kv "$KV" --flag on,off
run_matrix hd "$DEADLINE" --head-sizes "$HEADS" --flag on,off --kv f16
fp report "$W/m" -o "$O/report.html" >/dev/null 2>>"$W/matrix-device.txt"
find "$W/m" -name '*.log' -exec gzip -f {} + 2>/dev/null
tar -C "$W" -czf "$O/matrix-logs.tar.gz" m matrix-device.txt 2>/dev/null
cat "$W/matrix-device.txt" >>"$O/device.txt"
log "done; $(du -sh "$O" | cut -f1) under OUTDIR"
cat "$O"/matrix-kv.txt "$O"/matrix-hd.txt 2>/dev/null | grep -vE '^(  |\[|$)' | head -80
