#!/usr/bin/env bash
# new-case's "next:" lines lead to a green second run, run exactly as printed, against the real
# llama-server (README "Cases from your own command line; servers you did not start").
#   usage: next_lines.sh SCENARIO FLASHPROOF_BINARY WORK_DIR
#   by-path   the runtime named by its path only: neither $FLASHPROOF_LLAMA_SERVER, the setup's env.sh
#             nor PATH finds it. The next lines export what runs need (the executable, sid's loader and
#             its library path), record this machine's golden, then run against it: both pass, and
#             the same run without the export finds no runtime (exit 125)
#   attached  a llama-server started by this script as a service would be; the next lines record what
#             an attached server allows (separated rounds of requests stand in for launches) and then
#             pass on the same server; the same server restarted with a real change fails the next run
set -uo pipefail
scenario=$1 fp=$2 work=$3
mkdir -p "$work"
dir=$(mktemp -d "$work/$scenario.XXXXXX")
marker="fp-next-$scenario-$$"
fail() { echo "NEXT-LINES TEST FAILED ($scenario): $* (working files in $dir)" >&2; exit 1; }
# shellcheck disable=SC1091
. "${FLASHPROOF_CACHE:-/var/cache/flashproof}/env.sh" 2>/dev/null || true
server=${FLASHPROOF_LLAMA_SERVER:-}
[ -n "$server" ] && [ -x "$server" ] || { echo "SKIP: no llama-server (run ci/setup.sh)"; exit 125; }
loader=${FLASHPROOF_LOADER:-}
fp_abs=$(cd "$(dirname "$fp")" && pwd)/$(basename "$fp")

# A suite of its own (flashproof init: the tiny model generated into it), so that the next lines'
# goldens and results land there, not in this checkout.
"$fp" init "$dir/suite" >"$dir/init.txt" 2>&1 || fail "flashproof init: $(cat "$dir/init.txt")"
tiny=$dir/suite/models/generated/tiny.gguf
# This test is about the path to a green second run (the runtime found, a golden there, the same
# answers and verdict), not about timing, which has its own tests (gate:*, guard:*): CI runs it beside
# a fuzz build, where a golden recorded minutes earlier is no judge of 10% moves. So the case's
# timing effects are widened (100% for times, 50% for rates); the real change of the attached
# scenario (+500% TTFT) still fails it.
widen_effects() {  # widen_effects CASE.json [PLAN_JSON_UPDATE]
  python3 - "$@" <<'PY'
import json, sys
path = sys.argv[1]
c = json.load(open(path))
times = ["ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"]
rates = ["prompt_tokens_per_s", "decode_tokens_per_s", "throughput_tokens_per_s"]
c["plan"]["min_effect"] = {f: 1.0 for f in times} | {f: 0.5 for f in rates}
c["plan"]["guards"] = {f: 1.0 for f in times} | {f: 0.5 for f in rates}
if len(sys.argv) > 2:
    c["plan"].update(json.loads(sys.argv[2]))
json.dump(c, open(path, "w"), indent=2)
PY
}
# The "next:" lines of new-case's output, run in order in one shell: `flashproof` is the binary under test.
run_next() {  # run_next OUTPUT_FILE ENV...: each next line with its exit code appended to $dir/next.log
  local file=$1; shift
  grep '^next: ' "$file" | sed 's/^next: //' >"$dir/next.sh"
  [ -s "$dir/next.sh" ] || fail "new-case printed no next: lines"
  env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME="$HOME" FLASHPROOF_CACHE="$dir/no-setup" \
    FLASHPROOF_PROGRESS=lines "$@" bash -c '
      flashproof() { "'"$fp_abs"'" "$@"; }
      n=0
      while IFS= read -r line; do
        n=$((n + 1)); echo "\$ $line"; eval "$line"; echo "[next line $n exit $?]"
      done <"'"$dir/next.sh"'"' >"$dir/next.log" 2>&1
  cat "$dir/next.log"
}
exits() { grep -o '^\[next line [0-9]* exit [0-9]*\]' "$dir/next.log" | sed 's/.* exit \([0-9]*\)\]/\1/' | tr '\n' ' '; }

case $scenario in
  by-path)
    # new-case itself runs where nothing names the runtime: it must be told by path.
    env -i PATH=/usr/bin:/bin HOME="$HOME" FLASHPROOF_CACHE="$dir/no-setup" "$fp" new-case nc-path --job chat \
      --max-output-tokens 8 --root "$dir/suite" -- "$server" -m "$tiny" -c 2048 -np 1 -t 1 -fa on --alias "$marker" \
      >"$dir/new-case.txt" 2>&1 || fail "new-case: $(cat "$dir/new-case.txt")"
    cat "$dir/new-case.txt"
    grep -q "^next: export FLASHPROOF_LLAMA_SERVER=$server" "$dir/new-case.txt" || fail "the next lines do not export the runtime"
    if [ -n "$loader" ]; then
      grep -q "FLASHPROOF_LOADER=$loader FLASHPROOF_LIBRARY_PATH=" "$dir/new-case.txt" || fail "the next lines do not carry sid's loader"
    fi
    widen_effects "$dir/suite/cases/nc-path.json" || fail "cannot widen the case's effects"
    run_next "$dir/new-case.txt"
    [ "$(exits)" = "0 0 0 " ] || fail "the next lines exited: $(exits)(expected 0 0 0)"
    [ "$(grep -cE '^nc-path +pass +active' "$dir/next.log")" = 2 ] || fail "the two runs did not both pass with the verdict active"
    # Without the export, runs find no runtime: the export is what made them green.
    grep -v '^next: export' "$dir/new-case.txt" >"$dir/no-export.txt"
    run_next "$dir/no-export.txt"
    grep -q '\[next line 2 exit 125\]' "$dir/next.log" || fail "without the export the plain run did not skip for want of a runtime"
    grep -q "runtime \"llama-server\" not found" "$dir/next.log" || fail "without the export: no 'runtime not found'"
    ;;
  attached)
    # Started as a service would be (its own session, a log file, verbose scheduler output), on the
    # realistic model: a real change below (a slower build of the runtime) shows in its prompt time.
    realistic=$dir/suite/models/generated/realistic.gguf
    mkdir -p "$(dirname "$realistic")" && cp "$(dirname "$0")/../../fixtures/models/generated/realistic.gguf" "$realistic" ||
      { echo "SKIP: the realistic model is not generated (flashproof make-model fixtures/models/*.json)"; exit 125; }
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    server_pid=
    start_server() {  # start_server PREFIX: llama-server of that prefix, through its own loader
      local p=$1 lib=$1/usr/lib/x86_64-linux-gnu
      GGML_SCHED_DEBUG=2 setsid "$lib/ld-linux-x86-64.so.2" --library-path "$lib:$lib/llama" "$p/usr/bin/llama-server" \
        -m "$realistic" --host 127.0.0.1 --port "$port" -c 4096 -np 1 -t 1 -fa on -v --alias "$marker" \
        --log-file "$dir/server.log" >>"$dir/server.stdout" 2>&1 &
      server_pid=$!
      for _ in $(seq 1 300); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && return 0; sleep 0.1; done
      tail "$dir/server.stdout"; fail "the service never became ready"
    }
    stop_server() { [ -n "$server_pid" ] && { kill -TERM -- "-$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; server_pid=; }; }
    trap stop_server EXIT
    prefix=${FLASHPROOF_PREFIX:-}
    [ -d "$prefix/usr/bin" ] || { echo "SKIP: no sid prefix (run ci/setup.sh)"; exit 125; }
    start_server "$prefix"
    "$fp" new-case att --job chat --max-output-tokens 16 --root "$dir/suite" --endpoint "http://127.0.0.1:$port" \
      --model "$marker" --log "$dir/server.log" --require placement >"$dir/new-case.txt" 2>&1 || fail "new-case: $(cat "$dir/new-case.txt")"
    cat "$dir/new-case.txt"
    # Kept cheap: one pass over the 3 prompts per separated round (the case says 3).
    widen_effects "$dir/suite/cases/att.json" '{"repetitions": 1}' || fail "cannot edit the case's plan"
    run_next "$dir/new-case.txt"
    [ "$(exits)" = "0 0 " ] || fail "the next lines exited: $(exits)(expected 0 0: the recording run, then the plain run)"
    golden=$(find "$dir/suite/golden" -name att.json | head -1)
    [ -n "$golden" ] && grep -q '"band_source": "rounds"' "$golden" || fail "the golden ($golden) does not say its band comes from rounds"
    rec=$(find "$dir/suite/results" -path '*/att/*' -name result.txt | sort | head -1)
    grep -q '^golden\.[0-9]* = not recorded (attached): the cold start' "$rec" || fail "the recording run does not say what it could not record"
    grep -q '^attach\.note\.[0-9]* = timed runs: 5 separated rounds of requests' "$rec" || fail "the recording run does not say it took rounds"
    # A real change behind the same endpoint: the service restarted from a slower build of the runtime
    # (ggml's pre-AVX CPU backends only, ci/reduced-prefix.sh).
    bash "$(dirname "$0")/../../ci/reduced-prefix.sh" "$prefix" "$dir/reduced-prefix" >"$dir/reduced.txt" 2>&1 ||
      fail "ci/reduced-prefix.sh: $(cat "$dir/reduced.txt")"
    stop_server
    start_server "$dir/reduced-prefix"
    grep '^next: ' "$dir/new-case.txt" | tail -1 >"$dir/plain-only.txt"
    run_next "$dir/plain-only.txt"
    [ "$(exits)" = "1 " ] || fail "the plain run against the slower build exited $(exits)(expected 1)"
    grep -Eq '^FAIL att: (figure|guard GUARD) [a-z0-9_]+: regressed' "$dir/next.log" || fail "no regressed figure named"
    stop_server
    ;;
  *) fail "unknown scenario $scenario" ;;
esac
echo "next lines ($scenario): ok"
