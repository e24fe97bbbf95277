#!/usr/bin/env bash
# A chat case never ignores decode (README "Guards: no figure a user feels ignored"): a real decode
# slowdown of the real llama-server fails a chat case on its guard, named as a guard with the figure,
# while time to first token (the chat job's gate) is left alone.
#
# The case runs llama-server with one thread (-t 1: under a loaded CI box two threads decode erratically,
# 10 to 600 ms per token here, one thread steadily). The slowdown: the same llama-server with two
# generation threads pinned to one CPU and woken instead of polling (-t 2 -C 1 --cpu-strict 1 --poll 0),
# its batch (prompt) thread as before (-tb 1 -Cb 3 --cpu-strict-batch 0 --poll-batch 1): a
# deployment's CPU mask that starves decode.
# Why not -t 1 -tb 2: on this 2-core VM under load a single generation thread decoded FASTER than two
# (1.2 against 31 ms per token, llama-server's own timings, load 11, 2026-12-01); a real slowdown must
# be slower whatever the machine's load. The candidate is a wrapper executable that appends those
# options to the case's launch line (the last of an option wins in llama.cpp).
#
#   premise  (fixture) both servers side by side, llama-server's own timings of the same /completion
#            requests: decode (predicted_per_token_ms) at least 3x slower, prompt (prompt_per_token_ms)
#            printed beside it; the wrapper written for the next two
#   golden   golden mode: this machine's golden of the case made by the documented path
#            (`run --record-missing`, 3 launches of the unchanged server), then one run of the slowed
#            server against it (never the unchanged server against a golden it just recorded): must
#            exit 1 with "GUARD <decode figure>: regressed" and "guard <figure>" in its failure
#   gate     the side-by-side gate, unchanged build as baseline, slowed build as candidate, 4 blocks
#            before the first look (the gate stops once its gated figures are decided, and guards
#            are not waited for: at 2 blocks their intervals were still too wide here): must exit
#            1 with "REGRESSION (guard: the job does not gate <decode figure>"
# usage: decode_guard.sh MODE FLASHPROOF WORK_DIR
# Exit 0 pass, 1 fail (working files kept), 125 skipped (no llama-server, fewer than 2 CPUs).
set -uo pipefail
mode=$1 fp=$2 work=$3
root=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "GUARD TEST FAILED ($mode): $* (working files in $work)"; exit 1; }
env_file=${FLASHPROOF_CACHE:-/var/cache/flashproof}/env.sh
[ -f "$env_file" ] || { echo "SKIP: $env_file missing: no Debian sid llama-server here (ci/setup.sh installs it)"; exit 125; }
# shellcheck disable=SC1090
. "$env_file"
[ "$(nproc)" -ge 2 ] || { echo "SKIP: one CPU here: decode pinned to CPU 0 would pin prompt processing too"; exit 125; }
[ -f "$root/fixtures/models/generated/tiny.gguf" ] || { echo "SKIP: models not generated"; exit 125; }
slow_args=(-t 2 -tb 1 -C 1 --cpu-strict 1 --poll 0 -Cb 3 --cpu-strict-batch 0 --poll-batch 1)
wrapper=$work/slowed-decode/llama-server
case_file=$work/cases/guard-chat.json

if [ "$mode" = premise ]; then
  rm -rf "$work" && mkdir -p "$work/cases" "$work/slowed-decode" "$work/premise"
  # The candidate runtime: the same server, its version and device listing untouched.
  cat >"$wrapper" <<SH
#!/usr/bin/env bash
# llama-server with its generation threads pinned to one CPU (tests/guards/decode_guard.sh)
case "\${1:-}" in --version|--list-devices|--help|-h) exec "$FLASHPROOF_LOADER" --library-path "$FLASHPROOF_LIBRARY_PATH" "$FLASHPROOF_LLAMA_SERVER" "\$@" ;; esac
exec "$FLASHPROOF_LOADER" --library-path "$FLASHPROOF_LIBRARY_PATH" "$FLASHPROOF_LLAMA_SERVER" "\$@" ${slow_args[*]}
SH
  chmod +x "$wrapper"
  # The chat case: chat-tiny-short with short answers (4 tokens: a slowed decode costs seconds each).
  python3 - "$root/cases/chat-tiny-short.json" "$case_file" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["name"] = "guard-chat"
c["description"] = "Chat on the tiny model (tests/guards/decode_guard.sh): TTFT gated, decode guarded."
c["shape"]["max_output_tokens"] = 4
c["plan"].update({"warmup": 1, "repetitions": 2})
argv = c["launch"]["argv"]
argv[argv.index("-t") + 1] = "1"
json.dump(c, open(sys.argv[2], "w"), indent=2)
PY
  measure() {  # measure NAME COMMAND...: 5 requests, llama-server's own timings of the last 4
    local name=$1; shift
    local port; port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    "$@" -m "$root/fixtures/models/generated/tiny.gguf" --host 127.0.0.1 --port "$port" -c 2048 -np 1 -t 1 -fa on --seed 42 \
      >"$work/premise/$name.log" 2>&1 &
    local pid=$!
    timeout 120 python3 "$root/tests/gpu/llama-cuda/ask.py" --port "$port" --prompt-file "$root/fixtures/prompts/documents/operations_manual.txt" \
      --chars 400 --n-predict 8 --requests 5 --ready-timeout 60 --pid "$pid" --out "$work/premise/$name.json" >/dev/null 2>&1
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  }
  measure unchanged "$FLASHPROOF_LOADER" --library-path "$FLASHPROOF_LIBRARY_PATH" "$FLASHPROOF_LLAMA_SERVER"
  measure slowed "$wrapper"
  python3 - "$work/premise" <<'PY' || fail "the premise does not hold (above)"
import json, statistics, sys
d = sys.argv[1]
def t(name, key):
    r = json.load(open(f"{d}/{name}.json"))
    return statistics.median(q["timings"][key] for q in r["requests"][1:])
rows = {n: (t(n, "prompt_per_token_ms"), t(n, "predicted_per_token_ms")) for n in ("unchanged", "slowed")}
for n, (p, g) in rows.items():
    print(f"llama-server's own timings, {n:9s}: prompt {p:8.3f} ms/token, decode {g:8.3f} ms/token")
ratio = rows["slowed"][1] / rows["unchanged"][1]
print(f"decode slowed x{ratio:.1f}; prompt x{rows['slowed'][0] / rows['unchanged'][0]:.2f}")
sys.exit(0 if ratio >= 3 else 1)
PY
  exit 0
fi

[ -x "$wrapper" ] && [ -f "$case_file" ] || fail "no wrapper or case: the guard:premise fixture did not run"
slowed_env=(env -u FLASHPROOF_LOADER -u FLASHPROOF_LIBRARY_PATH FLASHPROOF_LLAMA_SERVER="$wrapper")
decode='(tpot_ms|itl_ms|decode_tokens_per_s)'
case $mode in
  golden)
    rm -rf "$work/golden" "$work/results-golden"
    (cd "$root" && "$fp" run "$case_file" --root "$root" --golden "$work/golden" --results "$work/results-golden" \
       --record-missing --launches 3 --quiet) >"$work/record.txt" 2>&1
    rc=$?
    cat "$work/record.txt"
    [ $rc -eq 0 ] || fail "recording the golden from the unchanged server exited $rc"
    (cd "$root" && "${slowed_env[@]}" "$fp" run "$case_file" --root "$root" --golden "$work/golden" --results "$work/results-golden" \
       --quiet) >"$work/slowed.txt" 2>&1
    rc=$?
    cat "$work/slowed.txt"
    [ $rc -eq 1 ] || fail "the slowed server's run exited $rc, expected 1"
    grep -Eq "^FAIL guard-chat: GUARD $decode: regressed" "$work/slowed.txt" || fail "no guard failure on a decode figure"
    grep -Eq "a guard: the job does not gate this figure" "$work/slowed.txt" || fail "the failure does not say it is a guard"
    r=$(find "$work/results-golden" -name result.txt -newer "$work/record.txt" | head -1)
    echo "the gated TTFT line: $(grep -E '^golden\.[0-9]+ = .*\[gate\] ttft_ms_p95' "$r")"
    ;;
  gate)
    (cd "$root" && "$fp" gate "$case_file" --root "$root" --baseline-runtime "$FLASHPROOF_PREFIX" --candidate-runtime "$wrapper" \
       --blocks 4 --max-blocks 4 --rounds 2 --warmup 1 --results "$work/results-gate" --quiet) >"$work/gate.txt" 2>&1
    rc=$?
    cat "$work/gate.txt"
    [ $rc -eq 1 ] || fail "the gate exited $rc, expected 1"
    grep -Eq "REGRESSION \(guard: the job does not gate $decode" "$work/gate.txt" || fail "no guard regression named on a decode figure"
    ;;
  *) fail "unknown mode" ;;
esac
echo "guard $mode: the decode slowdown fails on its guard, named"
