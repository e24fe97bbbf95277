#!/usr/bin/env bash
# On the device, after run_device.sh (sid's llama-server with its CUDA backend unpacked into FP_WORK,
# the probe built) and with flashproof in the bundle (bundle_harness.sh): the side-by-side gate on the
# H200 with the gate's defaults, trial by trial, for the detection table of bench/README.md:
#   same      the same build on both sides (A/A): must end "no regression"
#   prompt-N  the candidate's document N% longer (`--candidate-prompt-scale`): real extra prompt
#             tokens on the GPU, the accelerator's settings untouched
# usage: gate_device.sh BUNDLE OUTDIR [CONDITION:TRIALS ...]   (default: same:3 prompt-2:3)
# env: FP_GATE_DEADLINE_S (default 420: no trial starts after that many seconds of this script)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
B=$(cd "$1" && pwd); O=$2; shift 2
plan=("$@"); ((${#plan[@]})) || plan=(same:3 prompt-2:3)
W=${FP_WORK:-/tmp/fp-llama-cuda}
L=$W/prefix/usr/lib/x86_64-linux-gnu
DEADLINE=${FP_GATE_DEADLINE_S:-420}
t0=$(date +%s)
mkdir -p "$W/fpbin" "$O/gate"
tar -C "$W/fpbin" -xJf "$B/flashproof.tar.xz" || { echo "gate: no flashproof in the bundle" >&2; exit 1; }
LIBS=$(cat "$W/library-path")
# The suite is this checkout (the working directory); the data comes through FLASHPROOF_SHARE_DIR.
mkdir -p "$W/share"
for l in runtime=src/runtime/data prompts=fixtures/prompts models=fixtures/models suite=templates/suite; do
  ln -sfn "$root/${l#*=}" "$W/share/${l%%=*}"
done
mkdir -p "$root/fixtures/models/generated" && cp -f "$W/realistic.gguf" "$root/fixtures/models/generated/realistic.gguf"
# The runtime as one executable, for --baseline-runtime and --candidate-runtime: sid's loader with
# the CUDA libraries on its path (an operator's wrapper script looks the same).
cat >"$W/llama-server-cuda" <<SH
#!/bin/sh
exec "$L/ld-linux-x86-64.so.2" --library-path "$LIBS" "$W/prefix/usr/bin/llama-server" "\$@"
SH
chmod +x "$W/llama-server-cuda"
export FLASHPROOF_PROBE_LIB=$(cat "$W/probe-path") FLASHPROOF_PROGRESS=lines FLASHPROOF_SHARE_DIR=$W/share
export CUDA_CACHE_PATH=$W/jit-cache CUDA_CACHE_MAXSIZE=4294967296 CUDA_MODULE_LOADING=LAZY
fp() { "$L/ld-linux-x86-64.so.2" --library-path "$L:$W/fpbin/lib:$W/drv" "$W/fpbin/flashproof" "$@"; }
case_file=$here/gate/gate-cuda-realistic-prefill.json
table=$O/gate/table.txt
echo "side-by-side gate on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1), $(nproc) CPUs" >"$table"
for item in "${plan[@]}"; do
  cond=${item%%:*}; trials=${item##*:}
  args=(--baseline-runtime "$W/llama-server-cuda" --candidate-runtime "$W/llama-server-cuda")
  case $cond in
    same) ;;
    prompt-*) args+=(--candidate-prompt-scale "$(awk -v p="${cond#prompt-}" 'BEGIN{printf "%.3f", 1 + p / 100}')") ;;
    *) echo "unknown condition $cond" >&2; exit 64 ;;
  esac
  for t in $(seq 1 "$trials"); do
    if (($(date +%s) - t0 > DEADLINE)); then echo "$cond trial $t: not run (deadline)" >>"$table"; continue; fi
    d=$O/gate/$cond-$t
    mkdir -p "$d"
    s=$(date +%s)
    (cd "$root" && fp gate "$case_file" "${args[@]}" --results "$W/gate-results/$cond-$t" --quiet) >"$d/out.txt" 2>&1
    rc=$?
    cp "$W"/gate-results/"$cond-$t"/*/*/gate-*/gate.json "$d/" 2>/dev/null
    echo "$cond trial $t: exit $rc, $(( $(date +%s) - s )) s; $(grep -E '^blocks: ' "$d/out.txt" | head -1); $(grep -E '^  ttft_ms: ' "$d/out.txt" | head -1 | sed 's/^  //')" >>"$table"
  done
done
cat "$table"
