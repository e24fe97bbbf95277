#!/usr/bin/env bash
# The driver bump before/after against the real llama-server (tests/bump/CMakeLists.txt registers one
# CTest test per step):
#   reduced-prefix  (fixture) a copy of the sid prefix without the CPU backend variant ggml loads here
#                   and any better one (ci/reduced-prefix.sh): a real, slower build
#   before          (fixture) ci/driver-bump.sh before: a fresh reference of 3 launches
#   same-build      ci/driver-bump.sh after, the same build: no fingerprint field changed, the verdict,
#                   memory and answers the reference's, every band said to come from the reference's
#                   launches widened for the sitting. Its host-clock figures are not asserted: a
#                   reference recorded minutes earlier on a shared machine checks nothing about timing
#                   (CI's busy neighbours moved cpu_ms_per_token by +55%), so a timing finding (regressed,
#                   unresolved, a busy or slower machine named) is printed and allowed, nothing else is;
#                   timing decisions are asserted side by side by the gate:* tests
#   reduced-build   ci/driver-bump.sh after --runtime REDUCED: must fail (exit 1) with the gated
#                   figure named as regressed
# usage: bump.sh TEST BUILD_DIR WORKDIR CASE
# Exit 0 pass, 1 fail (with the reason; the files are kept), 125 skipped (no llama-server).
set -uo pipefail
test_name=$1
BUILD=$2
WORK=$3
CASE=$4
env_file=${FLASHPROOF_CACHE:-/var/cache/flashproof}/env.sh
if [ ! -f "$env_file" ]; then echo "SKIP: $env_file missing: no Debian sid llama-server here (ci/setup.sh installs it)"; exit 125; fi
# shellcheck disable=SC1090
. "$env_file"
PREFIX=$FLASHPROOF_PREFIX
REDUCED=$WORK/reduced-prefix
T=$WORK/$test_name
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "FAIL ($test_name): $*"; echo "working files kept in $T"; exit 1; }
expect_out() { grep -Eq -- "$1" "$T/out.txt" || fail "output does not match /$1/ (see $T/out.txt)"; }
bump() {  # ci/driver-bump.sh with this build, this case, this work folder
  FLASHPROOF_SKIP_BUILD=1 FLASHPROOF_BUILD_DIR=$BUILD FLASHPROOF_CASES=$CASE \
    bash "$ROOT/ci/driver-bump.sh" "$@" --launches 3 --dir "$WORK/bump" --quiet
}

rm -rf "$T" && mkdir -p "$T"
case $test_name in
  reduced-prefix)
    bash "$ROOT/ci/reduced-prefix.sh" "$PREFIX" "$REDUCED" || fail "could not make a reduced build"
    exit 0 ;;
  before)
    rm -rf "$WORK/bump"
    bump before --runtime "$PREFIX" >"$T/out.txt" 2>&1
    rc=$?
    cat "$T/out.txt"
    [ "$rc" -eq 125 ] && exit 125
    [ "$rc" -eq 0 ] || fail "expected exit 0, got $rc"
    ls "$WORK"/bump/reference/*/bump-prefill.json >/dev/null 2>&1 || fail "no reference recorded under $WORK/bump/reference"
    grep -q '"band_source": "launches"' "$WORK"/bump/reference/*/bump-prefill.json || fail "the reference does not say where its bands came from"
    exit 0 ;;
  same-build) runtime=$PREFIX; want=0 ;;
  reduced-build) runtime=$REDUCED; want=1 ;;
  *) echo "unknown test $test_name"; exit 2 ;;
esac
start=$(date +%s)
bump after --runtime "$runtime" >"$T/out.txt" 2>&1
rc=$?
cat "$T/out.txt"
echo "driver bump after: exit $rc after $(( $(date +%s) - start )) s"
[ "$rc" -eq 125 ] && exit 125
expect_out "^baseline: "
expect_out "launches-widened: 3 launches of the golden"
if [ "$want" -eq 0 ]; then
  expect_out "^  \(no change\)$"
  grep -Eq "^verdict: (.+) -> \1$" "$T/out.txt" || fail "the verdict changed on the same build (see $T/out.txt)"
  ! grep -E "\[memory\]" "$T/out.txt" | grep -Ev "^  pass " || fail "a memory figure did not pass on the same build"
  # Timing findings only: a host-clock figure regressed or unresolved, or the machine named busy/slower.
  timing='^  PROBLEM (figure (?!memory)[a-z_.]+: regressed|UNRESOLVED|UNTRUSTWORTHY GOLDEN|BUSY RECORDING|BUSIER|SLOWER MACHINE)'
  other=$(grep -E "^  PROBLEM " "$T/out.txt" | grep -Pv "$timing")
  [ -z "$other" ] || fail "the same build failed on more than timing: $other"
  case $rc in
    0) expect_out "^upgrade gate: PASS" ;;
    1|3) grep -Pq "$timing" "$T/out.txt" || fail "exit $rc with no finding named (see $T/out.txt)"
         echo "note: exit $rc from timing findings only (not asserted against a reference minutes old):"
         grep -E "^  PROBLEM " "$T/out.txt" | cut -c1-160 ;;
    *) fail "expected exit 0 (or 1/3 from timing findings only), got $rc" ;;
  esac
else
  [ "$rc" -eq "$want" ] || fail "expected exit $want, got $rc"
  expect_out "^upgrade gate: FAIL"
  expect_out "PROBLEM figure cpu_ms_per_token: regressed: worse by"
fi
