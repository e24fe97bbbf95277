#!/usr/bin/env bash
# One GPU case of tests/gpu/llama-cuda/cases/ as a CTest test (label gpu): flashproof runs it against
# the llama-server named by FLASHPROOF_LLAMA_SERVER (one built with its CUDA backend) and must exit
# with EXPECT_EXIT, printing every PATTERN (grep -E). Skips (125), saying why, where there is no
# NVIDIA GPU, and passes flashproof's own skips through (no runtime, model not here). A model the case
# names by "recipe" is generated when missing. On the H200 device machine the same cases run through
# harness_device.sh (fixtures/logs/h200-live/README.md).
# usage: live_case.sh FLASHPROOF BUILD_DIR EXPECT_EXIT CASE.json [PATTERN...]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
. "$here/../require_gpu.sh"
fp_require_gpu
# A case that needs more GPUs than this machine lists skips, saying so (not a broken GPU box).
need=${FP_MIN_GPUS:-1}
have=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU [0-9]')
if [ "$have" -lt "$need" ]; then
  echo "SKIP: this case needs $need GPUs; nvidia-smi lists $have"
  exit 125
fi
fp=$1 build=$2 expect=$3 case=$4
shift 4
model=$(sed -n 's/^ *"path": *"\([^"]*\.gguf\)".*/\1/p' "$case" | head -1)
recipe=$(sed -n 's/^ *"recipe": *"\([^"]*\)".*/\1/p' "$case" | head -1)
if [ -n "$model" ] && [ -n "$recipe" ] && [ ! -f "$root/$model" ]; then
  "$fp" make-model "$root/$recipe" || { echo "FAIL: cannot generate $model from $recipe"; exit 1; }
fi
# Answers and the verdict against this build tree's first run; timing only against the reviewed goldens
# in golden/ (none for this fingerprint: "not compared"), never against a golden recorded here.
out=$(cd "$root" && "$fp" run "$case" --results "$build/results-gpu" --golden "$build/golden-gpu" --record-missing-answers \
  --timing-golden "$root/golden" 2>&1)
rc=$?
printf '%s\n' "$out"
[ "$rc" -eq 125 ] && exit 125
if [ "$rc" -ne "$expect" ]; then
  echo "FAIL: flashproof exited $rc, expected $expect"
  exit 1
fi
for p in "$@"; do
  grep -Eq -- "$p" <<<"$out" || { echo "FAIL: the output does not match: $p"; exit 1; }
done
echo "flashproof exited $rc as expected, every pattern present"
