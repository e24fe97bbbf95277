#!/usr/bin/env bash
# Two GPUs (device kind nvidia-h200-x2), after
#   run_device.sh BUNDLE OUTDIR fa_on fa_on_sm_row fa_on_sm_none_mg1
# (fa_on is llama.cpp's default layer split across both GPUs there): flashproof explain on each
# recorded run with the expectations an operator would write, then flashproof run of the two cases in
# cases-2gpu/ (layer split expecting all-gpus: pass; everything on CUDA1 expecting CUDA0: fail), the
# probe attached by the harness. Writes OUTDIR/two-gpu.txt and OUTDIR/two-gpu.tar.gz (the runs).
# usage: two_gpu_device.sh BUNDLE OUTDIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
B=$(cd "$1" && pwd); O=$2
W=${FP_WORK:-/tmp/fp-llama-cuda}
L=$W/prefix/usr/lib/x86_64-linux-gnu
mkdir -p "$W/fpbin" "$O"
tar -C "$W/fpbin" -xJf "$B/flashproof.tar.xz" || { echo "two-gpu: no flashproof in the bundle" >&2; exit 1; }
LIBS=$(cat "$W/library-path")
# flashproof finds its suite (this checkout) from the working directory and its data through
# FLASHPROOF_SHARE_DIR: the bundle holds the binary only (src/util/shipped_data.h).
mkdir -p "$W/share"
for l in runtime=src/runtime/data prompts=fixtures/prompts models=fixtures/models suite=templates/suite; do
  ln -sfn "$root/${l#*=}" "$W/share/${l%%=*}"
done
export FLASHPROOF_SHARE_DIR=$W/share
mkdir -p "$root/fixtures/models/generated" && cp -f "$W/realistic.gguf" "$root/fixtures/models/generated/realistic.gguf"
export FLASHPROOF_LLAMA_SERVER=$W/prefix/usr/bin/llama-server FLASHPROOF_LOADER=$L/ld-linux-x86-64.so.2
export FLASHPROOF_LIBRARY_PATH=$LIBS FLASHPROOF_PROBE_LIB=$(cat "$W/probe-path") FLASHPROOF_PROGRESS=lines
export CUDA_CACHE_PATH=$W/jit-cache CUDA_CACHE_MAXSIZE=4294967296 CUDA_MODULE_LOADING=LAZY
fp() { "$L/ld-linux-x86-64.so.2" --library-path "$L:$W/fpbin/lib:$W/drv" "$W/fpbin/flashproof" "$@"; }
T=$O/two-gpu.txt
{ nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader; fp gpus; } >"$T" 2>&1
explain() {  # RUN EXPECT
  local run=$W/runs/$1.verbose
  [ -f "$run.log.gz" ] || { echo "== $1: not recorded" >>"$T"; return; }
  echo "== explain $1 --expect-backend $2" >>"$T"
  fp explain --runtime llama-server --log "$run.log.gz" --kernels "$run.kernels.tsv" --expect-backend "$2" \
    --model "$W/realistic.gguf" --require log,placement,kernels >>"$T" 2>&1
  echo "exit $?" >>"$T"
}
explain fa_on CUDA0,CUDA1; explain fa_on all-gpus; explain fa_on CUDA0; explain fa_on CUDA1
explain fa_on_sm_row CUDA0,CUDA1; explain fa_on_sm_row CUDA0
explain fa_on_sm_none_mg1 CUDA1; explain fa_on_sm_none_mg1 CUDA0; explain fa_on_sm_none_mg1 all-gpus
for c in "$here"/cases-2gpu/*.json; do
  n=$(basename "$c" .json)
  echo "== flashproof run $n" >>"$T"
  (cd "$root" && fp run "$c" --out "$W/two-gpu/$n" --results "$W/two-gpu-results" --golden "$W/two-gpu-golden" \
     --record-missing-answers) >>"$T" 2>&1
  echo "exit $?" >>"$T"
done
tar -C "$W" -czf "$O/two-gpu.tar.gz" two-gpu 2>/dev/null
cat "$T"
