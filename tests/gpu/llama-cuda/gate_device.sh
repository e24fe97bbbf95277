#!/usr/bin/env bash
# On the device, after run_device.sh (sid's llama-server with its CUDA backend unpacked into FP_WORK,
# the probe built) and with flashproof in the bundle (bundle_harness.sh): the side-by-side gate on the
# H200 with the gate's defaults, trial by trial, for the detection table of bench/README.md:
#   same      the same build on both sides (A/A): must end "no regression"
#   prompt-N  the candidate's document N% longer (`--candidate-prompt-scale`): real extra prompt
#             tokens on the GPU, the accelerator's settings untouched
#   env-VAR=VALUE  a real runtime change: the candidate is the same build started with VAR=VALUE
#             in its environment (e.g. env-GGML_CUDA_DISABLE_GRAPHS=1, one of ggml-cuda's switches)
#   ub-N      a real runtime change: the candidate started with -ub N (llama.cpp's default micro-batch
#             is 512; ub-256 halves it)
# usage: gate_device.sh BUNDLE OUTDIR [CONDITION:TRIALS ...]   (default: same:3 prompt-2:3)
# On a fresh machine it runs `run_device.sh BUNDLE OUTDIR setup` first (FP_SETUP_DEADLINE_S, 120).
# The issue-22 round (A/A and two real runtime changes, with the gate's defaults):
#   FP_GATE_DEADLINE_S=540 bash tests/gpu/llama-cuda/gate_device.sh .gpu-bundle $OUT same:3 env-GGML_CUDA_DISABLE_GRAPHS=1:2 ub-256:1
# env: FP_GATE_DEADLINE_S (default 420: no trial starts after that many seconds of this script)
#      FP_GATE_CASE (default gate/gate-cuda-realistic-prefill.json; gate/gate-cuda-kernel-time.json
#      gates on the GPU time of the kernels instead)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
B=$(cd "$1" && pwd); O=$2; shift 2
plan=("$@"); ((${#plan[@]})) || plan=(same:3 prompt-2:3)
W=${FP_WORK:-/tmp/fp-llama-cuda}
L=$W/prefix/usr/lib/x86_64-linux-gnu
DEADLINE=${FP_GATE_DEADLINE_S:-420}
t0=$(date +%s)
mkdir -p "$O/gate"
. "$here/device_flashproof.sh"
fp_unpack "$B" || { echo "gate: no flashproof in the bundle" >&2; exit 1; }
# A fresh machine (the device goes back when idle): unpack the runtime and build the probe first.
if [ ! -f "$W/library-path" ] || [ ! -f "$W/probe-path" ]; then
  echo "gate: $W has no runtime yet: run_device.sh setup (log: $O/setup.log)"
  FP_DEADLINE_S=${FP_SETUP_DEADLINE_S:-120} bash "$here/run_device.sh" "$B" "$O" setup >"$O/setup.log" 2>&1 ||
    { echo "gate: setup failed: $O/setup.log" >&2; tail -5 "$O/setup.log" >&2; exit 1; }
fi
LIBS=$(cat "$W/library-path")
mkdir -p "$root/fixtures/models/generated" && cp -f "$W/realistic.gguf" "$root/fixtures/models/generated/realistic.gguf"
# The runtime as one executable, for --baseline-runtime and --candidate-runtime: sid's loader with
# the CUDA libraries on its path (an operator's wrapper script looks the same).
cat >"$W/llama-server-cuda" <<SH
#!/bin/sh
exec "$L/ld-linux-x86-64.so.2" --library-path "$LIBS" "$W/prefix/usr/bin/llama-server" "\$@"
SH
chmod +x "$W/llama-server-cuda"
export FLASHPROOF_PROBE_LIB=$(cat "$W/probe-path") FLASHPROOF_PROGRESS=lines
export CUDA_CACHE_PATH=$W/jit-cache CUDA_CACHE_MAXSIZE=4294967296 CUDA_MODULE_LOADING=LAZY
case_file=$here/${FP_GATE_CASE:-gate/gate-cuda-realistic-prefill.json}
tag=$(basename "$case_file" .json)
table=$O/gate/table-$tag.txt
echo "side-by-side gate on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1), $(nproc) CPUs" >"$table"
for item in "${plan[@]}"; do
  cond=${item%%:*}; trials=${item##*:}
  args=(--baseline-runtime "$W/llama-server-cuda" --candidate-runtime "$W/llama-server-cuda")
  case $cond in
    same) ;;
    prompt-*) args+=(--candidate-prompt-scale "$(awk -v p="${cond#prompt-}" 'BEGIN{printf "%.3f", 1 + p / 100}')") ;;
    env-*=*|ub-*)
      # The candidate as an operator would wrap a changed deployment: one executable.
      wrapper=$W/llama-server-cuda-$cond
      if [ "${cond#env-}" != "$cond" ]; then
        printf '#!/bin/sh
export %s
exec "%s" "$@"
' "${cond#env-}" "$W/llama-server-cuda" >"$wrapper"
      else
        printf '#!/bin/sh
exec "%s" "$@" -ub %s
' "$W/llama-server-cuda" "${cond#ub-}" >"$wrapper"
      fi
      chmod +x "$wrapper"
      args=(--baseline-runtime "$W/llama-server-cuda" --candidate-runtime "$wrapper") ;;
    *) echo "unknown condition $cond" >&2; exit 64 ;;
  esac
  for t in $(seq 1 "$trials"); do
    if (($(date +%s) - t0 > DEADLINE)); then echo "$cond trial $t: not run (deadline)" >>"$table"; continue; fi
    d=$O/gate/$tag-${cond//=/_}-$t
    mkdir -p "$d"
    s=$(date +%s)
    (cd "$root" && fp gate "$case_file" "${args[@]}" --results "$W/gate-results/$tag/${cond//=/_}-$t" --quiet) >"$d/out.txt" 2>&1
    rc=$?
    cp "$W"/gate-results/"$tag/${cond//=/_}-$t"/*/*/gate-*/gate.json "$d/" 2>/dev/null
    echo "$cond trial $t: exit $rc, $(( $(date +%s) - s )) s; $(grep -E '^blocks: ' "$d/out.txt" | head -1); $(sed -n '/^gated figures/,/^reported/p' "$d/out.txt" | grep -E '^  [a-z_]+: ' | sed 's/^  //' | paste -sd'|')" >>"$table"
  done
done
cat "$table"
