#!/usr/bin/env bash
# Several models on one card, on this CPU with the real llama-server (README "Headroom"): the KV
# cache lives in host memory, the memory left is MemAvailable, and a case's "headroom" block names
# its deployed context and the servers beside it. One short run each (1 round, no warm-up) of the
# tiny model (512 bytes of KV cache per token):
#   fits           deployed 4096 beside a neighbour that runs (a process started here, matched by its
#                  command line: counted in MemAvailable) -> passes, the neighbour found running
#   too-long       deployed twice what the whole of MemAvailable holds -> fails saying by how much
#   reserved       deployed 2048 beside a neighbour that is not running and declares more than
#                  MemAvailable -> its memory is reserved and the case fails
# Each failure must be the typed check's (result.json headroom.deployed) and its sentence must carry
# the figures: M tokens fit, short by K = N - M tokens, K x 512 bytes in MiB.
# usage: neighbours.sh FLASHPROOF WORK_DIR
# Exit 0 pass, 1 fail (working files kept and named), 125 skipped (no llama-server or models here).
set -uo pipefail
fp=$1 work=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "NEIGHBOURS TEST FAILED: $* (working files in $work)"; exit 1; }
[ -f "$root/fixtures/models/generated/tiny.gguf" ] || { echo "SKIP: models not generated (flashproof make-model fixtures/models/*.json)"; exit 125; }
rm -rf "$work" && mkdir -p "$work/cases"
avail_kib=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
too_long=$(( avail_kib * 1024 * 2 / 512 )); [ "$too_long" -gt 2147483647 ] && too_long=2147483647
over_mib=$(( avail_kib / 1024 + 4096 ))
marker="fp-neighbour-$$"
# A neighbour that runs: any process whose command line names it (argv[0] here).
(exec -a "$marker" sleep 600) &
neighbour=$!
trap 'kill "$neighbour" 2>/dev/null' EXIT
# case NAME HEADROOM_JSON: chat-tiny-short with that "headroom" block
case_with() {
  python3 - "$root/cases/chat-tiny-short.json" "$work/cases/$1.json" "$1" "$2" <<'PY'
import json, sys
src, out, name, headroom = sys.argv[1:]
c = json.load(open(src))
c["name"] = name
c["headroom"] = json.loads(headroom)
json.dump(c, open(out, "w"), indent=2)
PY
}
case_with neighbours-fits "{\"deployed_context\": 4096, \"neighbours\": [{\"name\": \"sidecar\", \"match\": \"$marker\", \"mib\": 1}]}"
case_with neighbours-too-long "{\"deployed_context\": $too_long}"
case_with neighbours-reserved "{\"deployed_context\": 2048, \"neighbours\": [{\"name\": \"ghost\", \"match\": \"fp-no-such-server-$$\", \"mib\": $over_mib}]}"
run() {  # run NAME: prints flashproof's exit code
  (cd "$root" && "$fp" run "$work/cases/$1.json" --out "$work/runs/$1" --golden "$work/golden" --record-missing-answers \
     --repetitions 1 --warmup 0 --quiet) >"$work/$1.out" 2>&1
  echo $?
}
# check NAME WANT_EXIT: the result's headroom lines, then its typed check against what was wanted
check() {
  local n=$1 want=$2 rc
  rc=$(run "$n")
  echo "== $n (flashproof exit $rc, want $want)"
  [ "$rc" -eq 125 ] && { cat "$work/$n.out"; exit 125; }
  grep -E '^(headroom\.(memory_left|others|neighbour|deployed)|failure)' "$work/runs/$n/result.txt"
  [ "$rc" -eq "$want" ] || { cat "$work/$n.out"; return 1; }
  python3 - "$work/runs/$n/result.json" "$n" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1])); name = sys.argv[2]
d = r["headroom"]["deployed"]
errors = []
if not d["checked"]:
    errors.append("not checked: " + d["not_checked"])
if name == "neighbours-fits":
    n = r["headroom"]["neighbours"][0]
    if not d["fits"] or r["failures"]:
        errors.append("should fit: %s" % r["failures"])
    if n["state"] != "running" or not n["processes"] or n["processes"][0]["command"] != "sleep":
        errors.append("the sidecar (a running sleep) was not found running: %s" % n)
else:
    if d["fits"]:
        errors.append("should not fit: %s" % d)
    fails = [f for f in r["failures"] if f.startswith("deployed context ")]
    m = re.match(r"deployed context (\d+) does not fit beside (.+): (\d+) tokens fit, short by (\d+) tokens \(([\d.]+) MiB of KV cache at (\d+) bytes/token\)", fails[0] if fails else "")
    if not m:
        errors.append("no failure saying by how much: %s" % r["failures"])
    else:
        N, M, K, X, B = int(m[1]), int(m[3]), int(m[4]), float(m[5]), int(m[6])
        if N != d["deployed_context"] or K != N - d["fits_tokens"] or K != d["short_by_tokens"] or B != 512 or abs(X - K * B / 2**20) > 0.001:
            errors.append("figures disagree: %s against %s" % (m.group(0), d))
        if M != max(0, d["fits_tokens"]):
            errors.append("tokens fit %d, the check's %d" % (M, d["fits_tokens"]))
    if name == "neighbours-reserved":
        n = r["headroom"]["neighbours"][0]
        if n["state"] != "not running" or n["reserved_mib"] != n["mib"]:
            errors.append("the ghost should be reserved whole: %s" % n)
for e in errors:
    print("CHECK: " + e)
sys.exit(1 if errors else 0)
PY
}
fails=0
check neighbours-fits 0 || fails=$((fails + 1))
check neighbours-too-long 1 || fails=$((fails + 1))
check neighbours-reserved 1 || fails=$((fails + 1))
[ "$fails" -eq 0 ] || fail "$fails run(s) not as expected"
echo "neighbours: a deployed context that fits passes, one too long or beside a reserved neighbour fails saying by how much"
