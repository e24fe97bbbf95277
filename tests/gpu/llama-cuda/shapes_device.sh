#!/usr/bin/env bash
# The support matrix at the shapes people deploy (issue 40; docs/support-matrix.md "Real shapes"), in
# one device call with a deadline: for each step of the plan, the model generated on the device from
# its recipe (fixtures/models/shapes/, `flashproof make-model`, streamed: never carried), a case drafted
# by `flashproof new-case` from a plain llama-server command line (all layers on the GPU), then
# `flashproof matrix` over the step's axes (evidence with all three levels, TTFT, decode, KV and compute
# memory) and llama-bench beside it (-fa 0,1) as the peer. Models are deleted when the plan moves on
# (the device disk is 64 GiB).
# usage (repository root, on the device): bash tests/gpu/llama-cuda/shapes_device.sh BUNDLE OUTDIR [STEP...]
#   STEP  NAME[@WEIGHTS]:MATRIX-ARGS, e.g. "llama-3.1-8b:--flag on,auto,off --kv f16 --context 32768" or
#         "llama-3.1-8b@q4_0:--flag on,off --kv f16 --context 32768"; default: $FP_SHAPES_PLAN (one step a line)
# OUTDIR gets: device.txt (the log), summary.txt (every matrix table and llama-bench table), shapes.tar.gz
#   (matrix.txt/json per step, make-model lines, new-case output, llama-bench output, row logs gzipped)
# env: FP_WORK (default /tmp/fp-llama-cuda), FP_SHAPES_DEADLINE_S (default 540: no step starts after
#   its estimate would pass it), FP_SHAPES_ROUNDS (2), FP_SHAPES_MAX_TOKENS (32), FP_SHAPES_PROMPT_CHARS
#   (4000), FP_SHAPES_BENCH (1: llama-bench per model), FP_SHAPES_BENCH_ARGS (-p 4096 -n 32 -r 2),
#   FP_SHAPES_BENCH_FA (0,1; 1 where the bench quantizes V, which llama.cpp refuses without the flag)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
B=$(cd "$1" && pwd); O=$2; shift 2
W=${FP_WORK:-/tmp/fp-llama-cuda}
L=$W/prefix/usr/lib/x86_64-linux-gnu
DEADLINE=${FP_SHAPES_DEADLINE_S:-540}
ROUNDS=${FP_SHAPES_ROUNDS:-2}
MAXTOK=${FP_SHAPES_MAX_TOKENS:-32}
CHARS=${FP_SHAPES_PROMPT_CHARS:-4000}
BENCH=${FP_SHAPES_BENCH:-1}
read -r -a BENCH_ARGS <<<"${FP_SHAPES_BENCH_ARGS:--p 4096 -n 32 -r 2}"
BENCH_FA=${FP_SHAPES_BENCH_FA:-0,1}
steps=("$@")
if ((${#steps[@]} == 0)); then mapfile -t steps < <(printf '%s\n' "${FP_SHAPES_PLAN:-}" | grep -v '^\s*$'); fi
((${#steps[@]})) || { echo "no steps: name them as arguments or in FP_SHAPES_PLAN" >&2; exit 64; }
t0=$(date +%s)
R=$W/shapes
mkdir -p "$O" "$R"
log() { printf '[%4ds] %s\n' "$(($(date +%s) - t0))" "$*" | tee -a "$O/device.txt" >&2; }
pack() {
  : >"$O/summary.txt"
  for f in "$R"/*/matrix.txt; do [ -f "$f" ] && sed -n '1,/^## rows/p' "$f" >>"$O/summary.txt" && echo >>"$O/summary.txt"; done
  for f in "$R"/*.bench.txt; do [ -f "$f" ] && { echo "== $(basename "$f")"; cat "$f"; echo; } >>"$O/summary.txt"; done
  [ -f "$R/make-model.txt" ] && { echo "== make-model"; cat "$R/make-model.txt"; } >>"$O/summary.txt"
  find "$R" -name '*.log' -size +0 -exec gzip -f {} + 2>/dev/null
  tar -C "$W" -czf "$O/shapes.tar.gz" shapes 2>/dev/null
}

if [ ! -f "$W/library-path" ] || [ ! -f "$W/probe-path" ]; then
  log "unpacking the bundle and building the probe (run_device.sh setup)"
  bash "$here/run_device.sh" "$B" "$W/setup-out" setup >/dev/null 2>&1 || log "run_device.sh setup failed"
  cat "$W/setup-out/device.txt" >>"$O/device.txt" 2>/dev/null
fi
[ -f "$W/library-path" ] && [ -f "$W/probe-path" ] || { log "no library path or probe after setup"; pack; exit 1; }
# shellcheck source=tests/gpu/llama-cuda/device_flashproof.sh
. "$here/device_flashproof.sh"
fp_unpack "$B" || { log "no flashproof.tar.xz in the bundle (bash tests/gpu/llama-cuda/bundle_harness.sh)"; exit 1; }
export FLASHPROOF_LLAMA_SERVER=$W/prefix/usr/bin/llama-server FLASHPROOF_LOADER=$L/ld-linux-x86-64.so.2
export FLASHPROOF_LIBRARY_PATH=$(cat "$W/library-path") FLASHPROOF_PROBE_LIB=$(cat "$W/probe-path") FLASHPROOF_PROGRESS=lines
export CUDA_CACHE_PATH=$W/jit-cache CUDA_CACHE_MAXSIZE=4294967296 CUDA_MODULE_LOADING=LAZY
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
  echo "nproc: $(nproc); disk: $(df -h "$root" | tail -1)"
  "$FLASHPROOF_LOADER" --library-path "$FLASHPROOF_LIBRARY_PATH" "$FLASHPROOF_LLAMA_SERVER" --version 2>&1 | grep -E '^(version|built)'
} >>"$O/device.txt"
bench_bin=$W/prefix/usr/bin/llama-bench

current=""  # the model on disk now: NAME@WEIGHTS
for step in "${steps[@]}"; do
  spec=${step%%:*} args=${step#*:}
  name=${spec%@*} weights=f16
  [[ $spec == *@* ]] && weights=${spec#*@}
  recipe=$root/fixtures/models/shapes/$name.json
  [ -f "$recipe" ] || { log "$step: no recipe $recipe"; continue; }
  elapsed=$(($(date +%s) - t0))
  if ((elapsed > DEADLINE)); then log "$step: not run (deadline ${DEADLINE}s passed)"; continue; fi
  tag=$name; [ "$weights" != f16 ] && tag=$name-$weights
  model=$root/fixtures/models/generated/shapes/$tag.gguf
  if [ "$current" != "$tag" ]; then
    [ -n "$current" ] && rm -f "$root/fixtures/models/generated/shapes/$current.gguf"
    wflag=(); [ "$weights" != f16 ] && wflag=(--weight-type "$weights")
    gen_weights=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("weight_type","f16"))' "$recipe")
    [ "$weights" = "$gen_weights" ] && wflag=()
    [ "$weights" = "$gen_weights" ] && [ "$gen_weights" != f16 ] && { tag=$name; model=$root/fixtures/models/generated/shapes/$name.gguf; }
    log "$tag: make-model ${wflag[*]}"
    (cd "$root" && fp make-model "$recipe" "${wflag[@]}") >>"$R/make-model.txt" 2>&1 ||
      { log "$tag: make-model failed"; tail -3 "$R/make-model.txt" >&2; continue; }
    tail -2 "$R/make-model.txt" | tee -a "$O/device.txt" >&2
    current=$tag
    (cd "$root" && fp new-case "shape-$tag" --job chat --max-output-tokens "$MAXTOK" --force --out "$R/cases/shape-$tag.json" -- \
       "$FLASHPROOF_LLAMA_SERVER" -m "$model" -c 32768 -ngl 99 -np 1 -fa on) >"$R/new-case-$tag.txt" 2>&1 ||
      { log "$tag: new-case failed"; cat "$R/new-case-$tag.txt" >&2; continue; }
    if [ "$BENCH" = 1 ]; then
      log "$tag: llama-bench -fa $BENCH_FA ${BENCH_ARGS[*]}"
      timeout 150 "$FLASHPROOF_LOADER" --library-path "$FLASHPROOF_LIBRARY_PATH" "$bench_bin" -m "$model" -ngl 99 -fa "$BENCH_FA" "${BENCH_ARGS[@]}" \
        >"$R/$tag.bench.txt" 2>"$R/$tag.bench.err"
      log "$tag: llama-bench exit $?"; grep -E '^\|' "$R/$tag.bench.txt" >&2
    fi
  fi
  n=$(ls -d "$R"/m-* 2>/dev/null | wc -l)
  out=$R/m-$(printf '%02d' "$n")-$tag
  log "$tag: flashproof matrix $args"
  # shellcheck disable=SC2086
  (cd "$root" && timeout -s TERM -k 20 $((DEADLINE + 60 - ($(date +%s) - t0))) "$L/ld-linux-x86-64.so.2" \
     --library-path "$L:$W/fpbin/lib:$W/drv" "$W/fpbin/flashproof" matrix "$R/cases/shape-$tag.json" $args --rounds "$ROUNDS" \
     --max-tokens "$MAXTOK" --prompt-chars "$CHARS" --out "$out") >>"$R/matrix.stdout.txt" 2>&1
  log "$tag: matrix exit $?"
  [ -f "$out/matrix.txt" ] && sed -n '/^kv (K\/V)/,/^$/p' "$out/matrix.txt" | cut -c1-220 >&2
  pack
done
[ -n "$current" ] && rm -f "$root/fixtures/models/generated/shapes/$current.gguf"
pack
log "done; $(du -sh "$O" | cut -f1) under OUTDIR"
