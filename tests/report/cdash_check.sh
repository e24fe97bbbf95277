#!/usr/bin/env bash
# CDash submission, end to end on loopback: a receiver standing in for CDash (cdash_receiver.py), the
# real dashboard script (ci/dashboard.cmake with CTestConfig.cmake) run on a two-test project whose
# tests print what flashproof cases print under CTest (from the fixture's real results), and checks
# that the submission holds the test results, the key figures as measurements and the failure's
# explanation.
# usage: cdash_check.sh FLASHPROOF REPO_ROOT WORK_DIR
set -uo pipefail
FP=$1 ROOT=$2 WORK=$3
fail() { echo "FAIL: $*"; echo "working files kept in $WORK"; exit 1; }
rm -rf "$WORK" && mkdir -p "$WORK/received" || exit 1
command -v python3 >/dev/null || { echo "SKIP: python3 not found (the loopback receiver needs it)"; exit 125; }

python3 "$ROOT/tests/report/cdash_receiver.py" "$WORK/received" &
receiver=$!
trap 'kill $receiver 2>/dev/null' EXIT
for _ in $(seq 50); do [ -f "$WORK/received/port" ] && break; sleep 0.1; done
[ -f "$WORK/received/port" ] || fail "the receiver did not start"
port=$(cat "$WORK/received/port")

fixture="$ROOT/tests/report/fixture/results"
passing=$(ls "$fixture"/*/chat-tiny-short/2*/result.json | tail -1)
failing=$(ls "$fixture"/*/chat-tiny-fa-off-expects-on/2*/result.json | tail -1)
mkdir -p "$WORK/build"
cat >"$WORK/build/CMakeCache.txt" <<CACHE
FLASHPROOF:FILEPATH=$FP
PASSING_RESULT:FILEPATH=$passing
FAILING_RESULT:FILEPATH=$failing
CACHE

FLASHPROOF_CDASH_SUBMIT_URL="http://127.0.0.1:$port/submit.php?project=flashproof" FLASHPROOF_SITE=loopback-check \
FLASHPROOF_BUILD_NAME=cdash-check \
  ctest -S "$ROOT/ci/dashboard.cmake,Experimental" -DCTEST_SOURCE_DIRECTORY="$ROOT/tests/report/cdash_project" \
        -DCTEST_BINARY_DIRECTORY="$WORK/build" -V >"$WORK/dashboard.log" 2>&1
rc=$?
[ $rc = 0 ] || { tail -30 "$WORK/dashboard.log"; fail "ctest -S ci/dashboard.cmake exited $rc"; }

ls "$WORK/received"
test_xml=$(ls "$WORK"/received/*Test.xml 2>/dev/null | head -1)
[ -n "$test_xml" ] || fail "no Test.xml submitted (requests: $(cat "$WORK/received/requests.log" 2>/dev/null))"
ls "$WORK"/received/*Configure.xml >/dev/null 2>&1 || fail "no Configure.xml submitted"
grep -q 'project=flashproof' "$WORK/received/requests.log" || fail "the submission did not name the project"
python3 - "$test_xml" <<'PY' || fail "the submitted Test.xml (above)"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
tests = {t.findtext("Name"): t for t in root.iter("Test") if t.findtext("Name")}
ok = True
def check(cond, what):
    global ok
    print(("ok   " if cond else "FAIL ") + what); ok &= cond
def measurements(t):
    return {m.get("name"): m.findtext("Value") for m in t.iter("NamedMeasurement")}
check(set(tests) >= {"case:passing", "case:failing"}, f"both tests submitted: {sorted(tests)}")
p, f = measurements(tests["case:passing"]), measurements(tests["case:failing"])
check(tests["case:passing"].get("Status") == "passed" and tests["case:failing"].get("Status") == "failed", "statuses passed / failed")
for name in ("ttft_ms.p50", "ttft_ms_p95.p50", "decode_tokens_per_s.p50", "memory.host_peak_rss_mib"):
    check(name in p and float(p[name]) > 0, f"measurement {name} = {p.get(name)}")
check(p.get("verdict", "").startswith("active"), f"text measurement verdict = {p.get('verdict')}")
check(f.get("verdict", "").startswith("not active"), f"failing verdict = {f.get('verdict')}")
check("evidence says not active" in f.get("Completion Status", ""), f"failure as CDash Details: {f.get('Completion Status')}")
value = tests["case:failing"].find("Results").find("Measurement").find("Value")
out = value.text or ""
if value.get("compression") == "gzip":  # dashboard mode compresses outputs (base64 of zlib)
    import base64, zlib
    out = zlib.decompress(base64.b64decode(out)).decode("utf-8", "replace")
check("FAIL chat-tiny-fa-off-expects-on: fused attention expected active" in out, "failure explanation in the output")
sys.exit(0 if ok else 1)
PY
echo "cdash check: pass ($(ls "$WORK/received" | grep -c xml) files received on 127.0.0.1:$port)"
