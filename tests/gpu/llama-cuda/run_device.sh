#!/usr/bin/env bash
# Runs Debian sid's llama-server with its CUDA backend on the H200 device machine, with flashproof's
# CUPTI probe injected, in three configurations (-fa on, -fa off, -fa on with q5_1 K/V cache), each
# twice: "verbose" (the evidence configuration: -v, GGML_SCHED_DEBUG=2) and "quiet" (the timed
# configuration of src/runtime/data/llama-server.json: -lv 4, no GGML_SCHED_DEBUG), the probe attached
# in both. Same model, same two /completion requests (1000 prompt characters = 1001 tokens, 8 tokens
# out, temperature 0) in every run. See docs/gpu-checks.md, "A real llama-server with the CUDA backend".
#
# usage (repository root, on the device): bash tests/gpu/llama-cuda/run_device.sh BUNDLE OUTDIR [CONFIG...]
#   BUNDLE  what make_bundle.sh wrote (carried as .gpu-bundle)
#   OUTDIR  gets device.txt, summary.txt and live.tar.gz (runs/NAME.{log.gz,kernels.tsv,answers.json})
#   CONFIG  any of fa_on fa_off fa_on_q5_1 (default: these three), fa_on_q4_1, fa_on_q8_0_q4_0 (realistic
#           model, K/V cache types), hd48_fa_on, hd48_fa_auto (head size 48 model, if the bundle has it),
#           on two GPUs fa_on_sm_row, fa_on_sm_none_mg1, and setup (nothing run: unpack, build the shim
#           and the probe only)
# Environment: FP_WORK (default /tmp/fp-llama-cuda), FP_DEADLINE_S (default 540: no new run starts
# after that many seconds), FP_READY_TIMEOUT_S (default 300: the first start JIT-compiles PTX),
# FP_LIBCUDA (the driver library to use; default: found through ldconfig).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
B=$(cd "$1" && pwd); O=$2; shift 2
configs=("$@"); ((${#configs[@]})) || configs=(fa_on fa_off fa_on_q5_1)
W=${FP_WORK:-/tmp/fp-llama-cuda}
DEADLINE=${FP_DEADLINE_S:-540}
READY=${FP_READY_TIMEOUT_S:-300}
mkdir -p "$O" "$W/runs"
t0=$(date +%s)
log() { printf '[%4ds] %s\n' "$(($(date +%s) - t0))" "$*" | tee -a "$O/device.txt" >&2; }
die() { log "FAILED: $*"; pack; exit 1; }
pack() {
  python3 "$here/summarize.py" "$W/runs" "$root/src/runtime/data/llama-server.json" >"$O/summary.txt" 2>&1 || true
  tar -C "$W" -czf "$O/live.tar.gz" runs 2>/dev/null || true
}

# --- the machine ------------------------------------------------------------------------------------
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "uname: $(uname -srm)"
  grep -E '^(PRETTY_NAME)=' /etc/os-release 2>/dev/null
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
  nvcc --version 2>/dev/null | tail -2 | sed 's/^/nvcc: /'
  echo "gcc: $(gcc --version | head -1)"
  echo "cmake: $(cmake --version | head -1)"
  echo "nproc: $(nproc)"
  cat "$B/MANIFEST" | sed 's/^/bundle: /'
} >>"$O/device.txt" 2>&1

# --- unpack -----------------------------------------------------------------------------------------
rm -rf "$W/prefix" "$W/cuda12" "$W/drv" && mkdir -p "$W/prefix" "$W/cuda12" "$W/drv"
tar -C "$W/prefix" -xJf "$B/prefix.tar.xz" || die "unpacking the sid prefix"
L=$W/prefix/usr/lib/x86_64-linux-gnu
xz -dc "$B/libggml-cuda.sm90.so.xz" >"$L/ggml/backends0/libggml-cuda.so" || die "unpacking libggml-cuda.so"
# ggml looks for its backends beside the executable, which is sid's loader (ci/setup.sh does the same).
ln -sf ggml/backends0/libggml-cuda.so "$L/libggml-cuda.so"
xz -dc "$B/libcudart.so.12.xz" >"$W/cuda12/libcudart.so.12" || die "unpacking libcudart.so.12"
if [ ! -f "$W/realistic.gguf" ] && [ -f "$B/realistic.gguf.xz" ]; then
  xz -dc "$B/realistic.gguf.xz" >"$W/realistic.gguf" || die "unpacking the model"
elif [ ! -f "$W/realistic.gguf" ]; then
  # No model in the bundle (it keeps the call under the device's 64 MiB carry): the bundled
  # flashproof generates it from the committed recipe, the same seeded bytes as here (the cases
  # check its sha256).
  . "$here/device_flashproof.sh"
  fp_unpack "$B" || die "no realistic.gguf.xz and no flashproof.tar.xz in $B"
  (cd "$root" && fp make-model fixtures/models/realistic.json) >>"$O/device.txt" 2>&1 || die "generating the model"
  cp -f "$root/fixtures/models/generated/realistic.gguf" "$W/realistic.gguf" || die "generating the model"
fi
log "unpacked; model sha256 $(sha256sum "$W/realistic.gguf" | cut -c1-16)"

# --- what the device has: cuBLAS 13, CUPTI, the driver ------------------------------------------------
find_lib() {  # first file of that name in the linker cache, the CUDA toolkit, then Python's wheels
  local p
  p=$(ldconfig -p 2>/dev/null | awk -v n="$1" '$1==n {print $NF; exit}')
  [ -n "$p" ] && [ -e "$p" ] && { echo "$p"; return; }
  for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/nvidia/lib64 /usr/lib/x86_64-linux-gnu; do
    [ -e "$d/$1" ] && { echo "$d/$1"; return; }
  done
  find /usr/local /opt /usr/lib -name "$1" 2>/dev/null | head -1
}
cublas13=$(find_lib libcublas.so.13); cupti=$(find_lib libcupti.so.13); libcuda=${FP_LIBCUDA:-$(find_lib libcuda.so.1)}
log "libcublas.so.13: ${cublas13:-MISSING}; libcupti.so.13: ${cupti:-MISSING}; libcuda.so.1: ${libcuda:-MISSING}"
[ -n "$cublas13" ] && [ -n "$cupti" ] && [ -n "$libcuda" ] || die "a CUDA library is missing"
# Only the driver's own libraries, never the system's libc, go on the path: links in a folder of ours.
drvdir=$(dirname "$(readlink -f "$libcuda")")
for f in "$drvdir"/libcuda.so* "$drvdir"/libnvidia-*.so*; do [ -e "$f" ] && ln -sf "$f" "$W/drv/"; done
ln -sf "$libcuda" "$W/drv/libcuda.so.1"

# --- the cuBLAS 12 -> 13 shim and the probe, built here --------------------------------------------
gcc -shared -fPIC -O2 -Wall -o "$W/cuda12/libcublas.so.12" "$here/cublas12_shim.c" \
  -Wl,-soname,libcublas.so.12 -Wl,--version-script="$here/cublas12.map" -ldl >>"$O/device.txt" 2>&1 || die "building the cuBLAS shim"
cmake -S "$root/tests/gpu" -B "$W/gpu-build" -DCMAKE_BUILD_TYPE=Release >"$W/cmake.log" 2>&1 &&
  cmake --build "$W/gpu-build" --target flashproof_probe -j"$(nproc)" >>"$W/cmake.log" 2>&1 || { cat "$W/cmake.log" >>"$O/device.txt"; die "building the probe"; }
probe=$(find "$W/gpu-build" -name libflashproof_probe.so | head -1)
[ -n "$probe" ] || die "no libflashproof_probe.so after the build"
log "shim and probe built: $probe"

LIBS=$L:$L/llama:$W/cuda12:$W/drv:$(dirname "$cublas13"):$(dirname "$cupti")
echo "library path: $LIBS" >>"$O/device.txt"
echo "$LIBS" >"$W/library-path"; echo "$probe" >"$W/probe-path"
"$L/ld-linux-x86-64.so.2" --library-path "$LIBS" "$W/prefix/usr/bin/llama-server" --version >>"$O/device.txt" 2>&1
"$L/ld-linux-x86-64.so.2" --library-path "$LIBS" --list "$L/ggml/backends0/libggml-cuda.so" >>"$O/device.txt" 2>&1

prompt=$root/fixtures/prompts/documents/operations_manual.txt
port=18480
run_one() {  # NAME MODE FLAGS...
  local name=$1 mode=$2; shift 2
  local base=$W/runs/$name.$mode extra=() envs=()
  if [ "$mode" = verbose ]; then extra=(-v); envs=(GGML_SCHED_DEBUG=2); else extra=(-lv 4); fi
  port=$((port + 1))
  local argv=(-m "$model" --host 127.0.0.1 --port "$port" -ngl 99 -c 4096 -np 1 --seed 42 "$@" "${extra[@]}")
  echo "$name.$mode: ${envs[*]} llama-server ${argv[*]}" >>"$O/device.txt"
  env "${envs[@]}" CUDA_INJECTION64_PATH="$probe" FLASHPROOF_KERNEL_TALLY="$base.kernels.tsv" \
    CUDA_CACHE_PATH="$W/jit-cache" CUDA_CACHE_MAXSIZE=4294967296 CUDA_MODULE_LOADING=LAZY \
    "$L/ld-linux-x86-64.so.2" --library-path "$LIBS" "$W/prefix/usr/bin/llama-server" "${argv[@]}" >"$base.log" 2>&1 &
  local pid=$!
  python3 "$here/ask.py" --port "$port" --pid "$pid" --prompt-file "$prompt" --chars 1000 --n-predict 8 \
    --requests 2 --ready-timeout "$READY" --out "$base.answers.json" 2>>"$O/device.txt"
  local rc=$?
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  kill -0 "$pid" 2>/dev/null && { log "$name.$mode: still running 30 s after SIGTERM: SIGKILL"; kill -KILL "$pid"; }
  wait "$pid"; local src=$?
  gzip -f "$base.log"
  log "$name.$mode: ask.py rc=$rc, server exit $src, log $(stat -c %s "$base.log.gz") B gz, tally $(head -1 "$base.kernels.tsv" 2>/dev/null | cut -c1-150)"
  pack
}

for c in "${configs[@]}"; do
  model=$W/realistic.gguf
  case $c in
    fa_on) flags=(-fa on) ;;
    fa_off) flags=(-fa off) ;;
    fa_on_q5_1) flags=(-fa on -ctk q5_1 -ctv q5_1) ;;
    fa_on_q4_1) flags=(-fa on -ctk q4_1 -ctv q4_1) ;;
    fa_on_q8_0_q4_0) flags=(-fa on -ctk q8_0 -ctv q4_0) ;;
    # Two GPUs (kind nvidia-h200-x2; two_gpu_device.sh reads these): fa_on is llama.cpp's default
    # layer split there; row split; everything on the second GPU.
    fa_on_sm_row) flags=(-fa on -sm row) ;;
    fa_on_sm_none_mg1) flags=(-fa on -sm none -mg 1) ;;
    setup) continue ;;  # unpack and build only (matrix_device.sh)
    hd48_fa_on | hd48_fa_auto)
      [ -f "$B/hd48.gguf.xz" ] || { log "$c: no hd48.gguf.xz in the bundle"; continue; }
      [ -f "$W/hd48.gguf" ] || xz -dc "$B/hd48.gguf.xz" >"$W/hd48.gguf"
      model=$W/hd48.gguf; flags=(-fa "${c#hd48_fa_}") ;;
    *) die "unknown configuration $c" ;;
  esac
  for mode in verbose quiet; do
    if (($(date +%s) - t0 > DEADLINE)); then log "deadline: $c.$mode not run"; continue; fi
    run_one "$c" "$mode" "${flags[@]}"
  done
done
log "JIT cache: $(du -sh "$W/jit-cache" 2>/dev/null | cut -f1)"
pack
log "done"
