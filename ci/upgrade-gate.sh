#!/usr/bin/env bash
# The upgrade gate (docs/upgrade-gate.md), two ways:
#  - side by side, the stronger test, while the old build is still at hand: the old and the new build
#    run alternately on this machine, paired launch by launch; each gated figure ends as regression,
#    no regression or unresolved; fused attention must not be lost, answers must not change:
#      ci/upgrade-gate.sh --baseline-runtime OLD [--candidate-runtime NEW] [--budget S] [--min-effect FIG=X]
#    A new Debian build, gated before it replaces the old one (docs/upgrade-gate.md):
#      FLASHPROOF_PREFIX=/var/cache/flashproof/sid-new bash ci/setup.sh --update-lock
#      ci/upgrade-gate.sh --baseline-runtime /var/cache/flashproof/sid-prefix --candidate-runtime /var/cache/flashproof/sid-new
#  - against the goldens of the previous fingerprint, when the old build is gone:
#      ci/upgrade-gate.sh [--baseline FINGERPRINT_ID] [--repetitions N] [--warmup N]
#      FLASHPROOF_LLAMA_SERVER=/path/to/new/llama-server ci/upgrade-gate.sh   # gate a build before installing it
# env:   FLASHPROOF_CASES (space-separated case files; default: cases/*.json without a "ctest" block),
#        FLASHPROOF_GOLDEN (default golden/), FLASHPROOF_RESULTS (default results/),
#        FLASHPROOF_SKIP_BUILD=1 to use an existing build in FLASHPROOF_BUILD_DIR (default build/)
# exit:  0 pass / no regression, 1 fail (lost kernel, regression, changed answer), 2 incomplete or no
#        baseline, 3 unresolved within the budget (side by side only).
# On a pass, review and keep the new fingerprint's goldens with: flashproof accept <run folders>.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
[ "${FLASHPROOF_SKIP_BUILD:-0}" = 1 ] || fp_build
FP=$FP_BUILD/flashproof
cd "$FP_ROOT"
if [ -n "${FLASHPROOF_CASES:-}" ]; then read -r -a cases <<<"$FLASHPROOF_CASES"; else mapfile -t cases < <(fp_default_cases); fi
exec "$FP" gate "${cases[@]/#$FP_ROOT\//}" --golden "${FLASHPROOF_GOLDEN:-$FP_ROOT/golden}" \
  --results "${FLASHPROOF_RESULTS:-$FP_ROOT/results}" "$@"
