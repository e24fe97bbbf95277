#!/usr/bin/env bash
# GPU check: runs the PyTorch SDPA workload under the CUPTI probe and checks the kernel tally.
# Usage: sdpa_probe_check.sh PROBE_SO DTYPE [check_sdpa_tally.py options...]
#   e.g. sdpa_probe_check.sh build/src/probe/libflashproof_probe.so bf16 --expect-fused-flash
# Exit: 0 pass, 1 fail (working files kept, path printed), 125 skip (no GPU, no PyTorch with CUDA).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/require_gpu.sh"
probe=${1:?usage: sdpa_probe_check.sh PROBE_SO DTYPE [check options]}
dtype=${2:?usage: sdpa_probe_check.sh PROBE_SO DTYPE [check options]}
shift 2
py=${PYTHON:-python3}

fp_require_gpu
# Under `ctest --resource-spec-file`, run on the GPU CTest allotted (ids are NVML indices, so order
# CUDA's devices the same way).
if [ -n "${CTEST_RESOURCE_GROUP_0_GPUS:-}" ]; then
  gpu_id=$(sed -n 's/^id:\([^,]*\),.*/\1/p' <<<"$CTEST_RESOURCE_GROUP_0_GPUS")
  export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES="$gpu_id"
  echo "CTest resource: GPU $gpu_id (CUDA_VISIBLE_DEVICES=$gpu_id)"
fi
fp_require_torch_cuda
if [ ! -f "$probe" ]; then
  echo "FAIL: probe library $probe does not exist (build the flashproof_probe target)"
  exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/flashproof-sdpa-$dtype.XXXXXX")
tally="$work/sdpa-$dtype.kernels.tsv"
echo "workload: CUDA_INJECTION64_PATH=$probe FLASHPROOF_KERNEL_TALLY=$tally $py $here/sdpa_workload.py --dtype $dtype ${SDPA_ARGS:-}"
CUDA_INJECTION64_PATH="$probe" FLASHPROOF_KERNEL_TALLY="$tally" \
  "$py" "$here/sdpa_workload.py" --dtype "$dtype" ${SDPA_ARGS:-} >"$work/workload.out" 2>&1
rc=$?
cat "$work/workload.out"
if [ "$rc" -eq 125 ]; then exit 125; fi
if [ "$rc" -ne 0 ]; then
  echo "FAIL: the workload exited with $rc; working files kept in $work"
  exit 1
fi
if "$py" "$here/check_sdpa_tally.py" "$tally" "$@"; then
  rm -rf "$work"
  exit 0
fi
echo "FAIL: working files kept in $work"
exit 1
