#!/usr/bin/env bash
# One run of tests/workload/cases/workload-tiny.json against the real llama-server, then checks
# with the SERVER's own counts, not flashproof's: every completion task in the server's log
# (timed.log, -lv 4: "new prompt ... task.n_tokens = N" and "eval time = ... / M tokens") had the
# asked 200 prompt tokens and 8 output tokens, the evidence pass's one request too; and from the
# result: figures per concurrency level (8 requests each), the request rate bounding each round
# (the 4 requests of a round arrive over 1 s at 4/s, the last at 1 s exactly, so a round does at most
# 4 requests/s; all at once, the tiny model does them in well under a second even on a busy machine),
# goodput lines.
#   usage: workload_test.sh FLASHPROOF WORK_DIR CASE
# Exit 0 pass, 1 fail (working files kept), 125 skipped.
set -uo pipefail
fp=$1 work=$2 case_file=$3
root=$(cd "$(dirname "$0")/../.." && pwd)
[ -f "$root/fixtures/models/generated/tiny.gguf" ] ||
  { echo "SKIP: tiny model not generated (flashproof make-model fixtures/models/tiny.json)"; exit 125; }
rm -rf "$work" && mkdir -p "$work"
fail() { echo "WORKLOAD TEST FAILED: $* (files kept in $work)"; exit 1; }

start=$(date +%s)
"$fp" run "$case_file" --out "$work/run" --results "$work/results" --golden "$work/golden" \
  --record-missing-answers --quiet >"$work/out.txt" 2>&1
rc=$?
cat "$work/out.txt"
echo "flashproof run: exit $rc after $(( $(date +%s) - start )) s"
[ "$rc" -eq 125 ] && exit 125
[ "$rc" -eq 0 ] || { cat "$work/run/result.txt" 2>/dev/null; fail "flashproof run exited $rc"; }

python3 - "$work/run" <<'PY' || fail "checks above"
import json, re, sys
run = sys.argv[1]
bad = []
def check(ok, msg):
    if not ok: bad.append(msg)

# The server's own counts, from its logs.
def tasks(log):
    text = open(log, encoding="utf-8", errors="replace").read()
    prompt = [int(n) for n in re.findall(r"new prompt, .*task\.n_tokens = (\d+)", text)]
    output = [int(n) for n in re.findall(r"\|\s+eval time =\s+[\d.]+ ms /\s+(\d+) tokens", text)]
    return prompt, output
prompt, output = tasks(f"{run}/timed.log")
# 1 cold request + 2 levels x 2 rounds x 4 requests.
check(len(prompt) == 17, f"timed.log: {len(prompt)} prompts started, expected 17")
check(set(prompt) == {200}, f"timed.log: prompt token counts {sorted(set(prompt))}, asked 200")
check(len(output) == 17 and set(output) == {8}, f"timed.log: output token counts {output}, asked 8 each")
ev_prompt, _ = tasks(f"{run}/evidence.log")
check(ev_prompt == [200], f"evidence.log: prompt token counts {ev_prompt}, asked [200]")

r = json.load(open(f"{run}/result.json"))
figs = r["figures"]
for level in (1, 2):
    for name in ("ttft_ms", "e2e_ms", "tpot_ms"):
        f = figs.get(f"c{level}.{name}")
        check(f is not None and f["n"] == 8, f"figure c{level}.{name}: {f and f['n']} samples, expected 8")
    rate = figs.get(f"c{level}.requests_per_s")
    check(rate is not None and len(rate["samples"]) == 2 and max(rate["samples"]) <= 4.0 + 1e-6,
          f"c{level}.requests_per_s {rate and rate['samples']}: 4 requests at 4/s must take at least 1 s per round")
    check(f"c{level}.goodput_share" in figs and f"c{level}.goodput_requests_per_s" in figs, f"no goodput figures at level {level}")
check(not any(k in figs for k in ("ttft_ms", "e2e_ms")), "unlevelled figures in a case with levels")
check(figs["c1.ttft_ms_p95"]["gate"] and figs["c2.ttft_ms_p95"]["gate"], "the chat job's gate applies at every level")
check(not figs["c1.goodput_share"]["gate"], "goodput_share gated without targets.gate")
w = r.get("workload", {})
check(w.get("prompt_tokens", "").startswith("200 per request, counted by llama-server POST /tokenize"), f"workload.prompt_tokens: {w.get('prompt_tokens')}")
check(w.get("prompt_tokens.server", "").startswith("200 in 16 of 16 requests"), f"workload.prompt_tokens.server: {w.get('prompt_tokens.server')}")
check(w.get("output_tokens.server", "").startswith("8 in 16 of 16 requests"), f"workload.output_tokens.server: {w.get('output_tokens.server')}")
check("goodput.c1" in w and "goodput.c2" in w, f"workload goodput lines: {sorted(w)}")
for m in bad: print("  " + m)
sys.exit(1 if bad else 0)
PY
echo "workload test: the server counted 200 prompt and 8 output tokens in every request; levels 1 and 2 and the rate as asked"
