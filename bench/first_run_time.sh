#!/usr/bin/env bash
# The operator's first run, timed as a newcomer meets it: a fresh clone of this repository at each
# COMMIT (default: the main job before issue 23, 1e3576b, and HEAD), with the Debian packages and the
# sid prefix already installed, then `time bash ci/default-run.sh`. No ccache (the fresh clone's build
# uses none). Prints one table: per commit, the wall time to the table's first row (the first
# verdict), to the end of the run, how much of it was the build (configure + compile + models), the
# number of compile units built, the launches the run made, and the load average before and after.
# The run's own output is kept in WORK/<commit>/default-run.txt.
# usage: bench/first_run_time.sh [WORK_DIR] [COMMIT...]   (WORK_DIR default /tmp/fp-first-run)
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/tmp/fp-first-run}; shift || true
commits=("$@"); ((${#commits[@]})) || commits=(1e3576b HEAD)
mkdir -p "$work"
rows=()
for c in "${commits[@]}"; do
  sha=$(git -C "$here" rev-parse --short "$c") || { echo "no commit $c" >&2; exit 64; }
  d=$work/$sha
  rm -rf "$d" && git clone -q --no-local "$here" "$d/src" && git -C "$d/src" checkout -q "$sha" || exit 1
  load0=$(cut -d' ' -f1-3 /proc/loadavg)
  t0=$(date +%s.%N)
  # Each output line stamped with seconds since the start: when the build ends, when the first row shows.
  (cd "$d/src" && env -u CMAKE_CXX_COMPILER_LAUNCHER bash ci/default-run.sh 2>&1) |
    while IFS= read -r line; do printf '%8.1f %s\n' "$(echo "$(date +%s.%N) - $t0" | bc)" "$line"; done >"$d/default-run.txt"
  rc=${PIPESTATUS[0]}
  t1=$(date +%s.%N)
  load1=$(cut -d' ' -f1-3 /proc/loadavg)
  total=$(echo "$t1 - $t0" | bc)
  # The build ends where flashproof's own output begins (make-model's first line).
  build_end=$(grep -m1 -E '^ *[0-9.]+ [a-z0-9_-]+: /.* bytes sha256 ' "$d/default-run.txt" | awk '{print $1}')
  first_row=$(grep -m1 -E '^ *[0-9.]+ [a-z0-9.-]+ +(pass|fail|incomplete) ' "$d/default-run.txt" | awk '{print $1}')
  units=$(grep -cE 'Building CXX object' "$d/default-run.txt")
  launches=$(find "$d/src/results" -name timed.log 2>/dev/null | wc -l)  # one timed.log per fresh launch
  rows+=("$(printf '%-9s %5s %9s %9s %9s %6s %9s  %-16s %-16s' "$sha" "$rc" "${build_end:--}" "${first_row:--}" "$(printf %.1f "$total")" "$units" "$launches" "$load0" "$load1")")
done
printf '%-9s %5s %9s %9s %9s %6s %9s  %-16s %-16s\n' commit exit "build s" "1st row s" "total s" units launches "load before" "load after"
printf '%s\n' "${rows[@]}"
