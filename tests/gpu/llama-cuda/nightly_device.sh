#!/usr/bin/env bash
# On the device, after run_device.sh (sid's llama-server with its CUDA backend unpacked into FP_WORK,
# the probe built) and with flashproof in the bundle (bundle_harness.sh): nightly runs against a
# golden on the H200 with the nightly's defaults (docs/upgrade-gate.md "Nightly"), for the detection
# table of bench/README.md section 7. Steps:
#   record    a golden of 5 launches (`run --record-missing`), unless the carried state has one for
#             this fingerprint (then its nights go on from there)
#   same      a night of the same build (`run --launches 3`): any failure is a false alarm
#   prompt-2  the document 2% longer (a copy of the case, same name): real extra prompt tokens
#   VARIANT   a night of the same build with a real runtime change, from the table below (a wrapper
#             appends its arguments or sets its environment): ub<N> (`-ub N`, a kernel-level change:
#             ub256 +56% kernel time), b<N> (`-b N`), np<N> (`-np N`), ctkbf16, ctkq8 (`-ctk q8_0 -ctv q8_0`), nkvo (`-nkvo`: the KV cache
#             moved to the host), t1 (`-t 1`: host threads only, a control), nofusion
#             (GGML_CUDA_DISABLE_FUSION=1), nographs (GGML_CUDA_DISABLE_GRAPHS=1), cublas
#             (GGML_CUDA_FORCE_CUBLAS=1), mmq (GGML_CUDA_FORCE_MMQ=1), ptxjit (CUDA_FORCE_PTX_JIT=1:
#             the driver compiles the library's PTX instead of loading its sm_90 code)
#   sweep     one launch of each of FP_SWEEP's variants (default below) with no golden, printing
#             each one's GPU kernel time per token against `same` measured first and last; the
#             variant closest above +2% (and under +6%) becomes `picked`
#   picked    a night of the variant the sweep picked (none picked: not run)
#   bump      ci/driver-bump.sh before (same build), then after with the picked variant and after
#             with the same build again (FP_BUMP_LAUNCHES launches each, default 5)
# Prints the fingerprint (GPU UUID, driver), per night the figures that failed and the gated
# figures' bands and where they came from, and the detection table. Everything the next machine
# start needs comes back in OUTDIR/nightly/state (the golden and the results history, without
# logs): carry it as FP_NIGHTLY_STATE on the next start, and the nights go on from it.
#
# With FP_NIGHTLY_BASE=VARIANT the deployed server is that variant (its golden, its same-build nights,
# the bump's reference), and the variant `plain` is the server without its arguments: a real change
# against what was deployed, in either direction (-ub 720 is 1.9% faster in kernel time than the
# default -ub 512 on the H200, so dropping it is a real ~2% kernel-level slowdown).
#
# usage: nightly_device.sh BUNDLE OUTDIR [STEP[:NIGHTS] ...]   (default: record same:3 prompt-2:1 ub256:1 same:2)
# env:   FP_NIGHTLY_STATE (a folder from an earlier OUTDIR/nightly/state, relative to the repository root)
#        FP_NIGHTLY_DEADLINE_S (default 480: no night starts after that many seconds of this script)
#        FP_NIGHTLY_CASE (default gate/gate-cuda-realistic-prefill.json)
#        FP_SWEEP (default "same ub480 ub448 ub384 ctkq8 t1 same")
#        FP_NIGHTLY_BASE (a variant deployed as the same build; see above), FP_PICKED (the variant
#        `picked` and `bump` use, instead of the sweep's pick)
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
chmod +x "$W/llama-server-cuda"
# variant NAME: writes the wrapper $W/llama-server-cuda-NAME for a variant of the table above.
variant() {
  local a="" e=""
  case $1 in
    ub[0-9]*) a="-ub ${1#ub}" ;;
    b[0-9]*) a="-b ${1#b}" ;;
    np[0-9]*) a="-np ${1#np}" ;;
    ctkbf16) a="-ctk bf16 -ctv bf16" ;;
    ctkq8) a="-ctk q8_0 -ctv q8_0" ;;
    nkvo) a="-nkvo" ;;
    t1) a="-t 1" ;;
    nofusion) e="GGML_CUDA_DISABLE_FUSION=1" ;;
    nographs) e="GGML_CUDA_DISABLE_GRAPHS=1" ;;
    cublas) e="GGML_CUDA_FORCE_CUBLAS=1" ;;
    mmq) e="GGML_CUDA_FORCE_MMQ=1" ;;
    ptxjit) e="CUDA_FORCE_PTX_JIT=1" ;;
    plain) [ -x "$W/llama-server-cuda-plain" ]; return ;;
    *) return 1 ;;
  esac
  printf '#!/bin/sh\n%s exec "%s" --library-path "%s" "%s" "$@" %s\n' "${e:+export $e;}" "$L/ld-linux-x86-64.so.2" "$LIBS" \
    "$W/prefix/usr/bin/llama-server" "$a" >"$W/llama-server-cuda-$1"
  chmod +x "$W/llama-server-cuda-$1"
}
if [ -n "${FP_NIGHTLY_BASE:-}" ]; then
  cp "$W/llama-server-cuda" "$W/llama-server-cuda-plain"
  variant "$FP_NIGHTLY_BASE" || { echo "nightly: unknown FP_NIGHTLY_BASE $FP_NIGHTLY_BASE" >&2; exit 64; }
  cp "$W/llama-server-cuda-$FP_NIGHTLY_BASE" "$W/llama-server-cuda"
fi
rm -f "$W/picked"
[ -n "${FP_PICKED:-}" ] && echo "$FP_PICKED" >"$W/picked"
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
  [ -n "${FP_NIGHTLY_BASE:-}" ] && echo "deployed (the same build): $FP_NIGHTLY_BASE; plain: the server without its arguments"
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
# kernel_per_token RESULT_DIR: the GPU kernel time per token (median of the run's launches), or nothing.
kernel_per_token() {
  python3 - "$1/result.json" <<'PY'
import json, sys
try:
    f = json.load(open(sys.argv[1]))["figures"].get("gpu_kernel_ms_per_token")
    print(f"{f['p50']:.7f}" if f else "")
except (OSError, ValueError, KeyError):
    pass
PY
}
# sweep: one launch of each variant, no golden; picks the one closest above +2% (under +6%).
sweep() {
  local v r k base="" i=0
  : >"$W/sweep.tsv"
  for v in ${FP_SWEEP:-same ub480 ub448 ub384 ctkq8 t1 same}; do
    i=$((i + 1))
    if (($(date +%s) - t0 > DEADLINE)); then echo "sweep $v: not run (deadline)" | tee -a "$table"; continue; fi
    local srv=$W/llama-server-cuda
    [ "$v" = same ] || { variant "$v" && srv=$W/llama-server-cuda-$v; } || { echo "sweep: unknown variant $v" | tee -a "$table"; continue; }
    r=$W/sweep/$i-$v
    rm -rf "$r" && mkdir -p "$r"
    FLASHPROOF_LLAMA_SERVER=$srv fp run "$case_file" --root "$root" --golden "$r/golden" --results "$r/results" \
      --out "$r/run" --record-missing-answers --launches 1 --quiet >"$O/nightly/sweep-$i-$v.txt" 2>&1
    k=$(kernel_per_token "$r/run")
    printf '%s\t%s\n' "$v" "$k" >>"$W/sweep.tsv"
  done
  python3 - "$W/sweep.tsv" "$W/picked" <<'PY' | tee -a "$table"
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
same = [float(k) for v, k in rows if v == "same" and k]
print("sweep: GPU kernel ms per token, one launch each; against the median of `same` " + ", ".join(f"{x:.7f}" for x in same))
if not same:
    sys.exit(0)
base = statistics.median(same)
best = None
for v, k in rows:
    if not k:
        print(f"  {v:10} (no kernel time)"); continue
    d = (float(k) / base - 1) * 100
    print(f"  {v:10} {float(k):.7f}  {d:+.2f}%")
    if v != "same" and 2.0 <= d < 6.0 and (best is None or d < best[1]):
        best = (v, d)
if best:
    open(sys.argv[2], "w").write(best[0])
    print(f"picked: {best[0]} ({best[1]:+.2f}% in the sweep)")
else:
    print("picked: none (no variant between +2% and +6%)")
PY
}
# bump: the driver-bump before/after of docs/upgrade-gate.md, with this device's flashproof.
bump() {
  local d=$W/bump fpdir=$W/fpwrap n=${FP_BUMP_LAUNCHES:-5} v
  v=$(cat "$W/picked" 2>/dev/null)
  mkdir -p "$fpdir" && rm -rf "$d"
  printf '#!/bin/sh\nexec "%s" --library-path "%s" "%s" "$@"\n' "$L/ld-linux-x86-64.so.2" "$L:$W/fpbin/lib:$W/drv" "$W/fpbin/flashproof" >"$fpdir/flashproof"
  chmod +x "$fpdir/flashproof"
  local -a e=(FLASHPROOF_SKIP_BUILD=1 FLASHPROOF_BUILD_DIR="$fpdir" FLASHPROOF_CASES="$case_file")
  (cd "$root" && env "${e[@]}" bash ci/driver-bump.sh before --launches "$n" --dir "$d" >"$O/nightly/bump-before.txt" 2>&1)
  echo "bump before (same build, $n launches): exit $?" | tee -a "$table"
  if [ -n "$v" ]; then
    (cd "$root" && env "${e[@]}" bash ci/driver-bump.sh after --launches "$n" --dir "$d" --runtime "$W/llama-server-cuda-$v" >"$O/nightly/bump-after-$v.txt" 2>&1)
    echo "bump after ($v, $n launches): exit $?" | tee -a "$table"
    grep -E 'gpu_kernel_ms|fingerprint|verdict|regression|^result' "$O/nightly/bump-after-$v.txt" | head -12 | sed 's/^/    /' | tee -a "$table"
  fi
  (cd "$root" && env "${e[@]}" bash ci/driver-bump.sh after --launches "$n" --dir "$d" >"$O/nightly/bump-after-same.txt" 2>&1)
  echo "bump after (same build, $n launches): exit $?" | tee -a "$table"
  grep -E 'gpu_kernel_ms|fingerprint|verdict|regression|^result' "$O/nightly/bump-after-same.txt" | head -12 | sed 's/^/    /' | tee -a "$table"
}
declare -A nights failed timing
steps_seen=()
for item in "${plan[@]}"; do
  step=${item%%:*}; count=${item##*:}; [ "$step" = "$item" ] && count=1
  case $step in sweep) sweep; continue ;; bump) bump; continue ;; esac
  for n in $(seq 1 "$count"); do
    if (($(date +%s) - t0 > DEADLINE)); then echo "$step $n: not run (deadline)" | tee -a "$table"; continue; fi
    c=$case_file args=(--launches 3) envs=() label=$step
    case $step in
      record)
        if [ -f "$S/golden/$id/$name.json" ]; then echo "record: the carried golden for $id is kept" | tee -a "$table"; continue; fi
        args=(--record-missing --launches 5) ;;
      same) ;;
      prompt-2) c=$S/cases/prompt-2/$name.json ;;
      picked)
        v=$(cat "$W/picked" 2>/dev/null) || true
        [ -n "$v" ] || { echo "picked $n: not run (the sweep picked no variant)" | tee -a "$table"; continue; }
        variant "$v"; envs=(FLASHPROOF_LLAMA_SERVER="$W/llama-server-cuda-$v"); label=$v ;;
      *)
        variant "$step" || { echo "unknown step $step" >&2; exit 64; }
        envs=(FLASHPROOF_LLAMA_SERVER="$W/llama-server-cuda-$step") ;;
    esac
    s=$(date +%s)
    env "${envs[@]}" "$L/ld-linux-x86-64.so.2" --library-path "$L:$W/fpbin/lib:$W/drv" "$W/fpbin/flashproof" run "$c" --root "$root" \
      --golden "$S/golden" --results "$S/results" --quiet "${args[@]}" >"$O/nightly/$label-$n.txt" 2>&1
    rc=$?
    res=$(ls -d "$S"/results/*/"$name"/latest 2>/dev/null | head -1)
    why=$(grep -E '^failure\.[0-9]+ = ' "$res/result.txt" 2>/dev/null | sed -E 's/^failure\.[0-9]+ = //; s/^figure //' |
          sed -E 's/^(GUARD |MEMORY |KV CACHE MOVED)?([A-Za-z0-9_.]+)[: ].*/\1\2/' | sort -u | tr '\n' ' ')
    echo "$label $n: exit $rc, $(( $(date +%s) - s )) s; kernel ms/token $(kernel_per_token "$res"); failed: ${why:-none}" | tee -a "$table"
    bands "$res" | tee -a "$table"
    grep -E '^failure\.[0-9]+ = (MEMORY|KV CACHE)' "$res/result.txt" 2>/dev/null | head -3 | sed 's/^/    /' | tee -a "$table"
    [ "$step" = record ] && continue
    [ -n "${nights[$label]:-}" ] || steps_seen+=("$label")
    nights[$label]=$(( ${nights[$label]:-0} + 1 ))
    [ "$rc" -eq 1 ] && failed[$label]=$(( ${failed[$label]:-0} + 1 ))
    grep -Eq '(^| )(gpu_kernel_ms_per_token|attention_kernel_ms_per_token|ttft_ms[a-z0-9_]*|itl_ms|tpot_ms|e2e_ms|memory\.[A-Za-z0-9_.]+|KV CACHE MOVED.*)( |$)' <<<"$why" &&
      timing[$label]=$(( ${timing[$label]:-0} + 1 ))
  done
done
{
  printf '%-10s %7s %7s %22s\n' step nights failed "failed on a timing or memory figure"
  for step in "${steps_seen[@]}"; do
    printf '%-10s %7d %7d %22d\n' "$step" "${nights[$step]}" "${failed[$step]:-0}" "${timing[$step]:-0}"
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
