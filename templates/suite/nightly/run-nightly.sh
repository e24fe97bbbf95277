#!/usr/bin/env bash
# flashproof nightly for the suite in @SUITE_TEXT@ (written by `flashproof init`; run by the systemd
# units and the cron line beside this file, or by hand). One night: configure the suite's build (a
# no-op once configured), run its CTest, keep the night under results/nightly/<UTC stamp>/ (ctest.log,
# junit.xml with each failure's explanation, report.html) with a line in results/nightly/history.tsv,
# print where the report is, and exit with CTest's status: non-zero when a case failed, so that the
# unit fails (systemctl --failed, OnFailure=) and alerting sees it.
# env: FLASHPROOF_NIGHTLY_CTEST_ARGS  more ctest arguments, e.g. "-L gpu" or "-j 2"
#      FLASHPROOF                    the flashproof binary (default: the one that wrote this file)
# exit: CTest's (0 every test passed, 8 some failed), 2 the suite could not be configured
set -uo pipefail
suite=@SUITE_SH@
flashproof=${FLASHPROOF:-@FLASHPROOF_SH@}
prefix=@PREFIX_SH@
nightly=$suite/results/nightly
stamp=$(date -u +%Y%m%dT%H%M%SZ)
night=$nightly/$stamp
say() { printf 'flashproof nightly: %s\n' "$*"; }
mkdir -p "$night" || { say "cannot create $night"; exit 2; }
cd "$suite" || exit 2
history() { printf '%s\t%s\t%s\t%s\n' "$stamp" "$1" "$2" "$night" >>"$nightly/history.tsv"; ln -sfn "$stamp" "$nightly/latest"; }
# Configured before (by hand, or a night before): cmake keeps where it found flashproof; else the
# prefix of the flashproof that wrote this file.
configure=(cmake -S "$suite" -B "$suite/build")
[ -f "$suite/build/CMakeCache.txt" ] || configure+=(-DCMAKE_PREFIX_PATH="$prefix")
if ! "${configure[@]}" >"$night/configure.log" 2>&1; then
  say "FAILED: the suite does not configure (exit 2); $night/configure.log ends:"
  tail -5 "$night/configure.log"
  say "find_package(flashproof) needs an installed flashproof (cmake --install, or the Debian package) under $prefix"
  history 2 "configure failed"
  exit 2
fi
# shellcheck disable=SC2086
ctest --test-dir "$suite/build" --output-on-failure --output-junit "$night/junit.xml" ${FLASHPROOF_NIGHTLY_CTEST_ARGS:-} \
  >"$night/ctest.log" 2>&1
rc=$?
"$flashproof" report --junit "$night/junit.xml" >/dev/null 2>&1 || true
"$flashproof" report "$suite/build/results-ci" -o "$night/report.html" >"$night/report.log" 2>&1 ||
  say "no HTML report: $(tail -1 "$night/report.log")"
summary=$(grep -E '^[0-9]+% tests passed' "$night/ctest.log" | tail -1)
history "$rc" "${summary:-no ctest summary}"
if [ "$rc" -ne 0 ]; then
  say "FAILED (ctest exit $rc): ${summary:-no ctest summary}"
  grep -E '^[[:space:]]*[0-9]+ - .*\((Failed|Timeout|Not Run|SEGFAULT|Subprocess aborted|Exception)\)' "$night/ctest.log" |
    sed -E 's/^[[:space:]]*/  /'
  grep -E '^FAIL ' "$night/ctest.log" | awk '!seen[$0]++' | head -10 | cut -c1-300 | sed 's/^/  /'
else
  say "passed: $summary"
fi
say "report: $night/report.html"
say "ctest log: $night/ctest.log; nights: $nightly/history.tsv"
exit "$rc"
