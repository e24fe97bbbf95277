#!/usr/bin/env bash
# Headroom against the real llama-server on this CPU (README "Headroom"): for each configuration the
# case is run once (1 round, no warm-up) and flashproof's KV cache for the context it ran, computed
# from the model's GGUF header and the cache types, must equal llama.cpp's own line
# (`llama_kv_cache: size = ... MiB (N cells, ...)`) to its 2 decimals; the memory left (host
# MemAvailable) and the context that fits must be measured (tests/headroom/kv_check.py).
#   tiny-f16        the tiny model (2 layers, 2 KV heads of 32), f16 K/V, -c 2048, -np 1
#   tiny-q8-q4-np2  K q8_0, V q4_0, -c 3000 (not a multiple of 256), -np 2
#   realistic-q4    the realistic model (4 layers, 2 KV heads of 128), K/V q4_0, -c 16384
# usage: headroom.sh FLASHPROOF WORK_DIR
# Exit 0 pass, 1 fail (working files kept and named), 125 skipped (no llama-server or models here).
set -uo pipefail
fp=$1 work=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "HEADROOM TEST FAILED: $* (working files in $work)"; exit 1; }
for m in tiny realistic; do
  [ -f "$root/fixtures/models/generated/$m.gguf" ] || { echo "SKIP: models not generated (flashproof make-model fixtures/models/*.json)"; exit 125; }
done
rm -rf "$work" && mkdir -p "$work/cases"
# config NAME MODEL CONTEXT NP EXTRA...: a chat case from chat-tiny-short with that model and launch line
config() {
  local name=$1 model=$2 ctx=$3 np=$4; shift 4
  python3 - "$root/cases/chat-tiny-short.json" "$root/fixtures/models/$model.json" "$work/cases/$name.json" "$name" "$ctx" "$np" "$@" <<'PY'
import json, sys
src, recipe, out, name, ctx, np, *extra = sys.argv[1:]
c = json.load(open(src)); r = json.load(open(recipe))
c["name"] = name
c["model"] = {"path": r["output"], "sha256": r["sha256"], "recipe": "fixtures/models/%s.json" % r["name"]}
c["shape"]["context"] = int(ctx)
argv = c["launch"]["argv"]
argv[argv.index("-np") + 1] = np
c["launch"]["argv"] = argv + extra
json.dump(c, open(out, "w"), indent=2)
PY
}
config tiny-f16 tiny 2048 1
config tiny-q8-q4-np2 tiny 3000 2 -ctk q8_0 -ctv q4_0
config realistic-q4 realistic 16384 1 -ctk q4_0 -ctv q4_0
fails=0
for c in "$work"/cases/*.json; do
  n=$(basename "$c" .json)
  (cd "$root" && "$fp" run "$c" --out "$work/runs/$n" --golden "$work/golden" --record-missing-answers \
     --repetitions 1 --warmup 0 --quiet) >"$work/$n.out" 2>&1
  rc=$?
  echo "== $n (flashproof exit $rc)"
  [ "$rc" -eq 125 ] && { cat "$work/$n.out"; exit 125; }
  [ "$rc" -eq 0 ] || { cat "$work/$n.out"; fails=$((fails + 1)); continue; }
  python3 "$here/kv_check.py" "$work/runs/$n/result.txt" "$work/runs/$n/timed.log" || fails=$((fails + 1))
done
[ "$fails" -eq 0 ] || fail "$fails configuration(s) disagree or failed"
echo "headroom: every configuration agrees with llama.cpp's KV cache line"
