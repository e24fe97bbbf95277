#!/usr/bin/env bash
# Issue 41's figures on the device (items 1, 3, 4 and 5), in one device call with a deadline: the
# Llama-3.1-8B shape generated on the device from its recipe (fixtures/models/shapes/llama-3.1-8b.json,
# `flashproof make-model`: never carried), a chat case drafted by `flashproof new-case` from a plain
# llama-server command line at -c 32768 (all layers on the GPU), then, step by step while the deadline
# allows:
#   ab            `flashproof ab` at -c 32768 (the flag on against off, sustained phase at concurrency 2):
#                 the decision, the off arm's stalls quoted if any (item 1), the TTFT split (item 2)
#   gate:COND     the side-by-side gate, the same build against the condition (item 3)
#   nightly:COND  a golden recorded from the same build (once), then a night of the condition against it
# where COND is ub384 (-ub 384), nopinned (GGML_CUDA_NO_PINNED=1), same (identical builds) or hostslow (item
# 4: the same build behind tests/side_by_side/delay_proxy.py, which holds each connection's first bytes
# FP_FIGURES_HOST_DELAY_S, default 0.006 s: a host-side slowdown the runtime's own timings do not see;
# 4 ms made TTFT +8.8% on the H100's 8B shape, which at the 6.66% its golden's spread gives needs about
# 24 blocks, 620 s, more than one device call holds).
# A gate step passes the golden the nightly recorded (when one ran before it), so that its host-clock
# figures gate at the minimum effect sized from this machine's spread (item 4). Every step
# prints one line: mode, condition, exit code, decision, wall seconds and launches to the decision
# (item 5), and the kernel figures with what each is per (token, request, launch: item 3).
# usage (repository root, on the device, after make_bundle.sh and bundle_harness.sh here):
#   bash tests/gpu/llama-cuda/figures_device.sh .gpu-bundle $OUT [STEP...]
#   STEP default: ab nightly:same gate:same gate:hostslow gate:ub384 nightly:ub384 gate:nopinned nightly:nopinned
# env: FP_WORK (default /tmp/fp-llama-cuda), FP_FIGURES_DEADLINE_S (default 530: no step starts when the
#   time so far plus its estimate would pass it: the longest step of its mode so far, else 200 s for
#   ab, 150 s for gate, 90 s for nightly (H100, 8B shape: 209, 121-213 and 40-85 s); the whole script
#   stays inside a 550 s call),
#   FP_FIGURES_CONTEXT (32768), FP_FIGURES_MAX_TOKENS (32), FP_FIGURES_AB_ARGS (--repetitions 4 --rounds 1
#   --warmup 1 --sustained-s 10 --concurrency 2), FP_FIGURES_NIGHT_LAUNCHES (3), FP_FIGURES_RECIPE (the
#   recipe, default fixtures/models/shapes/llama-3.1-8b.json; a tiny one for a dry run of the script on a
#   CPU: see tests/gpu/llama-cuda/dry_run_on_cpu.sh)
# OUTDIR gets: device.txt (the log), figures.txt (one line per step), figures.tar.gz (ab.txt/json,
#   gate.json, result.txt of every step, new-case and make-model output; logs gzipped)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
B=$(cd "$1" && pwd); O=$2; shift 2
steps=("$@"); ((${#steps[@]})) || steps=(ab nightly:same gate:same gate:hostslow gate:ub384 nightly:ub384 gate:nopinned nightly:nopinned)
W=${FP_WORK:-/tmp/fp-llama-cuda}
L=$W/prefix/usr/lib/x86_64-linux-gnu
DEADLINE=${FP_FIGURES_DEADLINE_S:-530}
CONTEXT=${FP_FIGURES_CONTEXT:-32768}
MAXTOK=${FP_FIGURES_MAX_TOKENS:-32}
read -r -a AB_ARGS <<<"${FP_FIGURES_AB_ARGS:---repetitions 4 --rounds 1 --warmup 1 --sustained-s 10 --concurrency 2}"
NIGHT_LAUNCHES=${FP_FIGURES_NIGHT_LAUNCHES:-3}
HOST_DELAY=${FP_FIGURES_HOST_DELAY_S:-0.006}
t0=$(date +%s)
R=$W/figures
mkdir -p "$O" "$R"
log() { printf '[%4ds] %s\n' "$(($(date +%s) - t0))" "$*" | tee -a "$O/device.txt" >&2; }
left() { echo $((DEADLINE - ($(date +%s) - t0))); }
pack() {
  find "$R" -name '*.log' -size +0 -exec gzip -f {} + 2>/dev/null
  tar -C "$W" -czf "$O/figures.tar.gz" --exclude='*.gguf' figures 2>/dev/null
}
# Launches a step made: every runtime log it left (evidence, timed, sustained, probed check).
launches_in() { find "$1" \( -name '*.log' -o -name '*.log.gz' \) 2>/dev/null | grep -vc 'ctest' ; }

if [ ! -f "$W/library-path" ] || [ ! -f "$W/probe-path" ]; then
  log "unpacking the bundle and building the probe (run_device.sh setup)"
  FP_DEADLINE_S=120 bash "$here/run_device.sh" "$B" "$W/setup-out" setup >/dev/null 2>&1 || log "run_device.sh setup failed"
fi
[ -f "$W/library-path" ] && [ -f "$W/probe-path" ] || { log "no library path or probe after setup"; exit 1; }
# shellcheck source=tests/gpu/llama-cuda/device_flashproof.sh
. "$here/device_flashproof.sh"
fp_unpack "$B" || { log "no flashproof.tar.xz in the bundle (bash tests/gpu/llama-cuda/bundle_harness.sh)"; exit 1; }
LIBS=$(cat "$W/library-path")
export FLASHPROOF_LLAMA_SERVER=$W/prefix/usr/bin/llama-server FLASHPROOF_LOADER=$L/ld-linux-x86-64.so.2
export FLASHPROOF_LIBRARY_PATH=$LIBS FLASHPROOF_PROBE_LIB=$(cat "$W/probe-path") FLASHPROOF_PROGRESS=lines
export CUDA_CACHE_PATH=$W/jit-cache CUDA_CACHE_MAXSIZE=4294967296 CUDA_MODULE_LOADING=LAZY
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
  echo "nproc: $(nproc); disk: $(df -h "$root" | tail -1)"
  "$FLASHPROOF_LOADER" --library-path "$LIBS" "$FLASHPROOF_LLAMA_SERVER" --version 2>&1 | grep -E '^(version|built)'
} >>"$O/device.txt"

# The runtime as one executable, and one wrapper per condition (as an operator wraps a deployment).
cat >"$W/llama-server-cuda" <<SH
#!/bin/sh
exec "$L/ld-linux-x86-64.so.2" --library-path "$LIBS" "$W/prefix/usr/bin/llama-server" "\$@"
SH
printf '#!/bin/sh\nexec "%s" "$@" -ub 384\n' "$W/llama-server-cuda" >"$W/llama-server-cuda-ub384"
printf '#!/bin/sh\nexport GGML_CUDA_NO_PINNED=1\nexec "%s" "$@"\n' "$W/llama-server-cuda" >"$W/llama-server-cuda-nopinned"
cp "$W/llama-server-cuda" "$W/llama-server-cuda-same"
# hostslow: the runtime listens on a free port, the delay proxy on the port flashproof chose.
printf '#!/bin/sh\nexec bash "%s" "%s" "%s" "$@"\n' "$root/tests/side_by_side/behind_delay_proxy.sh" "$HOST_DELAY" "$W/llama-server-cuda" \
  >"$W/llama-server-cuda-hostslow"
chmod +x "$W"/llama-server-cuda*

recipe=${FP_FIGURES_RECIPE:-fixtures/models/shapes/llama-3.1-8b.json}
[[ $recipe == /* ]] || recipe=$root/$recipe
model=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["output"])' "$recipe")
[[ $model == /* ]] || model=$root/$model
log "$(basename "$recipe" .json): make-model"
(cd "$root" && fp make-model "$recipe") >"$R/make-model.txt" 2>&1 || { log "make-model failed"; tail -3 "$R/make-model.txt" >&2; pack; exit 1; }
tail -2 "$R/make-model.txt" | tee -a "$O/device.txt" >&2
case_file=$R/cases/l8-chat.json
mkdir -p "$R/cases"
(cd "$root" && fp new-case l8-chat --job chat --max-output-tokens "$MAXTOK" --force --out "$case_file" -- \
   "$FLASHPROOF_LLAMA_SERVER" -m "$model" -c "$CONTEXT" -ngl 99 -np 1 -fa on) >"$R/new-case.txt" 2>&1 ||
  { log "new-case failed"; cat "$R/new-case.txt" >&2; pack; exit 1; }

table=$O/figures.txt
{
  echo "# issue 41 figures on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(basename "$recipe" .json), -c $CONTEXT"
  echo "# kernel figures, what each is per (item 3): one definition in both modes since issue 41 item 3"
  echo "#   gpu_kernel_ms_per_token / attention_kernel_ms_per_token: GPU time of every (attention) kernel of one probed"
  echo "#     launch serving the job's load (one request, at most 4 output tokens; the launch's start-up included) over"
  echo "#     that request's prompt + output tokens: per token. nightly: the probed check after each timed launch;"
  echo "#     gate: a probed launch per arm and block. (Before: the gate totalled a probed launch of the timed workload,"
  echo "#     per launch, gpu_kernel_ms, now read from old gate.json as gpu_kernel_ms_per_launch.)"
  echo "# expected: ub384 a regression in both (kernel time per token), same no regression / pass in both,"
  echo "#   nopinned the same verdict on kernel time per token in both (host copies are no kernel: expect no change)"
} >"$table"
declare -A longest=([ab]=200 [gate]=150 [nightly]=90)  # per mode, raised by every step that took longer
golden=$R/golden
for step in "${steps[@]}"; do
  mode=${step%%:*} cond=${step#*:}
  est=${longest[$mode]:-150}
  if (($(left) < est)); then log "$step: not run ($(left) s left, a $mode step takes about $est s)"; echo "$step: not run (deadline)" >>"$table"; continue; fi
  d=$R/$mode-${cond//:/_}
  rm -rf "$d"; mkdir -p "$d"
  s=$(date +%s)
  # No step outlives the deadline: flashproof stops at TERM and writes what it has (incomplete).
  lim=$(( $(left) + 15 ))
  case $mode in
    ab)
      log "ab: flashproof ab ${AB_ARGS[*]}"
      (cd "$root" && timeout -s TERM -k 10 "$lim" "$W/fpbin/fp" ab "$case_file" "${AB_ARGS[@]}" --quiet --out "$d/ab") >"$d/out.txt" 2>&1
      rc=$?
      dec=$(sed -n '/^## Decision/{n;p;q}' "$d/ab/ab.txt" 2>/dev/null)
      extra="$(grep -E '^  (gate|finding|failure)' "$d/ab/ab.txt" 2>/dev/null | cut -c1-200 | paste -sd'|')"
      # Item 2 on the 8B shape: what each arm's runtime logged before its prompts (the host-RAM prompt
      # cache saving the slot's state: its size and time), against its TTFT and prefill.
      for arm in on off; do
        logs=$(find "$d/ab/$arm" -name 'timed.log*' 2>/dev/null)
        [ -n "$logs" ] || continue
        upd=$(zcat -f $logs | grep -o 'prompt cache update took [0-9.]*' | awk '{print $5}' | sort -n | awk '{a[NR]=$1} END{if (NR) printf "median %s ms, max %s ms over %d", a[int((NR+1)/2)], a[NR], NR}')
        st=$(zcat -f $logs | grep -o 'total state size = [0-9.]* MiB' | awk '{print $5}' | sort -n | tail -1)
        echo "ab arm $arm: prompt cache update $upd tasks; largest state saved ${st:-?} MiB" | tee -a "$table" >&2
      done
      grep -E 'ttft_ms|server_prompt_ms|client_minus_server' "$d/ab/ab.txt" | head -6 | sed 's/^/  /' | tee -a "$table" >&2 ;;
    gate)
      gold=(); [ -d "$golden" ] && gold=(--golden "$golden")
      log "gate: $cond ${gold[*]}"
      (cd "$root" && timeout -s TERM -k 10 "$lim" "$W/fpbin/fp" gate "$case_file" --baseline-runtime "$W/llama-server-cuda" \
         --candidate-runtime "$W/llama-server-cuda-$cond" "${gold[@]}" --results "$d/results" --quiet) >"$d/out.txt" 2>&1
      rc=$?
      dec=$(grep -m1 -E '^side-by-side gate: [A-Z]' "$d/out.txt")
      extra="$(grep -E '^  [a-z_.]+: |gated figures' "$d/out.txt" | cut -c1-200 | paste -sd'|')" ;;
    nightly)
      if [ ! -d "$golden" ]; then
        log "nightly: recording the golden from the same build ($NIGHT_LAUNCHES launches)"
        (cd "$root" && timeout -s TERM -k 10 "$lim" env FLASHPROOF_LLAMA_SERVER="$W/llama-server-cuda" FLASHPROOF_LOADER= FLASHPROOF_LIBRARY_PATH= \
           "$W/fpbin/fp" run "$case_file" --golden "$golden" --results "$R/record" --record-missing --launches "$NIGHT_LAUNCHES" --quiet) >"$R/record.txt" 2>&1
        log "nightly: golden recorded (exit $?, $(( $(date +%s) - s )) s, $(launches_in "$R/record") launches)"
        lim=$(( $(left) + 15 ))
        s2=$(date +%s)
      else
        s2=$s
      fi
      log "nightly: $cond against the golden"
      (cd "$root" && timeout -s TERM -k 10 "$lim" env FLASHPROOF_LLAMA_SERVER="$W/llama-server-cuda-$cond" FLASHPROOF_LOADER= FLASHPROOF_LIBRARY_PATH= \
         "$W/fpbin/fp" run "$case_file" --golden "$golden" --results "$d/results" --launches "$NIGHT_LAUNCHES" --quiet) >"$d/out.txt" 2>&1
      rc=$?
      s=$s2
      res=$(find "$d/results" -name result.txt | head -1)
      dec=$(grep -m1 '^status = ' "$res" 2>/dev/null)
      extra="$(grep -E '^golden\.[0-9]+ = (fail|FAIL|regression|.*kernel_ms_per_token)|^ttft\.split = ' "$res" 2>/dev/null | cut -c1-240 | paste -sd'|')" ;;
    *) log "$step: unknown step"; continue ;;
  esac
  took=$(( $(date +%s) - s ))
  ((took > ${longest[$mode]:-0})) && longest[$mode]=$took
  n=$(launches_in "$d")
  echo "$mode $cond: exit $rc, ${took} s, $n launches to the decision; ${dec:-no decision line}; $extra" | tee -a "$table" >&2
  pack
done
rm -f "$model"
pack
log "done; $(du -sh "$O" | cut -f1) under OUTDIR"
