#!/usr/bin/env bash
# Issue 41 item 2: what TTFT is made of, against the real llama-server. Two runs of chat-tiny-short
# (the chat prompts share their system turn, so a repeated prompt prefix is there to be cached):
#   cache    shape.prompt_cache: true, the runtime may serve the prefix from its prompt cache: the
#            result must show prompt tokens served from the cache (timings.cache_n > 0 on some
#            requests) and the split (server prefill, decode before the first text, outside), and the
#            HTML report must say both;
#   nocache  the harness's default (cache_prompt false): no token served from the cache, the whole
#            prompt evaluated, the same split said.
# The counts are the SERVER's (its `timings`), checked against its own log (-lv 4: "new prompt ...
# task.n_tokens" and "prompt eval time = ... / N tokens"): the evaluated tokens the result states
# are the server's evaluated tokens.
#   usage: ttft_split_test.sh FLASHPROOF WORK_DIR
# Exit 0 pass, 1 fail (working files kept), 125 skipped.
set -uo pipefail
fp=$1 work=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
[ -f "$root/fixtures/models/generated/tiny.gguf" ] ||
  { echo "SKIP: tiny model not generated (flashproof make-model fixtures/models/tiny.json)"; exit 125; }
rm -rf "$work" && mkdir -p "$work"
fail() { echo "TTFT SPLIT TEST FAILED: $* (files kept in $work)"; exit 1; }
for v in cache nocache; do
  python3 - "$root/cases/chat-tiny-short.json" "$work/chat-tiny-split-$v.json" "$v" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["name"] = "chat-tiny-split-" + sys.argv[3]
c["shape"]["prompt_cache"] = sys.argv[3] == "cache"
c["plan"].update({"warmup": 0, "repetitions": 2})
json.dump(c, open(sys.argv[2], "w"), indent=1)
PY
  start=$(date +%s)
  "$fp" run "$work/chat-tiny-split-$v.json" --root "$root" --out "$work/$v" --results "$work/results" --golden "$work/golden" \
    --record-missing-answers --quiet >"$work/$v.out" 2>&1
  rc=$?
  echo "flashproof run ($v): exit $rc after $(( $(date +%s) - start )) s"
  [ "$rc" -eq 125 ] && exit 125
  [ "$rc" -eq 0 ] || { cat "$work/$v.out"; fail "flashproof run ($v) exited $rc"; }
  grep '^ttft\.split' "$work/$v/result.txt"
done
"$fp" report "$work/cache" -o "$work/cache.html" >"$work/report.out" 2>&1 || { cat "$work/report.out"; fail "flashproof report"; }
python3 - "$work" <<'PY' || fail "checks above"
import json, re, sys, html
work = sys.argv[1]
bad = []
def check(ok, msg):
    if not ok: bad.append(msg)
for v in ("cache", "nocache"):
    r = json.load(open(f"{work}/{v}/result.json"))
    s = r["ttft_split"]
    txt = open(f"{work}/{v}/result.txt").read()
    check(s["requests"] >= 6, f"{v}: {s['requests']} requests in the split, expected the 6 measured")
    check(s["server_prefill_ms_p50"] is not None and s["outside_server_ms_p50"] is not None, f"{v}: split parts missing: {s}")
    check(s["decode_before_text_ms_p50"] is not None, f"{v}: the first text's timings (timings_per_token) missing: {s}")
    check("the server's prefill" in s["text"] and "outside the server's timings" in s["text"], f"{v}: split text: {s['text']}")
    check(re.search(r"^ttft\.split\.cached_prompt_tokens = \d+ of \d+ on \d+ of \d+ requests$", txt, re.M), f"{v}: no cached_prompt_tokens line")
    check(s["runtime_upkeep"] and s["runtime_upkeep"]["what"] == "prompt cache update", f"{v}: the runtime's logged upkeep missing: {s}")
    # The server's own log: the prompt tokens it evaluated, request by request, sum to what the
    # result says were evaluated (the cold request and the evidence pass are not in the split).
    log = open(f"{work}/{v}/timed.log", encoding="utf-8", errors="replace").read()
    evaluated = [int(n) for n in re.findall(r"prompt eval time =\s+[\d.]+ ms /\s+(\d+) tokens", log)]
    check(len(evaluated) == 7, f"{v}: {len(evaluated)} prompt evaluations in timed.log, expected 7 (cold + 6)")
    check(sum(evaluated[1:]) == s["evaluated_prompt_tokens"], f"{v}: the log evaluated {sum(evaluated[1:])} prompt tokens after the cold request, the result says {s['evaluated_prompt_tokens']}")
    if v == "cache":
        check(s["cached_prompt_tokens"] > 0 and s["requests_with_cached_tokens"] >= 1, f"cache: no prompt token served from the cache: {s}")
    else:
        check(s["cached_prompt_tokens"] == 0, f"nocache: {s['cached_prompt_tokens']} prompt tokens from the cache with cache_prompt false")
page = html.unescape(open(f"{work}/cache.html", encoding="utf-8").read())
check("TTFT split: TTFT " in page, "the HTML report has no TTFT split")
check(re.search(r"prompt tokens served from its cache \(cache_n\): [1-9]\d* of \d+", page), "the HTML report does not show the cached tokens")
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
echo "ttft split: cached tokens and the split shown (result.txt, result.json, HTML)"
