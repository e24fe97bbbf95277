#!/usr/bin/env bash
# `flashproof support` against Debian sid's CUDA backend on the device (docs/support-matrix.md, "Ask
# the backend"): the runtime's own libggml and libggml-cuda.so, loaded by the ggml query helper through
# sid's loader with the runtime's library path (as run_device.sh starts llama-server), asked whether
# CUDA0 (and the CPU) support FLASH_ATTN_EXT for
#   public        every public config of fixtures/models/public/configs.json x every KV type
#                 llama-server accepts x KV lengths 4096, 8192, 32768, 131072 x batch 1 and 512
#   realistic-kv  the shape of the recorded H200 matrix (fixtures/models/realistic.json: head 128, 4
#                 heads, 2 KV heads) x every KV pair of `--kv all`, KV length 4096, batch 1 and 512
#   realistic-hd  the same shape with head sizes 32..256 (the recorded head-size matrix), f16 K/V
# No model is loaded, nothing is launched: the whole call is the setup (unpacking, ~10 s) and about
# a second of asking. Needs the bundle of make_bundle.sh with flashproof in it (bundle_harness.sh).
# usage (repository root, on the device): bash tests/gpu/llama-cuda/support_device.sh BUNDLE OUTDIR
# OUTDIR gets device.txt and {public,realistic-kv,realistic-hd}/support.{txt,json}.
# env: FP_WORK (default /tmp/fp-llama-cuda).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
B=$(cd "$1" && pwd); O=$2
W=${FP_WORK:-/tmp/fp-llama-cuda}
L=$W/prefix/usr/lib/x86_64-linux-gnu
mkdir -p "$O" "$W"
t0=$(date +%s)
log() { printf '[%4ds] %s\n' "$(($(date +%s) - t0))" "$*" | tee -a "$O/device.txt" >&2; }

if [ ! -f "$W/library-path" ]; then
  log "unpacking the bundle (run_device.sh setup)"
  bash "$here/run_device.sh" "$B" "$W/setup-out" setup >/dev/null 2>&1 || log "run_device.sh setup failed"
  cat "$W/setup-out/device.txt" >>"$O/device.txt" 2>/dev/null
fi
[ -f "$W/library-path" ] || { log "no library path after setup: see device.txt"; exit 1; }
. "$here/device_flashproof.sh"
fp_unpack "$B" || { log "no flashproof.tar.xz in the bundle (bash tests/gpu/llama-cuda/bundle_harness.sh)"; exit 1; }
# The helper links only libc, libdl and the C++ runtime: built here from its one source file (run
# through sid's loader, as the runtime is, it finds sid's newer libstdc++).
g++ -std=c++17 -O2 -o "$W/flashproof-ggml-query" "$root/src/ggml_query/ggml_query_main.cpp" -ldl >>"$O/device.txt" 2>&1 ||
  { log "building the ggml query helper failed"; exit 1; }
export FLASHPROOF_GGML_QUERY=$W/flashproof-ggml-query
export FLASHPROOF_LLAMA_SERVER=$W/prefix/usr/bin/llama-server FLASHPROOF_LOADER=$L/ld-linux-x86-64.so.2
export FLASHPROOF_LIBRARY_PATH=$(cat "$W/library-path")
export CUDA_CACHE_PATH=$W/jit-cache CUDA_CACHE_MAXSIZE=4294967296 CUDA_MODULE_LOADING=LAZY
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
  "$FLASHPROOF_LOADER" --library-path "$FLASHPROOF_LIBRARY_PATH" "$FLASHPROOF_LLAMA_SERVER" --version 2>&1 | grep -E '^(version|built)'
  "$FLASHPROOF_LOADER" --library-path "$FLASHPROOF_LIBRARY_PATH" --list "$FLASHPROOF_LLAMA_SERVER" 2>&1 | grep -E 'libggml'
} >>"$O/device.txt" 2>&1

ask() {  # NAME ARGS...
  local name=$1; shift
  local s=$(date +%s%N)
  (cd "$root" && timeout -s TERM -k 10 60 "$L/ld-linux-x86-64.so.2" --library-path "$L:$W/fpbin/lib:$W/drv" \
     "$W/fpbin/flashproof" support "$@" --quiet --out "$O/$name") >"$W/support-$name.stdout" 2>&1
  local rc=$?
  log "$name: flashproof support $* -> exit $rc in $((($(date +%s%N) - s) / 1000000)) ms"
  cat "$W/support-$name.stdout" >>"$O/device.txt"
}
ask public --public
ask realistic-kv --recipe fixtures/models/realistic.json --kv all --kv-lengths 4096 --batch 1,512
ask realistic-hd --recipe fixtures/models/realistic.json --head-sizes 32,40,48,64,72,80,96,112,128,192,256 --kv f16 \
  --kv-lengths 4096 --batch 1,512
log "done; $(du -sh "$O" | cut -f1) under OUTDIR"
grep -h -A40 '^summary' "$O"/*/support.txt 2>/dev/null | head -80
