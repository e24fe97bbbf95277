#!/usr/bin/env bash
# A driver bump (or any change that leaves no old build to run beside the new one: a CUDA upgrade,
# a kernel, firmware): a fresh reference of N launches per case right before the bump, the same N
# launches right after it, on the same machine (docs/upgrade-gate.md "Driver bump, before and after").
#
# usage: ci/driver-bump.sh before [--launches N] [--dir DIR] [--runtime PATH] [flashproof run options]
#        ci/driver-bump.sh after  [--launches N] [--dir DIR] [--runtime PATH] [flashproof gate options]
#   before  records the reference (figures from N fresh launches, answers, verdict, the fingerprint)
#           into DIR/reference/<fingerprint id>/; an older reference there is moved aside first
#   after   runs the same N launches and compares them with the reference: what changed in the
#           fingerprint (driver, CUDA, kernel, ...) field by field, then every case
#   --launches N   launches per case on both sides (default 5: a golden's; at least 3)
#   --dir DIR      where the reference and the runs go (default results/driver-bump)
#   --runtime PATH run this runtime (an executable or a ci/setup.sh prefix) instead of the cases' own
# env:   FLASHPROOF_CASES (space-separated case files; default: cases/*.json without a "ctest" block),
#        FLASHPROOF_SKIP_BUILD=1 to use an existing build in FLASHPROOF_BUILD_DIR (default build/)
# exit:  before: the run's (0 recorded, 1 a case failed: nothing recorded for it, 2 incomplete);
#        after: as the side-by-side gate's: 0 no regression, 1 regression (a gated figure or guard,
#        memory growth, a lost kernel, a changed answer), 2 incomplete, 3 unresolved (a gated figure
#        moved beyond its minimum effect but within the noise band: take more launches).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
step=${1:-}
case $step in before|after) shift ;; *) echo "usage: ci/driver-bump.sh before|after [--launches N] [--dir DIR] [--runtime PATH] [options]" >&2; exit 64 ;; esac
launches=5
dir=$FP_ROOT/results/driver-bump
extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --launches) launches=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --runtime)
      rt=$2; shift 2
      if [ -d "$rt" ]; then
        lib=$rt/usr/lib/x86_64-linux-gnu
        export FLASHPROOF_LLAMA_SERVER=$rt/usr/bin/llama-server
        if [ -x "$lib/ld-linux-x86-64.so.2" ]; then
          export FLASHPROOF_LOADER=$lib/ld-linux-x86-64.so.2 FLASHPROOF_LIBRARY_PATH=$lib:$lib/llama
        fi
      else
        export FLASHPROOF_LLAMA_SERVER=$rt
      fi ;;
    *) extra+=("$1"); shift ;;
  esac
done
[ "$launches" -ge 3 ] 2>/dev/null || { echo "driver-bump: --launches $launches: at least 3 (their spread is the reference's noise band)" >&2; exit 64; }
[ "${FLASHPROOF_SKIP_BUILD:-0}" = 1 ] || fp_build
FP=$FP_BUILD/flashproof
cd "$FP_ROOT"
if [ -n "${FLASHPROOF_CASES:-}" ]; then read -r -a cases <<<"$FLASHPROOF_CASES"; else mapfile -t cases < <(fp_default_cases); fi
cases=("${cases[@]/#$FP_ROOT\//}")
mkdir -p "$dir"
set +e
if [ "$step" = before ]; then
  if [ -d "$dir/reference" ]; then
    old=$dir/reference-$(date -u +%Y%m%dT%H%M%SZ)
    mv "$dir/reference" "$old" && echo "driver-bump: the previous reference moved to $old"
  fi
  echo "== driver bump, before: a fresh reference of $launches launches per case, fingerprint $("$FP" fingerprint)"
  "$FP" fingerprint --json >"$dir/fingerprint-before.json" 2>/dev/null
  "$FP" run "${cases[@]}" --launches "$launches" --record-missing --golden "$dir/reference" --results "$dir/results" "${extra[@]}"
  rc=$?
  echo "driver-bump before: exit $rc; reference in $dir/reference; now bump, then: ci/driver-bump.sh after --launches $launches --dir $dir"
  exit $rc
fi
[ -d "$dir/reference" ] || { echo "driver-bump: $dir/reference: no reference; run ci/driver-bump.sh before first" >&2; exit 2; }
echo "== driver bump, after: $launches launches per case against the reference in $dir/reference, fingerprint $("$FP" fingerprint)"
"$FP" gate "${cases[@]}" --reference "$dir/reference" --results "$dir/results" --launches "$launches" "${extra[@]}"
rc=$?
echo "driver-bump after: exit $rc (0 no regression, 1 regression, 2 incomplete, 3 unresolved)"
exit $rc
