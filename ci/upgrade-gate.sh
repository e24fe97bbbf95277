#!/usr/bin/env bash
# The upgrade gate: after a new runtime build, driver or model file, run every case against the
# goldens of the previous fingerprint; say what changed field by field; fail on any lost kernel,
# regression beyond tolerance or changed answer (docs/upgrade-gate.md).
#
# usage: ci/upgrade-gate.sh [--baseline FINGERPRINT_ID] [--repetitions N] [--warmup N]
#        FLASHPROOF_LLAMA_SERVER=/path/to/new/llama-server ci/upgrade-gate.sh   # gate a build before installing it
# env:   FLASHPROOF_CASES (space-separated case files; default: cases/*.json without a "ctest" block),
#        FLASHPROOF_GOLDEN (default golden/), FLASHPROOF_RESULTS (default results/),
#        FLASHPROOF_SKIP_BUILD=1 to use an existing build in FLASHPROOF_BUILD_DIR (default build/)
# exit:  0 pass, 1 fail (lost kernel, regression, changed answer), 2 incomplete or no baseline.
# On a pass, review and keep the new fingerprint's goldens with: flashproof accept <run folders>.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
[ "${FLASHPROOF_SKIP_BUILD:-0}" = 1 ] || fp_build
FP=$FP_BUILD/flashproof
cd "$FP_ROOT"
if [ -n "${FLASHPROOF_CASES:-}" ]; then read -r -a cases <<<"$FLASHPROOF_CASES"; else mapfile -t cases < <(fp_default_cases); fi
exec "$FP" gate "${cases[@]/#$FP_ROOT\//}" --golden "${FLASHPROOF_GOLDEN:-$FP_ROOT/golden}" \
  --results "${FLASHPROOF_RESULTS:-$FP_ROOT/results}" "$@"
