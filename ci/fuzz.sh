#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang, ASan+UBSan) and runs each for a fixed time, starting
# from the seed corpus in fuzz/corpus/<target>/ (never modified: new inputs go to a work folder).
# Fails on any finding (crash, sanitizer report, leak, timeout, out of memory) and prints, per target,
# the executions and the input that reproduces the finding.
#
# usage: ci/fuzz.sh [seconds per target, default 60] [target ...]   (targets: case sse ...; default all)
# env:   FLASHPROOF_FUZZ_BUILD_DIR (default build-fuzz/), FLASHPROOF_FUZZ_WORK (default a temp folder),
#        FLASHPROOF_JOBS (build jobs, default 2), CXX (default clang++)
# exit:  0 no finding, 1 a finding or a failed build, 125 clang or libFuzzer missing (skipped)
set -euo pipefail
FP_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-60}
shift || true
BUILD=${FLASHPROOF_FUZZ_BUILD_DIR:-$FP_ROOT/build-fuzz}
CXX=${CXX:-clang++}
case $CXX in *clang*) ;; *) CXX=clang++ ;; esac  # the caller's gcc cannot build fuzzers
[[ $seconds =~ ^[0-9]+$ ]] && [ "$seconds" -ge 1 ] || { echo "fuzz.sh: seconds must be a positive integer, got '$seconds'" >&2; exit 64; }

skip() { echo "fuzz.sh: SKIPPED: $*" >&2; exit 125; }
command -v "$CXX" >/dev/null || skip "no $CXX on PATH (Debian: apt-get install clang)"
probe=$(mktemp -d /tmp/flashproof-fuzzprobe.XXXXXX)
trap 'rm -rf "$probe"' EXIT
printf '#include <cstdint>\n#include <cstddef>\nextern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }\n' >"$probe/p.cpp"
"$CXX" -fsanitize=fuzzer,address,undefined "$probe/p.cpp" -o "$probe/p" 2>"$probe/err" ||
  skip "$CXX cannot link a libFuzzer target (libFuzzer or the sanitizer runtimes missing): $(head -c 300 "$probe/err")"

t0=$(date +%s)
cmake -S "$FP_ROOT/fuzz" -B "$BUILD" -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD" -j"${FLASHPROOF_JOBS:-2}" >"$probe/build.log" 2>&1 || { cat "$probe/build.log" >&2; echo "fuzz.sh: build failed" >&2; exit 1; }
t1=$(date +%s)
echo "fuzz.sh: built the fuzz targets in $((t1 - t0)) s ($BUILD)"

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for b in "$BUILD"/fuzz_*; do [ -x "$b" ] && targets+=("$(basename "$b" | sed 's/^fuzz_//')"); done
fi
WORK=${FLASHPROOF_FUZZ_WORK:-$(mktemp -d /tmp/flashproof-fuzz.XXXXXX)}
mkdir -p "$WORK"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

failed=0
printf '%-14s %10s %8s %7s  %s\n' target executions exec/s corpus result >"$WORK/summary.txt"
for t in "${targets[@]}"; do
  bin=$BUILD/fuzz_$t
  [ -x "$bin" ] || { echo "fuzz.sh: no target fuzz_$t in $BUILD" >&2; exit 64; }
  mkdir -p "$WORK/$t/corpus" "$WORK/$t/artifacts"
  rc=0
  # Inputs up to 4 KiB (2 KiB for the regex-heavy kernel tally): the parsers are line-oriented, and
  # short inputs keep a run comparable with the figures in docs/hardening.md.
  max_len=4096; [ "$t" = kernel_tally ] && max_len=2048
  "$bin" -max_total_time="$seconds" -max_len=$max_len -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$WORK/$t/artifacts/" "$WORK/$t/corpus" "$FP_ROOT/fuzz/corpus/$t" >"$WORK/$t/log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$WORK/$t/log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$WORK/$t/log" | tail -1)
  units=$(ls "$WORK/$t/corpus" | wc -l)
  if [ "$rc" -eq 0 ]; then result=ok; else
    failed=1
    art=$(ls "$WORK/$t/artifacts" | head -1)
    result="FINDING (exit $rc): $WORK/$t/artifacts/$art; reproduce: $bin $WORK/$t/artifacts/$art"
    echo "---- fuzz_$t: last lines of $WORK/$t/log" >&2
    grep -v '^#[0-9]' "$WORK/$t/log" | tail -40 >&2
  fi
  printf '%-14s %10s %8s %7s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "$units" "$result" >>"$WORK/summary.txt"
done
cat "$WORK/summary.txt"
echo "fuzz.sh: ${#targets[@]} targets x $seconds s, total $(( $(date +%s) - t0 )) s; logs and new inputs in $WORK"
[ "$failed" -eq 0 ] || { echo "fuzz.sh: FAILED: findings above (logs kept in $WORK)" >&2; exit 1; }
[ -n "${FLASHPROOF_FUZZ_WORK:-}" ] || rm -rf "$WORK"
