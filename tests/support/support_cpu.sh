#!/usr/bin/env bash
# `flashproof support` against the runtime's own ggml on this machine (the sid prefix of ci/setup.sh):
# its CPU backend, and its Vulkan backend on Mesa's lavapipe where the machine has it. Asserts what
# the backends answer, and checks two answers against the live llama-server:
#   usage     no shape, an unknown KV type, an unknown public config: exit 64 / 2, the valid ones named
#   cpu       every public config x every KV type llama-server accepts x 4 KV lengths x batch 1 and
#             512: every node answered, the CPU backend takes all of them (ggml-cpu's supports_op
#             refuses no FLASH_ATTN_EXT shape or type in this build), in well under a second
#   refusal   the tiny recipe at head size 40: a q8_0 cache is refused (block size 32 does not divide
#             the head size) and f16 is not; the live llama-server refuses the same launch with the
#             same reason (`llama_init_from_model: K cache type q8_0 with block size 32 does not
#             divide n_embd_head_k=40`)
#   vulkan    (lavapipe) the case cases/vulkan-tiny-fa-on.json and the tiny recipe at head sizes 32
#             and 36 with the case's env: Vulkan0 takes head size 32 and refuses 36; the public
#             configs hit lavapipe's 128 MiB storage-buffer limit (a K view or Q larger than that is
#             refused: Llama-3.1-8B's f16 K at 131072 cells, DeepSeek-V3's f32 Q of a 512-token
#             prefill) while the same shapes in q4_0 pass; then the live llama-server, started with
#             the case's env, -v and GGML_SCHED_DEBUG=2 until it listens (its start-up reserves
#             the decode and prefill graphs at the full context): FLASH_ATTN on Vulkan0 for head
#             size 32 and on the CPU for 36, as the backend said (`flashproof explain` reads it);
#             and a 1-layer model with 16 KV heads of 128 at 33024 cells, whose f16 K cache (129 MiB)
#             lavapipe refuses as a tensor: the backend says so (cache_fits false), and llama-server
#             aborts at start ("pre-allocated tensor (cache_k_l0) in a buffer (Vulkan0) that cannot
#             run the operation"), while q8_0 (68 MiB) is taken.
# Skips (125) when the sid prefix is not installed; the vulkan part skips alone (said so) without a
# Vulkan0 device.
#   usage: support_cpu.sh FLASHPROOF_BINARY WORK_DIR
set -uo pipefail
fp=$1 work=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "SUPPORT TEST FAILED: $*" >&2; exit 1; }
cd "$root" || exit 1
[ -f fixtures/models/generated/tiny.gguf ] || { echo "SKIP: models not generated (flashproof make-model fixtures/models/*.json)"; exit 125; }
rm -rf "$work" && mkdir -p "$work"

# --- usage ------------------------------------------------------------------------------------------
out=$("$fp" support 2>&1); rc=$?
[ "$rc" = 64 ] || fail "no shape: exit $rc, expected 64: $out"
grep -q 'name the shapes to ask about' <<<"$out" || fail "no shape: message: $out"
out=$("$fp" support --public --kv f16,q9_0 2>&1); rc=$?
[ "$rc" = 64 ] || fail "--kv q9_0: exit $rc, expected 64: $out"
grep -q '"q9_0" is not a KV cache type the runtime accepts; valid: f32, f16' <<<"$out" || fail "--kv q9_0: message: $out"

# --- the CPU backend, every public config -------------------------------------------------------------
start=$(date +%s%N)
"$fp" support --public --out "$work/cpu" --quiet >"$work/cpu.stdout" 2>"$work/cpu.stderr"; rc=$?
took=$((($(date +%s%N) - start) / 1000000))
[ "$rc" = 125 ] && { cat "$work/cpu.stdout" "$work/cpu.stderr"; exit 125; }  # "SKIP: <why>"
cat "$work/cpu.stdout"
[ "$rc" = 0 ] || { cat "$work/cpu.stderr" >&2; fail "flashproof support --public exited $rc"; }
echo "flashproof support --public (CPU): ${took} ms wall"
out=$("$fp" support --public Llama-9B 2>&1); rc=$?
[ "$rc" = 2 ] || fail "--public Llama-9B: exit $rc, expected 2: $out"
grep -q 'no config named "Llama-9B" in .*configs.json; valid: Llama-3.2-1B' <<<"$out" || fail "--public Llama-9B: message: $out"

python3 - "$work/cpu/support.json" "$root/src/runtime/data/llama-server.json" <<'PY' || fail "the CPU answers are not the facts above"
import json, sys
s = json.load(open(sys.argv[1]))
types = json.load(open(sys.argv[2]))["kv_cache"]["types"]
def fail(msg): print("FAIL:", msg); sys.exit(1)
devs = [d["name"] for d in s["devices"]]
if "CPU" not in devs: fail(f"no CPU device: {devs}")
names = {x["name"] for x in s["shapes"]}
for want in ("Llama-3.2-1B", "Llama-3.1-405B", "Qwen2.5-72B-Instruct", "Mistral-Nemo-12B", "Phi-3-mini-4k", "Gemma-2-9B", "Gemma-3-27B", "DeepSeek-V3"):
    if want not in names: fail(f"public config {want} not asked")
rows = s["rows"]
want = len(names) * len(types) * 4 * 2
if len(rows) != want: fail(f"{len(rows)} rows, expected {want} (shapes x every KV type x 4 lengths x 2 batches)")
bad = [r for r in rows if r["answers"].get("CPU") != "yes"]
if bad: fail(f"{len(bad)} rows the CPU backend did not take, e.g. {bad[0]}")
if any(r["kv_k"] == "f32" and r["node_k"] != "f16" for r in rows): fail("an f32 cache reached the node as f32")
mla = [r for r in rows if r["model"] == "DeepSeek-V3"]
if not mla or any(r["kv_k"] != r["kv_v"] for r in mla): fail("DeepSeek-V3 (K-only cache) asked with a mixed pair")
print(f"CPU: {len(rows)} nodes, every one supported; asked in {s['queries_us'] / 1000:.1f} ms, helper {s['helper_wall_s']:.2f} s")
PY

# --- a refusal the runtime makes too ---------------------------------------------------------------
mkdir -p fixtures/models/generated/support
python3 - "$work" <<'PY' || fail "cannot write the head-size recipes"
import json, sys
for h in (36, 40):
    r = json.load(open("fixtures/models/tiny.json"))
    r.update(name=f"tiny-hd{h}", n_embd=h * r["n_head"], output=f"fixtures/models/generated/support/tiny-hd{h}.gguf")
    r.pop("sha256", None); r.pop("comment", None)
    json.dump(r, open(f"{sys.argv[1]}/tiny-hd{h}.json", "w"))
r = json.load(open("fixtures/models/tiny.json"))
r.update(name="wide-kv", n_embd=2048, n_head=16, n_head_kv=16, n_layer=1, n_ff=256, n_ctx_train=65536,
         output="fixtures/models/generated/support/wide-kv.gguf")
r.pop("sha256", None); r.pop("comment", None)
json.dump(r, open(f"{sys.argv[1]}/wide-kv.json", "w"))
PY
"$fp" make-model "$work/tiny-hd36.json" "$work/tiny-hd40.json" "$work/wide-kv.json" --root "$root" >"$work/make-model.txt" 2>&1 ||
  { cat "$work/make-model.txt"; fail "make-model"; }
"$fp" support --recipe fixtures/models/tiny.json --head-sizes 40 --kv q8_0,f16 --kv-lengths 2048 --batch 1 --json \
  >"$work/hd40.json" 2>"$work/hd40.stderr" || { cat "$work/hd40.stderr"; fail "support --head-sizes 40"; }
python3 - "$work/hd40.json" <<'PY' || fail "head size 40: the answers are not the facts above"
import json, sys
s = json.load(open(sys.argv[1]))
by_kv = {r["kv_k"]: r for r in s["rows"]}
q8 = by_kv["q8_0"]
if q8["answers"]["CPU"] != "refused" or "block size 32 does not divide the head size 40" not in q8.get("why", ""):
    print("FAIL: q8_0 at head size 40:", q8); sys.exit(1)
if by_kv["f16"]["answers"]["CPU"] != "yes": print("FAIL: f16 at head size 40:", by_kv["f16"]); sys.exit(1)
PY
. /var/cache/flashproof/env.sh 2>/dev/null || true
server() {  # LOG ENV... -- ARGS...: starts llama-server as the launcher does (loader, library path)
  local log=$1; shift
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  if [ -n "${FLASHPROOF_LOADER:-}" ]; then
    env "${envs[@]}" "$FLASHPROOF_LOADER" --library-path "$FLASHPROOF_LIBRARY_PATH" "$FLASHPROOF_LLAMA_SERVER" "$@" >"$log" 2>&1 &
  else
    env "${envs[@]}" "$FLASHPROOF_LLAMA_SERVER" "$@" >"$log" 2>&1 &
  fi
  srv=$!
}
# Waits until the server listens or exits (at most $2 s), then stops it; its log is complete then.
settle() {  # LOG SECONDS
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    grep -q 'listening on' "$1" && break
    kill -0 "$srv" 2>/dev/null || break
    sleep 0.1
  done
  kill -TERM "$srv" 2>/dev/null
  for ((i = 0; i < 100; i++)); do kill -0 "$srv" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$srv" 2>/dev/null
  wait "$srv" 2>/dev/null
}
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
server "$work/hd40-q8_0.log" -- -m fixtures/models/generated/support/tiny-hd40.gguf --host 127.0.0.1 --port "$(free_port)" -c 2048 \
  -np 1 -t 2 -fa on -ctk q8_0 -ctv q8_0
settle "$work/hd40-q8_0.log" 60
grep -q 'K cache type q8_0 with block size 32 does not divide n_embd_head_k=40' "$work/hd40-q8_0.log" ||
  fail "llama-server with head size 40 and a q8_0 cache did not refuse it as the backend query did: $(tail -5 "$work/hd40-q8_0.log")"
echo "refusal: q8_0 at head size 40 refused by the query and by llama-server, both for the block size"

# --- the Vulkan backend on lavapipe ----------------------------------------------------------------
case_file=cases/vulkan-tiny-fa-on.json
"$fp" support --case "$case_file" --recipe fixtures/models/tiny.json --head-sizes 32,36 --kv f16 --kv-lengths 2048 \
  --out "$work/vulkan" --quiet >"$work/vulkan.stdout" 2>"$work/vulkan.stderr"; rc=$?
cat "$work/vulkan.stdout"
[ "$rc" = 0 ] || { cat "$work/vulkan.stderr" >&2; fail "flashproof support --case $case_file exited $rc"; }
if ! grep -q '"name": "Vulkan0"' "$work/vulkan/support.json"; then
  echo "vulkan: SKIPPED, ggml loaded no Vulkan0 device here (lavapipe: libvulkan1, mesa-vulkan-drivers): CPU parts passed"
  exit 0
fi
vk_env=$(python3 -c 'import json,sys; print(" ".join(f"{k}={v}" for k, v in json.load(open(sys.argv[1]))["launch"]["env"].items()))' "$case_file")
# shellcheck disable=SC2086
env_args=$(for e in $vk_env; do printf -- '--env %s ' "$e"; done)
"$fp" support --public Llama-3.1-8B,DeepSeek-V3 --kv f16,q4_0 --kv-lengths 4096,131072 --json \
  $env_args >"$work/vulkan-public.json" 2>"$work/vulkan-public.stderr" || { cat "$work/vulkan-public.stderr"; fail "support --public on Vulkan"; }
"$fp" support --recipe "$work/wide-kv.json" --kv f16,q8_0 --kv-lengths 33024 --batch 1 --json \
  $env_args >"$work/vulkan-wide.json" 2>"$work/vulkan-wide.stderr" || { cat "$work/vulkan-wide.stderr"; fail "support --recipe wide-kv on Vulkan"; }
python3 - "$work/vulkan/support.json" "$work/vulkan-public.json" "$work/vulkan-wide.json" <<'PY' || fail "the Vulkan answers are not the facts above"
import json, sys
s = json.load(open(sys.argv[1]))
p = json.load(open(sys.argv[2]))
w = json.load(open(sys.argv[3]))
def fail(msg): print("FAIL:", msg); sys.exit(1)
def answer(doc, model, kv, length, batch):
    for r in doc["rows"]:
        if (r["model"], r["kv_k"], r["kv_length"], r["batch"]) == (model, kv, length, batch): return r
    fail(f"no row {model} {kv} {length} {batch}")
for b in (1, 512):
    if answer(s, "vulkan-tiny-fa-on", "f16", 2048, b)["answers"]["Vulkan0"] != "yes": fail(f"the case (head 32) at batch {b}: not on Vulkan0")
    if answer(s, "tiny-hd32", "f16", 2048, b)["answers"]["Vulkan0"] != "yes": fail(f"head size 32 at batch {b}: not on Vulkan0")
    if answer(s, "tiny-hd36", "f16", 2048, b)["answers"]["Vulkan0"] != "no": fail(f"head size 36 at batch {b}: Vulkan0 did not refuse it")
    if answer(s, "tiny-hd36", "f16", 2048, b)["answers"]["CPU"] != "yes": fail(f"head size 36 at batch {b}: the CPU refused it")
# lavapipe's 128 MiB storage-buffer range: Llama-3.1-8B's f16 K at 131072 cells is 256 MiB (its cache too),
# in q4_0 72 MiB; DeepSeek-V3's f32 Q for 512 tokens is 151 MiB, for one token 0.3 MiB.
r = answer(p, "Llama-3.1-8B", "f16", 131072, 1)
if r["answers"]["Vulkan0"] != "no" or r["cache_fits"]["Vulkan0"]: fail(f"Llama-3.1-8B f16 at 131072: {r}")
if answer(p, "Llama-3.1-8B", "q4_0", 131072, 512)["answers"]["Vulkan0"] != "yes": fail("Llama-3.1-8B q4_0 at 131072 refused")
if answer(p, "Llama-3.1-8B", "f16", 4096, 512)["answers"]["Vulkan0"] != "yes": fail("Llama-3.1-8B f16 at 4096 refused")
if answer(p, "DeepSeek-V3", "f16", 4096, 512)["answers"]["Vulkan0"] != "no": fail("DeepSeek-V3 prefill at 4096 taken")
r = answer(p, "DeepSeek-V3", "f16", 4096, 1)
if r["answers"]["Vulkan0"] != "yes" or not r["cache_fits"]["Vulkan0"]: fail(f"DeepSeek-V3 decode at 4096: {r}")
r = answer(w, "wide-kv", "f16", 33024, 1)
if r["answers"]["Vulkan0"] != "no" or r["cache_fits"]["Vulkan0"]: fail(f"wide-kv f16 at 33024: {r}")
r = answer(w, "wide-kv", "q8_0", 33024, 1)
if r["answers"]["Vulkan0"] != "yes" or not r["cache_fits"]["Vulkan0"]: fail(f"wide-kv q8_0 at 33024: {r}")
print("vulkan: head size 32 on Vulkan0, 36 refused; the 128 MiB limit where expected")
PY
envs=()
for e in $vk_env; do envs+=("$e"); done
for h in 32 36; do
  model=fixtures/models/generated/support/tiny-hd$h.gguf
  [ "$h" = 32 ] && model=fixtures/models/generated/tiny.gguf
  log=$work/vulkan-hd$h.log
  start=$(date +%s)
  server "$log" "${envs[@]}" GGML_SCHED_DEBUG=2 LLAMA_ARG_LOG_VERBOSITY=5 -- -m "$model" --host 127.0.0.1 --port "$(free_port)" \
    -c 2048 -np 1 -t 2 -ngl 99 -fa on -v
  settle "$log" 240
  "$fp" explain --runtime llama-server --log "$log" --expect-backend Vulkan0 --layers 2 >"$work/explain-hd$h.txt" 2>&1
  placed=$(grep -m1 '^fused op placed on:' "$work/explain-hd$h.txt")
  echo "live head size $h: $placed ($(($(date +%s) - start)) s)"
  if [ "$h" = 32 ]; then
    grep -q '^fused op placed on: Vulkan0 [0-9]*$' <<<"$placed" || fail "head size 32 live: $placed (the backend said Vulkan0); $(tail -3 "$log")"
  else
    grep -q '^fused op placed on: CPU [0-9]*$' <<<"$placed" || fail "head size 36 live: $placed (the backend said no on Vulkan0); $(tail -3 "$log")"
  fi
done
log=$work/vulkan-wide-f16.log
start=$(date +%s)
echo "live wide-kv f16 at 33024 cells: llama-server should abort at start (bash reports it)"
server "$log" "${envs[@]}" -- -m fixtures/models/generated/support/wide-kv.gguf --host 127.0.0.1 --port "$(free_port)" \
  -c 33024 -np 1 -t 2 -ngl 99 -fa on
settle "$log" 120
grep -q 'pre-allocated tensor (cache_k_l0) in a buffer (Vulkan0) that cannot run the operation' "$log" ||
  fail "wide-kv f16 at 33024 cells live: no abort on the K cache tensor (the backend said Vulkan0 cannot hold it): $(grep -v ggml_backend_load_best "$log" | tail -5)"
echo "live wide-kv f16 at 33024 cells: llama-server aborted at start on the K cache tensor, as the backend said ($(($(date +%s) - start)) s)"
echo "vulkan: the live placement agrees with the backend's answers"
