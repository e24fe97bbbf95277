#!/usr/bin/env bash
# Nightly: run every case against this machine's goldens, keep the history under results/, and print
# the diff against the last night (`flashproof diff --last`: per case, the last run against the one
# before it, across fingerprints), then the change points over all the nights kept
# (`flashproof history --changes`: the nights a figure's level stepped and what changed then). When
# the fingerprint changed since the goldens were accepted (a new runtime build or driver: no
# golden/<id>/ yet), the night runs the upgrade gate instead, against the previous fingerprint's
# goldens.
#
# Each case takes FLASHPROOF_NIGHTLY_LAUNCHES fresh launches (default 3; --launches N overrides): the
# night's value is the median of their medians, so one launch in a burst never decides alone, and the
# noise band comes from the golden's launches widened for the sitting, then from the nights
# (golden/noise_band.h; bench/README.md section 7 has the false-alarm and detection figures).
#
# usage: ci/nightly.sh [flashproof run/gate options, e.g. --repetitions 9, --launches 5]
# env:   FLASHPROOF_CASES (space-separated case files; default: cases/*.json without a "ctest" block),
#        FLASHPROOF_GOLDEN (default golden/), FLASHPROOF_RESULTS (default results/),
#        FLASHPROOF_SKIP_BUILD=1 to use an existing build in FLASHPROOF_BUILD_DIR (default build/),
#        FLASHPROOF_NIGHTLY_LAUNCHES (default 3)
# exit:  the run's (or gate's) exit code: 0 pass, 1 fail, 2 incomplete; the diff and the change
#        points only inform.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
[ "${FLASHPROOF_SKIP_BUILD:-0}" = 1 ] || fp_build
FP=$FP_BUILD/flashproof
golden=${FLASHPROOF_GOLDEN:-$FP_ROOT/golden}
results=${FLASHPROOF_RESULTS:-$FP_ROOT/results}
cd "$FP_ROOT"
if [ -n "${FLASHPROOF_CASES:-}" ]; then read -r -a cases <<<"$FLASHPROOF_CASES"; else mapfile -t cases < <(fp_default_cases); fi
cases=("${cases[@]/#$FP_ROOT\//}")
names=()
for c in "${cases[@]}"; do names+=("$(basename "$c" .json)"); done

launch_args=(--launches "${FLASHPROOF_NIGHTLY_LAUNCHES:-3}")
for a in "$@"; do [ "$a" = --launches ] && launch_args=(); done

id=$("$FP" fingerprint)
set +e
if [ -d "$golden/$id" ]; then
  echo "== nightly run: ${#cases[@]} cases, fingerprint $id"
  "$FP" run "${cases[@]}" --golden "$golden" --results "$results" "${launch_args[@]}" "$@"
  rc=$?
else
  echo "== nightly: no goldens for fingerprint $id yet: running the upgrade gate against the previous fingerprint"
  "$FP" gate "${cases[@]}" --golden "$golden" --results "$results" "${launch_args[@]}" "$@"
  rc=$?
fi
echo
echo "== diff against the last night ($results/history.tsv)"
"$FP" diff --last --results "$results" "${names[@]}"
echo
echo "== change points over the nights (flashproof history --changes)"
"$FP" history --changes --results "$results" "${names[@]}"
echo
echo "nightly: exit $rc (history: $FP history --results $results)"
exit $rc
