#!/usr/bin/env bash
# The HTML report in a real browser: renders tests/report/fixture (real results across two runtime
# builds, a failing case, an A/B run) with `flashproof report`, loads the page in headless Chromium
# and checks that it loads without a script or console error, that every plot is drawn (the page's
# own check sets data-plots / data-plots-drawn / data-errors on <html>), that nothing is fetched
# from the network, and takes a screenshot.
#
# usage: render_check.sh FLASHPROOF FIXTURE_DIR WORK_DIR [SCREENSHOT.png]
# exit:  0 pass, 1 fail, 125 skipped (no chromium: ci/setup.sh installs Debian's chromium)
set -uo pipefail
FP=$1 FIXTURE=$2 WORK=$3 SHOT=${4:-$3/report.png}
fail() { echo "FAIL: $*"; echo "working files kept in $WORK"; exit 1; }

CHROMIUM=${FLASHPROOF_CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
[ -n "$CHROMIUM" ] && [ -x "$CHROMIUM" ] ||
  { echo "SKIP: no chromium on this machine (Debian package chromium; ci/setup.sh installs it)"; exit 125; }

rm -rf "$WORK" && mkdir -p "$WORK" && cp -r "$FIXTURE"/. "$WORK"/ || fail "cannot copy the fixture to $WORK"
find "$WORK" -name result.json -exec sed -i "s|@FIXTURE@|$WORK|g" {} +
"$FP" report "$WORK/results" -o "$WORK/report.html" || fail "flashproof report exited $?"
grep -Eo '(src|href)="[a-z]+:[^"]*"|https?://[^" <]*' "$WORK/report.html" && fail "the report refers to something outside itself"

chromium_run() {
  local profile
  profile=$(mktemp -d)
  timeout 90 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --disable-dev-shm-usage \
    --user-data-dir="$profile" --enable-logging=stderr --v=0 --virtual-time-budget=5000 "$@"
  local rc=$?
  rm -rf "$profile"
  return $rc
}

chromium_run --dump-dom "file://$WORK/report.html" >"$WORK/dom.html" 2>"$WORK/chromium.log" ||
  fail "chromium --dump-dom exited $? (log: $WORK/chromium.log)"
attr() { grep -o "<html[^>]*>" "$WORK/dom.html" | grep -o "$1=\"[^\"]*\"" | head -1 | cut -d'"' -f2; }
rendered=$(attr data-rendered) plots=$(attr data-plots) drawn=$(attr data-plots-drawn) errors=$(attr data-errors)
echo "chromium: rendered=${rendered:-no} plots=${plots:-?} drawn=${drawn:-?} script errors=${errors:-?}"
[ "$rendered" = yes ] || fail "the page's check never ran (load event not reached or script blocked)"
[ "$errors" = 0 ] || fail "script errors: $(attr data-error-text)"
[ "${plots:-0}" -ge 8 ] || fail "expected at least 8 plots (figures, A/B, memory, trends), found ${plots:-0}"
[ "$drawn" = "$plots" ] || fail "$drawn of $plots plots drawn"
if grep -E 'CONSOLE|Uncaught|Refused to' "$WORK/chromium.log" | grep -v 'Fontconfig' ; then
  fail "the browser reported console errors (above; log $WORK/chromium.log)"
fi
# The trend shows the step at the runtime bump, red (worse), in the rendered DOM.
grep -q 'class="step worse"' "$WORK/dom.html" || fail "no worsening step marked on the trend"

chromium_run --window-size=1280,2600 --hide-scrollbars --screenshot="$SHOT" "file://$WORK/report.html" >>"$WORK/chromium.log" 2>&1 ||
  fail "chromium --screenshot exited $?"
size=$(stat -c %s "$SHOT" 2>/dev/null || echo 0)
[ "$size" -gt 20000 ] || fail "screenshot $SHOT is $size bytes: blank?"
echo "report: $WORK/report.html; screenshot: $SHOT ($size bytes)"
