#!/usr/bin/env bash
# `flashproof matrix` against the real llama-server on this CPU: the tiny case with KV f16 and q8_0,
# the flag on and off, head sizes 32 and 64 (generated from fixtures/models/tiny.json), few tokens.
# Asserts real facts on matrix.json: every combination is a row; flag off -> no FLASH_ATTN node,
# SOFT_MAX on the CPU; flag on -> FLASH_ATTN nodes on the CPU, verdict active; q8_0 with the flag
# off is refused by the runtime with its own line (a quantized V cache needs Flash Attention), and
# the matrix still exits 0; the prompt speed is measured by the runtime and by flashproof; the KV
# types of the runtime data are those `llama-server --help` lists; no runtime process is left; an
# unknown KV type is a usage error before any launch.
#   usage: cpu_matrix.sh FLASHPROOF_BINARY WORK_DIR
set -uo pipefail
fp=$1 work=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "MATRIX TEST FAILED: $*" >&2; exit 1; }
[ -f "$root/fixtures/models/generated/tiny.gguf" ] || { echo "SKIP: models not generated (flashproof make-model fixtures/models/*.json)"; exit 125; }
rm -rf "$work" && mkdir -p "$work"
marker="fp-matrix-test-$$"   # on every runtime's command line (as --alias), to find leftovers
python3 - "$root/cases/chat-tiny-short.json" "$work/matrix-tiny.json" "$marker" <<'PY' || fail "cannot write the test case"
import json, sys
c = json.load(open(sys.argv[1]))
c["name"] = "matrix-tiny"
c["launch"]["argv"] += ["--alias", sys.argv[3]]
json.dump(c, open(sys.argv[2], "w"), indent=2)
PY

# Usage error first: nothing launched, the valid types named.
out=$("$fp" matrix "$work/matrix-tiny.json" --kv f16,q9_0 --out "$work/bad" 2>&1); rc=$?
[ "$rc" = 125 ] && { echo "SKIP: $out"; exit 125; }
[ "$rc" = 64 ] || fail "--kv q9_0: exit $rc, expected 64: $out"
grep -q '"q9_0" is not a KV cache type the runtime accepts; valid: f32, f16' <<<"$out" || fail "--kv q9_0: message: $out"
[ ! -e "$work/bad" ] || fail "--kv q9_0 wrote $work/bad"

start=$(date +%s)
"$fp" matrix "$work/matrix-tiny.json" --kv f16,q8_0 --flag on,off --head-sizes 32,64 --prompt-chars 300 --rounds 1 \
  --max-tokens 2 --models "$work/models" --out "$work/out" --quiet >"$work/stdout.txt" 2>"$work/stderr.txt"
rc=$?
took=$(($(date +%s) - start))
cat "$work/stdout.txt"
[ "$rc" = 125 ] && { echo "SKIP: $(cat "$work/stderr.txt")"; exit 125; }
[ "$rc" = 0 ] || { cat "$work/stderr.txt" >&2; fail "flashproof matrix exited $rc, expected 0"; }
echo "flashproof matrix: 8 combinations in ${took} s"

for _ in $(seq 1 50); do [ -z "$(pgrep -f -- "$marker")" ] && break; sleep 0.1; done
[ -z "$(pgrep -f -- "$marker")" ] || fail "runtime processes left behind: $(pgrep -f -- "$marker" | paste -sd' ')"

. /var/cache/flashproof/env.sh 2>/dev/null || true
: >"$work/help.txt"
if [ -n "${FLASHPROOF_LLAMA_SERVER:-}" ]; then
  if [ -n "${FLASHPROOF_LOADER:-}" ]; then
    "$FLASHPROOF_LOADER" --library-path "$FLASHPROOF_LIBRARY_PATH" "$FLASHPROOF_LLAMA_SERVER" --help >"$work/help.txt" 2>&1
  else
    "$FLASHPROOF_LLAMA_SERVER" --help >"$work/help.txt" 2>&1
  fi
fi

python3 - "$work/out/matrix.json" "$root/src/runtime/data/llama-server.json" "$work/help.txt" <<'PY' || fail "matrix.json does not hold the facts above"
import json, re, sys
m = json.load(open(sys.argv[1]))
data = json.load(open(sys.argv[2]))
rows = m["rows"]
def fail(msg):
    print("FAIL:", msg); sys.exit(1)
combos = sorted((r["kv"], r["flag"], r["head_size"]) for r in rows)
want = sorted((kv, f, h) for kv in ("f16", "q8_0") for f in ("on", "off") for h in (32, 64))
if combos != want: fail(f"rows {combos}, expected {want}")
for r in rows:
    name = f'{r["kv"]} flag {r["flag"]} head {r["head_size"]}'
    if r["kv"] == "q8_0" and r["flag"] == "off":
        if r["outcome"] != "refused" or "quantized V cache requires flash_attn" not in r["detail"]:
            fail(f"{name}: {r['outcome']} ({r['detail']}), expected refused with the runtime's line")
        continue
    if r["outcome"] != "ran": fail(f"{name}: {r['outcome']}: {r['detail']}")
    if r["kv_k"] != r["kv"] or r["kv_v"] != r["kv"]: fail(f"{name}: K/V {r['kv_k']}/{r['kv_v']}")
    if r["flag"] == "off":
        if r["fused_nodes"]: fail(f"{name}: FLASH_ATTN nodes with the flag off: {r['fused_nodes']}")
        if r["unfused_nodes"].get("CPU", 0) <= 0: fail(f"{name}: no SOFT_MAX node on the CPU: {r['unfused_nodes']}")
        if r["verdict"] != "not active": fail(f"{name}: verdict {r['verdict']}")
    else:
        if r["fused_nodes"].get("CPU", 0) <= 0 or set(r["fused_nodes"]) != {"CPU"}: fail(f"{name}: FLASH_ATTN nodes {r['fused_nodes']}")
        if r["verdict"] != "active" or not r["verdict_as_flag"]: fail(f"{name}: verdict {r['verdict']}")
    s = r["prompt_speed"]
    if not (s["runtime_tokens_per_s"] or 0) > 0 or not (s["flashproof_tokens_per_s"] or 0) > 0 or s["prompt_tokens"] < 100:
        fail(f"{name}: prompt speed {s}")
    if r["flag"] == "on" and r["kv"] == "f16" and not (s["runtime_vs_flag_off"] or 0) > 0:
        fail(f"{name}: no comparison with the flag off: {s}")
    if not (s["ttft_ms"] or 0) > 0: fail(f"{name}: no time to first token: {s}")
    mem = r["memory"]
    if not (mem["kv_cache_mib"] or 0) > 0 or not (mem["compute_buffer_mib"] or 0) > 0: fail(f"{name}: memory {mem}")
if m["exit_code"] != 0: fail(f"exit_code {m['exit_code']}")
help_text = open(sys.argv[3]).read()
if help_text:
    allowed = re.search(r"cache-type-k TYPE.*?allowed values: ([^\n]+)", help_text, re.S)
    if not allowed: fail("llama-server --help lists no allowed values for --cache-type-k")
    listed = [t.strip() for t in allowed.group(1).split(",")]
    if listed != data["kv_cache"]["types"]:
        fail(f"llama-server --help accepts {listed}; src/runtime/data/llama-server.json kv_cache.types says {data['kv_cache']['types']}")
print("matrix.json: every fact holds")
PY
[ "$(grep -c -E '^(f16|q8_0) ' "$work/out/matrix.txt")" = 8 ] || fail "matrix.txt does not have 8 table rows"

# -fa auto: the runtime's default value, launched as it is; whatever it resolves to is as expected (on
# this CPU it turns Flash Attention on), and the decode speed is the runtime's own.
"$fp" matrix "$work/matrix-tiny.json" --kv f16 --flag auto --prompt-chars 300 --rounds 1 --max-tokens 4 \
  --out "$work/auto" --quiet >"$work/auto.txt" 2>&1 || { cat "$work/auto.txt"; fail "flashproof matrix --flag auto exited $?"; }
python3 - "$work/auto/matrix.json" <<'PY' || fail "the -fa auto row does not hold the facts above"
import json, sys
r = json.load(open(sys.argv[1]))["rows"][0]
assert r["flag"] == "auto" and r["flag_value"] == "auto", (r["flag"], r["flag_value"])
assert r["outcome"] == "ran" and r["verdict"] == "active" and r["verdict_as_flag"], (r["outcome"], r["verdict"], r["detail"])
s = r["prompt_speed"]
assert (s["runtime_decode_tokens_per_s"] or 0) > 0 and s["decode_tokens"] > 1, s
print("auto row: active, decode", round(s["runtime_decode_tokens_per_s"]), "t/s")
PY
grep -q "Support matrix: matrix-tiny" "$work/out/report.html" || fail "report.html has no matrix section"
echo "PASS (${took} s for the matrix)"
