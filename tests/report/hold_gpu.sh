#!/usr/bin/env bash
# One stand-in GPU test for resource_spec_check.sh: records the GPU it was given (what the harness
# would hand its runtime as CUDA_VISIBLE_DEVICES) and when it held it.
# usage: hold_gpu.sh FLASHPROOF LOG_FILE
set -euo pipefail
gpu=$("$1" gpus --assigned)
echo "$gpu $(date +%s.%N)" >"$2"
sleep 1.5
date +%s.%N >>"$2"
