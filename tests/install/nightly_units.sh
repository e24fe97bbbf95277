#!/usr/bin/env bash
# The nightly runner `flashproof init` writes (templates/suite/nightly/), in the suite install:suite
# made with the installed binary (tests/install/CMakeLists.txt; README "A nightly that installs itself").
# usage: nightly_units.sh MODE WORK_DIR     (WORK_DIR holds prefix/ and suite/ of install:suite)
#   verify  `systemd-analyze verify` on the suite's .service and .timer (the timer's OnCalendar through
#           `systemd-analyze calendar`), and the crontab line has five time fields and runs the script;
#           exit 125 with the reason where systemd-analyze is not installed
#   run     the service's command run as systemd runs it: User=, WorkingDirectory= and ExecStart= read
#           from the unit file (its quoting and %-escapes undone), a clean environment (systemd's PATH,
#           HOME, USER, LOGNAME, SHELL), stdin from /dev/null. A night that passes exits 0, prints the
#           report's path (which exists) and adds a line to results/nightly/history.tsv; a night with a
#           failing case (a copy of the example that expects fused attention off) exits non-zero and
#           names the case. The failing case is removed again.
# Exit 0 pass, 1 fail (working files kept), 125 skipped.
set -uo pipefail
mode=$1 work=$2
suite=$work/suite
fail() { echo "FAIL (nightly $mode): $* (working files kept in $work)"; exit 1; }
[ -f "$suite/flashproof-suite.json" ] || fail "no suite at $suite (the install:suite fixture failed)"
unit=$(cd "$suite/nightly" && ls -- *.service 2>/dev/null | head -1)
unit=${unit%.service}
[ -n "$unit" ] || fail "flashproof init wrote no .service into $suite/nightly"
for f in "$unit.service" "$unit.timer" crontab run-nightly.sh; do [ -f "$suite/nightly/$f" ] || fail "no nightly/$f"; done
[ -x "$suite/nightly/run-nightly.sh" ] || fail "nightly/run-nightly.sh is not executable"
echo "== nightly/$unit.service"; cat "$suite/nightly/$unit.service"
echo "== nightly/$unit.timer"; cat "$suite/nightly/$unit.timer"
echo "== nightly/crontab"; cat "$suite/nightly/crontab"

if [ "$mode" = verify ]; then
  line=$(grep -v '^#' "$suite/nightly/crontab" | grep -v '^$')
  [ "$(wc -l <<<"$line")" -eq 1 ] || fail "nightly/crontab holds more than one entry"
  read -r mi ho dm mo dw cmd <<<"$line"
  for f in "$mi" "$ho" "$dm" "$mo" "$dw"; do [[ $f =~ ^[0-9*/,-]+$ ]] || fail "crontab time field '$f' is not a cron field: $line"; done
  grep -qF "$suite/nightly/run-nightly.sh" <<<"$cmd" || fail "the cron line does not run $suite/nightly/run-nightly.sh: $cmd"
  command -v systemd-analyze >/dev/null || { echo "SKIP: systemd-analyze is not installed here (package systemd)"; exit 125; }
  (cd "$suite/nightly" && systemd-analyze verify "./$unit.service" "./$unit.timer") >"$work/verify.txt" 2>&1
  rc=$?
  cat "$work/verify.txt"
  [ $rc -eq 0 ] || fail "systemd-analyze verify exited $rc"
  [ ! -s "$work/verify.txt" ] || fail "systemd-analyze verify printed warnings"
  cal=$(sed -n 's/^OnCalendar=//p' "$suite/nightly/$unit.timer")
  systemd-analyze calendar "$cal" || fail "OnCalendar=$cal does not parse"
  echo "nightly verify: the units verify, the timer's calendar parses, the cron line is well formed"
  exit 0
fi

[ "$mode" = run ] || fail "unknown mode"
# What systemd would run, read from the unit: User=, WorkingDirectory=, ExecStart= (quotes, %% undone).
eval "$(python3 - "$suite/nightly/$unit.service" <<'PY'
import shlex, sys
keys = {}
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if "=" in line and not line.startswith("#") and not line.startswith("["):
        k, v = line.split("=", 1)
        keys[k] = v.replace("%%", "%")
argv = shlex.split(keys["ExecStart"])
print("unit_user=%s" % shlex.quote(keys.get("User", "")))
print("unit_dir=%s" % shlex.quote(keys["WorkingDirectory"]))
print("unit_cmd=(%s)" % " ".join(shlex.quote(a) for a in argv))
PY
)"
[ "$unit_user" = "$(id -un)" ] || fail "User=$unit_user, but this test runs as $(id -un): init should name the user who ran it"
[ "$unit_dir" = "$suite" ] || fail "WorkingDirectory=$unit_dir, expected $suite"
as_systemd() {  # the unit's command, as systemd starts a service of User=$unit_user
  local home; home=$(getent passwd "$unit_user" | cut -d: -f6)
  (cd "$unit_dir" && env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME="$home" USER="$unit_user" \
     LOGNAME="$unit_user" SHELL=/bin/sh "$@" "${unit_cmd[@]}" </dev/null)
}
history=$suite/results/nightly/history.tsv
before=$( [ -f "$history" ] && wc -l <"$history" || echo 0)
out=$(as_systemd 2>&1); rc=$?
echo "== a night, as systemd runs it (exit $rc)"; echo "$out"
[ $rc -eq 0 ] || fail "the night exited $rc"
report=$(sed -n 's/^flashproof nightly: report: //p' <<<"$out")
[ -n "$report" ] && [ -s "$report" ] || fail "no report printed, or it does not exist: '$report'"
grep -q 'example-chat' "$report" || fail "the report does not show example-chat"
[ "$(wc -l <"$history")" -eq $((before + 1)) ] || fail "results/nightly/history.tsv got no line"
tail -1 "$history" | grep -qP '^\d{8}T\d{6}Z\t0\t' || fail "history line: $(tail -1 "$history")"

# A night with a failing case: the unit must fail (non-zero), naming the case.
broken=$suite/cases/nightly-broken.json
trap 'rm -f "$broken"' EXIT
python3 - "$suite/cases/example-chat.json" "$broken" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["name"] = "nightly-broken"; c["expect"]["fused_attention"] = False
json.dump(c, open(sys.argv[2], "w"), indent=2)
PY
out=$(as_systemd FLASHPROOF_NIGHTLY_CTEST_ARGS="-R nightly-broken" 2>&1); rc=$?
echo "== a night with a failing case (exit $rc)"; echo "$out"
[ $rc -ne 0 ] || fail "a night with a failing case exited 0"
grep -q '^flashproof nightly: FAILED (ctest exit' <<<"$out" || fail "no FAILED line"
grep -q 'case:nightly-broken' <<<"$out" || fail "the failing case is not named"
grep -q '^flashproof nightly: report: ' <<<"$out" || fail "a failed night prints no report path"
tail -1 "$history" | grep -qP '^\d{8}T\d{6}Z\t[1-9]' || fail "history line of the failed night: $(tail -1 "$history")"
rm -f "$broken"
(cd "$suite" && cmake -S . -B build >/dev/null 2>&1) || true  # the suite's tests without the broken case again
echo "nightly run: a passing night exits 0 with its report; a failing night exits $rc and names the case"
