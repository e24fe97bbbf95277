#!/usr/bin/env bash
# On the device, after run_device.sh (sid's llama-server with its CUDA backend unpacked into FP_WORK,
# the probe built) and with flashproof in the bundle (bundle_harness.sh): nightly runs against a
# golden on the H200 with the nightly's defaults (docs/upgrade-gate.md "Nightly"), for the detection
# table of bench/README.md section 7:
#   record    a golden of 5 launches (`run --record-missing`), unless the carried state has one for
#             this fingerprint (then its nights go on from there)
#   same      a night of the same build (`run --launches 3`): any failure is a false alarm
#   prompt-2  the document 2% longer (a copy of the case, same name): real extra prompt tokens
#   ub256     the same build with a halved micro-batch (`-ub 256` appended by a wrapper): a real
#             kernel-level change (the gate measured its kernel time +56%)
# Prints the fingerprint (GPU UUID, driver), per night the figures that failed and the gated
# figures' bands and where they came from, and the detection table. Everything the next machine
# start needs comes back in OUTDIR/nightly/state (the golden and the results history, without
# logs): carry it as FP_NIGHTLY_STATE on the next start, and the nights go on from it.
#
# usage: nightly_device.sh BUNDLE OUTDIR [STEP[:NIGHTS] ...]   (default: record same:3 prompt-2:1 ub256:1 same:2)
# env:   FP_NIGHTLY_STATE (a folder from an earlier OUTDIR/nightly/state, relative to the repository root)
#        FP_NIGHTLY_DEADLINE_S (default 480: no night starts after that many seconds of this script)
#        FP_NIGHTLY_CASE (default gate/gate-cuda-realistic-prefill.json)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
B=$(cd "$1" && pwd); O=$2; shift 2
plan=("$@"); ((${#plan[@]})) || plan=(record same:3 prompt-2:1 ub256:1 same:2)
W=${FP_WORK:-/tmp/fp-llama-cuda}
L=$W/prefix/usr/lib/x86_64-linux-gnu
DEADLINE=${FP_NIGHTLY_DEADLINE_S:-480}
t0=$(date +%s)
mkdir -p "$O/nightly"
. "$here/device_flashproof.sh"
fp_unpack "$B" || { echo "nightly: no flashproof in the bundle" >&2; exit 1; }
LIBS=$(cat "$W/library-path")
mkdir -p "$root/fixtures/models/generated" && cp -f "$W/realistic.gguf" "$root/fixtures/models/generated/realistic.gguf"
cat >"$W/llama-server-cuda" <<SH
#!/bin/sh
exec "$L/ld-linux-x86-64.so.2" --library-path "$LIBS" "$W/prefix/usr/bin/llama-server" "\$@"
SH
cat >"$W/llama-server-cuda-ub256" <<SH
#!/bin/sh
exec "$L/ld-linux-x86-64.so.2" --library-path "$LIBS" "$W/prefix/usr/bin/llama-server" "\$@" -ub 256
SH
chmod +x "$W/llama-server-cuda" "$W/llama-server-cuda-ub256"
export FLASHPROOF_PROBE_LIB=$(cat "$W/probe-path") FLASHPROOF_PROGRESS=lines FLASHPROOF_LLAMA_SERVER=$W/llama-server-cuda
export CUDA_CACHE_PATH=$W/jit-cache CUDA_CACHE_MAXSIZE=4294967296 CUDA_MODULE_LOADING=LAZY
unset FLASHPROOF_LOADER FLASHPROOF_LIBRARY_PATH
case_file=$here/${FP_NIGHTLY_CASE:-gate/gate-cuda-realistic-prefill.json}
name=$(basename "$case_file" .json)
S=$W/nightly
rm -rf "$S" && mkdir -p "$S/golden" "$S/results" "$S/cases"
if [ -n "${FP_NIGHTLY_STATE:-}" ] && [ -d "$root/$FP_NIGHTLY_STATE" ]; then
  cp -a "$root/$FP_NIGHTLY_STATE/golden/." "$S/golden/" 2>/dev/null
  cp -a "$root/$FP_NIGHTLY_STATE/results/." "$S/results/" 2>/dev/null
  echo "state carried from $FP_NIGHTLY_STATE: $(find "$S/golden" -name "$name.json" | wc -l) golden(s), $(grep -c . "$S/results/history.tsv" 2>/dev/null || echo 0) history lines"
fi
# The 2% longer document: the same case (same name, so the same golden) with 1.02 x the characters.
mkdir -p "$S/cases/prompt-2"
python3 - "$case_file" "$S/cases/prompt-2/$name.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["shape"]["long_prompt"]["chars"] = round(c["shape"]["long_prompt"]["chars"] * 1.02)
json.dump(c, open(sys.argv[2], "w"), indent=2)
PY
fp() { (cd "$root" && "$L/ld-linux-x86-64.so.2" --library-path "$L:$W/fpbin/lib:$W/drv" "$W/fpbin/flashproof" "$@"); }
table=$O/nightly/table.txt
{
  echo "nightly on the H200: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,uuid,driver_version,memory.total --format=csv,noheader | sed 's/^/gpu: /'
  echo "fingerprint: $(fp fingerprint)"
  fp fingerprint --json | python3 -c 'import json,sys; j=json.load(sys.stdin); print("fingerprint fields:", {k: v for k, v in j.items() if k not in ("id",)})' 2>/dev/null
} | tee "$table"
id=$(fp fingerprint)

bands() {  # the gated and guarded figures' status, band and where it came from, of one run
  python3 - "$1/result.txt" <<'PY'
import re, sys
try:
    lines = open(sys.argv[1]).read().splitlines()
except OSError:
    sys.exit(0)
for l in lines:
    m = re.match(r"golden\.\d+ = (\w+) \[(gate|guard)\] (?:GUARD )?([\w.]+): .*?measured median ([^ ]+).*?noise band [^ ]+ \(([^)]*)\) from (.*?), (?:lower|higher) is better", l)
    if m:
        status, role, fig, med, band, src = m.groups()
        print(f"    {fig} [{role}] {status}: median {med}, band {band} from {src}")
PY
}
declare -A nights failed timing
for item in "${plan[@]}"; do
  step=${item%%:*}; count=${item##*:}; [ "$step" = "$item" ] && count=1
  for n in $(seq 1 "$count"); do
    if (($(date +%s) - t0 > DEADLINE)); then echo "$step $n: not run (deadline)" | tee -a "$table"; continue; fi
    c=$case_file args=(--launches 3) envs=()
    case $step in
      record)
        if [ -f "$S/golden/$id/$name.json" ]; then echo "record: the carried golden for $id is kept" | tee -a "$table"; continue; fi
        args=(--record-missing --launches 5) ;;
      same) ;;
      prompt-2) c=$S/cases/prompt-2/$name.json ;;
      ub256) envs=(FLASHPROOF_LLAMA_SERVER="$W/llama-server-cuda-ub256") ;;
      *) echo "unknown step $step" >&2; exit 64 ;;
    esac
    s=$(date +%s)
    env "${envs[@]}" "$L/ld-linux-x86-64.so.2" --library-path "$L:$W/fpbin/lib:$W/drv" "$W/fpbin/flashproof" run "$c" --root "$root" \
      --golden "$S/golden" --results "$S/results" --quiet "${args[@]}" >"$O/nightly/$step-$n.txt" 2>&1
    rc=$?
    res=$(ls -d "$S"/results/*/"$name"/latest 2>/dev/null | head -1)
    why=$(grep -E '^failure\.[0-9]+ = ' "$res/result.txt" 2>/dev/null | sed -E 's/^failure\.[0-9]+ = //; s/^figure //' |
          sed -E 's/^(GUARD |MEMORY )?([A-Za-z0-9_.]+)[: ].*/\2/' | sort -u | tr '\n' ' ')
    echo "$step $n: exit $rc, $(( $(date +%s) - s )) s; failed: ${why:-none}" | tee -a "$table"
    bands "$res" | tee -a "$table"
    [ "$step" = record ] && continue
    nights[$step]=$(( ${nights[$step]:-0} + 1 ))
    [ "$rc" -eq 1 ] && failed[$step]=$(( ${failed[$step]:-0} + 1 ))
    grep -Eq '(^| )(gpu_kernel_ms_per_token|attention_kernel_ms_per_token|ttft_ms[a-z0-9_]*|itl_ms|tpot_ms|e2e_ms|memory\.[A-Za-z0-9_.]+)( |$)' <<<"$why" &&
      timing[$step]=$(( ${timing[$step]:-0} + 1 ))
  done
done
{
  printf '%-10s %7s %7s %22s\n' step nights failed "failed on a timing or memory figure"
  for step in same prompt-2 ub256; do
    [ -n "${nights[$step]:-}" ] && printf '%-10s %7d %7d %22d\n' "$step" "${nights[$step]}" "${failed[$step]:-0}" "${timing[$step]:-0}"
  done
  echo "false alarms: ${failed[same]:-0} of ${nights[same]:-0} same-build nights this start"
  echo "history --changes:"
  fp history --changes --results "$S/results" "$name"
} | tee -a "$table"
# The state for the next machine start: the golden and the history without logs.
mkdir -p "$O/nightly/state"
cp -a "$S/golden" "$O/nightly/state/"
(cd "$S" && find results -name result.json -o -name result.txt -o -name history.tsv | tar -cf - -T -) | tar -C "$O/nightly/state" -xf -
echo "state for the next start: $O/nightly/state (carry it as FP_NIGHTLY_STATE)"
