#!/usr/bin/env bash
# Records the GPU checks on a GPU machine (used on the H200; see docs/gpu-checks.md):
# builds the probe and the NVML check from this tree, runs the SDPA workload under the probe in
# several configurations, checks the tallies, measures the probe's overhead, reads NVML while a
# PyTorch process holds memory, and writes everything to OUTDIR.
# Usage: tests/gpu/record_h200.sh OUTDIR [REPS]      (from the repository root)
set -uo pipefail
out=${1:?usage: record_h200.sh OUTDIR [REPS]}
reps=${2:-7}
root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/tests/gpu"
. "$here/require_gpu.sh"
fp_require_gpu
mkdir -p "$out"
exec > >(tee "$out/run.log") 2>&1
py=${PYTHON:-python3}
build=${FP_BUILD:-/tmp/fp-gpu-build}
probe="$build/probe/libflashproof_probe.so"
step() { printf '\n=== %s (%s)\n' "$*" "$(date -u +%H:%M:%S)"; }

step environment
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -srm)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  nvcc --version | tail -n 2
  echo "cmake: $(cmake --version | head -n 1); c++: $(c++ --version | head -n 1)"
  echo "/usr/local/cuda -> $(readlink -f /usr/local/cuda)"
  ls /usr/local/cuda/ ; ls /usr/local/cuda/extras/CUPTI/lib64 2>/dev/null | head -n 5
  find /usr/local/cuda/ -name 'libcupti.so*' -o -name cupti.h | head -n 5
  "$py" -c 'import torch, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))'
} | tee "$out/environment.txt"

step build the probe and the NVML check
cmake -S "$root/src/probe" -B "$build/probe" -DCMAKE_BUILD_TYPE=Release >"$build.cmake.log" 2>&1 || { cat "$build.cmake.log"; exit 1; }
grep 'flashproof:' "$build.cmake.log"
cmake --build "$build/probe" -j 8 || exit 1
bash "$here/probe_exports_test.sh" "$probe" || exit 1
c++ -O2 -std=c++17 -Wall -Wextra -I"$root/src" "$here/nvml_check.cpp" "$root/src/measure/nvml.cpp" \
  "$root/src/measure/gpu_sampler.cpp" -ldl -pthread -o "$build/flashproof_nvml_check" || exit 1
c++ -O2 -std=c++17 -Wall -Wextra "$here/probe_load_test.cpp" -ldl -o "$build/flashproof_probe_load_test" || exit 1
"$build/flashproof_probe_load_test" "$probe"

tally_run() {  # name, workload args...
  local name=$1; shift
  step "tally $name: $*"
  CUDA_INJECTION64_PATH="$probe" FLASHPROOF_KERNEL_TALLY="$out/$name.kernels.tsv" \
    timeout 120 "$py" "$here/sdpa_workload.py" "$@" 2>&1 | tee "$out/$name.workload.txt"
  head -n 25 "$out/$name.kernels.tsv"
}
tally_run sdpa-bf16 --dtype bf16
tally_run sdpa-fp32 --dtype fp32
tally_run sdpa-bf16-flash --dtype bf16 --backend flash --iters 100
tally_run sdpa-bf16-math --dtype bf16 --backend math --iters 50
tally_run sdpa-bf16-cudnn --dtype bf16 --backend cudnn --iters 100
tally_run sdpa-bf16-efficient --dtype bf16 --backend efficient --iters 100
tally_run sdpa-bf16-profiler --dtype bf16 --iters 50 --profiler
cupti_lib=$(ldd "$probe" | awk '/libcupti/ {print $3}')
tally_run sdpa-bf16-presubscribed --dtype bf16 --iters 50 --pre-subscribe-cupti "$cupti_lib"

step checks
for t in sdpa-bf16:--expect-fused-flash sdpa-fp32:--expect-no-fused-flash sdpa-bf16-flash:--expect=flash \
         sdpa-bf16-math:--expect=math sdpa-bf16-cudnn:--expect=cudnn_flash sdpa-bf16-efficient:--expect=mem_efficient \
         sdpa-bf16-presubscribed:--expect-fused-flash; do
  echo "--- ${t%%:*} ${t#*:}"
  "$py" "$here/check_sdpa_tally.py" "$out/${t%%:*}.kernels.tsv" "${t#*:}"
  echo "exit: $?"
done 2>&1 | tee "$out/checks.txt"

step "SIGKILL: the interval writes leave a tally"
CUDA_INJECTION64_PATH="$probe" FLASHPROOF_KERNEL_TALLY="$out/sdpa-bf16-sigkill.kernels.tsv" \
  "$py" "$here/sdpa_workload.py" --dtype bf16 --hold-s 30 >"$out/sigkill.workload.txt" 2>&1 &
victim=$!
for _ in $(seq 1 60); do grep -q holding "$out/sigkill.workload.txt" 2>/dev/null && break; sleep 0.5; done
sleep 1.2
kill -9 "$victim"; wait "$victim" 2>/dev/null
head -n 4 "$out/sdpa-bf16-sigkill.kernels.tsv"
"$py" "$here/check_sdpa_tally.py" "$out/sdpa-bf16-sigkill.kernels.tsv" --expect-fused-flash | tail -n 1

step "the CTest scripts as CTest runs them"
bash "$here/sdpa_probe_check.sh" "$probe" bf16 --expect-fused-flash; echo "exit: $?"
bash "$here/sdpa_probe_check.sh" "$probe" fp32 --expect-no-fused-flash; echo "exit: $?"

step "NVML while a PyTorch process holds memory"
"$py" "$here/sdpa_workload.py" --dtype bf16 --iters 2000 --hold-s 8 >"$out/nvml.workload.txt" 2>&1 &
holder=$!
for _ in $(seq 1 60); do grep -q holding "$out/nvml.workload.txt" 2>/dev/null && break; sleep 0.5; done
{
  echo "command: flashproof_nvml_check --pid $holder --sample-ms 3000   (pid = sdpa_workload.py --dtype bf16 --iters 2000 --hold-s 8)"
  "$build/flashproof_nvml_check" --pid "$holder" --sample-ms 3000
  echo "exit: $?"
  echo "--- nvidia-smi, same moment"
  nvidia-smi --query-compute-apps=pid,used_memory --format=csv
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw,clocks_event_reasons.active --format=csv
} 2>&1 | tee "$out/nvml.txt"
wait "$holder"

step "probe overhead, $reps repetitions"
timeout 300 "$py" "$here/probe_overhead.py" --probe "$probe" --reps "$reps" --out "$out/overhead.txt"
step done
