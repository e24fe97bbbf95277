#!/usr/bin/env bash
# The before/after check of a refactoring that must change no output (issue 42): every output that
# can be produced from the committed fixtures, written into one folder per build, so that two builds
# compare with `diff -r`.
#
# usage: bench/house_identity.sh BUILD_DIR OUT_DIR [--live]
#        bench/house_identity.sh --compare OUT_BEFORE OUT_AFTER
#   BUILD_DIR: a build folder (flashproof, bench/gate_replay, bench/house_render, tests/replay/replay_runtime)
#   OUT_DIR:   created fresh; one file per output
#   --live:    also the engines on the replay TEST DOUBLE (fixtures/replay): `run` of every replay
#              case, `ab` and the side-by-side `gate` on replay-h200-mid-fa-on. Their timings are
#              the double's sleeps: every number is masked (#), so only the words, the figure names,
#              the verdicts and the structure are compared; run the same build twice to see what
#              the masking leaves (an undecided look can still decide another way).
#
# What it covers, deterministic (byte for byte):
#   explain/       `flashproof explain` on every recorded log under fixtures/ (with its kernel tally where one
#                  sits beside it), output and exit code
#   render/        every result.json under fixtures/ and tests/report/fixture read and written again
#                  (result.txt, result.json) and every golden file read and written again (bench/house_render.cpp)
#   report.html    `flashproof report` of tests/report/fixture (real results, an A/B run, a failing case)
#   diff/          `flashproof diff` of each pair of consecutive runs of a fixture case
#   history.txt    `flashproof history` of the fixture's results
#   accept/        `flashproof accept --yes` of the fixture's runs into an empty golden folder: output and files
#   gate_replay/   bench/gate_replay on every recorded gate.json (the statistics, look by look; the
#                  figures' directions and floors)
# Compare: --compare OUT_BEFORE OUT_AFTER: diff -r of everything but live/, then live/ with what
# varies from one launch to the next also normalized (signs of masked numbers, column padding, a
# figure's "better"/"worse", the "too few" note, the blocks' random order).
set -uo pipefail
if [ "${1:-}" = --compare ]; then
  A=$2 B=$3
  shift 3
  # --rename SED PATH...: a figure that got its own name; SED (e.g. 's/\bitl_ms\b/itl_mean_ms/g')
  # applied to the before side's files under each PATH (relative to OUT) before comparing.
  if [ "${1:-}" = --rename ]; then
    renamed=$(mktemp -d)
    cp -r "$A"/. "$renamed"/
    expr=$2
    shift 2
    for p in "$@"; do find "$renamed/$p" -type f -exec sed -i -E "$expr" {} +; done
    A=$renamed
  fi
  diff -r -x live "$A" "$B"
  rc=$?
  norm() {
    sed -E -e 's/[-+]#/#/g' -e 's/ +/ /g' -e 's/(better|worse) by/CHANGED by/g' -e 's/; too few(: ~# per arm needed)?//' \
      -e 's/\((on|off), (on|off), (on|off), (on|off)\)/(ORDER)/' -e '/^ *#,?$/d' -e '/^ *"(on|off)",?$/d' \
      -e '/repetitions_needed|too_few_repetitions|"explanation": "B - A/d' -e 's|\{suite\}/build|@BUILD@|g' \
      -e '/"baseline_first"|"first":|"arm":/d' "$1"
  }
  for f in "$A"/live/*; do
    n=$(basename "$f")
    diff <(norm "$f") <(norm "$B/live/$n") >/dev/null || { echo "live/$n differs (normalized):"; diff <(norm "$f") <(norm "$B/live/$n"); rc=1; }
  done
  exit $rc
fi
BUILD=$(cd "$1" && pwd) OUT=$2 LIVE=${3:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FP=$BUILD/flashproof
[ -x "$FP" ] || { echo "no $FP"; exit 2; }
rm -rf "$OUT" && mkdir -p "$OUT"/{explain,render,diff,accept,gate_replay,live}
OUT=$(cd "$OUT" && pwd)
# A fixed scratch path: the report fixture's result.json files name it (@FIXTURE@), so both builds
# must see the same one.
WORK=${TMPDIR:-/tmp}/flashproof-house-identity
rm -rf "$WORK" && mkdir -p "$WORK"
cd "$ROOT" || exit 2
unset CI

# explain
find fixtures -name '*.log' -o -name '*.log.gz' | sort | while read -r log; do
  base=${log%.gz}; base=${base%.log}
  runtime=llama-server
  case $log in *vllm*) runtime=vllm ;; esac
  args=(explain --runtime "$runtime" --log "$log")
  [ -f "$base.kernels.tsv" ] && args+=(--kernels "$base.kernels.tsv")
  name=$(echo "$log" | tr '/' '_')
  "$FP" "${args[@]}" 2>&1 | sed "s|$BUILD|@BUILD@|g" >"$OUT/explain/$name.txt"
  echo "exit ${PIPESTATUS[0]}" >>"$OUT/explain/$name.txt"
done

# render
cp -r tests/report/fixture/. "$WORK/report/" 2>/dev/null || { mkdir -p "$WORK/report" && cp -r tests/report/fixture/. "$WORK/report/"; }
find "$WORK/report" -name result.json -exec sed -i "s|@FIXTURE@|$WORK/report|g" {} +
{ find fixtures -name result.json; find "$WORK/report" -name result.json; } | sort >"$WORK/results.list"
find fixtures "$WORK/report/golden" golden -path '*golden*' -name '*.json' ! -name fingerprint.json ! -name verdict.json ! -name 'history*' | sort >"$WORK/goldens.list"
"$BUILD/bench/house_render" $(cat "$WORK/results.list") | sed "s|$WORK|@WORK@|g" >"$OUT/render/results.txt" 2>&1
"$BUILD/bench/house_render" $(cat "$WORK/goldens.list") >"$OUT/render/goldens.txt" 2>&1

# report, diff, history, accept on the report fixture
"$FP" report "$WORK/report/results" -o "$WORK/report.html" >"$OUT/report.out" 2>&1
echo "exit $?" >>"$OUT/report.out"
sed -E -e "s|$WORK|@WORK@|g" -e 's/generated [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]+Z/generated @TIME@/' "$WORK/report.html" >"$OUT/report.html"
for casedir in "$WORK"/report/results/*/*/; do
  prev=
  for run in "$casedir"*/; do
    [ -f "$run/result.json" ] || continue
    if [ -n "$prev" ]; then
      name=$(basename "$casedir")-$(basename "$prev")-$(basename "$run")
      "$FP" diff "$prev/result.json" "$run/result.json" 2>&1 | sed "s|$WORK|@WORK@|g" >"$OUT/diff/$name.txt"
      echo "exit ${PIPESTATUS[0]}" >>"$OUT/diff/$name.txt"
    fi
    prev=$run
  done
done
"$FP" history --results "$WORK/report/results" 2>&1 | sed "s|$WORK|@WORK@|g" >"$OUT/history.txt"
mkdir -p "$WORK/accept-golden"
for casedir in "$WORK"/report/results/*/*/; do
  name=$(basename "$(dirname "$casedir")")-$(basename "$casedir")
  runs=$(find "$casedir" -mindepth 2 -maxdepth 2 -name result.json -printf '%h\n' | sort)
  # shellcheck disable=SC2086
  "$FP" accept $runs --golden "$WORK/accept-golden" --yes 2>&1 | sed "s|$WORK|@WORK@|g" >"$OUT/accept/$name.txt"
  echo "exit ${PIPESTATUS[0]}" >>"$OUT/accept/$name.txt"
done
(cd "$WORK/accept-golden" && find . -type f | sort | while read -r f; do echo "==== $f"; cat "$f"; done) | sed "s|$WORK|@WORK@|g" >"$OUT/accept/files.txt"

# gate_replay
find fixtures bench -name 'gate.json' -o -name '*gate.json.gz' -o -path '*gate-machine-term*' -name '*.json' | sort | while read -r g; do
  name=$(echo "$g" | tr '/' '_')
  src=$g
  case $g in *.gz) src=$WORK/gate.json; gzip -dc "$g" >"$src" ;; esac
  "$BUILD/bench/gate_replay" "$src" 2>&1 | sed "s|$src|GATE|g" >"$OUT/gate_replay/$name.txt"
  echo "exit ${PIPESTATUS[0]}" >>"$OUT/gate_replay/$name.txt"
done

[ "$LIVE" = --live ] || exit 0
# live, on the replay double: numbers masked
REPLAY=$BUILD/tests/replay/replay_runtime
mask() { sed -E -e "s|$WORK|@WORK@|g" -e "s|$BUILD|@BUILD@|g" -e "s|$ROOT|@ROOT@|g" -e 's/[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?/#/g' "$@"; }
export FLASHPROOF_LLAMA_SERVER=$REPLAY FLASHPROOF_VLLM=$REPLAY FLASHPROOF_LOADER= FLASHPROOF_LIBRARY_PATH= FLASHPROOF_TEST_DOUBLE_GPU=1
for c in fixtures/replay/cases/*.json; do
  name=$(basename "$c" .json)
  R=$WORK/live/$name
  mkdir -p "$R"
  "$FP" run "$c" --results "$R/results" --golden "$R/golden" --quiet --record-missing-answers >/dev/null 2>&1
  "$FP" run "$c" --results "$R/results" --golden "$R/golden" --quiet --timing-golden "$R/none" >"$R/out.txt" 2>&1
  echo "exit $?" >>"$R/out.txt"
  { echo "==== out"; cat "$R/out.txt"
    for f in $(find "$R/results" -name result.txt -o -name result.json | sort); do echo "==== ${f#"$R"/results/}"; cat "$f"; done
  } | mask >"$OUT/live/run-$name.txt"
done
C=fixtures/replay/cases/replay-h200-mid-fa-on.json
# A timing golden recorded from 3 launches (figure names, directions, gates, the low-noise figures)
"$FP" run "$C" --launches 3 --record-missing --results "$WORK/live/rec/results" --golden "$WORK/live/rec/golden" --quiet >"$WORK/live/rec.out" 2>&1
echo "exit $?" >>"$WORK/live/rec.out"
{ cat "$WORK/live/rec.out"; for f in $(find "$WORK/live/rec" -type f -name '*.json' -o -name '*.txt' | grep -v /answers/ | sort); do echo "==== ${f#"$WORK"/live/rec/}"; cat "$f"; done; } | mask >"$OUT/live/record.txt"
"$FP" ab "$C" --repetitions 2 --rounds 1 --warmup 0 --sustained-s 0 --quiet --out "$WORK/live/ab" >"$WORK/live/ab.out" 2>&1
echo "exit $?" >>"$WORK/live/ab.out"
{ cat "$WORK/live/ab.out"; for f in ab.txt ab.json; do echo "==== $f"; cat "$WORK/live/ab/$f"; done; } | mask >"$OUT/live/ab.txt"
"$FP" gate "$C" --baseline-runtime "$REPLAY" --blocks 2 --max-blocks 2 --rounds 1 --warmup 0 --quiet --results "$WORK/live/gate" >"$WORK/live/gate.out" 2>&1
echo "exit $?" >>"$WORK/live/gate.out"
{ cat "$WORK/live/gate.out"; for f in $(find "$WORK/live/gate" -name gate.txt -o -name gate.json | sort); do echo "==== $(basename "$f")"; cat "$f"; done; } | mask >"$OUT/live/gate.txt"
