#!/usr/bin/env bash
# Four `flashproof run` processes at once against the real llama-server, sharing one --results and one
# --golden folder (goldens recorded with --record-missing): two pairs, each pair on the same case, so
# that two processes race on the same golden file and all four on results/history.tsv. Then checks:
# every result.txt parses (each line `key = value`, the expected keys once each) and result.json is
# JSON; the history holds exactly the four runs; every golden is valid JSON with the schema's keys;
# no `.tmp.` file is left; no llama-server is left.
#   usage: concurrent_runs.sh FLASHPROOF_BINARY WORK_DIR
set -uo pipefail
fp=$1 work=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$work"
dir=$(mktemp -d "$work/run.XXXXXX")
marker="fp-concurrency-$$"  # on every runtime's command line (as --alias), to find leftovers
fail() { echo "CONCURRENCY TEST FAILED: $* (files kept in $dir)" >&2; exit 1; }
leftovers() { pgrep -f -- "$marker" | grep -v "^$$\$" || true; }

[ -f "$root/fixtures/models/generated/tiny.gguf" ] ||
  { echo "SKIP: tiny model not generated (flashproof make-model fixtures/models/tiny.json)"; exit 125; }
server=${FLASHPROOF_LLAMA_SERVER:-${FLASHPROOF_PREFIX:-/var/cache/flashproof/sid-prefix}/usr/bin/llama-server}
[ -e "$server" ] || { echo "SKIP: no llama-server at $server (run ci/setup.sh)"; exit 125; }

# Two cases from cases/chat-tiny-short.json: the same one (golden name shared) and a renamed copy,
# each with the marker on the runtime's command line.
for name in chat-tiny-short chat-tiny-short-b; do
  python3 - "$root/cases/chat-tiny-short.json" "$dir/$name.json" "$name" "$marker" <<'PY' || fail "cannot write the case copies"
import json, sys
src, dst, name, marker = sys.argv[1:]
c = json.load(open(src))
c["name"] = name
c["launch"]["argv"] += ["--alias", marker]
json.dump(c, open(dst, "w"), indent=2)
PY
done

start=$(date +%s)
pids=()
for i in 1 2 3 4; do
  name=chat-tiny-short; [ "$i" -gt 2 ] && name=chat-tiny-short-b
  "$fp" run "$dir/$name.json" --repetitions 1 --warmup 0 --results "$dir/results" --golden "$dir/golden" \
    --record-missing --launches 3 >"$dir/out.$i" 2>&1 &
  pids+=($!)
done
rcs=()
for p in "${pids[@]}"; do wait "$p"; rcs+=($?); done
echo "4 concurrent runs: exit codes ${rcs[*]} in $(( $(date +%s) - start )) s"
for i in 0 1 2 3; do
  # 0 pass, 1 fail (a timing regression against a golden another run just recorded, on a busy
  # machine); 2 incomplete or a crash is what this test is for.
  case ${rcs[$i]} in 0|1) ;; *) cat "$dir/out.$((i + 1))" >&2; fail "run $((i + 1)) exited ${rcs[$i]}" ;; esac
done

# No runtime left behind.
for _ in $(seq 1 50); do [ -z "$(leftovers)" ] && break; sleep 0.1; done
[ -z "$(leftovers)" ] || fail "llama-server processes left: $(leftovers | paste -sd' ')"

# Results: four run folders, each result.txt whole and unmixed.
mapfile -t results < <(find "$dir/results" -name result.txt | sort)
[ "${#results[@]}" = 4 ] || fail "expected 4 result.txt, found ${#results[@]}: ${results[*]}"
python3 - "${results[@]}" <<'PY' || fail "a result file is malformed (above)"
import json, os, re, sys
required = ["case", "case.file", "job", "runtime", "fingerprint", "model.sha256", "status", "verdict"]
bad = False
for path in sys.argv[1:]:
    keys = {}
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        m = re.match(r"^([A-Za-z0-9_.:\-\[\]/]+) = (.*)$", line)
        if not m:
            print(f"{path}:{n}: not 'key = value': {line!r}"); bad = True; continue
        if m.group(1) in keys:
            print(f"{path}:{n}: key {m.group(1)} repeated (lines {keys[m.group(1)]} and {n}): two results mixed?"); bad = True
        keys[m.group(1)] = n
    for k in required:
        if k not in keys:
            print(f"{path}: missing key {k}"); bad = True
    try:
        json.load(open(os.path.join(os.path.dirname(path), "result.json")))
    except Exception as e:
        print(f"{path}: result.json beside it is not JSON: {e}"); bad = True
sys.exit(1 if bad else 0)
PY

# History: the header plus exactly the four runs, none lost to a concurrent rewrite.
hist=$dir/results/history.tsv
[ -f "$hist" ] || fail "no $hist"
runs=$(grep -vc '^#' "$hist")
[ "$runs" = 4 ] || { cat "$hist" >&2; fail "history.tsv holds $runs runs, expected 4"; }
awk -F'\t' '!/^#/ && NF != 5 { exit 1 }' "$hist" || fail "history.tsv has a line without 5 fields"

# Goldens: valid JSON with the schema's keys, and at least one per case recorded.
mapfile -t goldens < <(find "$dir/golden" -name '*.json' -not -path '*/answers/*' | sort)
python3 - "${goldens[@]}" <<'PY' || fail "a golden file is malformed (above)"
import json, os, sys
bad = False
for path in sys.argv[1:]:
    try:
        j = json.load(open(path))
    except Exception as e:
        print(f"{path}: not JSON: {e}"); bad = True; continue
    # golden/<id>/<case>.json is a thresholds file (golden/golden_file.h); the rest are fingerprints.
    is_thresholds = os.path.basename(path) != "fingerprint.json" and os.path.basename(path).startswith("chat-tiny-short")
    if is_thresholds and set(j) != {"schema_version", "fingerprint", "spread_kind", "figures", "kernel_families"}:
        print(f"{path}: keys {sorted(j)} are not the golden schema's"); bad = True
sys.exit(1 if bad else 0)
PY
for name in chat-tiny-short chat-tiny-short-b; do
  g=$(find "$dir/golden" -name "$name.json" | head -1)
  if grep -q '^status = pass' $(grep -l "^case = $name\$" "${results[@]}") 2>/dev/null; then
    [ -n "$g" ] || fail "no golden recorded for $name although a run of it passed"
  fi
done
# flashproof itself must load what was recorded: a second run compares against it (not "unreadable").
"$fp" run "$dir/chat-tiny-short.json" --repetitions 1 --warmup 0 --results "$dir/results-check" \
  --golden "$dir/golden" >"$dir/out.check" 2>&1
grep -rq 'unreadable' "$dir/results-check" && { cat "$dir/out.check" >&2; fail "flashproof cannot load a recorded golden"; }

# No temporary files left anywhere.
tmp=$(find "$dir/results" "$dir/golden" "$dir/results-check" -name '*.tmp.*')
[ -z "$tmp" ] || fail "temporary files left: $tmp"
[ -z "$(leftovers)" ] || fail "llama-server processes left after the check run"

echo "concurrency: 4 runs, results whole, history complete ($runs runs), ${#goldens[@]} golden files valid, no .tmp., no runtime left ($(( $(date +%s) - start )) s)"
rm -rf "$dir"
