#!/usr/bin/env bash
# The side-by-side gate against the real llama-server (tests/side_by_side/CMakeLists.txt registers
# one CTest test per scenario):
#   reduced-prefix  (fixture) a copy of the sid prefix without the CPU backend variant ggml loads
#                   here and any better one (ci/reduced-prefix.sh): a real, slower build
#   same-build      the same prefix as baseline and candidate: must be "no regression" (exit 0; an
#                   "unresolved" gets one more gate, a "regression" fails at once), the
#                   floor of the minimum effect named, the budget forecast and the memory compared;
#                   from the second block both launches up at once, their requests in turn (gate.json
#                   marks those launches "interleaved"; flow/paired/alternation_test.cpp the order)
#   reduced-build   the reduced prefix as candidate: must be "regression" (exit 1), the gated figure
#                   named, and the evidence still active in both builds
# Both run a case this repository ships (CASE: cases/chat-tiny-short.json) at the gate's defaults.
#   decode-probes   the shipped completion case, two blocks: the decode probes llama-server serves from
#                   its prompt cache, itl_mean_ms from them, the full requests' unit guarded at itl_mean_ms's
#                   minimum effect
#   pinned-threads  --runtime-cpus 0 on two tiny cases, two blocks: the runtime runs on CPU 0 and the
#                   client on the other; a case without -t runs one thread (-t 1 added where
#                   llama.cpp's default is more) and llama-server's log says n_threads = 1; a case with -t 2 keeps it and is told it oversubscribes
# usage: side_by_side.sh TEST FLASHPROOF WORKDIR CASE
# Exit 0 pass, 1 fail (with the reason; the gate's folder is kept), 125 skipped (no llama-server).
set -uo pipefail
test_name=$1
FP=$2
WORK=$3
CASE=$4
env_file=${FLASHPROOF_CACHE:-/var/cache/flashproof}/env.sh
if [ ! -f "$env_file" ]; then echo "SKIP: $env_file missing: no Debian sid llama-server here (ci/setup.sh installs it)"; exit 125; fi
# shellcheck disable=SC1090
. "$env_file"
PREFIX=$FLASHPROOF_PREFIX
REDUCED=$WORK/reduced-prefix
T=$WORK/$test_name
fail() { echo "FAIL ($test_name): $*"; echo "working files kept in $T"; exit 1; }
expect_out() { grep -Eq -- "$1" "$T/out.txt" || fail "output does not match /$1/ (see $T/out.txt)"; }

case $test_name in
  reduced-prefix)
    bash "$(dirname "$0")/../../ci/reduced-prefix.sh" "$PREFIX" "$REDUCED" || fail "could not make a reduced build"
    exit 0 ;;
  pinned-threads)
    [ "$(nproc)" -ge 2 ] || { echo "SKIP: one CPU here: --runtime-cpus 0 would leave the client none"; exit 125; }
    rm -rf "$T" && mkdir -p "$T/cases"
    # chat-tiny-short without its "-t 2": the harness must size the threads itself.
    awk 'skip { skip = 0; next } /^ *"-t",$/ { skip = 1; next } { print }' cases/chat-tiny-short.json |
      sed 's/"name": "chat-tiny-short"/"name": "chat-tiny-no-threads"/' >"$T/cases/chat-tiny-no-threads.json"
    grep -q '"-t"' "$T/cases/chat-tiny-no-threads.json" && fail "could not drop -t from the case"
    "$FP" gate cases/chat-tiny-short.json "$T/cases/chat-tiny-no-threads.json" --root . --baseline-runtime "$PREFIX" \
      --candidate-runtime "$PREFIX" --runtime-cpus 0 --blocks 2 --max-blocks 2 --rounds 1 --warmup 0 \
      --results "$T/results" --quiet >"$T/out.txt" 2>&1
    rc=$?
    cat "$T/out.txt"
    # Two blocks rarely decide anything, and the verdict is not this test's point: no regression or
    # unresolved, never a regression or a failure.
    [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || fail "expected exit 0 or 3, got $rc"
    expect_out "client pinned to CPU 1, runtime to CPU 0 \(--runtime-cpus\)"
    expect_out "runtime threads: the case's own \(-t 2\), more than the 1 CPU the runtime is pinned to"
    # -t 1 added, or llama.cpp's own default already 1 (one physical core): either way one thread.
    expect_out "runtime threads: (-t 1, one per CPU it is pinned to|llama-server's own \(1, )"
    gj=$(find "$T/results" -path '*chat-tiny-no-threads*' -name gate.json | head -1)
    grep -q '"client pinned to CPU 1, runtime to CPU 0 (--runtime-cpus)"' "$gj" 2>/dev/null || fail "gate.json ($gj) does not record the pinning"
    logs=$(find "$T/results" -path '*chat-tiny-no-threads*' -path '*block-*' -name timed.log | wc -l)
    [ "$logs" -ge 4 ] || fail "expected 4 timed launch logs of chat-tiny-no-threads, found $logs"
    bad=$(find "$T/results" -path '*chat-tiny-no-threads*' -path '*block-*' -name timed.log -exec grep -L 'n_threads = 1 (n_threads_batch = 1)' {} +)
    [ -z "$bad" ] || fail "llama-server did not run 1 thread in: $bad"
    exit 0 ;;
  decode-probes)
    # The shipped completion case, two blocks of one round and no warm-up: each measured request is
    # followed by the default 4 decode probes, which llama-server must serve from its prompt cache
    # (its log: "prompt eval time = ... / 1 tokens"), and itl_mean_ms comes from them.
    rm -rf "$T" && mkdir -p "$T"
    "$FP" gate cases/completion-realistic-long.json --root . --baseline-runtime "$PREFIX" --candidate-runtime "$PREFIX" \
      --blocks 2 --max-blocks 2 --rounds 1 --warmup 0 --results "$T/results" --quiet >"$T/out.txt" 2>&1
    rc=$?
    cat "$T/out.txt"
    [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || fail "expected exit 0 or 3 (two blocks rarely decide), got $rc"
    expect_out "each measured request followed by 4 decode probe\(s\) .*; the full requests' decode guarded as itl_requests_ms\)"
    expect_out "itl_mean_ms: (no regression|unresolved): "
    gj=$(find "$T/results" -name gate.json | head -1)
    expect_out "guard itl_requests_ms: (no regression|unresolved): "
    python3 - "$gj" <<'PY' || fail "gate.json ($gj): every launch must keep the full requests' decode unit beside the probes' itl_mean_ms, guarded at itl_mean_ms's minimum effect"
import json, sys
j = json.load(open(sys.argv[1]))
launches = j["launches"]
assert len(launches) == 4, len(launches)
for l in launches:
    assert l["itl_requests_ms"] > 0 and l["units"]["itl_mean_ms"][""] > 0, l
    assert l["units"]["itl_requests_ms"][""] == l["itl_requests_ms"], l
itl = [g for g in j["gated"] if g["figure"] == "itl_mean_ms"][0]
guard = [g for g in j["guards"] if g["figure"] == "itl_requests_ms"]
# At itl_mean_ms's effect (5% here), not the 25% of a user-felt guard; the floors may differ a little
# between the two units' baselines.
assert guard and abs(guard[0]["min_effect"] - itl["min_effect"]) <= 0.2 * itl["min_effect"], (guard, itl)
PY
    for log in $(find "$T/results" -path '*block-*' -name timed.log); do
      # 3 prompts x 1 round: 3 full prefills (about 3100 tokens each) and 12 probes from the cache,
      # after the cold first request.
      cached=$(grep -cE 'prompt eval time = +[0-9.]+ ms / +1 tokens' "$log")
      [ "$cached" -eq 12 ] || fail "$log: expected 12 decode probes served from the prompt cache (1 prompt token), found $cached"
    done
    exit 0 ;;
  host-slowdown)
    # Issue 41 item 4: a host-side slowdown made on purpose, caught side by side. The candidate is the
    # same build behind a loopback proxy (delay_proxy.py) that holds each connection's first bytes
    # 5 ms: nothing the runtime's own timings see (its prefill and decode do not move), only what
    # comes before it, as a slower tokenizer, HTTP layer or scheduler would. On chat-tiny-short's
    # TTFT of about 8-30 ms that is +15-60%, above the 5% minimum effect and its 1 ms floor. The
    # gate must call it a regression of ttft_ms, and its server_prompt_ms must not be what moved.
    rm -rf "$T" && mkdir -p "$T"
    cat >"$T/slow-llama-server" <<SH
#!/bin/bash
. "$env_file"
exec bash "$(cd "$(dirname "$0")" && pwd)/behind_delay_proxy.sh" 0.005 "\$FLASHPROOF_LOADER" --library-path "\$FLASHPROOF_LIBRARY_PATH" "\$FLASHPROOF_LLAMA_SERVER" "\$@"
SH
    chmod +x "$T/slow-llama-server"
    start=$(date +%s)
    "$FP" gate "$CASE" --baseline-runtime "$PREFIX" --candidate-runtime "$T/slow-llama-server" --results "$T/results" --quiet \
      >"$T/out.txt" 2>&1
    rc=$?
    cat "$T/out.txt"
    echo "side-by-side gate (host-side slowdown): exit $rc after $(( $(date +%s) - start )) s"
    [ "$rc" -eq 125 ] && exit 125
    [ "$rc" -eq 1 ] || fail "expected exit 1 (a regression), got $rc"
    expect_out "^side-by-side gate: REGRESSION"
    expect_out "REGRESSION ttft_ms: regression: candidate worse by \\+[0-9.]+%"
    exit 0 ;;
  same-build) candidate=$PREFIX; want=0 ;;
  reduced-build) candidate=$REDUCED; want=1 ;;
  *) echo "unknown test $test_name"; exit 2 ;;
esac
rm -rf "$T" && mkdir -p "$T"
run_gate() {
  start=$(date +%s)
  "$FP" gate "$CASE" --baseline-runtime "$PREFIX" --candidate-runtime "$candidate" --results "$T/results" --quiet \
    >"$T/out.txt" 2>&1
  rc=$?
  cat "$T/out.txt"
  echo "side-by-side gate: exit $rc after $(( $(date +%s) - start )) s"
}
run_gate
# Identical builds end "unresolved" now and then (bench/README.md section 3: chat-tiny-short 10 of 10
# "no regression" on 2026-12-02, and once in CI that day unresolved after 16 blocks, TTFT +7.9%, CI
# +1.0 .. +15.2%): one more gate then, the first one's output kept. A false "regression" fails at
# once; two unresolved in a row fail (at the few percent each run leaves unresolved, about 1 in 400).
if [ "$want" -eq 0 ] && [ "$rc" -eq 3 ]; then
  mv "$T/out.txt" "$T/out-unresolved.txt"
  echo "side-by-side gate: unresolved on identical builds (kept in $T/out-unresolved.txt): once more"
  run_gate
fi
[ "$rc" -eq 125 ] && exit 125
[ "$rc" -eq "$want" ] || fail "expected exit $want, got $rc"
expect_out "baseline:  .*active"
expect_out "candidate: .*active"
if [ "$want" -eq 0 ]; then
  expect_out "^side-by-side gate: NO REGRESSION"
  expect_out "ttft_ms: no regression: candidate (worse|better) by .*minimum effect [0-9.]+% \\(floor 1 ms"
  expect_out "memory.kv_cache_mib same: "
  # A chat case gates no itl_mean_ms: no decode probes (they would only lengthen its blocks).
  grep -q "decode probe" "$T/out.txt" && fail "the chat case got decode probes (it gates no itl_mean_ms)"
  expect_out "launches interleaved from block 2: both up at once, their requests in turn \(host: [0-9]+ MiB left"
  gj=$(find "$T/results" -name gate.json | head -1)
  python3 - "$gj" <<'PY' || fail "gate.json ($gj): the launches from block 2 are not interleaved"
import json, sys
launches = json.load(open(sys.argv[1]))["launches"]
first = [l["interleaved"] for l in launches if l["block"] == 1]
later = [l["interleaved"] for l in launches if l["block"] > 1]
assert first == [False, False], first
assert later and all(later), later
PY
else
  expect_out "^side-by-side gate: REGRESSION"
  expect_out "REGRESSION ttft_ms: regression: candidate worse by \\+[0-9.]+%"
fi
expect_out "blocks: [0-9]+ in [0-9]+ s"
expect_out "^  budget [0-9]+ s at [0-9.]+ s per block; at the first look \\(4 blocks\\)"
exit 0
