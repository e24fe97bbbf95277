#!/usr/bin/env bash
# Nightly: run every case against this machine's goldens, keep the history under results/, and print
# the diff against the last night (`flashproof diff --last`: per case, the last run against the one
# before it, across fingerprints), then the change points over all the nights kept
# (`flashproof history --changes`: the nights a figure's level stepped and what changed then). When
# the fingerprint changed since the goldens were accepted (a new runtime build or driver: no
# golden/<id>/ yet), the night runs the upgrade gate instead, against the previous fingerprint's
# goldens.
#
# usage: ci/nightly.sh [flashproof run/gate options, e.g. --repetitions 9]
# env:   FLASHPROOF_CASES (space-separated case files; default: cases/*.json without a "ctest" block),
#        FLASHPROOF_GOLDEN (default golden/), FLASHPROOF_RESULTS (default results/),
#        FLASHPROOF_SKIP_BUILD=1 to use an existing build in FLASHPROOF_BUILD_DIR (default build/)
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

id=$("$FP" fingerprint)
set +e
if [ -d "$golden/$id" ]; then
  echo "== nightly run: ${#cases[@]} cases, fingerprint $id"
  "$FP" run "${cases[@]}" --golden "$golden" --results "$results" "$@"
  rc=$?
else
  echo "== nightly: no goldens for fingerprint $id yet: running the upgrade gate against the previous fingerprint"
  "$FP" gate "${cases[@]}" --golden "$golden" --results "$results" "$@"
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
