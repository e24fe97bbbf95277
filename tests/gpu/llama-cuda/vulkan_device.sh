#!/usr/bin/env bash
# Runs Debian sid's llama-server with its Vulkan backend on the H200 device machine, on NVIDIA's
# Vulkan driver, with CUDA hidden (docs/gpu-checks.md, "Vulkan on the H200"), in one call:
#   1. `llama-server --list-devices` (with the backends' debug lines: ggml_vulkan's device line says
#      the device type and its matrix cores);
#   2. the support matrix: one verbose run (-v, GGML_SCHED_DEBUG=2) per configuration, K/V cache types
#      on the realistic model (head size 128) and head sizes on the small models, each judged by
#      `flashproof explain --expect-backend Vulkan0` (where FLASH_ATTN ran, as counts per backend);
#   3. the same -fa on / off (and -ngl 2) runs once more with GGML_VK_PERF_LOGGER=1: ggml-vulkan's own
#      per-op GPU timestamps ("Vulkan Timings: FLASH_ATTN_EXT ...: N x T us"), what the Vulkan device
#      executed; with -ngl 2 build 11669 aborts (issue 25): its log is the recording of that abort;
#   4. flashproof itself on cases-vulkan/*.json (expect.backend Vulkan0; level 3 from ggml-vulkan's own
#      op timings, GGML_VK_PERF_LOGGER), each result's verdict, levels and instruments printed; then
#      (FP_VK_RETRY=1, the default) live-vulkan-realistic-partial-ngl2 once more with the runtime data's
#      known breakages removed (a copy under FLASHPROOF_DATA_DIR), so that the perf logger is launched,
#      the runtime aborts, and the evidence pass takes it off again by itself (issue 25: the retry's
#      extra launches, the runtime's words);
#   5. with FP_VK_NIGHTS=N, a golden of 5 launches of live-vulkan-realistic-fa-on and N nights of 3
#      launches against it (the device-time figures, their bands and failures printed);
#   6. with FP_VK_MATRIX=1, `flashproof matrix` on Vulkan0: every KV type with the flag on and off,
#      head sizes 32-256 (matrix-kv.table.txt, matrix-hd.table.txt).
# usage (repository root, on the device): bash tests/gpu/llama-cuda/vulkan_device.sh VKBUNDLE OUTDIR [CONFIG...]
#   VKBUNDLE  what make_vulkan_bundle.sh wrote (carried as .gpu-bundle-vulkan)
#   OUTDIR    gets vulkan/: device.txt, list-devices.txt, summary.txt (the matrix), explain/*.txt,
#             perf/*.txt, harness.txt, and vulkan-runs.tar.gz (every log, answers, results)
#   CONFIG    any of the names in the matrix below (default: all, in that order)
# Environment: FP_WORK (default /tmp/fp-llama-vulkan), FP_DEADLINE_S (default 480: no new run starts
# after that many seconds), FP_VK_ICD (an ICD json to use instead of NVIDIA's; for a dry run elsewhere,
# e.g. Mesa's lvp_icd.x86_64.json), FP_VK_CASES=0 (leave out step 4), FP_VK_RETRY=0 (leave out its retry run).
# Issue 25 alone (about 1 min): ... vulkan_device.sh VKBUNDLE OUTDIR partial_ngl2
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
B=$(cd "$1" && pwd); O=$2/vulkan; shift 2
W=${FP_WORK:-/tmp/fp-llama-vulkan}
DEADLINE=${FP_DEADLINE_S:-480}
mkdir -p "$O/explain" "$O/perf" "$W/runs"
t0=$(date +%s)
log() { printf '[%4ds] %s\n' "$(($(date +%s) - t0))" "$*" | tee -a "$O/device.txt" >&2; }
pack() { tar -C "$W" -czf "$O/vulkan-runs.tar.gz" runs harness 2>/dev/null || true; }
die() { log "FAILED: $*"; pack; exit 1; }

# The matrix: NAME MODEL FLAGS... (models: realistic = head size 128; tiny = 32; hd36, hd48, hd64, hd80).
matrix=(
  "fa_on realistic -fa on"
  "fa_off realistic -fa off"
  "fa_auto realistic -fa auto"
  "q8_0 realistic -fa on -ctk q8_0 -ctv q8_0"
  "q4_0 realistic -fa on -ctk q4_0 -ctv q4_0"
  "q5_1 realistic -fa on -ctk q5_1 -ctv q5_1"
  "q4_1 realistic -fa on -ctk q4_1 -ctv q4_1"
  "q8_0_q4_0 realistic -fa on -ctk q8_0 -ctv q4_0"
  "iq4_nl realistic -fa on -ctk iq4_nl -ctv iq4_nl"
  "partial_ngl2 realistic -fa on -ngl 2"
  "hd32 tiny -fa on"
  "hd36 hd36 -fa on"
  "hd36_auto hd36 -fa auto"
  "hd48 hd48 -fa on"
  "hd64 hd64 -fa on"
  "hd80 hd80 -fa on"
)
wanted=("$@")

# --- unpack: sid's prefix (its own copy: no CUDA backend beside its loader), the Vulkan part -------
[ -f "$B/vulkan.tar.xz" ] || die "no vulkan.tar.xz in $B (make_vulkan_bundle.sh)"
rm -rf "$W/prefix" "$W/vk" "$W/drv" && mkdir -p "$W/prefix" "$W/vk" "$W/drv" "$W/models"
tar -C "$W/prefix" -xJf "$B/prefix.tar.xz" || die "unpacking the sid prefix"
tar -C "$W/vk" -xJf "$B/vulkan.tar.xz" || die "unpacking vulkan.tar.xz"
L=$W/prefix/usr/lib/x86_64-linux-gnu
# As ci/setup.sh lays it out: on the library path, loaded where GGML_BACKEND_PATH names it.
ln -sf "$W/vk/libggml-vulkan.so" "$L/llama/libggml-vulkan.so"
[ -f "$W/models/realistic.gguf" ] || xz -dc "$B/realistic.gguf.xz" >"$W/models/realistic.gguf" || die "unpacking the model"
cp -f "$W"/vk/models/*.gguf "$W/models/"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "uname: $(uname -srm)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
  sed 's/^/bundle: /' "$B/MANIFEST"
} >>"$O/device.txt" 2>&1
ggml_prefix=$(awk '$2=="libggml0" {print $4}' "$W/prefix/PACKAGES")
grep -q "libggml0-backend-vulkan Version: $ggml_prefix\$" "$W/vk/VERSIONS" ||
  die "the Vulkan backend is not of the prefix's libggml0 $ggml_prefix: $(grep 'vulkan backend' "$W/vk/VERSIONS")"

# --- NVIDIA's Vulkan driver: its ICD json, its libraries (not the system's libc) in a folder of ours --
icd=${FP_VK_ICD:-}
if [ -z "$icd" ]; then
  icd=$(find /usr/share/vulkan/icd.d /etc/vulkan/icd.d /usr/local/share/vulkan/icd.d -name 'nvidia_icd*.json' 2>/dev/null | head -1)
fi
glx=$(ldconfig -p 2>/dev/null | awk '$1=="libGLX_nvidia.so.0" {print $NF; exit}')
[ -n "$glx" ] || glx=$(find /usr/lib /usr/local /usr/lib64 -name 'libGLX_nvidia.so.0' 2>/dev/null | head -1)
if [ -z "$icd" ] && [ -n "$glx" ]; then  # no json where the loader looks: one naming the driver's library
  icd=$W/nvidia_icd.json
  printf '{"file_format_version": "1.0.1", "ICD": {"library_path": "%s", "api_version": "1.3"}}\n' "$glx" >"$icd"
fi
[ -n "$icd" ] || die "no NVIDIA Vulkan ICD json (nvidia_icd.json) and no libGLX_nvidia.so.0"
if [ -n "$glx" ]; then
  drvdir=$(dirname "$(readlink -f "$glx")")
  for f in "$drvdir"/libGLX_nvidia.so* "$drvdir"/libnvidia-*.so* "$drvdir"/libcuda.so*; do [ -e "$f" ] && ln -sf "$f" "$W/drv/"; done
fi
log "ICD: $icd ($(tr -d '\n' <"$icd" | cut -c1-200)); libGLX_nvidia.so.0: ${glx:-not found}"
LIBS=$L:$L/llama:$W/vk/lib:$W/drv
export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd CUDA_VISIBLE_DEVICES=-1
export GGML_BACKEND_PATH=libggml-vulkan.so GGML_VK_VISIBLE_DEVICES=0
server() { "$L/ld-linux-x86-64.so.2" --library-path "$LIBS" "$W/prefix/usr/bin/llama-server" "$@"; }
echo "library path: $LIBS" >>"$O/device.txt"
server --version >>"$O/device.txt" 2>&1
LLAMA_ARG_LOG_VERBOSITY=5 server --list-devices >"$O/list-devices.txt" 2>&1
grep -v 'failed to enumerate' "$O/list-devices.txt" | tee -a "$O/device.txt" >&2
# Why NVIDIA's ICD refused, where it did: the device nodes a Vulkan driver opens (nvidia-modeset,
# dri), the driver's GL/Vulkan libraries beside libGLX_nvidia (a container given only the compute
# capability lacks libnvidia-glcore and libnvidia-glvkspirv), what the dynamic loader failed to open.
diagnose() {
  {
    echo "## device nodes"; ls -la /dev/nvidia* /dev/dri 2>&1
    echo "## NVIDIA_* environment"; env | grep '^NVIDIA_' || echo "(none)"
    echo "## driver folder ${drvdir:-?}: GL, EGL, Vulkan parts"
    [ -n "${drvdir:-}" ] && ls "$drvdir" | grep -Ei 'glx|glcore|egl|vk|spirv|gpucomp|tls|glsi|dispatch' 
    echo "## Vulkan layer and ICD files"; find /etc/vulkan /usr/share/vulkan /usr/local/share/vulkan -name '*.json' 2>/dev/null
    echo "## LD_DEBUG=libs: failures"
    LD_DEBUG=libs server --list-devices 2>&1 | grep -Ei 'cannot open|error|not found|fatal' | sort | uniq -c | head -40
  } >"$O/diagnose.txt" 2>&1
  log "diagnosis in diagnose.txt"
}
if ! grep -q '^ *Vulkan0: ' "$O/list-devices.txt" && [ -z "${FP_VK_ICD:-}" ]; then
  # Headless: NVIDIA's GLX ICD needs an X server's symbols (libnvidia-glcore: "undefined symbol:
  # ErrorF") and glibc's removed malloc hooks; the same driver's EGL library carries the Vulkan ICD
  # too and needs neither (seen on the H200, driver 580.159.04: diagnose.txt).
  diagnose
  egl=$(ldconfig -p 2>/dev/null | awk '$1=="libEGL_nvidia.so.0" {print $NF; exit}')
  [ -n "$egl" ] || egl=$(find "${drvdir:-/nonexistent}" /usr/lib /usr/local /usr/lib64 -name 'libEGL_nvidia.so.0' 2>/dev/null | head -1)
  if [ -n "$egl" ]; then
    icd=$W/nvidia_egl_icd.json
    printf '{"file_format_version": "1.0.1", "ICD": {"library_path": "%s", "api_version": "1.3"}}\n' "$egl" >"$icd"
    export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd
    log "NVIDIA's GLX ICD lists no device; trying its EGL library as the ICD: $egl"
    LLAMA_ARG_LOG_VERBOSITY=5 server --list-devices >"$O/list-devices.txt" 2>&1
    grep -v 'failed to enumerate' "$O/list-devices.txt" | tee -a "$O/device.txt" >&2
  fi
fi
grep -q '^ *Vulkan0: ' "$O/list-devices.txt" || { diagnose; die "llama-server lists no Vulkan0 (list-devices.txt)"; }

. "$here/device_flashproof.sh"
fp_unpack "$B" || die "no flashproof.tar.xz in $B"

# --- the matrix ----------------------------------------------------------------------------------
prompt=$root/fixtures/prompts/documents/operations_manual.txt
port=18580
run_one() {  # NAME MODEL MODE(verbose|perf) FLAGS...
  local name=$1 mname=$2 model=$W/models/$2.gguf mode=$3; shift 3
  local base=$W/runs/$name.$mode extra=(-v) envs=(GGML_SCHED_DEBUG=2 LLAMA_ARG_LOG_VERBOSITY=5)
  [ "$mode" = perf ] && { extra=(-lv 4); envs=(GGML_VK_PERF_LOGGER=1); }
  local ngl=(-ngl 99); [[ " $* " == *" -ngl "* ]] && ngl=()
  port=$((port + 1))
  local argv=(-m "$model" --host 127.0.0.1 --port "$port" "${ngl[@]}" -c 4096 -np 1 --seed 42 "$@" "${extra[@]}")
  echo "$name.$mode: ${envs[*]} llama-server ${argv[*]}" >>"$O/device.txt"
  env "${envs[@]}" "$L/ld-linux-x86-64.so.2" --library-path "$LIBS" "$W/prefix/usr/bin/llama-server" "${argv[@]}" >"$base.log" 2>&1 &
  local pid=$!
  python3 "$here/ask.py" --port "$port" --pid "$pid" --prompt-file "$prompt" --chars 1000 --n-predict 8 \
    --requests 2 --ready-timeout 240 --out "$base.answers.json" 2>>"$O/device.txt"
  local rc=$?
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  kill -0 "$pid" 2>/dev/null && { log "$name.$mode: still running 30 s after SIGTERM: SIGKILL"; kill -KILL "$pid"; }
  wait "$pid"; local src=$?
  if [ "$mode" = perf ]; then
    sed -n '/^Vulkan Timings:/,/^Total time:/p' "$base.log" >"$O/perf/$name.txt"
    log "$name.perf: ask.py rc=$rc, server exit $src, $(grep -c '^FLASH_ATTN_EXT' "$O/perf/$name.txt") FLASH_ATTN_EXT timing lines"
    # How the runtime ended, in its own words (issue 25: -ngl 2 aborts under the perf logger).
    grep -E 'GGML_ASSERT|GGML_ABORT|terminate called|: fatal error' "$base.log" | tail -3 | sed "s/^/$name.perf: runtime says: /" | tee -a "$O/device.txt" >&2
  else
    fp explain --runtime llama-server --log "$base.log" --expect-backend Vulkan0 --model "$model" >"$O/explain/$name.txt" 2>&1
    local erc=$?
    log "$name: ask.py rc=$rc, server exit $src, explain exit $erc: $(grep -m1 '^verdict:' "$O/explain/$name.txt"); $(grep -m1 '^fused op placed on:' "$O/explain/$name.txt")"
    printf '%-13s %-10s %-34s %-12s %s\n' "$name" "$mname" "$*" "$(sed -n 's/^verdict: //p' "$O/explain/$name.txt" | head -1)" \
      "$(sed -n 's/^fused op placed on: //p' "$O/explain/$name.txt" | head -1)$(grep -q 'SOFT_MAX nodes' "$O/explain/$name.txt" && echo ' (SOFT_MAX path)')" >>"$O/summary.txt"
  fi
  gzip -f "$base.log"
  pack
}
printf '%-13s %-10s %-34s %-12s %s\n' config model flags verdict "FLASH_ATTN placed on (explain --expect-backend Vulkan0)" >"$O/summary.txt"
for entry in "${matrix[@]}"; do
  read -r name model flags <<<"$entry"
  if ((${#wanted[@]})) && [[ " ${wanted[*]} " != *" $name "* ]]; then continue; fi
  if (($(date +%s) - t0 > DEADLINE)); then log "deadline: $name not run"; continue; fi
  # shellcheck disable=SC2086
  run_one "$name" "$model" verbose $flags
  case $name in fa_on | fa_off | partial_ngl2) run_one "$name" "$model" perf $flags ;; esac
done

# --- flashproof on the Vulkan cases --------------------------------------------------------------
show_result() {  # NAME RESULT_FILE: what must be recorded of a case's run (issue 25), into harness.txt and the output
  [ -f "$2" ] || { log "case $1: no result file"; return; }
  grep -E '^(status|verdict|verdict\.backend|verdict\.levels_used|verdict\.levels_unavailable|instruments\.[a-z_.0-9]+|failure\.[0-9]+|signals\.probed_check) = ' "$2" |
    cut -c1-400 | sed "s/^/$1: /" | tee -a "$O/harness.txt" >&2
}
mkdir -p "$root/fixtures/models/generated" "$W/harness"
cp -f "$W/models/realistic.gguf" "$root/fixtures/models/generated/realistic.gguf"
export FLASHPROOF_LLAMA_SERVER=$W/prefix/usr/bin/llama-server FLASHPROOF_LOADER=$L/ld-linux-x86-64.so.2
export FLASHPROOF_LIBRARY_PATH=$LIBS FLASHPROOF_PROGRESS=lines
for c in "$here"/cases-vulkan/*.json; do
  [ "${FP_VK_CASES:-1}" = 0 ] && break
  n=$(basename "$c" .json)
  if (($(date +%s) - t0 > DEADLINE + 60)); then log "deadline: case $n not run"; continue; fi
  echo "== flashproof run $n" >>"$O/harness.txt"
  (cd "$root" && fp run "$c" --out "$W/harness/$n" --results "$W/harness-results" --golden "$W/harness-golden" \
     --record-missing-answers) >>"$O/harness.txt" 2>&1
  log "case $n: flashproof exit $?"
  show_result "$n" "$W/harness/$n/result.txt"
  pack
done
# The retry live (issue 25): the same partial-offload case with the known breakages taken out of a
# copy of the runtime data, so the evidence pass launches the perf logger, the runtime aborts, and
# the pass takes the logger off by itself (instruments.extra_launches, instruments.retry.N).
n=live-vulkan-realistic-partial-ngl2
if [ "${FP_VK_CASES:-1}" != 0 ] && [ "${FP_VK_RETRY:-1}" = 1 ] && (($(date +%s) - t0 <= DEADLINE + 90)); then
  mkdir -p "$W/data-no-known-breakages"
  cp -f "$root"/src/runtime/data/*.json "$W/data-no-known-breakages/"
  python3 - "$W/data-no-known-breakages/llama-server.json" <<'PY'
import json, sys
p = sys.argv[1]
d = json.load(open(p))
d["evidence"]["instruments"]["known_breakages"] = []
json.dump(d, open(p, "w"), indent=1)
PY
  echo "== flashproof run $n, known breakages removed (the retry live)" >>"$O/harness.txt"
  (cd "$root" && FLASHPROOF_DATA_DIR=$W/data-no-known-breakages fp run "$here/cases-vulkan/$n.json" --out "$W/harness/$n-retry" \
     --results "$W/harness-results" --golden "$W/harness-golden" --record-missing-answers) >>"$O/harness.txt" 2>&1
  log "case $n (retry live): flashproof exit $?"
  show_result "$n-retry" "$W/harness/$n-retry/result.txt"
  pack
fi
# --- nights on Vulkan0 (FP_VK_NIGHTS=N): a golden of 5 launches of live-vulkan-realistic-fa-on, then N
# nights of 3 launches of the same build, each night's device-time figures (ggml-vulkan's own op
# timings, from the check after each launch) with their bands; issue 21's "Vulkan device time" ---
if [ "${FP_VK_NIGHTS:-0}" -gt 0 ] 2>/dev/null; then
  n=live-vulkan-realistic-fa-on
  for i in $(seq 0 "$FP_VK_NIGHTS"); do
    if (($(date +%s) - t0 > DEADLINE + 60)); then log "deadline: night $i not run"; continue; fi
    if [ "$i" = 0 ]; then args=(--record-missing --launches 5); else args=(--launches 3); fi
    (cd "$root" && fp run "$here/cases-vulkan/$n.json" --results "$W/nights-results" --golden "$W/nights-golden" --quiet \
       "${args[@]}") >"$O/night-$i.txt" 2>&1
    rc=$?
    r=$(ls -d "$W"/nights-results/*/"$n"/latest 2>/dev/null | head -1)
    figs=$(python3 - "$r/result.json" <<'PY' 2>&1
import json, sys
f = json.load(open(sys.argv[1]))["figures"]
print("; ".join(f"{k} {f[k]['p50']:.6g} (launches {', '.join(f'{x:.6g}' for x in f[k]['launch_medians'])})"
                for k in ("gpu_kernel_ms_per_token", "attention_kernel_ms_per_token", "ttft_ms") if k in f))
PY
)
    log "night $i ($([ "$i" = 0 ] && echo 'golden, 5 launches' || echo '3 launches')): exit $rc; $figs"
    grep -E '^golden\.[0-9]+ = .*(kernel_ms_per_token)' "$r/result.txt" 2>/dev/null | cut -c1-420 | tee -a "$O/device.txt" >&2
    grep -E '^failure\.[0-9]+ = ' "$r/result.txt" 2>/dev/null | cut -c1-300 | tee -a "$O/device.txt" >&2
  done
  pack
fi
# --- flashproof's own support matrix on Vulkan0 (FP_VK_MATRIX=1): every KV type x flag on the
# realistic model, head sizes 32-256 from its recipe; the table flashproof writes for an operator ---
if [ "${FP_VK_MATRIX:-0}" = 1 ]; then
  for m in "kv --kv same --flag on,off" "hd --kv f16 --flag on --head-sizes 32,36,48,64,80,96,112,128,192,256"; do
    read -r mname margs <<<"$m"
    if (($(date +%s) - t0 > DEADLINE + 60)); then log "deadline: matrix $mname not run"; continue; fi
    # shellcheck disable=SC2086
    (cd "$root" && fp matrix "$here/cases-vulkan/live-vulkan-realistic-fa-on.json" $margs --models "$W/models/matrix" \
       --out "$W/harness/matrix-$mname") >"$O/matrix-$mname.txt" 2>&1
    log "matrix $mname: flashproof exit $?"
    cp -f "$W/harness/matrix-$mname/matrix.txt" "$O/matrix-$mname.table.txt" 2>/dev/null
  done
  pack
fi
cat "$O/summary.txt" >&2
log "done"
