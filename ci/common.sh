# Shared by the ci/ scripts: install, configure and build, once per call. Source it, then call fp_build.
set -euo pipefail
FP_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FP_BUILD=${FLASHPROOF_BUILD_DIR:-$FP_ROOT/build}

# fp_build [TARGET...]: install what is missing, configure, build the targets (default: everything,
# unit tests and benchmarks included) and generate the models.
fp_build() {
  bash "$FP_ROOT/ci/setup.sh"
  cmake -S "$FP_ROOT" -B "$FP_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  cmake --build "$FP_BUILD" -j"$(nproc)" "${targets[@]}"
  "$FP_BUILD/flashproof" make-model "$FP_ROOT"/fixtures/models/*.json
}

# The operator's cases: cases/*.json without a "ctest" block (those are flashproof's self-tests).
fp_default_cases() {
  local f
  for f in "$FP_ROOT"/cases/*.json; do
    grep -q '"ctest"' "$f" || printf '%s\n' "$f"
  done
}
